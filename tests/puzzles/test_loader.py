"""Tests for puzzles/loader.py: every way a solution file can be broken becomes a clean KernelCompileError."""

from __future__ import annotations

import inspect
import sys
import threading

import pytest
from puzzle_fixtures import write

from gpusim.faults import KernelCompileError, KernelSyntaxError
from puzzles import loader
from puzzles.loader import SolutionError, load_solution


def test_finds_plain_functions_by_name(tmp_path):
    path = write(tmp_path, "ok.py", """
        TPB = 4


        def k(out):
            out[0] = TPB
    """)
    solution = load_solution(path, ["k"])
    assert solution.kernels["k"].__name__ == "k"
    assert solution.module.TPB == 4 and solution.path == path.resolve()


def test_finds_numba_dispatchers(tmp_path):
    path = write(tmp_path, "jit.py", """
        from numba import cuda


        @cuda.jit
        def k(out):
            out[0] = 1
    """)
    kernel = load_solution(path, ("k",)).kernels["k"]
    assert kernel.py_func.__name__ == "k"


def test_source_is_what_was_compiled_even_if_the_file_changes(tmp_path):
    path = write(tmp_path, "src.py", """
        def k(out):
            out[0] = 1
    """)
    kernel = load_solution(path, ("k",)).kernels["k"]
    path.write_text("# replaced after loading\n")
    assert inspect.getsource(kernel) == "def k(out):\n    out[0] = 1\n"


def test_each_load_is_a_fresh_module(tmp_path):
    path = write(tmp_path, "m.py", "def k(out):\n    pass\n")
    first, second = load_solution(path, ("k",)), load_solution(path, ("k",))
    assert first.module is not second.module and first.module.__name__ != second.module.__name__
    assert sys.modules[second.module.__name__] is second.module


def test_syntax_error_has_file_line_and_source(tmp_path):
    path = write(tmp_path, "bad.py", """
        x = 1
        def k(out)
            pass
    """)
    with pytest.raises(KernelSyntaxError) as info:
        load_solution(path, ("k",))
    e = info.value
    assert e.lineno == 2 and e.filename == str(path.resolve()) and "def k(out)" in e.source_line
    assert f"{path.resolve()}:2" in str(e) and "not valid Python" in str(e)


def test_indentation_error_and_null_bytes(tmp_path):
    with pytest.raises(KernelSyntaxError):
        load_solution(write(tmp_path, "ind.py", "def k(out):\nreturn 1\n"), ("k",))
    nul = tmp_path / "nul.py"
    nul.write_bytes(b"x = 1\x00\n")
    with pytest.raises(KernelSyntaxError):
        load_solution(nul, ("k",))


def test_error_while_running_the_file_names_the_line(tmp_path):
    path = write(tmp_path, "boom.py", """
        import math


        N = undefined_name + 1
    """)
    with pytest.raises(SolutionError) as info:
        load_solution(path, ("k",))
    assert info.value.lineno == 4 and "NameError" in str(info.value) and "undefined_name" in str(info.value)


def test_missing_module_and_system_exit_are_clean(tmp_path):
    with pytest.raises(SolutionError, match="ModuleNotFoundError"):
        load_solution(write(tmp_path, "imp.py", "import no_such_module_here\n"), ("k",))
    with pytest.raises(SolutionError, match="SystemExit"):
        load_solution(write(tmp_path, "ex.py", "import sys\nsys.exit(3)\n"), ("k",))


def test_missing_kernel_lists_what_the_file_defines(tmp_path):
    path = write(tmp_path, "other.py", "def helper(x):\n    return x\n\n\ndef kern(out):\n    pass\n")
    with pytest.raises(SolutionError) as info:
        load_solution(path, ("k",))
    assert "no kernel named `k`" in str(info.value) and "helper, kern" in str(info.value)


def test_a_name_that_is_not_a_function(tmp_path):
    with pytest.raises(SolutionError, match="is a int, not a kernel"):
        load_solution(write(tmp_path, "num.py", "k = 3\n"), ("k",))


def test_unreadable_files(tmp_path):
    with pytest.raises(SolutionError, match="no such file"):
        load_solution(tmp_path / "absent.py", ("k",))
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# caf\xe9\n")
    with pytest.raises(SolutionError, match="not UTF-8"):
        load_solution(latin, ("k",))
    with pytest.raises(SolutionError, match="cannot be read"):
        load_solution(tmp_path, ("k",))            # a folder


def test_endless_module_level_loop_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "IMPORT_TIME_LIMIT_S", 0.2)
    with pytest.raises(SolutionError, match="took too long") as info:
        load_solution(write(tmp_path, "spin.py", "x = 0\nwhile True:\n    x += 1\n"), ("k",))
    assert info.value.lineno in (2, 3)


def test_endless_loop_is_stopped_in_a_worker_thread_too(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "IMPORT_TIME_LIMIT_S", 0.2)
    path = write(tmp_path, "spin.py", """
        def spin():
            while True:
                pass


        spin()
    """)
    caught = []
    worker = threading.Thread(target=lambda: caught.append(_error_of(path)))
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive() and "took too long" in caught[0]


def _error_of(path) -> str:
    try:
        load_solution(path, ("k",))
    except SolutionError as e:
        return str(e)
    return "loaded"


def test_every_failure_is_a_kernel_compile_error():
    assert issubclass(SolutionError, KernelCompileError) and issubclass(KernelSyntaxError, KernelCompileError)
