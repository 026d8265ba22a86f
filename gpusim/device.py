"""The GPU that gpusim models: the numbers every layer agrees on (NVIDIA's for compute capability 7.0-9.0)."""

#: threads of a warp: lanes that execute one instruction together; warp intrinsics and masks have 32 bits
WARP_SIZE = 32
#: a 32-bit mask naming every lane of a warp
FULL_MASK = 0xFFFF_FFFF
#: threads in one block, at most
MAX_THREADS_PER_BLOCK = 1024
#: static shared memory one block may declare (dynamic shared memory can be asked for beyond it)
MAX_STATIC_SHARED = 48 * 1024
#: shared memory of one block, static and dynamic together, at most (an H200's opt-in limit per block)
MAX_SHARED_PER_BLOCK = 227 * 1024
#: local arrays of one thread, at most (the stack frame the GPU's compiler allows)
MAX_LOCAL_PER_THREAD = 512 * 1024
#: the largest grid and block, per dimension (x, y, z)
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_BLOCK = (1024, 1024, 64)
#: the most threads the simulator runs in one launch (its own limit, not the GPU's): its per-thread counts
#: (``LaunchReport.counts``) take 8 bytes per thread and array, 128 MiB per array at this size
MAX_SIMULATED_THREADS = 1 << 24
