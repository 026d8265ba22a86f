"""Would numba-cuda compile it (issue 11, item 4)? Each kernel compiled to sm_90 PTX by numba-cuda itself.

Needs the optional extra (``pip install -e ".[ptx]"``: numba-cuda's NVVM; no GPU). Without it every test here
is skipped, saying so; CI installs the extra and runs this file on its own (``.ci/run``).
"""

from __future__ import annotations

import pytest
from puzzle_fixtures import puzzle_id, real_puzzles, write

from puzzles import registry, workspace
from puzzles.checker import check_file, check_source
from puzzles.judge import ptx

pytestmark = pytest.mark.skipif(not ptx.available(), reason="numba-cuda's PTX compiler (NVVM) is not installed: "
                                "pip install -e '.[ptx]'")

HISTOGRAM = registry.get("histogram")


@pytest.mark.parametrize("puzzle", real_puzzles(), ids=puzzle_id)
def test_every_reference_compiles_to_sm90_ptx(puzzle):
    result = check_file(puzzle, workspace.reference_path(puzzle), seed=1, ptx=True)
    assert result.ptx_checked
    assert result.passed, "\n".join(f.message for f in result.failures)


def test_what_numba_cuda_rejects_fails_the_check_with_its_line(tmp_path):
    source = workspace.reference_path(HISTOGRAM).read_text()
    wrong = source.replace("cuda.atomic.add(sh, values[i], 1)", "cuda.atomic.inc(sh, values[i], 2147483647)")
    assert wrong != source
    path = write(tmp_path, "inc.py", wrong)
    line = next(n for n, text in enumerate(wrong.splitlines(), 1) if "atomic.inc" in text)
    result = check_file(HISTOGRAM, path, seed=1, ptx=True)
    failure = next(f for f in result.failures if f.detail.get("ptx"))
    assert not result.passed and failure.kind == "compile"
    assert "numba-cuda would not compile `histogram`" in failure.message and "TypingError" in failure.message
    assert failure.lineno == line


def test_an_eager_signature_is_compiled_as_declared():
    puzzle = registry.get("map")
    source = workspace.reference_path(puzzle).read_text()
    ok = source.replace("@cuda.jit\n", '@cuda.jit("void(float32[:], float32[:])")\n')
    assert check_source(puzzle, ok, "/virtual/map.py", seed=1, ptx=True).passed
    typed = source.replace("a[i] + 10", "a[i] + cuda.threadIdx")          # numba cannot add a module object
    result = check_source(puzzle, typed, "/virtual/map.py", seed=1, ptx=True)
    assert not result.passed


def test_the_suite_default_is_off_and_the_flag_turns_it_on():
    puzzle = registry.get("map")
    path = workspace.reference_path(puzzle)
    assert not check_file(puzzle, path, seed=1).ptx_checked          # GPU_PUZZLES_PTX=0 in conftest
    assert check_file(puzzle, path, seed=1, ptx=True).ptx_checked


NUMBA_ACCEPTS = {   # valid numba-cuda the judge accepts (tests/puzzles/test_judge_gpu_rules.py runs them)
    "a threadIdx alias": "    tid = cuda.threadIdx\n    i = tid.x\n    out[i] = a[i] + 10\n",
    "a constant tuple per lane": "    i = cuda.threadIdx.x\n    out[i] = a[i] + TEN[i]\n",
    "cuda.selp": "    i = cuda.threadIdx.x\n    out[i] = a[i] + cuda.selp(i >= 0, 10.0, 0.0)\n",
    "cuda.libdevice": "    i = cuda.threadIdx.x\n    out[i] = cuda.libdevice.fadd_rn(a[i], 10.0)\n",
}


@pytest.mark.parametrize("body", NUMBA_ACCEPTS.values(), ids=list(NUMBA_ACCEPTS))
def test_the_rebuilt_kernels_compile_as_numba_cuda_compiles_them(body):
    from puzzles.loader import load_source

    puzzle = registry.get("map")
    source = "from numba import cuda\n\nTEN = (10.0,) * 256\n\n\n@cuda.jit\ndef map_kernel(out, a):\n" + body
    solution = load_source(source, "/virtual/accepted.py", puzzle.kernels)
    assert ptx.compile_kernels(solution.rebuilt, puzzle.make_cases(), puzzle.kernels, "/virtual/accepted.py") == []
