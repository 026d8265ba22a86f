"""Would it run on a GPU (issue 11, items 4 and 6)? The judge accepts what numba-cuda accepts and refuses what
it refuses, and a warp intrinsic run by a lane its mask leaves out is a fault with block, thread and line.

Where each expectation comes from:

* accepted: every construct below ran on an H200 under numba-cuda 0.30.4 and gave puzzle 1's answer
  (docs/gpu-runs/2026-12-01-ch10-and-fresh-seeds-h200.txt, "accept ... runs and is right"; the script is
  benchmarks/gpu/run_fresh_cases.py);
* refused: numba-cuda's typing (cudadecl.py: ``atomic.inc``/``dec`` take uint32 and uint64 arrays only;
  a dispatcher made with ``device=True`` cannot be launched; a plain function is no kernel) — the files are
  in tests/puzzles/wrong/ and checked there; here, what a message must carry;
* warp masks: the PTX ISA leaves ``shfl.sync``/``vote.sync``/``match.sync``/``bar.warp.sync`` undefined for
  an executing thread that is not in ``membermask``; lane 16 is the first lane 0x0000ffff leaves out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from puzzles import registry
from puzzles.checker import check_file, check_source
from puzzles.judge import ptx

WRONG = Path(__file__).resolve().parent / "wrong"
MAP = registry.get("map")
HEAD = "from numba import cuda\n\nTEN = (10.0,) * 256\n\n\n{decorator}\ndef map_kernel(out, a):\n"

#: the constructs the H200 run accepted (benchmarks/gpu/run_fresh_cases.py's ACCEPTED), as puzzle 1
ACCEPTED = {
    "eager signature": ('@cuda.jit("void(float32[:], float32[:])")',
                        "    i = cuda.threadIdx.x\n    out[i] = a[i] + 10\n"),
    "threadIdx alias": ("@cuda.jit", "    tid = cuda.threadIdx\n    i = tid.x\n    out[i] = a[i] + 10\n"),
    "per-lane tuple": ("@cuda.jit", "    i = cuda.threadIdx.x\n    out[i] = a[i] + TEN[i]\n"),
    "cuda.selp": ("@cuda.jit", "    i = cuda.threadIdx.x\n    out[i] = a[i] + cuda.selp(i >= 0, 10.0, 0.0)\n"),
    "cuda.libdevice": ("@cuda.jit", "    i = cuda.threadIdx.x\n    out[i] = cuda.libdevice.fadd_rn(a[i], 10.0)\n"),
}


def _messages(result) -> str:
    return "\n".join(f"[{f.kind}] {f.message}" for f in result.failures)


@pytest.mark.parametrize("name", list(ACCEPTED), ids=list(ACCEPTED))
def test_what_ran_right_on_the_gpu_passes_with_every_star(name):
    decorator, body = ACCEPTED[name]
    source = HEAD.format(decorator=decorator) + body
    for seed in (1, 2):
        result = check_source(MAP, source, f"/virtual/{name.replace(' ', '_')}.py", seed=seed)
        assert result.passed and result.stars == result.max_stars, f"seed {seed}:\n{_messages(result)}"


def test_the_accepted_constructs_still_compute_what_they_say():
    """Accepting them must not mean ignoring them: each, made wrong by one token, fails."""
    for decorator, body in ACCEPTED.values():
        wrong = body.replace("+ 10", "+ 9").replace("10.0", "9.0").replace("+ TEN[i]", "+ TEN[i] - 1")
        assert wrong != body
        result = check_source(MAP, HEAD.format(decorator=decorator) + wrong, "/virtual/wrong.py", seed=1)
        assert not result.passed and any(f.kind == "mismatch" for f in result.failures), _messages(result)


def test_a_dim3_local_reassigned_to_an_int_is_refused_as_numba_cuda_refuses_it():
    body = "    tid = cuda.threadIdx\n    if a[0] > 0:\n        tid = 0\n    out[tid.x] = a[tid.x] + 10\n"
    result = check_source(MAP, HEAD.format(decorator="@cuda.jit") + body, "/virtual/conflict.py", seed=1)
    assert not result.passed and result.failures[0].kind == "compile", _messages(result)


def test_atomic_inc_on_int32_is_refused_with_the_line_and_the_types_numba_cuda_takes():
    path = WRONG / "histogram__atomic_inc_on_int32.py"
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "cuda.atomic.inc(sh" in text)
    result = check_file(registry.get("histogram"), path, seed=1)
    failure = result.failures[0]
    assert not result.passed and failure.kind == "compile" and failure.lineno == line
    assert "int32" in failure.message and "uint32, uint64" in failure.message
    unsigned = path.read_text().replace("numba.int32)", "numba.uint32)")
    assert unsigned != path.read_text()
    # with a uint32 histogram numba-cuda compiles it; the merge then adds uint32 counts into int32 `hist`
    assert not any("atomic.inc" in f.message for f in check_source(registry.get("histogram"), unsigned,
                                                                   str(path), seed=1).failures)


@pytest.mark.parametrize("name, says, function", [
    ("map__no_cuda_jit.py", "no `@cuda.jit` decorator", "map_kernel"),
    ("map__device_function_launched.py", "device function", "map_kernel"),
    ("map__helper_without_device_jit.py", "plain Python function", "add_ten"),
])
def test_what_is_not_a_kernel_is_refused_at_its_def(name, says, function):
    path = WRONG / name
    result = check_file(MAP, path, seed=1)
    failure = result.failures[0]
    assert not result.passed and result.stars == 0 and failure.kind == "compile" and says in failure.message
    assert path.read_text().splitlines()[failure.lineno - 1].startswith(f"def {function}(")


def test_a_lane_outside_its_shuffle_mask_is_a_fault_with_block_thread_and_line():
    path = WRONG / "warp_reduce__mask_names_only_the_lanes_kept.py"
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "shfl_down_sync(" in text)
    result = check_file(registry.get("warp-reduce"), path, seed=5)
    faults = [f for f in result.failures if f.kind == "fault"]
    assert not result.passed and result.stars == 0 and faults
    first = faults[0]
    assert first.detail["faults"] == ["BarrierDivergence"]
    assert (first.fault.block, first.fault.thread, first.fault.lineno) == ((0, 0, 0), (16, 0, 0), line)
    assert "lane 16" in first.message and "0x0000ffff" in first.message and f":{line}" in first.message
    assert "block (0, 0, 0), thread (16, 0, 0)" in first.message


def test_the_same_reduce_with_the_full_mask_passes():
    """The fault is the mask, nothing else in the file: with 0xffffffff it is the reference's kernel."""
    source = (WRONG / "warp_reduce__mask_names_only_the_lanes_kept.py").read_text()
    fixed = source.replace("(1 << d) - 1", "0xFFFFFFFF")
    assert fixed != source
    result = check_source(registry.get("warp-reduce"), fixed, "/virtual/full_mask.py", seed=5)
    assert result.passed, _messages(result)


