"""Chapter 7, puzzles 33-39: the specs against the worked examples of the descriptions, and the cases against
the traps they promise (overflow, cancellation, fp16 accumulation)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from puzzles.ch07_ml import p33_softmax_three_pass as p33
from puzzles.ch07_ml import p34_online_softmax as p34
from puzzles.ch07_ml import p35_rmsnorm as p35
from puzzles.ch07_ml import p36_layernorm as p36
from puzzles.ch07_ml import p37_bias_gelu as p37
from puzzles.ch07_ml import p38_cross_entropy as p38
from puzzles.ch07_ml import p39_fp16_accumulate as p39

ROOT = Path(__file__).resolve().parents[2]
MODULES = [p33, p34, p35, p36, p37, p38, p39]
ROW_MODULES = [p33, p34, p35, p36, p38, p39]     # one block per row, TPB threads
F32 = np.float32


def _solution_constants(module) -> dict[str, int]:
    """Module-level integer constants of the reference solution, read as text (numba.cuda is not imported)."""
    namespace: dict[str, int] = {}
    path = ROOT / "solutions" / module.PUZZLE.solution_file
    for line in path.read_text().splitlines():
        name, sep, value = line.partition(" = ")
        if sep and name.isupper() and name.isidentifier():
            try:
                namespace[name] = int(value.split("#")[0])
            except ValueError:
                pass
    return namespace


def _case(module, name: str):
    """The case called ``name``; a name ending in "x" or " " is a prefix (that case's size varies)."""
    return next(c for c in module.PUZZLE.make_cases() if c.name == name or name.endswith(("x", " "))
                and c.name.startswith(name))


def _expected(module, case) -> np.ndarray:
    return module.PUZZLE.spec(**case.buffers)[module.PUZZLE.outputs[0]]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.PUZZLE.slug)
def test_puzzle_is_consistent(module):
    puzzle = module.PUZZLE
    assert puzzle.chapter == 7 and 33 <= puzzle.number <= 39
    assert f"p{puzzle.number}_" in Path(module.__file__).name
    assert puzzle.reading and puzzle.reading in puzzle.description
    assert "**What's new:**" in puzzle.description and "**Launch:**" in puzzle.description
    assert 2 <= len(puzzle.hints) <= 3 and puzzle.rtol > 0
    cases = puzzle.make_cases()
    assert len(cases) >= 5 and len({c.name for c in cases}) == len(cases)
    assert any("worked example" in c.name for c in cases)
    for case in cases:
        for step in case.steps:
            assert step.kernel in puzzle.kernels and all(a in case.buffers for a in step.args)
        out = case.buffers[puzzle.outputs[0]]
        expected = _expected(module, case)
        assert expected.shape == out.shape and out.dtype == F32
        assert np.isnan(out).all() and np.isfinite(expected).all()
    for folder in ("solutions", "puzzles/starters"):
        assert (ROOT / folder / puzzle.solution_file).is_file()


@pytest.mark.parametrize("module", ROW_MODULES, ids=lambda m: m.PUZZLE.slug)
def test_row_launches_match_the_reference(module):
    """One block of TPB threads per row; the solution's TPB (and ITEMS) agree; rows fit TPB * ITEMS."""
    constants = _solution_constants(module)
    assert constants["TPB"] == module.TPB
    if "ITEMS" in constants:
        assert constants["ITEMS"] == module.ITEMS
    widths = []
    for case in module.PUZZLE.make_cases():
        (step,) = case.steps
        first = case.buffers[step.args[0]]
        assert step.block == module.TPB and step.grid == first.shape[0]
        widths.append(first.shape[1])
    assert max(widths) <= module.MAX_COLS
    assert 1 in widths, "a one-column case (most threads of each block idle)"
    assert any(w % module.TPB for w in widths if w > 1), "a row length that is not a multiple of the block"
    assert any(w < module.TPB for w in widths if w > 1), "rows shorter than the block"


