"""Two questions for the GPU: does numba-cuda fuse float64 a*b + c, and does it accept a shared-array shape
written as an expression inside a tuple? Run on a GPU machine: ``python3 benchmarks/gpu/contraction_check.py``.
"""

import numpy as np

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

import numba  # noqa: E402
from numba import cuda  # noqa: E402

T = 4


@cuda.jit
def mad64(a, b, c, out):
    i = cuda.threadIdx.x
    out[i] = a[i] * b[i] + c[i]


def main() -> None:
    e = 2.0 ** -30
    a = np.array([1 + e] * 4)
    b = np.array([1 - e] * 4)
    c = np.array([-1.0] * 4)
    out = cuda.to_device(np.zeros(4))
    mad64[1, 4](cuda.to_device(a), cuda.to_device(b), cuda.to_device(c), out)
    got = out.copy_to_host()[0]
    print(f"float64 a*b+c on the GPU: {got!r}; fused would be {-(e * e)!r}, unfused {(a[0] * b[0]) + c[0]!r}")

    def tuple_expr(out):
        s = cuda.shared.array((T, T + 1), numba.float32)
        s[0, 0] = 1
        out[0] = s[0, 0]

    try:
        cuda.jit(tuple_expr)[1, 1](cuda.to_device(np.zeros(1, np.float32)))
        print("shape (T, T + 1): accepted")
    except Exception as exc:
        print(f"shape (T, T + 1): rejected ({type(exc).__name__})")


if __name__ == "__main__":
    main()
