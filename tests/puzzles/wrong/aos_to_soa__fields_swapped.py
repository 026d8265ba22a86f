# WRONG: aos-to-soa expect=OutOfBounds
# Thread per record, but indexes soa[r, f] as if the output kept the input's shape: with n = 2 records,
# soa has only 2 columns, and field 2 lands past the end of row r.
from numba import cuda


@cuda.jit
def aos_to_soa(aos, soa, n):
    r = cuda.grid(1)
    if r < n:
        for f in range(4):
            soa[r, f] = aos[r, f]
