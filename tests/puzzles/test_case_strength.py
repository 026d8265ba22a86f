"""The cases tell the usual slips apart: each is a one-place rewrite of a shipped reference, and the judge must
reject it with a case that fails (a wrong value or a fault in a named case), not pass it or refuse the file.

One or two slips per family of numerical puzzles: a guard, a reduction tree, a tile edge, a partial last
tile, a lane's loop bounds, the softmax max-shift (dropped, or a max tree that misses a thread), eps under or
outside the square root, an fp16 accumulator, a ceiling division made a floor division. Where this audit
(benchmarks/case_strength.py, docs/case-strength.md) found a weak case and added one, ``case`` names it: the
slip must fail there. Every reference still passes (tests/puzzles/test_reference_solutions.py).
"""

from __future__ import annotations

import fnmatch

import pytest

from puzzles import registry, workspace
from puzzles.checker import check_source

SEED = 20261201

# (puzzle, what the slip is, text in the reference, its replacement, the case that must fail or None for any)
MAX_TREE = "    while stride > 0:\n        if {t} < stride:\n            {red}[{t}] = max("
SLIPS = [
    ("guard", "guard dropped", "    if i < n:\n        out[i]", "    if True:\n        out[i]", None),
    ("dot-product", "reduction tree starts at a third", "stride = TPB // 2", "stride = TPB // 3", None),
    ("matmul", "tile edge off by one", "if r < m and t0 + tx < k:", "if r < m and t0 + tx <= k:", None),
    ("blelloch", "second half of the last tile unguarded", "    if i1 < n:\n        s[",
     "    if i1 <= n:\n        s[", "half-full last tile n=*"),
    ("argmax", "lane loop starts a column late", "range(lane + 32, cols, 32)", "range(lane + 33, cols, 32)",
     "maximum at a lane's edge 4x97"),
    ("argmax", "lane loop stops before the last column", "range(lane + 32, cols, 32)",
     "range(lane + 32, cols - 1, 32)", "maximum at a lane's edge 4x97"),
    ("softmax-three-pass", "max-shift dropped", "math.exp(x[r, c] - row_max)", "math.exp(x[r, c])",
     "large logits 2x256"),
    ("softmax-three-pass", "max tree skips threads", "stride = TPB // 2\n" + MAX_TREE.format(t="t", red="shared"),
     "stride = TPB // 3\n" + MAX_TREE.format(t="t", red="shared"), "one spike per row 5x128"),
    ("online-softmax", "max-shift dropped in the write pass", "math.exp(x[r, c] - row_max)", "math.exp(x[r, c])",
     None),
    ("cross-entropy", "max-shift dropped", "math.exp(v - m_new)", "math.exp(v)", None),
    ("attention", "max tree stops a step early", MAX_TREE.format(t="j", red="red"),
     MAX_TREE.format(t="j", red="red").replace("> 0", "> 1"), "one spike per row Sq=4 Sk=64"),
    ("paged-attention", "max tree stops a step early", MAX_TREE.format(t="t", red="red"),
     MAX_TREE.format(t="t", red="red").replace("> 0", "> 1"), "one spike per sequence"),
    ("layernorm", "eps outside the square root", "math.sqrt(shared[0] / cols + eps)",
     "(math.sqrt(shared[0] / cols) + eps)", "small variance 3x64"),
    ("rmsnorm", "eps dropped", "math.sqrt(shared[0] / cols + eps)", "math.sqrt(shared[0] / cols)", None),
    ("adamw", "eps under the square root", "math.sqrt(vi) / math.sqrt(bias_correction2) + eps",
     "math.sqrt(vi / bias_correction2 + eps)", None),
    ("fp16-accumulate", "fp16 accumulator and products", "acc += numba.float32(W[r, c]) * numba.float32(x[c])",
     "acc = np.float16(acc + W[r, c] * x[c])", None),
    ("fp16-accumulate", "fp16 products", "acc += numba.float32(W[r, c]) * numba.float32(x[c])",
     "acc += W[r, c] * x[c]", None),
    ("matmul-double-buffer", "last partial k-slice dropped", "steps = (k + BK - 1) // BK", "steps = k // BK", None),
    ("matmul-double-buffer", "step count short when k leaves one value in the last slice",
     "steps = (k + BK - 1) // BK", "steps = (k + BK - 2) // BK", "random 40x1 @ 1x136"),
    ("flash-decoding", "chunk max tree skips threads", "stride = CHUNK // 2\n" + MAX_TREE.format(t="t", red="red"),
     "stride = CHUNK // 3\n" + MAX_TREE.format(t="t", red="red"), "a spike at a chunk's last thread"),
    ("flash-decoding", "last partial chunk dropped", "pieces = (lens[r] + CHUNK - 1) // CHUNK",
     "pieces = lens[r] // CHUNK", None),
    ("matmul-thin-tiles", "k loop one short", "range(0, k, BK)", "range(0, k - 1, BK)", "random 24x1 @ 1x40"),
    ("llm-int8", "outlier scan skips the last row", "for m in range(x.shape[0]):", "for m in range(x.shape[0] - 1):",
     "last row, last column M=6 K=17 N=9"),
    ("kv-cache-int8", "slot 0 taken for padding", "if slot < 0:", "if slot <= 0:", "slot 0 and padding"),
    ("top-p-sampling", "max tree skips threads", "stride = TPB // 2\n" + MAX_TREE.format(t="t", red="red"),
     "stride = TPB // 3\n" + MAX_TREE.format(t="t", red="red"), "one spike in a late thread V=1024"),
    ("top-p-sampling", "key search skips bit 0", "for bit in range(31, -1, -1):", "for bit in range(31, 0, -1):",
     "adjacent floats at the boundary V=64"),
    ("top-p-sampling", "key search starts from prefix 1", "prefix = numba.int64(0)", "prefix = numba.int64(1)",
     "adjacent floats at the boundary V=64"),
    ("speculative-sampling", "residual total misses the last token", "u_sample[b] * buf[TPB - 1]",
     "u_sample[b] * buf[TPB - 2]", "last token likely, V=512"),
    ("distillation-kl", "max tree stops a step early", MAX_TREE.format(t="t", red="red"),
     MAX_TREE.format(t="t", red="red").replace("> 0", "> 1"), "one spike per model in a late thread V=1024"),
    ("distillation-kl", "max tree returns red[1]", "    top = red[0]", "    top = red[1]",
     "one spike per model in a late thread V=1024"),
]


