"""Chapter 4: Warps."""

NUMBER = 4
TITLE = 'Warps'
INTRODUCTION = """\
# Chapter 4 · Warps

A block is not one crowd of threads but groups of 32 that execute in lockstep: *warps*. Inside a warp,
threads can hand values to each other directly, register to register, with *shuffles*
(`cuda.shfl_down_sync`, `cuda.shfl_sync`, ...) and can vote (`cuda.ballot_sync`), with no shared memory and no
barrier. The mask argument names the lanes that take part; a lane left out of it, or one that is not
executing the instruction, makes the result undefined, and the simulator says so.

**After this chapter you can** reduce and scan 32 values in five shuffle steps, compact a stream with a
ballot and a population count, and broadcast one lane's value (a running maximum, for instance) to the
whole warp.

**Goes deeper:** GPU MODE lectures, the lecture on reductions; *GPU Glossary* — Modal, entry *Warp*;
*Parallel Prefix Sum (Scan) with CUDA* — GPU Gems 3, ch. 39, sections 39.2.1 and 39.3.1.
"""
