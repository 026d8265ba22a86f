"""gpusim's metrics equal the numbers Nsight Compute read on a real GPU for the same kernels and launches.

The numbers: tests/gpusim/data/ncu_h200.csv, from one ncu run of ``python3 tests/gpusim/ncu_cases.py
--profile OUT`` on 2026-11-29: NVIDIA H200 (CC 9.0, driver 580.159.04), Nsight Compute 2025.3.1.0,
numba-cuda 0.30.4 (ptxas 13.0, sm_90a), ``ncu --clock-control none`` with its default cache control (caches
flushed before each kernel). ncu launch ID n is ``CASES[n]`` (tests/gpusim/data/ncu_h200_meta.txt lists them).

Two cases differ on purpose, and the test pins how: gpusim counts source accesses, and the compiler changed
the accesses there (see docs/metrics.md).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from ncu_cases import CASES, CONTRACT_METRICS

import gpusim

DATA = Path(__file__).parent / "data"
NCU_RUN = "2026-11-29, NVIDIA H200 (CC 9.0), Nsight Compute 2025.3.1.0, numba-cuda 0.30.4, sm_90a"
EXACT = [m + ".sum" for m in CONTRACT_METRICS if not m.startswith("dram")] + [
    "smsp__sass_inst_executed_op_global_atom.sum", "smsp__sass_inst_executed_op_global_red.sum"]
DRAM_FETCH_SLACK = 5 * 1024   # ncu's dram__bytes_read also counts instruction and parameter fetches

# case -> {metric: (gpusim, ncu)} where the two differ, and why
KNOWN = {
    # `v = a[i] if even else b[i]`: the compiler selects the pointer and issues ONE load (SEL + LDG in the
    # SASS); gpusim counts the two source loads, each with half the lanes. Sectors agree.
    "g_if_else_f32": {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": (16, 8),
                      "smsp__sass_inst_executed_op_global_ld.sum": (16, 8)},
}


def _ncu() -> dict[int, dict[str, float]]:
    out: dict[int, dict[str, float]] = {}
    with open(DATA / "ncu_h200.csv", newline="") as f:
        for row in csv.DictReader(f):
            out.setdefault(int(row["ID"]), {})[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
    return out


NCU = _ncu()


def _known(name: str, engine_marks_uniform: bool) -> dict:
    known = dict(KNOWN.get(name, {}))
    if name == "atomic_hist_same_i32" and not engine_marks_uniform:
        # every lane adds to bins[i] == 0: not uniform at compile time, so the GPU runs 32 rounds per warp
        # (256 sectors); without the engine telling which indices are uniform, gpusim takes an address
        # shared by all lanes for the compiler's warp aggregation (1 sector per warp), as for cnt[0].
        known["l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"] = (8, 256)
    return known


def test_the_csv_holds_every_case():
    assert sorted(NCU) == list(range(len(CASES))), NCU_RUN
    names = (DATA / "ncu_h200_meta.txt").read_text().split("cases in launch order: ")[1].split(", ")
    assert [n.strip() for n in names] == [c.name for c in CASES]


@pytest.mark.parametrize("n", range(len(CASES)), ids=[c.name for c in CASES])
def test_metrics_equal_ncu(n):
    case = CASES[n]
    report = gpusim.launch(case.kernel, case.grid, case.block, case.make_args())
    assert not report.faults, [str(f) for f in report.faults]
    ncu = NCU[n]
    marks_uniform = hasattr(gpusim.AccessEvent, "uniform") or "uniform" in getattr(
        gpusim.AccessEvent, "__dataclass_fields__", {})
    known = _known(case.name, marks_uniform)
    got = {m: report.metrics[m] for m in EXACT}
    want = {m: int(ncu[m]) for m in EXACT}
    for m, (sim, gpu) in known.items():
        assert (got[m], want[m]) == (sim, gpu), f"{case.name} {m}: the known difference changed"
        want[m] = sim
    assert got == want, f"{case.name} vs ncu ({NCU_RUN})"


@pytest.mark.parametrize("n", range(len(CASES)), ids=[c.name for c in CASES])
def test_dram_estimate_is_the_data_ncu_read(n):
    case = CASES[n]
    report = gpusim.launch(case.kernel, case.grid, case.block, case.make_args(), trace=False)
    est, ncu = report.metrics["dram__bytes_read.sum"], NCU[n]["dram__bytes_read.sum"]
    assert est > 0
    assert est <= ncu <= est + DRAM_FETCH_SLACK, (est, ncu)
    assert NCU[n]["dram__bytes_write.sum"] <= report.metrics["dram__bytes_write.sum"]


@pytest.mark.parametrize("name", ["g_loop4_f32", "g_loop_divergent_f32", "dot_shared_f32"])
def test_flops_equal_ncu_thread_instructions(name):
    n = next(i for i, c in enumerate(CASES) if c.name == name)
    case = CASES[n]
    report = gpusim.launch(case.kernel, case.grid, case.block, case.make_args(), trace=False)
    ncu = NCU[n]

    def th(op):
        return ncu[f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum"]

    ncu_flops = th("fadd") + th("fmul") + 2 * th("ffma") + th("dadd") + th("dmul") + 2 * th("dfma")
    assert report.metrics["gpusim__flops_total"] == ncu_flops > 0
