"""The 24 distinct findings of the first nightly run (gpusim of df0008a, 10,600 cases), one reproducer each,
with what that engine did. ``python -m benchmarks.fuzz.findings`` runs every one in a fresh process (under
the watchdog of ``measure``) and prints a table: the finding, then and now.

The kernels are those of tests/gpusim/data/fuzz_findings.md (``def kern(out, a, n, s)`` with one line, launched
on one thread with ``out`` 256 float32, ``a`` arange(64), ``n`` 3 and ``s`` 1.5); the three hangs are the
learner's mistakes the mutated references made (a barrier loop whose update is gone), rebuilt on today's
references; the file cases go through ``gpu-puzzles check N --file`` in the process as the fuzzer runs them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .cases import Case
from .kernels import HEADER
from .measure import measure

ROOT = Path(__file__).resolve().parents[2]
ARGS = (("array", "float32", (256,), "c"), ("array", "int64", (64,), "c"), ("scalar", 3), ("scalar", 1.5))


def _line(line: str, grid=1, block=1, args=ARGS) -> Case:
    body = "\n".join("    " + s for s in ("i = cuda.grid(1)", "t = 0", "x = 0.0", *line.split("\n")))
    source = f"{HEADER}\n\n@cuda.jit\ndef kern(out, a, n, s):\n{body}\n"
    return Case("kernel", "finding", 0, source=source, grid=grid, block=block, args=args)


def _nested_conditional(depth: int) -> str:
    expr = "0.0"
    for k in range(depth, 0, -1):
        expr = f"({float(k)} if t < {k} else {expr})"
    return f"x = {expr}"


def _nested_ifs(depth: int) -> str:
    return "\n".join("    " * k + f"if t < {k + 1}:" for k in range(depth)) + "\n" + "    " * depth + "x += 1.0"


def _devchain(n: int) -> Case:
    funcs = ["@cuda.jit(device=True)\ndef c0(v):\n    return v + 1.0\n"]
    funcs += [f"@cuda.jit(device=True)\ndef c{k}(v):\n    return c{k - 1}(v) * 0.5\n" for k in range(1, n)]
    source = (HEADER + "\n\n" + "\n\n".join(funcs) + f"\n\n@cuda.jit\ndef kern(out, a, n, s):\n    x = 0.0\n"
              f"    x = c{n - 1}(x)\n    out[0] = x\n")
    return Case("kernel", "finding", 0, source=source, grid=1, block=1, args=ARGS)


def _mutated(name: str, number: int, edits: list[tuple[str, str]]) -> Case:
    text = (ROOT / "solutions" / name).read_text(encoding="utf-8")
    for old, new in edits:
        if old not in text:
            raise ValueError(f"{name} has no {old!r}: the reference changed, update the finding")
        text = text.replace(old, new, 1)
    return Case("file", "finding", 0, source=text, puzzle=number)


def findings() -> list[tuple[str, str, Case]]:
    """(finding, what the engine of df0008a did, the case)."""
    from .generate import generate

    big_sum = "x = x" + "".join(f" + {v}" for v in ["1.0", "s", "x"] * 140)
    deep = generate(386)
    assert deep.family == "nesting", deep.family
    return [
        ("cuda.atomic.add(out, 0)", "internal:IndexError", _line("cuda.atomic.add(out, 0)")),
        ("cuda.atomic.add(out)", "internal:IndexError", _line("cuda.atomic.add(out)")),
        ("atomic.add(ary=out, idx=0, val=1.0)", "internal:IndexError",
         _line("cuda.atomic.add(ary=out, idx=0, val=1.0)")),
        ("cuda.fma(1.0, 2.0)", "internal:ValueError", _line("x = cuda.fma(1.0, 2.0)")),
        ("cuda.atomic.cas(out, 0, 1)", "internal:ValueError", _line("t = cuda.atomic.cas(out, 0, 1)")),
        ("atomic.compare_and_swap(out, 1)", "internal:ValueError",
         _line("t = cuda.atomic.compare_and_swap(out, 1)")),
        ("divmod(1)", "internal:IndexError", _line("t = divmod(1)")),
        ("int(x=1)", "internal:IndexError", _line("t = int(x=1)")),
        ("abs(x=1.0)", "internal:IndexError", _line("x = abs(x=1.0)")),
        ("len()", "internal:IndexError", _line("t = len()")),
        ("min()", "internal:IndexError", _line("x = min()")),
        ("numba.int32()", "internal:IndexError", _line("t = numba.int32()")),
        ("a literal of 2**64", "internal:OverflowError", _line("t = 18446744073709551616")),
        ("a scalar argument of 2**70", "internal:OverflowError",
         _line("out[0] = n", args=(ARGS[0], ARGS[1], ("scalar", 2 ** 70), ARGS[3]))),
        ("a grid of 2**64 blocks", "internal:OverflowError", _line("out[0] = 1.0", grid=2 ** 64)),
        ("puzzle 7 + 10**30 through the CLI", "check:internal",
         _mutated("blocks_2d.py", 7, [("+ 10", "+ 1000000000000000000000000000000")])),
        ("a sum of 420 terms", "internal:SyntaxError", _line(big_sum)),
        ("150 nested conditional expressions", "internal:IndentationError", _line(_nested_conditional(150))),
        ("95 nested ifs", "internal:IndentationError", _line(_nested_ifs(95))),
        ("a 37 KB deeply nested kernel (nesting seed 386)", "internal:RecursionError", deep),
        ("a chain of 1200 device functions", "internal:RecursionError", _devchain(1200)),
        ("warp scan: d *= 2 moved into the if, i <= n (puzzle 22)", "hang",
         _mutated("warp_scan.py", 22, [("            v += t\n        d *= 2", "            v += t\n            d *= 2"),
                                       ("if i < n:", "if i <= n:")])),
        ("int4 gemv: partial[t] = acc and stride //= 2 deleted (puzzle 41)", "hang",
         _mutated("int4_gemv.py", 41, [("    partial[t] = acc\n", ""), ("        stride //= 2\n", "")])),
        ("block sum: if t < s made <=, s //= 2 deleted (puzzle 19)", "hang",
         _mutated("reduce_sequential.py", 19, [("if t < s:", "if t <= s:"), ("        s //= 2\n", "")])),
        ("os._exit(0) at import (a solution file)", "crash:exit0",
         Case("file", "finding", 0, source=(ROOT / "solutions" / "map.py").read_text() + "\nimport os\nos._exit(0)\n",
              puzzle=1)),
    ]


def main() -> int:
    print(f"{'finding':<66} {'gpusim of df0008a':<26} now")
    bad = 0
    for name, before, case in findings():
        m = measure(case, timeout=90)
        finding = m.label.startswith(("internal:", "hang", "crash:", "check:internal", "check:escaped:"))
        bad += finding
        print(f"{name:<66} {before:<26} {m.label}: {m.detail[:70]}", flush=True)
    print(f"\n{bad} of {len(findings())} still findings")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
