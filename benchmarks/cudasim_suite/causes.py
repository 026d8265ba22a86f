"""Why tests that pass on numba's simulator do not pass on gpusim: each lost test, put under one cause.

A cause is read from the test's failure: the first line of gpusim's message (``UnsupportedConstruct: ...``),
the kernel's source line that gpusim quotes under it, and the test's id. The rules are tried in order and the
first that matches wins, so the specific come before the general (an enum's ``Color["red"]`` before records'
``rec["x"]``). ``write_doc`` turns a run into docs/cudasim-suite.md: the counts, the table by cause and every
lost test under its cause: the work list for gpusim's language.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

#: (cause, regular expression over "first line / source line / test id"), tried in order
RULES: list[tuple[str, str]] = [
    ("a test of numba's simulator's own limits (`alignment=` is refused \"in cudasim\"), run with "
     "GPUSIM_CUDASIM_ALIGNMENT=gpu (arrays placed as on a GPU)", r"TestCudasimUnsupportedAlignment"),
    ("kernel source not readable by `inspect` (kernels built with `exec`, or run by `python -c` in a child)",
     r"cannot read the source of kernel|CalledProcessError: Command .*'-c'"),
    ("a fault in the test's own kernel, which numba's simulator cannot see (data race, uninitialized shared "
     "memory): gpusim is right", r"^gpusim\.faults\.(DataRace|UninitializedRead|BarrierDivergence|OutOfBounds)"),
    ("`raise` and `assert` in kernels; debug-mode exceptions (`FloatingPointError`, `IndexError` from "
     "`shape[-x]`)", r"(raise|assert) cannot|FloatingPointError|IndexError not raised"),
    ("`print` output order: threads' prints interleave (flaky on numba's simulator too)",
     r"^AssertionError: Lists differ"),
    ("gpusim computes a different value (`cuda.clz` of a negative int32; `round(x, n)`)",
     r"^AssertionError(?!: (Lists differ|\w+Error not raised))"),
    ("names defined in a module under `numba.cuda` (the test modules) taken for cuda intrinsics: enums, "
     "exception classes, `@overload`s", r"cuda\.(Color|Shape|Planet|RequestError|Test\w+)\b"),
    ("enums (`IntEnum`/`Enum` members and `Color[\"red\"]`)", r"EnumTest|Color\["),
    ("complex numbers (arrays, scalars, `cmath`, `.real`/`.imag`, `conjugate`)",
     r"complex|cmath|\.real\b|\.imag\b|conjugate|TestComplex"),
    ("record (structured) dtypes, including `cuda.random`'s RNG state",
     r"numpy\.record|Record\(|\[[\"']\w+[\"']\]|TestRecordDtype|TestNestedArrays|TestRecarray|TestAlignment|"
     r"test_record|Xoroshiro|test_const_record"),
    ("tuple and namedtuple arguments", r"is a tuple|x\[0\] is not an array|namedtuple|namedunituple|"
     r"TestCudaArrayArg"),
    ("`cuda.fp16.h*` intrinsics and float16 scalars", r"cuda\.fp16|float16"),
    ("array slicing in kernels", r"slic|Slice"),
    ("functions, dtypes or shapes passed to device functions as values (`helper(ary, uint32, cuda.atomic.add)`); "
     "`operator.add` called through a variable", r"cuda\.atomic\.\w+ is not supported|builtin_function_or_method"),
    ("missing math: `math.frexp`/`modf` (accepted, then `KeyError` at run time), `nextafter`, `cbrt`, "
     "`int.bit_count`, `pow()`", r"frexp|modf|nextafter|cbrt|bit_count|builtin pow"),
    ("NumPy inside kernels (ufuncs, `np.empty`, `reshape`, `.copy()`, `.view()`, `np.nan` as a value)",
     r"\bnp\.|numpy|reshape|\.copy\(\)|\.view\(\)|TestUFuncs|test_ufunc"),
    ("nested functions; `for` over arrays, `enumerate`, `zip` and tuples; `*`-unpacking",
     r"nested function|only `for|\*-unpacking"),
    ("bytes and strings as values (`arr[i] = \"XYZ\"` into `S12` / `U12` arrays and record fields)",
     r"strings cannot|dtype \|S\d+|dtype <U\d+"),
    ("`is` / `in` comparisons", r"`in` and `is`"),
    ("cooperative groups (`cuda.cg.this_grid().sync()`)", r"cuda\.cg"),
    ("recursive device functions", r"calls itself"),
    ("vector types (`float32x4`, `int8x1`, ...)", r"\w+\d+x\d\b"),
    ("datetime64 / timedelta64", r"datetime64|timedelta64"),
    ("compile-time constants: a local `N = 100` as a shared-array shape; `cuda.local/shared.array(...)` used "
     "without a name", r"compile-time constant|assign cuda\.(local|shared)\.array"),
    ("a device function reached through another module (`mymod.add`)", r"refers to a module"),
]
OTHER = "other"


def cause_of(test: dict) -> str:
    lines = test.get("message", "").splitlines()
    first = lines[0] if lines else ""
    source = next((ln.strip() for ln in lines[1:] if ln.startswith("    ")), "")
    text = f"{first}\n{source}\n{test['id']}"
    for cause, pattern in RULES:
        if re.search(pattern, text, re.MULTILINE):
            return cause
    return OTHER


def lost_tests(sim: dict, other: dict) -> list[dict]:
    """Tests that pass on the simulator and do not pass on ``other``."""
    passed = {t["id"] for t in sim["tests"] if t["outcome"] == "passed"}
    return [t for t in other["tests"] if t["id"] in passed and t["outcome"] != "passed"]


def by_cause(tests: list[dict]) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for t in tests:
        groups[cause_of(t)].append(t)
    order = [c for c, _ in RULES] + [OTHER]
    return dict(sorted(groups.items(), key=lambda kv: (-len(kv[1]), order.index(kv[0]))))


def kernel_times(sim: dict, other: dict) -> tuple[int, float, float]:
    """Over the tests that launch a kernel and pass on both: how many, and their kernel seconds on each."""
    on_sim = {t["id"]: t for t in sim["tests"] if t["outcome"] == "passed" and t.get("launches")}
    both = [(on_sim[t["id"]], t) for t in other["tests"] if t["id"] in on_sim and t["outcome"] == "passed"]
    return len(both), sum(a["kernel_seconds"] for a, _ in both), sum(b["kernel_seconds"] for _, b in both)


def comparison(sim: dict, other: dict) -> str:
    lost = lost_tests(sim, other)
    passed = sum(t["outcome"] == "passed" for t in sim["tests"])
    n, ks, ko = kernel_times(sim, other)
    lines = [f"{other['label']}: {len(lost)} of the {passed} tests that pass on numba's simulator do not pass; "
             f"kernel time over the {n} that launch kernels and pass on both: {ks:.1f} s on numba's simulator, "
             f"{ko:.1f} s here ({ks / ko if ko else float('inf'):.1f}x)"]
    for cause, tests in by_cause(lost).items():
        lines.append(f"  {len(tests):4d}  {cause}")
    return "\n".join(lines)


def write_doc(path: Path, runs: list[dict], baseline: dict, version: str, unskip: bool,
              left_out: dict[str, str], costly: dict[str, str] | None = None) -> None:
    """Rewrite ``path``'s section for this kind of run (the whole suite, or ``--unskip``), keeping the other."""
    old = path.read_text() if path.exists() else ""
    sections = {k: _between(old, _MARK.format(k), f"<!-- /{k} -->") for k in ("suite", "unskipped")}
    if unskip:
        sections["unskipped"] = _unskipped_section(runs, left_out, costly or {})
    else:
        sections["suite"] = _suite_section(runs, baseline, version)
    out = ["# numba-cuda's own test suite on gpusim", ""]
    for k, text in sections.items():
        if text.strip():
            out += [_MARK.format(k), text.strip(), f"<!-- /{k} -->", ""]
    path.write_text("\n".join(out))


