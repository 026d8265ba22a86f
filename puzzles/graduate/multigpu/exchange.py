"""A rank process's share of a case: its arrays, its mirrors of peers' arrays, and the exchange at each epoch.

**Arrays and mirrors.** A process holds every array ``x@d`` of the logical ranks ``d`` placed on it
(``tasks.placement``), as tensors on its device. For every launch of rank ``d`` that is given a peer's
array ``x@q`` (``q != d``) it also holds a *mirror*: a tensor of the same shape and dtype, rank ``d``'s
copy of ``x@q``. The launch reads the mirror where the simulator's kernel read ``x@q`` over a link.

**The exchange.** At the start of epoch ``e`` (``plan.py``), for every transfer of the plan in its order
(owner, reader, buffer):

* owner and reader in this process: the elements are copied from ``x@q`` into ``d``'s mirror;
* only the owner here: its elements of ``x@q`` are sent to the reader's process;
* only the reader here: they are received into ``d``'s mirror.

The sends and receives of one epoch go out as one ``torch.distributed.batch_isend_irecv`` (one NCCL
group: both directions of a link at once) and are waited for on the stream before the epoch's kernels.
A transfer of one contiguous range sends and receives views of the arrays themselves (no copy); one of
several ranges is packed with ``index_select`` and unpacked with ``index_copy_`` (one gather and one
scatter kernel, inside the timed run). gloo takes host tensors only: with GPU tensors (``--same-gpu``) the
exchange stages them through host memory.

In the checked run every mirror is first filled with poison (NaN, or 0 for integers) at each epoch, so a
kernel that read anything the plan did not send would compute NaNs and fail its check: the exchange is
seen to carry exactly what the kernels read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...model import Case, LaunchStep, Sync
from ...multidevice import device_of
from .plan import Plan


@dataclass
class _Move:
    """One transfer as this process performs it."""

    kind: str                 # "local", "send", "recv"
    peer: int                 # the other process (send/recv)
    src: Any = None           # the owner's array, flat (local, send)
    dst: Any = None           # the reader's mirror, flat (local, recv)
    index: Any = None         # element indices when there are several ranges
    span: tuple[int, int] | None = None   # the one range otherwise
    nbytes: int = 0
    link: str = ""            # "q->d" between logical ranks
    tag: int = 0              # the transfer's place among the epoch's transfers: the same on both ends
    staging: Any = None       # recv: where the packed elements arrive


@dataclass
class RankShare:
    """The arrays of the logical ranks on one process, their mirrors, and the launches in epoch order."""

    engine: Any
    case: Case
    mine: list[int]
    arrays: dict[str, Any] = field(default_factory=dict)                 # "x@d" -> tensor (d in mine)
    mirrors: dict[tuple[int, str], Any] = field(default_factory=dict)    # (d, "x@q") -> tensor
    epochs: list[list[tuple[LaunchStep, tuple]]] = field(default_factory=list)

    @classmethod
    def build(cls, engine: Any, case: Case, mine: list[int]) -> RankShare:
        share = cls(engine, case, mine)
        host = case.buffers
        for name, value in host.items():
            if isinstance(value, np.ndarray) and value.ndim > 0 and device_of(name) in mine:
                share.arrays[name] = engine.tensor(value)
        share.epochs = [[]]
        for step in case.steps:
            if isinstance(step, Sync):
                share.epochs.append([])
                continue
            if step.device not in mine:
                continue
            values = []
            for arg in step.args:
                value = arg if isinstance(arg, int) else host[arg]
                if isinstance(value, np.ndarray) and value.ndim > 0:
                    if device_of(arg) == step.device:
                        value = share.arrays[arg]
                    else:
                        key = (step.device, arg)
                        if key not in share.mirrors:
                            share.mirrors[key] = engine.empty_like_host(host[arg])
                            engine.poison(share.mirrors[key])
                        value = share.mirrors[key]
                values.append(engine.bind(value))
            share.epochs[-1].append((step, tuple(values)))
        return share

    def poison_mirrors(self) -> None:
        for mirror in self.mirrors.values():
            self.engine.poison(mirror)


class Exchange:
    """The moves of every epoch for one process, and the transport that carries the remote ones."""

    def __init__(self, plan: Plan, share: RankShare, process: int, place: list[int], transport: Any):
        self.share, self.process, self.transport = share, process, transport
        self.moves: list[list[_Move]] = [[] for _ in range(plan.epochs)]
        torch = share.engine.torch
        counts = [0] * plan.epochs
        for t in plan.transfers:
            tag = counts[t.epoch]
            counts[t.epoch] += 1
            owner_p, reader_p = place[t.owner], place[t.reader]
            if process not in (owner_p, reader_p):
                continue
            if len(t.ranges) == 1:
                index, span = None, t.ranges[0]
            else:
                flat = np.concatenate([np.arange(s, e, dtype=np.int64) for s, e in t.ranges])
                index, span = torch.from_numpy(flat).to(share.engine.device), None
            move = _Move("local", -1, index=index, span=span, nbytes=t.nbytes, link=f"{t.owner}->{t.reader}",
                         tag=tag)
            if owner_p == process:
                move.src = share.arrays[t.buffer].view(-1)
            if reader_p == process:
                move.dst = share.mirrors[(t.reader, t.buffer)].view(-1)
            if owner_p != reader_p:
                move.kind, move.peer = ("send", reader_p) if owner_p == process else ("recv", owner_p)
                if move.kind == "recv" and index is not None:
                    move.staging = torch.empty(t.elements, dtype=move.dst.dtype, device=share.engine.device)
            self.moves[t.epoch].append(move)
        self.sent: dict[str, int] = {}                 # bytes this process sent per link of processes

    def epoch(self, e: int) -> None:
        """Carry out epoch ``e``'s moves (enqueued on the stream; NCCL's waits are on the stream too)."""
        ops = []
        finish = []
        for move in self.moves[e]:
            if move.kind == "local":
                if move.index is None:
                    s, t = move.span
                    move.dst[s:t].copy_(move.src[s:t])
                else:
                    move.dst.index_copy_(0, move.index, move.src.index_select(0, move.index))
            elif move.kind == "send":
                payload = move.src[move.span[0]:move.span[1]] if move.index is None \
                    else move.src.index_select(0, move.index)
                ops.append(("send", move.peer, move.tag, payload))
                key = f"{self.process}->{move.peer}"
                self.sent[key] = self.sent.get(key, 0) + move.nbytes
            else:
                if move.index is None:
                    ops.append(("recv", move.peer, move.tag, move.dst[move.span[0]:move.span[1]]))
                else:
                    ops.append(("recv", move.peer, move.tag, move.staging))
                    finish.append(move)
        if ops:
            self.transport.exchange(ops)
        for move in finish:
            move.dst.index_copy_(0, move.index, move.staging)

    def reset_counts(self) -> None:
        self.sent = {}


class Transport:
    """Point-to-point moves through torch.distributed: one batch per epoch, waited for before the kernels."""

    def __init__(self, dist: Any, stage_through_host: bool):
        self.dist = dist
        self.stage = stage_through_host

    def exchange(self, ops: list[tuple[str, int, int, Any]]) -> None:
        """``ops``: (kind "send"/"recv", peer process, tag, tensor), in the plan's order on every process
        (NCCL pairs a peer's sends and receives in order; gloo by tag)."""
        dist = self.dist
        p2p, back = [], []
        for kind, peer, tag, tensor in ops:
            if self.stage and tensor.device.type != "cpu":
                host = tensor.cpu() if kind == "send" else tensor.new_empty(tensor.shape, device="cpu")
                if kind == "recv":
                    back.append((tensor, host))
                tensor = host
            fn = dist.isend if kind == "send" else dist.irecv
            p2p.append(dist.P2POp(fn, tensor, peer, tag=tag))
        for request in dist.batch_isend_irecv(p2p):
            request.wait()
        for device_tensor, host in back:
            device_tensor.copy_(host)
