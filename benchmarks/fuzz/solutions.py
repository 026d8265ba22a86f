"""Solution files for ``gpu-puzzles check N --file``: the references, changed as a player (or a bad disk) would.

* ``mutant``  one to three edits of a puzzle's reference: an operator, comparison or constant changed, a
              line deleted, repeated or swapped, ``threadIdx`` and ``blockIdx`` exchanged, a barrier removed,
              a guard made always true, a line indented wrongly;
* ``bytes``   the same file as bytes: a BOM, a NUL, bytes that are not UTF-8, CRLF or CR line ends, tabs, an
              empty or truncated file, megabytes of comments, a coding cookie that lies;
* ``module``  module-level code a player's file can run: an import that fails, ``raise``, ``sys.exit``, a
              long computation, deep recursion, printing a megabyte, changing ``sys`` or NumPy state;
* ``swapped`` another puzzle's reference (other kernel names and parameters), or its kernel renamed.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache

from .cases import Case

OPERATORS = ((" + ", " - "), (" - ", " + "), (" * ", " + "), (" < ", " <= "), (" <= ", " < "), (" >= ", " > "),
             (" == ", " != "), (" // ", " / "), (" % ", " // "), (" and ", " or "), ("+= ", "-= "))
NAMES = (("threadIdx.x", "threadIdx.y"), ("threadIdx", "blockIdx"), ("blockDim.x", "gridDim.x"),
         ("cuda.syncthreads()", "pass"), ("float32", "float16"), ("float32", "int32"), ("shared", "local"),
         ("cuda.grid(1)", "cuda.grid(2)"), ("atomic.add", "atomic.max"), ("range(", "range(1 + "))
MODULE_CODE = (
    "import nosuchmodule_gpu_puzzles", "raise RuntimeError('boom')", "import sys\nsys.exit(3)", "raise SystemExit",
    "x = 1 / 0", "def f(k):\n    return f(k + 1)\nf(0)", "print('x' * 1_000_000)", "import sys\nsys.argv = None",
    "import numpy as np\nnp.seterr(all='raise')", "import sys\nsys.setrecursionlimit(60)",
    "for _ in range(3_000_000):\n    pass", "cuda = None", "import numba\nnumba.cuda = None",
    "from numba import cuda\ncuda.jit = lambda *a, **k: 3", "import os\nos.environ['GPU_PUZZLES_HOME'] = '/'",
    "import sys\nsys.stdout = None", "__name__ = 7", "import warnings\nwarnings.warn('careful')",
    "import threading\nthreading.Thread(target=lambda: None).start()", "import math\nmath.sqrt = None",
    "x = [0] * 10**7", "raise KeyboardInterrupt", "import os\nos._exit(0)",
)


@lru_cache(maxsize=1)
def _references() -> tuple[tuple[int, str, tuple[str, ...]], ...]:
    from puzzles import registry, workspace

    out = []
    for puzzle in registry.all_puzzles():
        path = workspace.reference_path(puzzle)
        if path.is_file():
            out.append((puzzle.number, path.read_text(encoding="utf-8"), tuple(puzzle.kernels)))
    return tuple(out)


def solution_case(rng: random.Random, seed: int) -> Case:
    refs = _references()
    number, text, kernels = rng.choice(refs)
    family = rng.choice(["mutant", "mutant", "mutant", "bytes", "module", "swapped"])
    raw = None
    if family == "mutant":
        for _ in range(rng.randint(1, 3)):
            text = _mutate(rng, text)
    elif family == "bytes":
        raw = _bytes(rng, text)
        text = ""
    elif family == "module":
        code = rng.choice(MODULE_CODE)
        text = f"{code}\n{text}" if rng.random() < 0.5 else f"{text}\n{code}\n"
    else:
        other_number, other, other_kernels = rng.choice(refs)
        if rng.random() < 0.5 and other_kernels and kernels:
            other = re.sub(rf"\b{re.escape(other_kernels[0])}\b", kernels[0], other)
        text = other
    return Case("file", f"file-{family}", seed, source=text, puzzle=number, raw=raw)


def _mutate(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    body = [k for k, line in enumerate(lines) if line.startswith("    ") and line.strip()]
    if not body:
        return text
    k = rng.choice(body)
    how = rng.choice(["op", "op", "number", "number", "name", "delete", "repeat", "swap", "guard", "indent"])
    line = lines[k]
    if how == "op":
        pairs = [p for p in OPERATORS if p[0] in line]
        if pairs:
            a, b = rng.choice(pairs)
            lines[k] = line.replace(a, b, 1)
    elif how == "number":
        numbers = list(re.finditer(r"(?<![\w.])\d+(?![\w.])", line))
        if numbers:
            m = rng.choice(numbers)
            new = rng.choice([int(m.group()) + 1, int(m.group()) - 1, 0, 2 ** 31, 2 ** 63, 10 ** 30, 1 << 20])
            lines[k] = line[: m.start()] + str(new) + line[m.end():]
    elif how == "name":
        pairs = [p for p in NAMES if p[0] in line]
        if pairs:
            a, b = rng.choice(pairs)
            lines[k] = line.replace(a, b, 1)
    elif how == "delete":
        del lines[k]
    elif how == "repeat":
        lines.insert(k, line)
    elif how == "swap" and k + 1 < len(lines):
        lines[k], lines[k + 1] = lines[k + 1], lines[k]
    elif how == "guard" and line.lstrip().startswith("if "):
        lines[k] = line[: len(line) - len(line.lstrip())] + "if True:"
    elif how == "indent":
        lines[k] = ("    " + line) if rng.random() < 0.5 else line[2:]
    return "\n".join(lines)


def _bytes(rng: random.Random, text: str) -> bytes:
    data = text.encode("utf-8")
    how = rng.choice(["bom", "bom", "nul", "latin", "crlf", "cr", "tabs", "empty", "blank", "truncate", "huge",
                      "cookie", "formfeed", "surrogate"])
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "nul":
        at = rng.randrange(len(data) + 1)
        return data[:at] + b"\x00" + data[at:]
    if how == "latin":
        return data.replace(b"#", b"# caf\xe9 ", 1) if b"#" in data else b"\xe9" + data
    if how == "crlf":
        return data.replace(b"\n", b"\r\n")
    if how == "cr":
        return data.replace(b"\n", b"\r")
    if how == "tabs":
        return data.replace(b"        ", b"\t\t").replace(b"    ", b"\t", 3)
    if how == "empty":
        return b""
    if how == "blank":
        return b"\n \n\t\n"
    if how == "truncate":
        return data[: rng.randrange(len(data) + 1)]
    if how == "huge":
        return data + b"\n" + (b"# " + b"x" * 78 + b"\n") * 40_000
    if how == "cookie":
        return b"# -*- coding: latin-1 -*-\n" + data.replace(b"#", b"# \xe9", 1)
    if how == "formfeed":
        return data.replace(b"\n\n", b"\n\x0c\n", 2)
    return data + b"\n# \xed\xa0\x80\n"
