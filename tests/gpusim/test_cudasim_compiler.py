"""The drop-in's compile_ptx / inspect_llvm / inspect_asm are numba-cuda's real compiler (gpusim.cudasim.compiler).

The expected values are the PTX ISA's and NVVM's, not gpusim's: ``cc=(10, 0)`` is ``.target sm_100``; the
default compute capability is 9.0 (``sm_90``); ``shfl_down_sync`` is NVVM's ``llvm.nvvm.shfl.sync.i32`` with
the constant mode 2 (idx 0, up 1, down 2, bfly 3). The compiling tests need numba-cuda's NVVM (the ``[ptx]``
extra) and are skipped without it; the message test runs only without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpusim.cudasim.compile_child import _missing

CHILD = Path(__file__).with_name("cudasim_compiler_child.py")


def _nvvm_installed() -> bool:
    """Can numba-cuda compile to PTX here (its NVVM, NVRTC and headers)? Asked of numba-cuda itself: this test
    process has numba.cuda's compiler, not its simulator."""
    try:
        from numba import cuda, float32

        def probe(a):
            a[0] = 1

        cuda.compile_ptx(probe, (float32[:],), cc=(9, 0))
        return True
    except Exception:
        return False


HAVE_NVVM = _nvvm_installed()
needs_nvvm = pytest.mark.skipif(not HAVE_NVVM, reason='needs numba-cuda\'s NVVM: pip install -e ".[ptx]"')


@pytest.fixture(scope="module")
def found() -> dict:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", GPUSIM_CUDASIM="strict")
    done = subprocess.run([sys.executable, str(CHILD)], capture_output=True, text=True, env=env, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@needs_nvvm
@pytest.mark.slow
def test_compile_ptx_is_numba_cudas_for_the_compute_capability_given_or_9_0(found):
    assert "error" not in found, found.get("error")
    assert found["targets"] == ["sm_100"]
    assert found["resty"] == "none"  # a kernel: numba-cuda's compile_ptx gives (ptx, none)
    assert found["default_targets"] == ["sm_90"]
    assert found["asked_again"] == [True, 0]  # the same request again: answered from memory, no new child


@needs_nvvm
@pytest.mark.slow
def test_inspect_llvm_of_an_eager_kernel_has_nvvms_shuffle_with_a_constant_mode(found):
    assert found["ran"] == list(range(2, 32)) + [30, 31]  # it ran on gpusim too: lane i reads lane i + 2
    assert found["llvm_keys"] == ["(Array(int32, 1, 'A', False, aligned=True), int32)"]
    assert found["shfl_calls"], "no llvm.nvvm.shfl.sync.i32 call in the IR"
    for call in found["shfl_calls"]:
        mode = call.split("(", 1)[1].split(",")[1].strip()
        assert mode == "i32 2", call


@needs_nvvm
@pytest.mark.slow
def test_inspect_asm_of_a_lazy_kernel_is_ptx_for_its_launched_signature_with_its_device_function(found):
    assert found["asm_keys"] == ["(Array(float32, 1, 'C', False, aligned=True),)"]
    assert found["asm_targets"] == ["sm_90"]
    assert found["asm_entries"] == 1 and found["asm_externs"] == 0


@needs_nvvm
@pytest.mark.slow
def test_numba_cudas_typing_error_reaches_the_caller(found):
    kind, message = found["bad"]
    assert kind == "TypingError" and "no_such_attribute" in message


@pytest.mark.skipif(HAVE_NVVM, reason="numba-cuda's NVVM is installed here: nothing is missing")
@pytest.mark.slow
def test_without_the_extra_compiling_says_which_extra_to_install(found):
    assert "gpu-puzzles[ptx]" in found["error"]
    assert "not installed" in found["error"]


def test_only_a_missing_nvvm_or_nvrtc_counts_as_the_extra_missing():
    class NvvmSupportError(Exception):
        pass

    class CudaSupportError(Exception):
        pass

    assert _missing(NvvmSupportError("libNVVM cannot be found"))
    assert not _missing(CudaSupportError("CUDA driver library cannot be found"))  # no GPU: not the extra
    assert not _missing(TypeError("Unknown attribute 'x'"))
