"""Why tests that pass on numba's simulator do not pass on gpusim."""

from __future__ import annotations


def comparison(sim: dict, other: dict) -> str:
    passed = {t["id"] for t in sim["tests"] if t["outcome"] == "passed"}
    lost = [t for t in other["tests"] if t["id"] in passed and t["outcome"] != "passed"]
    return f"{other['label']}: {len(lost)} of the simulator's {len(passed)} passing tests do not pass"


def write_doc(path, runs, baseline, version, unskip) -> None:
    raise NotImplementedError
