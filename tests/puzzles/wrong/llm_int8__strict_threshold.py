# WRONG: llm-int8 expect=mismatch
# Flags a column only when some |x| > 6: a column whose largest magnitude is exactly 6 stays in the int8
# part, against the rule |x| >= 6.
import numba
from numba import cuda

THRESHOLD = 6.0
SCAN_TPB = 64
ROW_TPB = 64
TILE = 16


@cuda.jit
def find_outliers(x, outlier):
    k = cuda.grid(1)
    if k < x.shape[1]:
        flag = 0
        for m in range(x.shape[0]):  # neighbouring threads read neighbouring columns of a row
            if abs(x[m, k]) > THRESHOLD:
                flag = 1
        outlier[k] = flag


@cuda.jit
def quantize_rows(x, outlier, x_q, x_scale):
    red = cuda.shared.array(ROW_TPB, numba.float32)
    m = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    amax = numba.float32(0.0)
    for k in range(t, cols, ROW_TPB):
        if outlier[k] == 0:
            amax = max(amax, abs(x[m, k]))
    red[t] = amax
    cuda.syncthreads()
    stride = ROW_TPB // 2
    while stride > 0:
        if t < stride:
            red[t] = max(red[t], red[t + stride])
        cuda.syncthreads()
        stride //= 2
    scale = red[0] / numba.float32(127.0)
    for k in range(t, cols, ROW_TPB):
        q = 0
        if outlier[k] == 0 and scale != 0:
            q = round(x[m, k] / scale)
        x_q[m, k] = q
    if t == 0:
        x_scale[m] = scale


@cuda.jit
def int8_outlier_matmul(x, x_q, x_scale, outlier, w_q, w_scale, y):
    a = cuda.shared.array((TILE, TILE), numba.int8)
    b = cuda.shared.array((TILE, TILE), numba.int8)
    xo = cuda.shared.array((TILE, TILE), numba.float32)   # x in outlier columns, 0 elsewhere
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    rows = x.shape[0]
    inner = x.shape[1]
    cols = w_q.shape[1]
    acc = numba.int32(0)
    acc_f = numba.float32(0.0)
    for k0 in range(0, inner, TILE):
        k = k0 + tx
        a[ty, tx] = 0
        xo[ty, tx] = 0.0
        if row < rows and k < inner:
            a[ty, tx] = x_q[row, k]
            if outlier[k] != 0:
                xo[ty, tx] = x[row, k]
        b[ty, tx] = 0
        if k0 + ty < inner and col < cols:
            b[ty, tx] = w_q[k0 + ty, col]
        cuda.syncthreads()
        for kk in range(TILE):
            wv = b[kk, tx]
            acc += numba.int32(a[ty, kk]) * numba.int32(wv)
            acc_f += xo[ty, kk] * wv
        cuda.syncthreads()
    if row < rows and col < cols:
        y[row, col] = acc * x_scale[row] * w_scale[col] + acc_f * w_scale[col]
