"""Chapter 2: Shared memory."""

NUMBER = 2
TITLE = 'Shared memory'
INTRODUCTION = """\
# Chapter 2 · Shared memory

Reading global memory is slow, and a kernel that reads the same value many times pays for it many times.
Every block has a small, fast scratchpad of its own: *shared memory*. The threads of a block load a tile of
the data into it once, wait for each other at a *barrier* (`cuda.syncthreads()`), and then read their
neighbours' values from the fast copy.

A barrier is a promise: no thread goes past it until every thread of the block has reached it. Forget it,
and one thread reads a slot another has not written yet: a data race, which the simulator names with the
block, the threads and the line.

**After this chapter you can** stage data in shared memory, place barriers where they are needed (and
only there), sum a block's values with a tree reduction, build a prefix sum, and tile a matrix multiply so
each input value is fetched from global memory far fewer times.

**Goes deeper:** GPU MODE lectures 4 (*Intro to Compute and Memory Architecture*) and 9 (*Reductions*);
*Parallel Prefix Sum (Scan) with CUDA* — GPU Gems 3, ch. 39; *How to Optimize a CUDA Matmul Kernel for
cuBLAS-like Performance: a Worklog* — Simon Boehm, kernel 3.
"""
