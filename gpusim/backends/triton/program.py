"""``translate``: a kernel's typed IR and its block shape -> a ``Program``, the text of a complete Triton module.

The program is specialised on the block shape (the lane count and the thread geometry are constants of
it) and on the launch's dynamic shared memory; the grid is the launch's. ``Program.params`` says what the
kernel takes, in order, so that a launcher (``gpusim.backends.triton.launcher``) can pass a kernel's CUDA
arguments: each array as a pointer and its shape (and strides, for arrays that are not C-contiguous), each
float64 scalar as the int64 of its bits (Triton would make a Python float a float32), module-level
constant arrays, and the scratch region for shared arrays that are not held in registers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...device import WARP_SIZE
from ...ir import nodes as N
from ...ir.walk import walk_stmts
from .codegen import NotTranslatable, ProgramGen
from .helpers import helper_source
from .memory import NewPlane, Respill, Retable

MAX_THREADS = 1024
COMMENT_COLUMN = 64


@dataclass
class Program:
    """A Triton module for one kernel and one block shape."""

    name: str                          # the kernel's (and the generated function's) name
    source: str                        # the module's text
    block: tuple[int, int, int]
    lanes: int                         # the power-of-two lane count (the block's threads, padded)
    num_warps: int
    params: list[tuple]                # ("array", name, pname) ("shape", name, dim, pname) ("stride", ...)
    #                                    ("scalar", name, pname, dtype) ("const", pname, data) ("scratch", pname)
    signature: dict[str, str]          # parameter -> Triton type, for compiling ahead of time
    smem_bytes: int                    # scratch bytes per program (0: none)
    line_map: dict[int, int]           # generated line -> kernel source line
    filename: str                      # the kernel's file
    register_arrays: list[str] = field(default_factory=list)   # shared arrays held in registers
    scratch_arrays: list[str] = field(default_factory=list)    # shared arrays in the scratch region

    @property
    def param_names(self) -> list[str]:
        return [param_name(p) for p in self.params]


def param_name(p: tuple) -> str:
    """The generated kernel's name for one entry of ``Program.params``."""
    return {"array": 2, "shape": 3, "stride": 3, "scalar": 2, "const": 1, "scratch": 1}[p[0]] and \
        p[{"array": 2, "shape": 3, "stride": 3, "scalar": 2, "const": 1, "scratch": 1}[p[0]]]


def lanes_for(block: tuple[int, int, int]) -> int:
    t = block[0] * block[1] * block[2]
    p = WARP_SIZE
    while p < t:
        p *= 2
    return p


def translate(module: N.Module, block, dynamic_shared: int = 0, *, guard: bool = False) -> Program:
    """The Triton program for ``module`` launched with blocks of shape ``block`` (an int or up to three).

    ``guard`` also masks every pointer access to its array's extent (for the CPU interpreter, which would
    otherwise read outside the tensors). Raises ``NotTranslatable`` (an ``UnsupportedConstruct``) naming the
    construct and its line."""
    block = _dims(block)
    threads = block[0] * block[1] * block[2]
    if not 1 <= threads <= MAX_THREADS:
        raise NotTranslatable(f"a block of {threads} threads (1 to {MAX_THREADS})", filename=module.filename)
    register = set()
    for fn in module.functions.values():
        for s in walk_stmts(fn.body):
            if isinstance(s, N.SharedDecl) and not s.dynamic:
                register.add(s.decl)
    planes: dict = {}
    tabled: set[int] = set()
    while True:   # each retry learns a register array's store pattern, sends one to scratch, or makes a
        #          per-thread array a table: it ends
        gen = ProgramGen(module, block, int(dynamic_shared), register, guard, planes, tabled)
        try:
            lines = gen.kernel()
            break
        except NewPlane:
            continue
        except Respill as r:
            register.discard(r.decl)
            planes.pop(r.decl, None)
        except Retable as r:
            tabled.add(r.decl)
    return _assemble(module, gen, lines, block)


def _dims(block) -> tuple[int, int, int]:
    if isinstance(block, (int, np.integer)):
        block = (int(block),)
    b = tuple(int(x) for x in block) + (1,) * (3 - len(block))
    if len(b) != 3 or min(b) < 1:
        raise ValueError(f"a block shape of 1 to 3 positive ints, not {block!r}")
    return b


