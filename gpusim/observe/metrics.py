"""Instrumentation: memory-traffic metrics under Nsight Compute's names, and the observers that fill a report.

``instrumentation(trace)`` is what ``gpusim.launch`` calls when ``instrument=True``: it returns the observers
that fill ``report.metrics`` (``TrafficObserver``; ``RoundsObserver`` adds the latency rounds the timing model
reads), ``report.counts`` (``AccessCounts``), ``report.flops``
and, unless ``trace`` is False, ``report.trace`` (bounded; ``trace="full"`` records everything).

``report.metrics`` keys are ncu metric names whose values equal what ncu reports for the same launch on a GPU
of compute capability 7.0-9.0 (checked on an H200: docs/metrics.md, tests/gpusim/test_metrics_ncu.py), except
``dram__bytes_read.sum`` / ``dram__bytes_write.sum``, which are estimates (``gpusim.observe.dram``). Keys gpusim adds
of its own start with ``gpusim__``.
"""

from __future__ import annotations

import numpy as np

from .banks import shared_access_stats
from .coalescing import SECTOR, GlobalStats, global_stats
from .counts import AccessCounts, CountsObserver
from .dram import SegmentMap
from .events import AccessEvent, ArrayInfo, LaunchInfo, Observer
from .flops import FlopsObserver
from .requests import requests_of
from .rounds import RoundsObserver
from .trace import TraceObserver
from .unroll import Regrouper

__all__ = ["AccessCounts", "METRIC_KEYS", "TrafficObserver", "instrumentation"]

