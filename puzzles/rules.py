"""Checked rules for constraints and stars, built from ``RunStats``.

Each factory returns a ``Rule`` whose ``check`` says, in one sentence, what the solution did wrong.
"""

from __future__ import annotations

from .model import Rule, RunStats


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def max_global_reads_per_thread(limit: int, array: str | None = None) -> Rule:
    """No thread reads global memory more than ``limit`` times (in ``array``, or in all global arrays)."""
    what = f"`{array}`" if array else "global memory"

    def check(s: RunStats) -> str | None:
        got = s.reads_per_thread_by_array.get(array, 0) if array else s.global_reads_per_thread
        if got > limit:
            return f"a thread reads {what} {_plural(got, 'time')}; the limit is {limit}"
        return None

    return Rule(f"at most {_plural(limit, 'read')} of {what} per thread", check)


def max_global_writes_per_thread(limit: int, array: str | None = None) -> Rule:
    what = f"`{array}`" if array else "global memory"

    def check(s: RunStats) -> str | None:
        got = s.writes_per_thread_by_array.get(array, 0) if array else s.global_writes_per_thread
        if got > limit:
            return f"a thread writes {what} {_plural(got, 'time')}; the limit is {limit}"
        return None

    return Rule(f"at most {_plural(limit, 'write')} to {what} per thread", check)


def shared_memory_budget(limit_bytes: int) -> Rule:
    def check(s: RunStats) -> str | None:
        if s.shared_bytes_per_block > limit_bytes:
            return f"a block uses {s.shared_bytes_per_block} bytes of shared memory; the budget is {limit_bytes}"
        return None

    return Rule(f"at most {limit_bytes} bytes of shared memory per block", check)


def must_use_shared() -> Rule:
    def check(s: RunStats) -> str | None:
        return None if s.uses_shared else "the kernel never uses shared memory; this puzzle is about using it"

    return Rule("uses shared memory", check)


def no_shared(why: str = "this puzzle is solved in registers") -> Rule:
    """The kernel declares no shared memory (warp-level puzzles: shuffles and votes instead)."""

    def check(s: RunStats) -> str | None:
        return f"the kernel uses shared memory; {why}" if s.uses_shared else None

    return Rule("no shared memory", check)


def no_atomics() -> Rule:
    def check(s: RunStats) -> str | None:
        if s.atomics:
            return f"the kernel runs {_plural(s.atomics, 'atomic operation')}; this puzzle allows none"
        return None

    return Rule("no atomic operations", check)


def must_use_atomics() -> Rule:
    def check(s: RunStats) -> str | None:
        return None if s.atomics else "the kernel runs no atomic operation; this puzzle is about atomics"

    return Rule("uses atomic operations", check)


def max_launches(limit: int) -> Rule:
    def check(s: RunStats) -> str | None:
        if s.launches > limit:
            return f"the solution needs {_plural(s.launches, 'launch')}; the limit is {limit}"
        return None

    return Rule(f"at most {_plural(limit, 'kernel launch')}", check)


def ideal_coalescing(slack: float = 1.0) -> Rule:
    """Global loads and stores move no more sectors than a perfectly coalesced kernel would (times ``slack``)."""

    def check(s: RunStats) -> str | None:
        moved = s.global_load_sectors + s.global_store_sectors
        ideal = s.ideal_load_sectors + s.ideal_store_sectors
        if moved > ideal * slack:
            return (
                f"global accesses move {moved} 32-byte sectors where {ideal} would do "
                f"({moved / max(ideal, 1):.2f}x): neighbouring threads should touch neighbouring addresses"
            )
        return None

    extra = "" if slack == 1.0 else f" (within {slack:g}x)"
    return Rule(f"coalesced global memory accesses{extra}", check)


def no_bank_conflicts() -> Rule:
    def check(s: RunStats) -> str | None:
        if s.shared_bank_conflicts:
            return f"shared memory accesses have {_plural(s.shared_bank_conflicts, 'bank conflict')}"
        return None

    return Rule("no shared-memory bank conflicts", check)


def max_total_global_sectors(limit: int) -> Rule:
    def check(s: RunStats) -> str | None:
        moved = s.global_load_sectors + s.global_store_sectors
        if moved > limit:
            return f"global accesses move {moved} sectors; the budget is {limit}"
        return None

    return Rule(f"at most {limit} global-memory sectors moved", check)


SHARED_LD = "smsp__sass_inst_executed_op_shared_ld.sum"
SHARED_ST = "smsp__sass_inst_executed_op_shared_st.sum"


def log_step_work(max_loads_per_store: float = 3.0) -> Rule:
    """At most ``max_loads_per_store`` warp-level shared loads for every warp-level shared store."""

    def check(s: RunStats) -> str | None:
        if SHARED_LD not in s.metrics or SHARED_ST not in s.metrics:
            return "the simulator reported no shared-memory instruction counts, so the work cannot be judged"
        loads, stores = s.metrics[SHARED_LD], s.metrics[SHARED_ST]
        if loads > max_loads_per_store * max(stores, 1.0):
            return (f"the kernel executes {loads:.0f} shared-memory loads for {stores:.0f} stores "
                    f"({loads / max(stores, 1.0):.1f} per store): a loop over the whole prefix re-reads it "
                    f"for every element; a log-step scan reads about 2 values per value it writes")
        return None

    return Rule(f"log-step work: at most {max_loads_per_store:g} shared-memory loads per shared-memory store",
                check)