_MARK = "<!-- {}: written by python -m benchmarks.cudasim_suite -->"


def _between(text: str, begin: str, end: str) -> str:
    i, j = text.find(begin), text.find(end)
    return text[i + len(begin):j] if 0 <= i < j else ""


def _suite_section(runs: list[dict], baseline: dict, version: str) -> str:
    from .__main__ import counts, summary

    sim = next((r for r in runs if r["engine"] == "simulator"), None)
    if sim is None:
        raise SystemExit("--write needs the simulator engine in the same run")
    out = [f"numba-cuda {version}'s tests (`numba.cuda.tests`, shipped in its wheel), run as its repository's "
           "`testing/` folder runs them (`--pyargs numba.cuda.tests`, every warning an error less its list, its "
           "conftest's fixture), with `NUMBA_ENABLE_CUDASIM=1`, on this project's 2-core machine (shared, so "
           "times vary by a few tens of percent between runs).",
           "Reproduce: `python -m benchmarks.cudasim_suite --out results/ --write` (needs "
           "`benchmarks/cudasim_suite/requirements.txt`).",
           "", summary(runs, baseline), "",
           "Kernel s: seconds spent in top-level kernel launches; wall s: the whole pytest run. gpusim's strict run "
           "spends much of its wall time reporting the failures of the tests whose kernels it cannot run yet. "
           "numba's simulator's own count moves by a few between runs (786 to 789 here; 787 when first "
           "measured): `cudapy/test_print.py` compares printed lines whose order depends on thread scheduling.",
           "",
           "Under the drop-in's default fault policy a data race or a read of shared memory no thread wrote is "
           "reported (stderr and pytest's summary), not raised, so the tests whose own kernels have one pass here "
           "and are listed in the run's log; `--faults raise` (`GPUSIM_CUDASIM_FAULTS=raise`) counts them as "
           "failures, under \"a fault in the test's own kernel\".",
           ""]
    for r in runs:
        if r is sim:
            continue
        lost = lost_tests(sim, r)
        n, ks, ko = kernel_times(sim, r)
        c = counts(r)
        out += [f"## {r['label']}", "",
                f"{c['passed']} pass; {len(lost)} of the {counts(sim)['passed']} tests that pass on numba's "
                f"simulator do not. Over the {n} tests that launch kernels and pass on both, kernel time is "
                f"{ks:.1f} s on numba's simulator and {ko:.1f} s here"
                + (f" ({ks / ko:.1f}x less)." if ko else "."), ""]
        groups = by_cause(lost)
        if not groups:
            continue
        out += ["| cause | tests |", "|---|---:|"]
        out += [f"| {cause} | {len(tests)} |" for cause, tests in groups.items()]
        out += ["", "<details><summary>the tests, by cause</summary>", ""]
        for cause, tests in groups.items():
            out += [f"**{cause}** ({len(tests)})", ""]
            out += [f"- `{t['id']}`: {_first_line(t)}" for t in sorted(tests, key=lambda t: t["id"])]
            out.append("")
        out += ["</details>", ""]
    return "\n".join(out)


