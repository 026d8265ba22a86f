"""Inputs and launch configurations for the benchmark kernels (shared by both simulators)."""

import numpy as np

from benchmarks import kernels as K


def map_case(n):
    a = np.arange(n, dtype=np.float32)
    return K.map_add, ((n + 255) // 256,), (256,), (a, np.zeros(n, np.float32))


def block_sum_case(n):
    rng = np.random.default_rng(1)
    a = rng.random(n, dtype=np.float32)
    blocks = (n + K.SUM_TPB - 1) // K.SUM_TPB
    return K.block_sum, (blocks,), (K.SUM_TPB,), (a, np.zeros(blocks, np.float32))


def matmul_case(n, tile=K.TILE):
    rng = np.random.default_rng(2)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    g = (n + tile - 1) // tile
    kern = K.tiled_matmul if tile == K.TILE else K.tiled_matmul_16
    return kern, (g, g), (tile, tile), (a, b, np.zeros((n, n), np.float32))


def naive_matmul_case(n):
    """256x256 by 16x16 blocks, no shared memory: every thread reads a row of a and a column of b."""
    rng = np.random.default_rng(3)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    g = (n + 15) // 16
    return K.naive_matmul, (g, g), (16, 16), (a, b, np.zeros((n, n), np.float32))


CASES = {
    "map": map_case,
    "block_sum": block_sum_case,
    "matmul": matmul_case,
    "matmul16": lambda n: matmul_case(n, K.BIG_TILE),
    "naive_matmul": naive_matmul_case,
}
