"""Chapter 1: Threads and blocks."""

NUMBER = 1
TITLE = 'Threads and blocks'
INTRODUCTION = """\
# Chapter 1 · Threads and blocks

A GPU does not run your function once: it runs it thousands of times at the same moment, once per *thread*.
You write the kernel from the point of view of a single thread. That thread asks "who am I?"
(`cuda.threadIdx`, `cuda.blockIdx`, `cuda.blockDim`), turns the answer into the index of the element it
owns, and does its small share of the work. Threads come in *blocks*, and blocks make up the *grid* of a
launch.

The seven puzzles go from one block that fits the data exactly to grids of many blocks in two dimensions,
where some threads fall outside the data and must do nothing.

**After this chapter you can** write a kernel that gives every element its own thread, compute a global
index in one or two dimensions, guard against the threads past the end of the data, and choose a grid that
covers any size.

**Goes deeper:** *GPU Glossary* — Modal (the entries *Thread*, *Thread Block*, *Thread Block Grid* and
*CUDA Programming Model*); *Making Deep Learning Go Brrrr From First Principles* — Horace He, on why these
element-wise kernels are limited by memory, not arithmetic.
"""
