"""A fuzz case as plain data (picklable, printable as a reproducer), and how its arguments are made.

A kernel case is a module's source, the kernel to launch, the launch (grid, block, shared_mem: any Python
value, valid or not) and argument specs; a file case is a solution file's bytes and the puzzle to check it
against. ``Case.reproducer()`` is a standalone script that runs the case with gpusim alone (or the CLI).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

# An argument spec is one of
#   ("array", dtype, shape, layout)    layout: "c", "readonly", "strided", "fortran", "reversed", "empty"
#   ("scalar", value)                  a Python value as given (int, float, bool, None, str, complex, ...)
#   ("np", type name, value)           a NumPy scalar, e.g. ("np", "int8", 127)
#   ("same", k)                        the very object of argument k (aliasing)
ArgSpec = tuple


@dataclass(frozen=True)
class Case:
    """One thing to run. ``family`` names the generator that made it (for counts and findings)."""

    kind: str                       # "kernel" | "file"
    family: str
    seed: int
    source: str = ""                # the module (kernel) or the file's text (file)
    kernel: str = "kern"
    grid: Any = 1
    block: Any = 32
    shared_mem: Any = 0
    args: tuple = ()
    puzzle: int = 0                 # file cases: the puzzle number
    raw: bytes | None = None        # file cases whose bytes are not UTF-8 text
    tags: tuple = field(default_factory=tuple)

    def with_(self, **changes) -> Case:
        return replace(self, **changes)

    @property
    def file_bytes(self) -> bytes:
        return self.raw if self.raw is not None else self.source.encode("utf-8")

    def reproducer(self) -> str:
        """A script that runs this case as it ran in the fuzzer: ``python <script>``."""
        if self.kind == "file":
            return _file_reproducer(self)
        lines = [self.source.rstrip("\n"), "", "", 'if __name__ == "__main__":',
                 "    import numpy as np", "", "    import gpusim", ""]
        if any(s[0] == "array" and s[3] == "readonly" for s in self.args):
            lines += ["    def _readonly(x):", "        x.flags.writeable = False", "        return x", ""]
        lines.append(f"    args = [{', '.join(arg_code(a) for a in self.args)}]")
        lines += [f"    args[{k}] = args[{s[1]}]" for k, s in enumerate(self.args) if s[0] == "same"]
        lines.append(f"    report = gpusim.launch({self.kernel}, {literal(self.grid)}, {literal(self.block)}, "
                     f"args, shared_mem={literal(self.shared_mem)})")
        lines.append("    print(report.faults)")
        return "\n".join(lines) + "\n"


def make_args(specs: tuple) -> list:
    """The argument values of ``specs``: fresh arrays each time (a launch writes into them)."""
    values: list = []
    for spec in specs:
        kind = spec[0]
        if kind == "array":
            values.append(_array(spec[1], spec[2], spec[3]))
        elif kind == "np":
            values.append(_np_scalar(spec[1], spec[2]))
        elif kind == "same":
            values.append(values[spec[1]])
        else:
            values.append(spec[1])
    return values


def arg_code(spec: ArgSpec) -> str:
    """Python source that makes the value of ``spec`` (for reproducers)."""
    kind = spec[0]
    if kind == "array":
        dtype, shape, layout = spec[1], tuple(spec[2]), spec[3]
        n = int(np.prod(shape)) if shape else 1
        base = f"np.arange({n}).astype(np.dtype({dtype!r})).reshape({shape!r})"
        return {"c": base, "readonly": f"_readonly({base})", "strided": f"{_strided_code(dtype, shape)}",
                "fortran": f"np.asfortranarray({base})", "reversed": f"{base}[::-1]",
                "empty": f"np.zeros({shape!r}, np.dtype({dtype!r}))"}[layout]
    if kind == "np":
        try:
            with np.errstate(all="ignore"):
                getattr(np, spec[1])(spec[2])
            return f"np.{spec[1]}({literal(spec[2])})"
        except (OverflowError, ValueError):
            return f"np.array({literal(spec[2])}).astype({spec[1]!r})[()]"
    if kind == "same":
        return "None"
    return literal(spec[1])


def literal(value: Any) -> str:
    """``repr`` that is also valid source for infinities and NaNs (inside tuples and lists too)."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f"float({str(value)!r})"
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, np.generic):
        return f"np.{type(value).__name__}({literal(value.item())})"
    return repr(value)


def _array(dtype: str, shape: tuple, layout: str) -> np.ndarray:
    shape = tuple(shape)
    dt = np.dtype(dtype)
    n = int(np.prod(shape)) if shape else 1
    if layout == "empty":
        return np.zeros(shape, dt)
    if layout == "strided":
        full = np.arange(2 * n).astype(dt)
        return full[::2].reshape(shape) if shape else full[:1].reshape(())
    base = np.arange(n).astype(dt).reshape(shape)
    if layout == "readonly":
        base.flags.writeable = False
    elif layout == "fortran":
        base = np.asfortranarray(base)
    elif layout == "reversed":
        base = base[::-1]
    return base


def _strided_code(dtype: str, shape: tuple) -> str:
    n = int(np.prod(shape)) if shape else 1
    return f"np.arange({2 * n}).astype(np.dtype({dtype!r}))[::2].reshape({shape!r})"


def _np_scalar(name: str, value: Any) -> Any:
    with np.errstate(all="ignore"):
        try:
            return getattr(np, name)(value)
        except (OverflowError, ValueError):
            return np.array(value).astype(name)[()]


def _file_reproducer(case: Case) -> str:
    return (f'"""Reproducer: `gpu-puzzles check {case.puzzle} --file <the file below>`."""\n'
            f"import pathlib, subprocess, sys, tempfile\n\n"
            f"DATA = {case.file_bytes!r}\n\n"
            f"path = pathlib.Path(tempfile.mkdtemp()) / 'solution.py'\n"
            f"path.write_bytes(DATA)\n"
            f"sys.exit(subprocess.call([sys.executable, '-m', 'puzzles', 'check', '{case.puzzle}', '--file', "
            f"str(path)]))\n")
