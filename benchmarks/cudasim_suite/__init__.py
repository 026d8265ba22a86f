"""numba-cuda's own test suite on numba's simulator and on gpusim: ``python -m benchmarks.cudasim_suite``."""
