"""Chapter 5: Atomics and irregular work."""

NUMBER = 5
TITLE = 'Atomics and irregular work'
INTRODUCTION = """\
# Chapter 5 · Atomics and irregular work

Not every problem gives each thread its own output. In a histogram many threads add to the same bin; in a
sparse matrix each row has a different amount of work. *Atomic* operations (`cuda.atomic.add`,
`cuda.atomic.max`, `cuda.atomic.cas`, ...) let threads update the same element without losing each other's
updates, at a price: updates to one address are done one after another.

The puzzles show how to keep that price low, with private copies in shared memory that are merged once
per block, and how to split uneven work so that every thread stays busy and the answer does not depend on
the order in which threads happen to meet.

**After this chapter you can** build a histogram with shared-memory privatisation, multiply a sparse CSR
matrix by a vector, and find each row's maximum and its column with a warp reduction over pairs that breaks
ties the same way every time.

**Goes deeper:** *GPU Glossary* — Modal, entry *Shared Memory*; GPU MODE lectures, the lecture on sparsity;
*Assisted Generation* — Hugging Face (greedy decoding is an argmax over the logits at every step).
"""
