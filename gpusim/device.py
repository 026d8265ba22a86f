"""The GPU that gpusim models: the numbers every layer agrees on (NVIDIA's for compute capability 7.0-9.0)."""

#: threads of a warp: lanes that execute one instruction together; warp intrinsics and masks have 32 bits
WARP_SIZE = 32
#: a 32-bit mask naming every lane of a warp
FULL_MASK = 0xFFFF_FFFF
#: threads in one block, at most
MAX_THREADS_PER_BLOCK = 1024
#: static shared memory one block may declare (dynamic shared memory can be asked for beyond it)
MAX_STATIC_SHARED = 48 * 1024
#: the largest grid and block, per dimension (x, y, z)
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_BLOCK = (1024, 1024, 64)
#: what the simulator's per-block bookkeeping (barrier epochs, phases) may take for one launch
MAX_BOOKKEEPING_BYTES = 1 << 31