def test_libdevice_imported_by_name_is_libdevice():
    """``from numba.cuda.libdevice import expf``: a function of numba-cuda's, not one the file must define.
    numba-cuda compiles it (compiled to PTX here when its compiler is installed); exp(0) is exactly 1."""
    source = ("from numba import cuda\nfrom numba.cuda import libdevice\nfrom numba.cuda.libdevice import expf\n\n\n"
              "@cuda.jit\ndef map_kernel(out, a):\n    i = cuda.threadIdx.x\n    v = a[i]\n"
              "    out[i] = libdevice.fmaxf(v, v) + 9 + expf(0.0)\n")
    result = check_source(MAP, source, "/virtual/imported.py", seed=1, ptx=ptx.available())
    assert result.passed and result.stars == result.max_stars, _messages(result)


#: numba-cuda 0.30.4's cuda.compile_ptx, sm_90, of `out[X.x] = 1` (or X.array / X.add) with X imported by name
UNTYPED_BARE = ("threadIdx", "blockIdx", "blockDim", "gridDim", "laneid", "warpsize", "shared", "local", "const",
                "atomic")
USES = {"laneid": "laneid", "warpsize": "warpsize", "shared": "shared.array(4, numba.float32)[0]",
        "local": "local.array(4, numba.float32)[0]", "const": "const.array_like(TEN)[0]",
        "atomic": "atomic.add(out, 0, 1.0)"}


@pytest.mark.parametrize("stub", UNTYPED_BARE)
def test_a_stub_imported_by_itself_is_refused_at_its_use_as_numba_cuda_refuses_it(stub):
    use = USES.get(stub, f"{stub}.x")
    source = (f"import numba\nimport numpy as np\nfrom numba import cuda\nfrom numba.cuda import {stub}\n\n"
              f"TEN = np.full(4, 10, np.float32)\n\n\n@cuda.jit\ndef map_kernel(out, a):\n"
              f"    i = cuda.threadIdx.x\n    out[i] = a[i] + 10 + 0 * {use}\n")
    result = check_source(MAP, source, "/virtual/bare.py", seed=1)
    failure = result.failures[0]
    assert not result.passed and failure.kind == "compile" and failure.lineno == 12
    assert f"Untyped global name '{stub}'" in failure.message and f"cuda.{stub}" in failure.message


def test_functions_imported_by_name_are_fine():
    """numba-cuda compiles `grid(1)`, `syncthreads()`, `shfl_down_sync(...)` imported from numba.cuda."""
    source = ("from numba import cuda\nfrom numba.cuda import grid, syncthreads\n\n\n@cuda.jit\n"
              "def map_kernel(out, a):\n    i = grid(1)\n    syncthreads()\n    out[i] = a[i] + 10\n")
    result = check_source(MAP, source, "/virtual/functions.py", seed=1, ptx=ptx.available())
    assert result.passed, _messages(result)
