"""``alignment=`` on ``cuda.shared.array`` / ``cuda.local.array``, as numba-cuda takes it: checked at compile
time with numba-cuda's rules (a constant integer, positive, a power of two, a multiple of 8), and a static
shared array placed at a multiple of it, which moves the addresses the bank and request counts see and the
bytes of shared memory a block needs. A declaration whose array is never used compiles too."""

from __future__ import annotations

import numpy as np
import pytest
from simkit import load_module, run, run_clean

from gpusim import KernelCompileError

SOURCE = """
    import numba
    from numba import cuda

    def k(out):
        a = cuda.shared.array(3, numba.uint8)
        b = cuda.shared.array({n}, numba.uint8{align})
        cuda.local.array(4, numba.float32, alignment=16)  # declared, never used
        i = cuda.threadIdx.x
        if i == 0:
            a[0] = 1
        b[i] = 2
        cuda.syncthreads()
        out[i] = b[i] + a[0]
"""


def launch(tmp_path, n=32, align=""):
    mod = load_module(tmp_path, SOURCE.format(n=n, align=align))
    return mod, run(mod.k, 1, 4, np.zeros(4, np.int64))


@pytest.mark.parametrize("align, base", [("", 16), (", alignment=None", 16), (", alignment=8", 16),
                                         (", alignment=128", 128), (", alignment=256", 256)])
def test_a_static_shared_array_starts_at_a_multiple_of_its_alignment(tmp_path, align, base):
    # the 3 bytes of `a` end at 3; without alignment= (or below 16) the next array starts at 16
    _, report = launch(tmp_path, align=align)
    assert not report.faults
    bases = {a.name: a.base_address for a in report.arrays if a.space == "shared"}
    assert bases == {"a": 0, "b": base}


def test_the_padding_counts_toward_a_blocks_48_kib(tmp_path):
    n = 48 * 1024 - 64   # fits after `a` at 16 (16 + n <= 49152), not at 128
    out = np.zeros(4, np.int64)
    mod = load_module(tmp_path, SOURCE.format(n=n, align=""))
    run_clean(mod.k, 1, 4, out)
    assert out.tolist() == [3, 3, 3, 3]
    mod = load_module(tmp_path, SOURCE.format(n=n, align=", alignment=128"))
    report = run(mod.k, 1, 4, np.zeros(4, np.int64))
    assert report.faults and f"{128 + n} bytes of static shared memory" in report.faults[0].message


@pytest.mark.parametrize("value, words", [("-1", "positive"), ("0", "positive"), ("3", "a power of 2"),
                                          ("17", "a power of 2"), ("4", "a multiple of 8"),
                                          ("1.5", "a constant integer"), ("'16'", "a constant integer")])
def test_an_invalid_alignment_is_refused_with_numbas_words(tmp_path, value, words):
    mod = load_module(tmp_path, SOURCE.format(n=32, align=f", alignment={value}"))
    with pytest.raises(KernelCompileError) as e:
        run(mod.k, 1, 4, np.zeros(4, np.int64))
    assert words in e.value.message and e.value.lineno == 7