def test_softmax_worked_example_and_traps():
    x = np.array([[1, 3, 2, 3]], F32)
    out = p33.spec(x=x, out=x.copy())["out"]
    np.testing.assert_allclose(out, [[0.054, 0.399, 0.147, 0.399]], atol=5e-4)
    assert "`out = [0.054, 0.399, 0.147, 0.399]`" in p33.DESCRIPTION
    for case in p33.make_cases():
        np.testing.assert_allclose(_expected(p33, case).sum(axis=1), 1.0, rtol=1e-5)
    with np.errstate(over="ignore"):
        large = _case(p33, "large logits 2x256").buffers["x"]
        assert np.isinf(np.exp(large)).any()        # exp without the max overflows
    with np.errstate(under="ignore"):
        row = _case(p33, "very negative ").buffers["x"]
        assert (np.exp(row).sum(axis=1) == 0).any()        # a max starting at 0 makes a row 0/0
    # the online softmax has the same answer as the three passes
    x = _case(p34, "rising rows 3x256").buffers["x"]
    np.testing.assert_array_equal(p34.spec(x=x, out=x)["out"], p33.spec(x=x, out=x)["out"])


def test_online_softmax_update_rule_matches_the_description():
    m, d = -math.inf, 0.0
    trace = []
    for v in [1, 3, 2, 3]:
        m_new = max(m, v)
        d = d * math.exp(m - m_new) + math.exp(v - m_new)
        m = m_new
        trace.append(round(d, 3))
    assert trace == [1.0, 1.135, 1.503, 2.503]
    assert "d = 1.503            + exp(0)  = 2.503" in p34.DESCRIPTION
    rising = _case(p34, "rising rows 3x256").buffers["x"]
    assert (np.diff(rising, axis=1) > 0).all()     # the running max changes at every element
    assert p34.PUZZLE.constraints[0].description == f"at most {2 * p34.ITEMS} reads of `x` per thread"


def test_rmsnorm_worked_example_and_eps_matters():
    x = np.array([[3, -4, 0, 1]], F32)
    w = np.array([1, 0.5, 2, -1], F32)
    out = p35.spec(x=x, w=w, out=x.copy(), eps=p35.EPS)["out"]
    np.testing.assert_allclose(out, [[1.1767, -0.7845, 0, -0.3922]], atol=1e-4)
    assert "`out = [1.1767, -0.7845, 0, -0.3922]`" in p35.DESCRIPTION
    case = _case(p35, "scales 4x256")
    without_eps = p35.spec(**{**case.buffers, "eps": 0.0})["out"]
    expected = _expected(p35, case)
    assert not np.allclose(without_eps, expected, rtol=p35.PUZZLE.rtol, atol=p35.PUZZLE.atol)
    # dividing by the block size instead of the row length is caught by a row that is not 64 wide
    assert any(c.buffers["x"].shape[1] not in (1, p35.TPB) for c in p35.make_cases())


def test_layernorm_worked_example_and_cancellation_trap():
    x = np.array([[1, 2, 3, 6]], F32)
    w, b = np.array([1, 1, 2, 2], F32), np.array([0, 0, 0, 1], F32)
    out = p36.spec(x=x, w=w, b=b, out=x.copy(), eps=p36.EPS)["out"]
    np.testing.assert_allclose(out, [[-1.0690, -0.5345, 0, 4.2071]], atol=1e-4)
    assert "`out = [-1.0690, -0.5345, 0, 4.2071]`" in p36.DESCRIPTION
    # the one-pass float32 formula, as a thread-per-column kernel would compute it, fails the offset case
    case = _case(p36, "large offsets 4x256")
    xs = case.buffers["x"]
    cols = F32(xs.shape[1])
    mean = xs.sum(axis=1, dtype=F32) / cols
    var = np.maximum((xs * xs).sum(axis=1, dtype=F32) / cols - mean * mean, F32(0))
    normed = (xs - mean[:, None]) / np.sqrt(var[:, None] + F32(p36.EPS))
    naive = normed * case.buffers["w"] + case.buffers["b"]
    assert not np.allclose(naive, _expected(p36, case), rtol=p36.PUZZLE.rtol, atol=p36.PUZZLE.atol)
    np.testing.assert_allclose(_expected(p36, _case(p36, "one column 3x1")), [[0.25], [0.25], [0.25]])


