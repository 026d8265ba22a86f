"""How long Triton takes to compile the Triton back end's programs for sm_90, without a GPU.

    python benchmarks/gpu/triton_compile_times.py [PUZZLE ...]     (default: the matmuls, 14 and 48-55)

For each distinct program of the puzzle's first case (the reference solution, the block shapes of that
case): its length in lines and the CPU seconds of ``triton.compile`` for sm_90 (this process and its
children, ptxas included: on a shared machine wall time says more about the neighbours than about Triton),
in a fresh Triton cache. One line per program, with the installed triton's version. Needs triton (not
torch); runs as well on the GPU machine.
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile

DEFAULT = ["14", "48", "49", "50", "51", "52", "53", "54", "55"]


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(argv: list[str]) -> int:
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton-compile-times-")
    os.environ.pop("TRITON_INTERPRET", None)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    import triton

    from gpusim.backends.triton import launcher
    from puzzles import registry, workspace
    from puzzles.graduate.triton_backend import TritonBackend

    failed = 0
    for x in argv or DEFAULT:
        puzzle = registry.get(x)
        runnable = TritonBackend(interpret=False).compile(puzzle, workspace.reference_path(puzzle))
        for step, program in runnable.programs(puzzle.make_cases()[0]):
            t0 = cpu_seconds()
            try:
                launcher.compile_aot(program)
                took = f"{cpu_seconds() - t0:.1f} CPU-s"
            except Exception as e:  # reported on its line; the others still run
                failed += 1
                took = f"FAILED: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            print(f"triton {triton.__version__}  {puzzle.number:>3} {step.kernel:<28} block {str(program.block):<13} "
                  f"{program.source.count(chr(10)):>5} lines  {took}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
