"""The shape issue 7 promised, read from the source: front end -> analysis passes -> IR -> back ends, each
layer importing only the ones below it, and the warp's width written once.
"""

from __future__ import annotations

import ast
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GPUSIM = ROOT / "gpusim"


def imports_of(path: Path) -> set[str]:
    """The gpusim modules ``path`` imports (relative imports resolved), as dotted names under gpusim."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                name = ".".join(base + ((node.module,) if node.module else ()))
            else:
                name = node.module or ""
            out.add(name)
            out.update(f"{name}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def files(sub: str) -> list[Path]:
    return sorted((GPUSIM / sub).rglob("*.py"))


# package -> what it must never import (the layers above it, or beside it)
FORBIDDEN = {
    "ir": ("gpusim.frontend", "gpusim.backends", "gpusim.runtime", "gpusim.launch", "gpusim.observe"),
    "frontend": ("gpusim.backends", "gpusim.runtime", "gpusim.launch", "gpusim.observe"),
    "backends": ("gpusim.frontend", "gpusim.launch", "ast"),
}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_each_layer_imports_only_the_layers_below_it(package):
    for path in files(package):
        for name in imports_of(path):
            for bad in FORBIDDEN[package]:
                assert name != bad and not name.startswith(bad + "."), f"{path.relative_to(ROOT)} imports {name}"


def test_the_analysis_is_a_pass_over_the_ir_that_the_front_end_calls():
    # the uniformity pass reads IR only; the front end calls it (the old analysis built device functions from
    # inside its fixed point, importing the front end back)
    assert not any(n.startswith("gpusim.frontend") for n in imports_of(GPUSIM / "ir" / "uniformity.py"))
    assert "gpusim.ir.uniformity" in imports_of(GPUSIM / "frontend" / "compiler.py")


# Literal 32s and 31s in code that are not the warp's width, each with what it is. A new literal 32 (or 31 as
# "32 - 1") must be WARP_SIZE from gpusim/device.py, or be added here with its meaning.
NOT_THE_WARP = {
    ("gpusim/device.py", "WARP_SIZE = 32"): "the constant itself",
    ("gpusim/device.py", "MAX_GRID = (2**31 - 1, 65535, 65535)"): "the grid's x limit",
    ("gpusim/observe/banks.py", "BANKS = 32"): "shared-memory banks",
    ("gpusim/observe/coalescing.py", "SECTOR = 32"): "bytes per sector",
    ("gpusim/timing_model.py", "SECTOR = 32"): "bytes per sector",
    ("gpusim/timing_model.py", "max_blocks_per_sm=32"): "the H200's resident blocks per SM",
    ("gpusim/backends/compiled/driver.py", "RETRY_SPLIT = 32"): "launches before a split is retried",
    ("gpusim/roofline.py", "2048, 32,"): "resident blocks per SM",
    ("gpusim/runtime/output.py", "MAX_PRINT_ITEMS = 32"): "numba-cuda's print() limit",
    ("gpusim/ir/types.py", "(8, 16, 32, 64)"): "bit widths",
    ("gpusim/ir/types.py", "(16, 32, 64)"): "bit widths",
    ("gpusim/backends/triton/expressions.py", "bits"): "bit widths",
    ("gpusim/backends/lanes/work.py", "N."): "step costs of IR nodes",
    ("tui/breakdown.py", "lru_cache(maxsize=32)"): "a cache size",
    ("gpusim/backends/compiled/rt_sync.py", "(np.int64(1) << 32) if ballot >= 2**31"): "a ballot's 32 bits as int32",
    ("gpusim/backends/compiled/values.py", "bits = 64 if"): "bit widths",
    ("gpusim/cudasim/xoroshiro.py", "z ^ (z >> 31)"): "splitmix64's last shift",
}


def test_the_warp_is_32_lanes_in_one_named_constant():
    found = []
    for sub in ("gpusim", "tui"):
        for path in sorted((ROOT / sub).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            with path.open("rb") as f:
                for tok in tokenize.tokenize(f.readline):
                    if tok.type == tokenize.NUMBER and tok.string.lower() in ("32", "31", "0x20", "0x1f"):
                        line = tok.line.strip()
                        if not any(rel == file and text in line for file, text in NOT_THE_WARP):
                            found.append(f"{rel}:{tok.start[0]}: {line}")
    assert not found, "literal warp widths (use gpusim.device.WARP_SIZE):\n" + "\n".join(found)
