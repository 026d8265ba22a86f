"""Graduate mode's Triton back end: ``gpu-puzzles triton``, the back end's registration and its refusals, and
(with torch and triton, the ``[gpu]`` extra) references and wrong files through the interpreter and the
ahead-of-time compiler (``python3 -m puzzles.graduate.triton_check``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from graduate_blocker import blocking_env

from puzzles import cli, registry
from puzzles.graduate.backend import CompileFailed, get_backend
from puzzles.graduate.triton_backend import TritonBackend, missing_packages

REPO = Path(__file__).resolve().parents[2]
needs_triton = pytest.mark.skipif(bool(missing_packages()), reason="torch and triton are not installed ([gpu] extra)")


def test_gpu_puzzles_triton_prints_the_program_of_each_launch(capsys):
    assert cli.main(["triton", "shared", "--reference"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# reverse_kernel, launched with grid ")
    assert "\n@triton.jit  # " in out and "\ndef reverse_kernel(out, out_n0, a, a_n0, n):" in out
    assert "Shared arrays in registers: s." in out
    assert "tl.gather(" in out                                  # s[length - 1 - t]: another thread's element


def test_the_tiled_transpose_reads_its_tile_through_tl_trans(capsys):
    """Puzzle 17's tile, four planes stored by rows and read by columns: one transpose before the read loop
    (the loop stores nothing into it), split into its four windows there, one picked per trip; no gather
    (2.78x numba's time on the H200 with four gathers per trip, docs/graduate.md)."""
    assert cli.main(["triton", "17", "--reference"]) == 0
    out = capsys.readouterr().out
    assert "tl.gather(" not in out and out.count("tl.trans(") == 1
    before, loop = out.split("\n    for ", 1)
    assert "tl.trans(" in before and "tl.join(" in before and before.count("tl.split(") == 3
    assert "tl.trans(" not in loop and "tl.where(k == 0, _win" in loop


def test_a_file_that_cannot_be_translated_is_named_with_its_line(tmp_path, capsys):
    f = tmp_path / "map.py"
    f.write_text("from numba import cuda\n\n\n@cuda.jit\ndef map_kernel(out, a):\n    i = cuda.threadIdx.x\n"
                 "    print(i)\n    out[i] = a[i] + 10\n")
    assert cli.main(["triton", "1", "--file", str(f)]) == 1
    err = capsys.readouterr().err
    assert "the Triton back end cannot translate this: print() in a kernel" in err
    assert f"{f}:7" in err


def test_the_triton_back_end_is_registered_and_refuses_at_run_time_with_compile_failed(tmp_path):
    backend = get_backend("triton")
    assert isinstance(backend, TritonBackend)
    f = tmp_path / "map.py"
    f.write_text("from numba import cuda\n\n\n@cuda.jit\ndef map_kernel(out, a):\n    i = cuda.threadIdx.x\n"
                 "    out[i] = a[i] + 10\n    print(i)\n")
    runnable = TritonBackend(interpret=True).compile(registry.get(1), f)    # loading is fine ...
    with pytest.raises(CompileFailed) as info:                              # ... translating is not
        runnable.programs(registry.get(1).make_cases()[0])
    assert "print() in a kernel" in str(info.value) and info.value.lineno == 8


def test_without_torch_and_triton_the_back_end_says_so_in_one_sentence(tmp_path):
    script = ("from puzzles.graduate.triton_backend import TritonBackend; "
              "print(TritonBackend(interpret=True).unavailable())")
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=blocking_env(tmp_path), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == 'torch and triton are not installed (pip install -e ".[gpu]")'


def _check(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "puzzles.graduate.triton_check", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=900)


@needs_triton
@pytest.mark.slow
def test_references_pass_their_cases_under_the_interpreter():
    proc = _check(["--interpret", "map", "shared", "matmul", "transpose-tiled", "warp-scan", "histogram"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^6 passed, 0 failed$", proc.stdout, re.M)


@needs_triton
@pytest.mark.slow
def test_references_compile_for_sm90_without_a_gpu():
    proc = _check(["--aot", "map", "dot-product", "hillis-steele", "flash-attention"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^4 passed, 0 failed$", proc.stdout, re.M)


@needs_triton
@pytest.mark.slow
def test_a_wrong_solution_fails_under_the_interpreter(tmp_path):
    f = tmp_path / "shared.py"        # no syncthreads is fine for registers; a wrong reversal is not
    f.write_text(
        "import numba\nfrom numba import cuda\n\nTPB = 8\n\n\n@cuda.jit\ndef reverse_kernel(out, a, n):\n"
        "    s = cuda.shared.array(TPB, numba.float32)\n    t = cuda.threadIdx.x\n    start = cuda.blockIdx.x * TPB\n"
        "    if start + t < n:\n        s[t] = a[start + t]\n    cuda.syncthreads()\n"
        "    if start + t < n:\n        out[start + t] = s[TPB - 1 - t]\n")
    proc = subprocess.run([sys.executable, "-m", "puzzles.graduate", "shared", "--file", str(f), "--interpret"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = next(ln for ln in proc.stdout.splitlines() if ln.split()[:3] == ["8", "shared", "triton"])
    assert "FAIL" in row and "0 of 1 correct under Triton's interpreter" in proc.stdout
