"""Fuzzing gpusim and the CLI: random kernels, launches and solution files, run under a watchdog.

``cases`` describes a case as plain data; ``kernels`` writes kernels (valid numba-cuda and not), ``launches``
odd launches and arguments and the resource-limit cases, ``solutions`` solution files for ``gpu-puzzles
check --file``; ``execute`` runs a case and names its outcome; ``pool`` runs many under a watchdog in worker
processes; ``reduce`` shrinks a finding to a minimal reproducer. Used by ``tests/gpusim/test_fuzz.py`` and
``benchmarks/fuzz_nightly.py``.
"""
