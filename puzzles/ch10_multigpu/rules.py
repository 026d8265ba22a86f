"""Rules only chapter 10 needs: what crosses the links between devices, built from ``RunStats``."""

from __future__ import annotations

from puzzles.model import Rule, RunStats


def no_peer_stores() -> Rule:
    """Kernels read other devices' memory but never write it (every transfer is a pull).

    This keeps each case runnable on real GPUs with one process per device: a peer read becomes a receive
    into a local copy before the launch (puzzles/multidevice.py).
    """

    def check(s: RunStats) -> str | None:
        if s.peer_store_bytes:
            return (f"the kernels store {s.peer_store_bytes} bytes into other devices' memory; in this chapter a "
                    f"device only reads its peers' arrays and writes its own")
        return None

    return Rule("writes only its own device's memory (peers' arrays are read, never written)", check)


def within_link_budget(algorithm: str) -> Rule:
    """No directed link carries more bytes than the puzzle's bandwidth-optimal algorithm moves over it
    (``RunStats.ideal_link_bytes``, counted by the puzzle for each case)."""

    def check(s: RunStats) -> str | None:
        if not s.ideal_link_bytes:
            return "the case states no link budget, so the traffic cannot be judged"
        for link in sorted(set(s.link_bytes) | set(s.ideal_link_bytes)):
            got, ideal = s.link_bytes.get(link, 0), s.ideal_link_bytes.get(link, 0)
            if got > ideal:
                extra = f"{got / ideal:.2f}x " if ideal else ""
                return (f"link {link} carries {got} bytes where {algorithm} needs {ideal} ({extra}the data a "
                        f"device needs should cross each link once)")
        return None

    return Rule(f"no link carries more bytes than {algorithm} needs", check)


def optimal_makespan(kernel: str) -> Rule:
    """The busy launches of ``kernel`` span no more rounds than the case's best schedule
    (``RunStats.ideal_rounds``): the pipeline bubble is as small as the timing model allows."""

    def check(s: RunStats) -> str | None:
        if not s.ideal_rounds:
            return "the case states no best schedule length, so the bubble cannot be judged"
        busy = [(r, d) for r, d, name, wrote in s.device_launches if name == kernel and wrote]
        if not busy:
            return f"no launch of {kernel} did any work"
        rounds = [r for r, _ in busy]
        span = max(rounds) - min(rounds) + 1
        devices = len({d for _, d, name, _ in s.device_launches if name == kernel})
        if span > s.ideal_rounds:
            measured = 1 - len(busy) / (devices * span)
            best = 1 - len(busy) / (devices * s.ideal_rounds)
            return (f"the pipeline takes {span} ticks where {s.ideal_rounds} are enough: bubble fraction "
                    f"{measured:.3f} (idle stage-ticks / all stage-ticks), the best schedule's is {best:.3f}")
        return None

    return Rule("the pipeline finishes in as few ticks as the best schedule: the smallest bubble", check)
