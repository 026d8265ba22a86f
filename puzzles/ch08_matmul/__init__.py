"""Chapter 8: Matmul to cuBLAS — the steps of the matmul worklog, each judged by the counts it changes."""

NUMBER = 8
TITLE = "Matmul to cuBLAS"

INTRODUCTION = """\
# Chapter 8 · Matmul to cuBLAS

Almost every FLOP of a transformer is spent in a matrix multiply, and a naive CUDA matmul reaches about
1 % of what cuBLAS does on the same GPU. Nothing in the gap is clever mathematics: every step that closes
it moves data less often or in bigger pieces. This chapter walks those steps, in the order of Simon
Boehm's worklog, and judges each one by the numbers it changes — the simulator counts them exactly as
Nsight Compute would.

| puzzle | step | the number it moves |
|---|---|---|
| 48 | coalesced naive kernel | sectors per request: 2.5 instead of 16.5 |
| 49 | shared tiles with thin k-slices | FLOPs per byte loaded: 0.4 → 8 |
| 50 | 1-D register tiles | FLOPs per byte 16; shared loads per multiply-add 2 → 1.125 |
| 51 | 2-D register tiles | FLOPs per byte 32; shared loads per multiply-add 0.25 |
| 52 | conflict-free register tiles | bank conflicts → 0, stores coalesced again |
| 53 | wide loads (four int8 per word) | load requests ÷ 4 for the same sectors |
| 54 | double buffering | one barrier per k-step instead of two |
| 55 | split-K | 1 block → 8 blocks (32 × 32 × 1024, S = 8), for 2·S·m·n·4 extra bytes |

The measure that runs through the chapter is **arithmetic intensity**: floating-point operations per byte
moved. An H100 does about 20 float32 FLOPs in the time it moves one byte from DRAM (67 TFLOP/s against
3.35 TB/s, puzzle 20), so a kernel below that ratio waits on memory. Tiling raises the ratio by reusing
every loaded value many times — first from shared memory, then from registers.

Every value in the test cases is a multiple of 1/8, so every float32 sum is exact and the checker compares
bit for bit, whatever order you add in. Puzzle 55 drops that crutch and shows what order does to real data.

**After this chapter you can** read a GEMM kernel (CUTLASS, Triton's matmul tutorial, a FlashAttention inner
loop) and say what each part of it is for, and you can predict from a tile shape how many bytes and
shared-memory instructions it will cost.

**Goes deeper:** *How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog* — Simon
Boehm (the whole worklog, with Nsight Compute profiles of each kernel); *Making Deep Learning Go Brrrr From
First Principles* — Horace He (why FLOPs per byte decide the speed); CUTLASS's *Efficient GEMM in CUDA*
(double buffering, split-K, warp tiles).
"""
