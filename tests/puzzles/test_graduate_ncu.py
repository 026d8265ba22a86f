"""ncu's CSV as graduate mode reads it (puzzles/graduate/ncu.py), on the CSV recorded on the H200.

tests/gpusim/data/ncu_h200.csv is ncu's own output for the 58 launches of tests/gpusim/ncu_cases.py
(docs/metrics.md). The values checked here are read off that file by eye and by the plain ``csv`` module,
independently of the parser under test.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from puzzles.graduate import ncu

CSV = Path(__file__).resolve().parents[1] / "gpusim" / "data" / "ncu_h200.csv"


def test_the_recorded_csv_gives_every_launch_and_every_metric():
    launches = ncu.parse_csv(CSV.read_text())
    rows = list(csv.DictReader(CSV.open(newline="")))
    assert sorted(launches) == list(range(58))
    assert sum(len(launch.metrics) for launch in launches.values()) == len(rows)
    first = launches[0]
    assert first.kernel.startswith("g_copy[") and first.grid == "(2, 1, 1)" and first.block == "(128, 1, 1)"
    assert first.metrics["dram__bytes_read.sum"] == 3840           # "3,840" in the file
    assert first.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 32
    for row in rows:
        value = float(row["Metric Value"].replace(",", ""))
        assert launches[int(row["ID"])].metrics[row["Metric Name"]] == value


def test_noise_around_the_csv_and_odd_values_do_not_confuse_it():
    lines = CSV.read_text().splitlines()
    header, body = lines[0], lines[1:]
    noisy = "\n".join([
        "==PROF== Connected to process 2178 (/usr/bin/python3.12)",
        "some output of the program, with a comma, and \"quotes\"",
        header,
        *body[:10],
        "==PROF== Profiling \"g_copy\" - 1: 0%....50%....100% - 9 passes",
        '"not a row',
        *body[10:],
        header,                                              # ncu repeats the header after a second process
        "==WARNING== Backing up device memory in system memory. Kernel replay might be slow.",
        "==PROF== Disconnected from process 2178",
    ])
    launches = ncu.parse_csv(noisy)
    assert sorted(launches) == list(range(58))
    assert launches[57].metrics == ncu.parse_csv(CSV.read_text())[57].metrics


def test_values_units_and_missing_numbers():
    assert ncu.parse_value("3,840") == 3840.0
    assert ncu.parse_value("12.5", "Kbyte") == 12_500.0
    assert ncu.parse_value("2", "Mbyte") == 2e6
    assert ncu.parse_value("7", "sector") == 7.0
    assert ncu.parse_value("n/a") is None
    assert ncu.parse_value("") is None
    assert ncu.parse_csv("no csv here\n") == {}


def test_compare_flags_every_difference_and_marks_the_dram_estimates():
    names = ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
             "dram__bytes_read.sum", "dram__bytes_write.sum", "smsp__sass_inst_executed_op_global_st.sum"]
    sim = {names[0]: 8, names[1]: 40, names[2]: 1024, names[3]: 1024, names[4]: 8}
    gpu = {names[0]: 8.0, names[1]: 32.0, names[2]: 3840.0, names[3]: 1024.0}
    rows = {r.name: r for r in ncu.compare(sim, gpu, names)}
    assert rows[names[0]].flag == ""
    assert rows[names[1]].flag == "DIFF" and (rows[names[1]].gpusim, rows[names[1]].ncu) == (40.0, 32.0)
    assert rows[names[2]].flag == "DIFF (estimate)"
    assert rows[names[3]].flag == "estimate"
    assert rows[names[4]].flag == "DIFF" and rows[names[4]].ncu is None   # ncu did not report it


@pytest.mark.parametrize("launch_id", [0, 30, 55])
def test_gpusim_equals_the_recorded_ncu_numbers_through_this_comparison(launch_id, monkeypatch):
    """The comparison graduate mode prints, applied to the recorded launches: gpusim's exact metrics equal
    ncu's (the same fact tests/gpusim/test_metrics_ncu.py checks its own way)."""
    monkeypatch.syspath_prepend(str(CSV.parents[1]))
    from ncu_cases import CASES

    import gpusim
    from gpusim.observe.metrics import METRIC_KEYS

    case = CASES[launch_id]
    report = gpusim.launch(case.kernel, case.grid, case.block, case.make_args(), trace=False)
    launches = ncu.parse_csv(CSV.read_text())
    rows = ncu.compare(report.metrics, launches[launch_id].metrics, list(METRIC_KEYS))
    assert [r.name for r in rows if r.flag == "DIFF"] == []
    assert {r.flag for r in rows if r.name.startswith("dram")} <= {"estimate", "DIFF (estimate)"}