def _mutant(slug: str, old: str, new: str) -> str:
    """The reference with every ``old`` replaced (the softmax's two exps, say: the slip is made throughout),
    and NumPy imported where the slip needs it."""
    source = workspace.reference_path(registry.get(slug)).read_text(encoding="utf-8")
    assert old in source, f"{slug}: the reference no longer holds {old!r}"
    mutated = source.replace(old, new)
    if "np." in new and "import numpy as np" not in source:
        mutated += "\nimport numpy as np\n"
    return mutated


@pytest.mark.slow
@pytest.mark.parametrize("slug, slip, old, new, case", SLIPS, ids=[f"{s[0]}: {s[1]}" for s in SLIPS])
def test_the_cases_reject_the_slip(slug, slip, old, new, case):
    puzzle = registry.get(slug)
    result = check_source(puzzle, _mutant(slug, old, new), f"/virtual/{slug}.py", seed=SEED, ptx=False)
    seen = [f"[{f.kind}] {f.case}: {f.message[:120]}" for f in result.failures]
    assert not result.passed and result.stars == 0, f"{slug} with {slip!r} passed"
    failing = [f.case for f in result.failures if f.kind in ("mismatch", "fault") and f.case]
    assert failing, f"{slip!r} was not rejected by a failing case:\n" + "\n".join(seen)
    assert not any(f.kind in ("compile", "error") for f in result.failures), "\n".join(seen)
    if case is not None:
        assert any(fnmatch.fnmatchcase(name, case) for name in failing), \
            f"{slip!r} should fail case {case!r}; failing: {failing}"
