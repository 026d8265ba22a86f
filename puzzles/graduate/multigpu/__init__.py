"""Graduate mode on several GPUs: chapter 10's kernels, one process per GPU, peers' arrays through
torch.distributed, checked against the spec and against the library's own collectives, timed as nccl-tests.

The mapping from the simulator to real GPUs, in one place (docs/multi-gpu.md says it for players):

* a case's logical rank ``d`` runs in one rank process (``tasks.placement``); its arrays ``x@d`` are tensors
  on that process's device, and numba-cuda runs its launches there, in issue order, on torch's stream;
* where a launch of rank ``d`` is given a peer's array ``x@q``, it reads rank ``d``'s *mirror* of ``x@q``;
* gpusim runs the case once first (``plan.py``) and records, for every epoch between two ``Sync`` points,
  exactly which elements of ``x@q`` rank ``d``'s launches load; at the start of that epoch those elements
  go from ``q`` to ``d`` (``exchange.py``: NCCL send/recv, one group per epoch, or a local copy when both
  ranks share a process). For a race-free program that is what the load would have read over NVLink.

One idea per module: ``environment`` (the multicast-off variables, what this machine can run), ``tasks``
(what runs, placement, sizes), ``plan`` and ``planjob`` (the simulator's plan, in CPU jobs),
``engines`` (numba-cuda or gpusim under a rank), ``exchange`` (arrays, mirrors, transfers), ``clock``
(timing), ``collectives`` (the library's collectives, bus bandwidth), ``rank`` (one rank process),
``checks`` (judging a task), ``report`` (the table), ``launcher`` (the whole run), ``command`` (the CLI).

Importing this package loads nothing heavy: torch is imported by the launcher and the rank processes only.
"""
