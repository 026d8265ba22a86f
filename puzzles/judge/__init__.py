"""The judge's parts: the sandbox that runs a player's file, the rebuild of its kernels from source, what
numba-cuda would say about them, and the warm worker the TUI checks through.

``puzzles.checker`` puts them together: the player's code runs only in a child process (``sandbox``); the
judging process rebuilds the kernels from the file's text (``rebuild``), makes fresh inputs, runs gpusim,
compares with the spec and applies the rules, so nothing the file does can reach any of those.
"""
