"""The compiled back end: the typed kernel IR -> Python source compiled by ``numba.njit``, per kernel and per
specialisation (argument types, which arguments are one array, instrumentation on or off).

The execution model (read with ``gpusim.backends.lanes.codegen``'s)
--------------------------------------------------------------------
The compiled back end computes exactly what the lanes back end computes — outputs, faults (with the same
block, thread, line, counts, and in the same order), race reports, metrics, per-thread and per-element
counts, the phase trace — by running the same schedule:

* **The same chunks, the same lockstep.** Blocks run in the lanes back end's chunks (``limits.blocks_per_chunk``),
  and a chunk's threads advance *statement by statement together*, as lane vectors do. The chunk-level
  program (``codegen.py``) is the lanes back end's generated code restated: the same masks for divergent
  branches and loops, the same ``break``/``continue``/``return`` masks, the same step budget counted per
  vector iteration, the same barrier checks (every live thread of a block must reach a ``syncthreads``,
  and a block's threads pass it together: the lockstep *is* phase by phase).
* **Loops over lanes instead of vector operations.** Statements are flattened to per-lane operations
  (``flatten.py``) and a run of them becomes one loop over the chunk's lanes (a *region*, ``regions.py``),
  with temporaries in registers. Running lane by lane instead of operation by operation changes nothing a
  kernel or an observer can see as long as no lane sees another's effect inside the region, so a region
  holds at most one access to each array that has race records; what each access finds (faults, race
  hits, trace rows, per-warp requests) is staged per access and replayed after the loop in the lanes back
  end's order, and the race clock gives each access its own tick.
* **Whole-vector operations between regions** (``chunkops.py``): barriers, warp intrinsics (shuffles,
  votes, matches over 32-lane warps, with the warp-mask faults), device-function calls (inlined with their
  own masks), and math functions, which call NumPy over the lanes so their bits are NumPy's.
* **Observers in compiled code.** The race shadow (``rtlib.track``) is updated per lane; a global array
  that is only read has none. Requests, sectors, wavefronts and bank conflicts are computed per warp
  (``rtlib.flush_global``/``flush_shared``), with the per-thread and per-element counts, DRAM segments and
  the trace rows; the latency rounds (``rt_rounds.py``: each warp's DRAM, L2 and shared rounds, barriers per
  block, atomics per address, shared-atomic passes) per warp in the same replay; ``results.py`` hands the
  totals to the same observer objects the lanes back end feeds, whose ``finish`` writes the report.

* **Both cores.** Chunks run on several threads where that pays (``parallel.py``, ``GPUSIM_THREADS``), each
  on private records merged in chunk order; when two threads' chunks touched one global element with a write, the
  launch runs again on one thread (an instrumented one also when two threads' chunks touched one 64-byte
  segment: which chunk touched it first decides a DRAM or an L2 round), so the report never depends on the
  thread count and races between blocks of different chunks are found as always.

Before generating anything, ``support.py`` checks the IR against a whitelist of node classes, their fields,
value types and launch arguments: a node or field the front end gained later, and what main added since this
back end was written (``raise``, grid sync, complex values, records, array views/reshape/reinterpret, CharSeq,
``alignment=``, recursive device functions, tuple/datetime64/float16 arguments, new intrinsics), is refused.
What it does not run yet raises ``NotCompiled`` with the reason: ``backend="compiled"`` reports it as a
``LaunchError``, ``backend="auto"`` runs the lanes back end. That is: the phase trace's snapshots of shared
memory (a traced launch, ``trace=True``, of a kernel with shared arrays: ``entry.SHARED_SNAPSHOTS``), when
instrumented a per-lane ``range`` loop the GPU's compiler unrolls at run time (its requests and rounds are
regrouped by slot in the lanes back end: ``codegen.UNROLLED``), custom observers, ``print``, dynamic shared
memory, float16, device functions returning tuples through a call, the front end's join conversions of locals
some path never assigned, uniform loops of scalar work only (numba miscompiles their step-budget exit) and a
few rare forms. ``launch``'s default back end is the lanes one.
Compiled code is cached on disk (``cache.py``): a second process pays no compile.
"""

from __future__ import annotations

from . import cache
from .values import NotCompiled

cache.refresh_helper_cache()   # before any of the package's compiled helpers loads from numba's cache

__all__ = ["NotCompiled"]
