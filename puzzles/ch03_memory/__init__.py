"""Chapter 3: Memory efficiency."""

NUMBER = 3
TITLE = 'Memory efficiency'
INTRODUCTION = """\
# Chapter 3 · Memory efficiency

A correct kernel can still be slow, and usually the reason is memory. The 32 threads of a warp load
together: when neighbouring threads read neighbouring addresses the hardware fetches a few 32-byte
*sectors*; when they read scattered addresses it fetches many sectors and uses a sliver of each. Shared
memory has its own trap, *bank conflicts*, when threads of a warp need different words from the same bank.

This chapter is about counting bytes. The simulator counts sectors, requests and bank conflicts the way
Nsight Compute does, and the stars ask for the numbers a well-written kernel reaches. ctrl+g shows them per
line of your code.

**After this chapter you can** tell a coalesced access from a strided one by looking at the index, fix a
transpose with a shared-memory tile (and pad it against bank conflicts), cover any size with a grid-stride
loop, and compute a kernel's arithmetic intensity to say whether it is memory-bound or compute-bound.

**Goes deeper:** *GPU Glossary* — Modal (*Memory Coalescing*, *Bank Conflict*, *Warp Divergence*);
*Making Deep Learning Go Brrrr From First Principles* — Horace He (compute, memory bandwidth and overhead);
Simon Boehm's matmul worklog, kernel 2.
"""