def _assemble(module: N.Module, gen: ProgramGen, lines: list, block: tuple[int, int, int]) -> Program:
    fn = module.entry
    layout = gen.layout
    static = layout.static_bytes
    dyn_at = static
    cas_at = -(-(static + layout.dynamic_bytes) // 16) * 16
    total = (cas_at + 16) if layout.cas_offset is not None else static + layout.dynamic_bytes
    scratch = any(r.kind == "ptr" for r in gen.shared.values()) or layout.cas_offset is not None
    params = list(gen.params)
    signature = list(gen.signature)
    for name, e in gen.const_arrays.values():
        params.append(("const", name, np.ascontiguousarray(e.data)))
        from .values import SIG_TYPES
        signature.append("*" + SIG_TYPES[e.type.dtype.name])
    if scratch:
        params.append(("scratch", "_smem"))
        signature.append("*u8")
    names = [param_name(p) for p in params]

    head = [f'"""{fn.py_name}: gpusim\'s Triton translation of a CUDA kernel ({_short_path(module.filename)}).',
            "",
            f"One program per CUDA block of {block[0]} x {block[1]} x {block[2]} threads; the threads are the lanes "
            f"of tl.arange(0, {gen.P})",
            f"({gen.threads} live). {_memory_note(gen, total)}",
            "Every line ends with the kernel's source line it comes from.",
            '"""', "",
            "import triton",
            "import triton.language as tl"]
    if "libdevice" in gen.uses:
        head.append("from triton.language.extra import libdevice")
    head.append("")
    helpers = helper_source(gen.helpers).strip("\n")
    if helpers:
        head += helpers.split("\n") + ["", ""]
    else:
        head.append("")
    text: list[str] = list(head)
    line_map: dict[int, int] = {}
    text.append(f"@triton.jit  # {fn.line}: {module.source_line(fn.line).strip()}")
    line_map[len(text)] = fn.line
    text.append(f"def {fn.py_name}({', '.join(names)}):")
    line_map[len(text)] = fn.line
    previous = None
    for indent, code, src in _drop_unused_prologue(lines, fn.line):
        code = code.replace("SMEM_BYTES", str(total)).replace("SMEM_DYNAMIC", str(dyn_at)).replace(
            "CAS_OFFSET", str(cas_at))
        body = "    " * indent + code
        if src:
            note = f"# {src}: {module.source_line(src).strip()}" if src != previous else f"# {src}"
            pad = max(COMMENT_COLUMN, len(body) + 2)
            body = body.ljust(pad) + note
            previous = src
        text.append(body)
        line_map[len(text)] = src
    if not lines:                                 # a kernel that does nothing
        text.append("    pass")
    source = "\n".join(text) + "\n"
    regs = [r.name for r in gen.shared.values() if r.kind == "reg"]
    scr = [r.name for r in gen.shared.values() if r.kind == "ptr"]
    return Program(name=fn.py_name, source=source, block=block, lanes=gen.P,
                   num_warps=max(1, min(8, gen.P // WARP_SIZE)), params=params, signature=dict(zip(names, signature)),
                   smem_bytes=total if scratch else 0, line_map=line_map, filename=module.filename,
                   register_arrays=regs, scratch_arrays=scr)


def _drop_unused_prologue(lines: list, def_line: int) -> list:
    """Leave out the prologue's definitions (``name = ...`` at the kernel's line) that nothing reads."""
    import re

    keep = list(lines)
    changed = True
    while changed:
        changed = False
        for k, (indent, code, src) in enumerate(keep):
            m = re.match(r"(\w+) = ", code)
            if indent != 1 or src != def_line or not m or code.startswith(m.group(1) + " = " + m.group(1)):
                continue
            name = m.group(1)
            pattern = re.compile(rf"\b{re.escape(name)}\b")
            if not any(pattern.search(c) for j, (_, c, _) in enumerate(keep) if j != k):
                del keep[k]
                changed = True
                break
    return keep


def _memory_note(gen: ProgramGen, total: int) -> str:
    regs = [r.name for r in gen.shared.values() if r.kind == "reg"]
    scr = [r.name for r in gen.shared.values() if r.kind == "ptr"]
    parts = []
    if regs:
        parts.append(f"Shared arrays in registers: {', '.join(regs)}.")
    if scr:
        parts.append(f"Shared arrays in a scratch region of global memory ({total} bytes per program, fenced "
                     f"with tl.debug_barrier()): {', '.join(scr)}.")
    return " ".join(parts) if parts else "No shared memory."


def _short_path(path: str) -> str:
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-2:])