def _unskipped_section(runs: list[dict], left_out: dict[str, str], costly: dict[str, str]) -> str:
    out = ["## Un-skipped: `test_warp_ops` and `doc_examples`", "",
           "numba's simulator skips these (no warp intrinsics; `cuda` imported inside a function). Run on gpusim "
           "only, with their `skip_on_cudasim` marks lifted: `python -m benchmarks.cudasim_suite --unskip --write`. "
           + " ".join(f"Left out: `{m.rsplit('.', 1)[1]}`: {why}." for m, why in left_out.items())
           + " ".join(f"`{m.rsplit('.', 1)[1]}` costs most: {what}." for m, what in costly.items()), ""]
    ids = sorted({t["id"] for r in runs for t in r["tests"]})
    by_run = [{t["id"]: t for t in r["tests"]} for r in runs]
    out += ["| test | " + " | ".join(r["label"] for r in runs) + " |", "|---|" + "---|" * len(runs)]
    for i in ids:
        cells = []
        for rec in by_run:
            t = rec.get(i)
            cells.append("" if t is None else t["outcome"] if t["outcome"] in ("passed", "skipped")
                         else f"{t['outcome']}: {_first_line(t)[:110]}")
        out.append(f"| `{i}` | " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    passed = [sum(t["outcome"] == "passed" for t in r["tests"]) for r in runs]
    out += ["", "Passed: " + ", ".join(f"{p} of {len(r['tests'])} ({r['label']})" for p, r in zip(passed, runs)),
            ""]
    return "\n".join(out)


def _first_line(test: dict) -> str:
    first = (test.get("message", "").splitlines() or [""])[0]
    return re.sub(r" \(/[^)]*/numba/cuda/tests/", " (", first)[:160]
