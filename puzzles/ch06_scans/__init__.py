"""Chapter 6: Scans."""

NUMBER = 6
TITLE = 'Scans'
INTRODUCTION = """\
# Chapter 6 · Scans

A *scan* (prefix sum) looks sequential: element i needs every element before it. It is not: with an
associative operator the work can be split into a tree, and a scan becomes one of the most useful parallel
building blocks there is: stream compaction, radix sort, sparse formats, and the recurrences of state-space
models all rest on it.

The chapter walks from the simple, work-hungry Hillis-Steele scan to the work-efficient Blelloch scan,
then past the size of one block (scan the blocks, scan their totals, add them back), then to scans that
restart at segment boundaries and to a linear recurrence, the selective scan at the heart of Mamba.

**After this chapter you can** write inclusive and exclusive scans in shared memory, count their work and
their barriers, scan arrays of any length across blocks, and recognise when a recurrence can be scanned
in parallel.

**Goes deeper:** *Parallel Prefix Sum (Scan) with CUDA* — GPU Gems 3, ch. 39 (Harris, Sengupta, Owens);
*Mamba: Linear-Time Sequence Modeling with Selective State Spaces* (2023) — Gu, Dao, section 3.3.
"""