def test_bias_gelu_worked_example_tanh_not_erf():
    x = np.array([[-1.5, 0.0, 2.0]], F32)
    bias = np.array([0.5, -0.25, 1.0], F32)
    out = p37.spec(x=x, bias=bias, out=x.copy())["out"]
    np.testing.assert_allclose(out, [[-0.1588, -0.1003, 2.9964]], atol=1e-4)
    assert "`out = [-0.1588, -0.1003, 2.9964]`" in p37.DESCRIPTION
    z = np.linspace(-4, 4, 81)
    erf_gelu = 0.5 * z * (1 + np.array([math.erf(v / math.sqrt(2)) for v in z]))
    assert np.abs(erf_gelu - p37._gelu_tanh(z)).max() > 10 * (p37.PUZZLE.atol + p37.PUZZLE.rtol)
    tall = _case(p37, "tall 37x8")
    assert tall.buffers["x"].shape[0] > tall.buffers["bias"].size     # bias[row] would run off the end
    for case in p37.make_cases():
        (step,) = case.steps
        rows, cols = case.buffers["x"].shape
        assert step.block == p37.BLOCK
        assert step.grid[0] * p37.BLOCK[0] >= cols and step.grid[1] * p37.BLOCK[1] >= rows
    assert any(c.buffers["x"].shape[0] % p37.BLOCK[1] for c in p37.make_cases())


def test_cross_entropy_worked_example_and_stability():
    logits = np.array([[2, 1, 0.5, -1], [2, 1, 0.5, -1]], F32)
    loss = p38.spec(logits=logits, targets=np.array([0, 3], np.int32), loss=np.zeros(2, F32))["loss"]
    np.testing.assert_allclose(loss, [0.4952, 3.4952], atol=1e-4)
    assert "`loss = 2.4952 - 2 = 0.4952`" in p38.DESCRIPTION and "`2.4952 + 1 = 3.4952`" in p38.DESCRIPTION
    np.testing.assert_array_equal(_expected(p38, _case(p38, "one column 4x1")), 0.0)
    assert _case(p38, "huge logits 3x256").buffers["logits"].min() > 89     # exp overflows float32
    for case in p38.make_cases():
        targets, cols = case.buffers["targets"], case.buffers["logits"].shape[1]
        assert targets.dtype == np.int32 and ((0 <= targets) & (targets < cols)).all()
    confident = _case(p38, "confident 4x200")
    assert {0, 199} <= set(confident.buffers["targets"].tolist())              # targets at both ends


def test_fp16_worked_example_and_fp16_accumulation_fails():
    W = np.array([[1, 2, 3, 4], [2048, 1, 1, 1]], np.float16)
    x = np.ones(4, np.float16)
    y = p39.spec(W=W, x=x, y=np.zeros(2, F32))["y"]
    np.testing.assert_array_equal(y, [10, 2051])
    assert "`y = [10, 2051]`" in p39.DESCRIPTION
    acc = np.float16(0)
    for v in W[1]:
        acc = np.float16(acc + v)
    assert acc == 2048                                                  # the description's 2048 + 1 = 2048
    for case in p39.make_cases():
        assert case.buffers["W"].dtype == np.float16 and case.buffers["x"].dtype == np.float16
    overflow = _case(p39, "overflow 3x2048")
    assert (_expected(p39, overflow) > np.finfo(np.float16).max).all()  # an fp16 running sum becomes inf
    # in the other multi-column cases, fp16 running sums (in the block's strided order) miss the tolerance
    for name in ("random 4x1024", "cancellation 3x1024", "random 5x"):
        case = _case(p39, name)
        Wc, xc = case.buffers["W"], case.buffers["x"]
        partial = np.zeros((Wc.shape[0], p39.TPB), np.float16)
        for c in range(Wc.shape[1]):
            partial[:, c % p39.TPB] = (partial[:, c % p39.TPB] + Wc[:, c] * xc[c]).astype(np.float16)
        fp16_answer = partial.astype(F32).sum(axis=1)
        assert not np.allclose(fp16_answer, _expected(p39, case), rtol=p39.PUZZLE.rtol, atol=p39.PUZZLE.atol)
    # the cancellation case is exact in float32 whatever the order of the additions
    case = _case(p39, "cancellation 3x1024")
    products = case.buffers["W"].astype(F32) * case.buffers["x"].astype(F32)
    rng = np.random.default_rng(0)
    shuffled = products[:, rng.permutation(products.shape[1])]
    np.testing.assert_array_equal(np.cumsum(shuffled, axis=1, dtype=F32)[:, -1], _expected(p39, case))
