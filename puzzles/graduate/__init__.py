"""Graduate mode: the same solution files on a real NVIDIA GPU, checked, timed and set beside the simulator.

One idea per module:

* ``backend``: the back-end interface (``compile`` -> ``Runnable``: ``run``, ``prepare``, ``time``) and the
  registry of back ends; ``numba_backend``: numba-cuda (the Triton back end plugs in beside it);
* ``timing``: the measurement discipline (warm-up, cold L2, CUDA events behind a spin kernel, adaptive
  repeats, the median); ``device``: what GPU there is and its peaks, measured in the same run;
* ``workload``: the bytes a launch must move; ``estimates``: gpusim's metrics and roofline estimate for the
  same launch, and their cache; ``pool``/``jobs``: those (and the spec checks of large outputs) in CPU
  processes beside the GPU; ``ncu``: Nsight Compute's numbers beside gpusim's;
* ``worker``: the process that uses the GPU; ``run``: the whole run; ``table``: rows, tables, JSON;
  ``cli``: the command line (``gpu-puzzles graduate``, ``python3 -m puzzles.graduate``).

Nothing here is imported by the rest of ``puzzles``; importing this package loads nothing heavy.
"""