OPS = ("ld", "st", "atom", "red")
METRIC_KEYS = (
    *(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum" for op in OPS),
    *(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum" for op in OPS),
    *(f"smsp__sass_inst_executed_op_{sp}_{op}.sum" for sp in ("global", "shared") for op in ("ld", "st")),
    "smsp__sass_inst_executed_op_global_atom.sum", "smsp__sass_inst_executed_op_global_red.sum",
    *(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum" for op in ("ld", "st")),
    *(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum" for op in ("ld", "st")),
    "dram__bytes_read.sum", "dram__bytes_write.sum",
)


class TrafficObserver(Observer):
    """Counts requests, sectors, wavefronts, bank conflicts and DRAM segments of every access."""

    def start(self, launch: LaunchInfo, arrays: list[ArrayInfo]) -> None:
        self.tpb = launch.threads_per_block
        self.m = dict.fromkeys(METRIC_KEYS, 0)
        self.segments: dict[int, SegmentMap] = {}
        self.bytes: dict[int, list] = {}                     # global array id -> [info, requested, moved]
        self.ideal_sectors = dict.fromkeys(OPS, 0)
        self.sites: dict[tuple, list[int]] = {}              # (array, space, line, kind) -> totals, see sites()
        # accesses in loops the compiler unrolls are counted by the warp instructions it makes of them
        self.unrolled = Regrouper(launch.threads_per_block, launch.warps_per_block)

    def on_access(self, ev: AccessEvent) -> None:
        if ev.array.space not in ("global", "shared", "const") or len(ev.gtid) == 0:
            return
        now, kept = self.unrolled.split(ev)
        if now is not None:
            self._count(now)
        if kept and self.unrolled.over_budget():
            self._flush(None)

    def on_loop_exit(self, loop) -> None:
        self._flush(loop.id)

    def _flush(self, loop_id: int | None) -> None:
        for ev in self.unrolled.flush(loop_id):
            self._count(ev)

    def _count(self, ev: AccessEvent) -> None:
        space = ev.array.space
        a = ev.array
        req = requests_of(ev, self.tpb)
        kind = ev.kind
        if space == "shared":
            if kind in ("ld", "st"):
                s = shared_access_stats(req, a, ev.flat)
                m = self.m
                m[f"smsp__sass_inst_executed_op_shared_{kind}.sum"] += s.requests
                m[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{kind}.sum"] += s.wavefronts
                m[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{kind}.sum"] += s.conflicts
                site = self.sites.setdefault((a.name, space, ev.lineno, kind), [0, 0, 0])
                site[0] += s.requests
                site[1] += s.wavefronts
                site[2] += s.conflicts
            return
        addr = a.address(ev.flat)
        monotone = req.monotone(addr)
        owner = a.memory  # a record field's bytes are its array of records' (one DRAM footprint for all fields)
        seg = self.segments.get(owner.id)
        if seg is None:
            seg = self.segments[owner.id] = SegmentMap(owner.base_address, owner.nbytes)
        seg.touch(addr, read=kind != "st", write=kind != "ld", monotone=monotone)
        if space == "const":
            return
        if kind in ("atom", "red") and self._aggregated(ev, addr):
            # the compiler turns an integer atomic on one address into one lane's atomic per warp
            s = GlobalStats(req.count, req.count, req.count, req.count * a.itemsize)
        else:
            s = global_stats(req, addr, a.itemsize, atomic=kind in ("atom", "red"))
        m = self.m
        m[f"l1tex__t_requests_pipe_lsu_mem_global_op_{kind}.sum"] += s.requests
        m[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{kind}.sum"] += s.sectors
        m[f"smsp__sass_inst_executed_op_global_{kind}.sum"] += s.requests
        self.ideal_sectors[kind] += s.ideal_sectors
        b = self.bytes.setdefault(a.id, [a, 0, 0])
        b[1] += s.requested_bytes
        b[2] += s.sectors * SECTOR
        site = self.sites.setdefault((a.name, space, ev.lineno, kind), [0, 0, 0, 0])
        site[0] += s.requests
        site[1] += s.sectors
        site[2] += s.ideal_sectors
        site[3] += s.requested_bytes

    def access_sites(self) -> list[dict]:
        """One entry per source access (array, line, kind): what its requests cost, in line order.

        Global: requests, sectors, ideal sectors, requested and moved bytes, and the coalescing efficiency of
        its requests (requested ÷ moved bytes). Shared: requests, wavefronts and bank conflicts.
        """
        out = []
        for (name, space, line, kind), v in sorted(self.sites.items(), key=lambda kv: (kv[0][2], kv[0][0])):
            if space == "shared":
                out.append({"array": name, "space": space, "line": line, "kind": kind, "requests": v[0],
                            "wavefronts": v[1], "bank_conflicts": v[2]})
            else:
                moved = v[1] * SECTOR
                out.append({"array": name, "space": space, "line": line, "kind": kind, "requests": v[0],
                            "sectors": v[1], "ideal_sectors": v[2], "requested_bytes": v[3],
                            "moved_bytes": moved, "efficiency": v[3] / moved if moved else 1.0})
        return out

    @staticmethod
    def _aggregated(ev: AccessEvent, addr: np.ndarray) -> bool:
        """Would nvcc/NVVM aggregate this atomic per warp (VOTE + POPC + one lane's RED, seen in the SASS)?

        It does so for an integer atomic whose address is the same for every thread at compile time. The
        event says so if the engine marks uniform indices (``ev.uniform``); otherwise an address shared by
        every lane of the event stands in for it.
        """
        if ev.array.dtype.kind not in "iu":
            return False
        uniform = getattr(ev, "uniform", None)
        if uniform is not None:
            return bool(uniform)
        return bool(addr[0] == addr[-1] and np.all(addr == addr[0]))

    def coalescing(self) -> dict[str, dict[str, float]]:
        """{global array name: requested bytes, moved bytes (sectors x 32), efficiency}."""
        out = {}
        for info, requested, moved in self.bytes.values():
            out[info.name] = {"requested_bytes": requested, "moved_bytes": moved,
                              "efficiency": requested / moved if moved else 1.0}
        return out

    def finish(self, report) -> None:
        self._flush(None)        # a launch that faulted inside an unrolled loop
        read = write = 0
        for seg in self.segments.values():
            r, w = seg.bytes()
            read += r
            write += w
        self.m["dram__bytes_read.sum"] = read
        self.m["dram__bytes_write.sum"] = write
        report.metrics.update(self.m)
        report.metrics["gpusim__ideal_sectors_global_ld"] = self.ideal_sectors["ld"]
        report.metrics["gpusim__ideal_sectors_global_st"] = self.ideal_sectors["st"]


def instrumentation(trace: bool | str | None = True) -> list[Observer]:
    """The observers ``gpusim.launch(..., instrument=True, trace=trace)`` runs.

    ``trace``: False (no phase trace), True (bounded trace) or "full" (every access of every block).
    """
    if trace not in (True, False, None, "full"):
        raise ValueError(f"trace must be True, False or 'full', not {trace!r}")
    traffic = TrafficObserver()
    observers: list[Observer] = [traffic, CountsObserver(traffic), FlopsObserver(), RoundsObserver()]
    if trace:
        observers.append(TraceObserver(full=trace == "full"))
    return observers
