"""Tests for puzzles/loader.py: every way a solution file can be broken becomes a clean KernelCompileError, the
file's code runs only in the sandbox, and the kernels come back rebuilt from the file's source."""

from __future__ import annotations

import fcntl
import inspect
import os
import threading
import time

import pytest
from puzzle_fixtures import write

from gpusim.faults import KernelCompileError, KernelSyntaxError
from puzzles import loader
from puzzles.loader import SolutionError, load_solution, load_source

KERNEL = """
    from numba import cuda

    TPB = 4
    SCALE = (1.5, 2)


    @cuda.jit
    def k(out):
        out[0] = TPB * SCALE[0]
"""


def _error(path, names=("k",)) -> SolutionError:
    with pytest.raises(SolutionError) as info:
        load_solution(path, names)
    return info.value


def test_finds_cuda_kernels_and_rebuilds_them_with_the_file_constants(tmp_path):
    path = write(tmp_path, "ok.py", KERNEL)
    solution = load_solution(path, ["k"])
    kernel = solution.kernels["k"]
    assert kernel.__name__ == "k" and not hasattr(kernel, "py_func")      # a plain function, rebuilt here
    assert kernel.__globals__["TPB"] == 4 and kernel.__globals__["SCALE"] == (1.5, 2)
    assert kernel.__globals__["cuda"].__name__ == "numba.cuda"
    assert solution.path == path.resolve() and not solution.used_reference


def test_only_data_and_known_modules_reach_the_rebuilt_namespace(tmp_path):
    path = write(tmp_path, "mixed.py", """
        import os
        import numpy as np
        from numba import cuda, float32

        TABLE = np.arange(4, dtype=np.int32)
        CONFIG = {"a": 1}
        DT = np.float32


        class Helper:
            pass


        @cuda.jit
        def k(out):
            out[0] = TABLE[1]
    """)
    namespace = load_solution(path, ["k"]).kernels["k"].__globals__
    assert namespace["TABLE"].tolist() == [0, 1, 2, 3] and namespace["TABLE"].dtype.name == "int32"
    assert namespace["float32"].__module__.startswith("numba") and namespace["DT"].__name__ == "float32"
    assert namespace["np"].__name__ == "numpy"
    assert type(namespace["os"]).__name__ == "module" and not hasattr(namespace["os"], "system")
    assert type(namespace["CONFIG"]).__name__ == "dict" and not isinstance(namespace["CONFIG"], dict)
    assert type(namespace["Helper"]).__name__ == "type" or not isinstance(namespace["Helper"], type)


def test_source_is_what_was_checked_even_if_the_file_changes(tmp_path):
    path = write(tmp_path, "src.py", KERNEL)
    kernel = load_solution(path, ("k",)).kernels["k"]
    path.write_text("# replaced after loading\n")
    assert "out[0] = TPB * SCALE[0]" in inspect.getsource(kernel)


def test_load_source_checks_the_given_text_not_the_file(tmp_path):
    path = write(tmp_path, "disk.py", "this is not python\n")
    solution = load_source(KERNEL.replace("\n    ", "\n"), str(path), ("k",))
    assert "TPB" in inspect.getsource(solution.kernels["k"])


def test_a_plain_function_is_not_a_kernel(tmp_path):
    e = _error(write(tmp_path, "plain.py", "def k(out):\n    out[0] = 1\n"))
    assert "no `@cuda.jit` decorator" in str(e) and e.lineno == 1


def test_a_device_function_cannot_be_launched(tmp_path):
    e = _error(write(tmp_path, "dev.py", """
        from numba import cuda


        @cuda.jit(device=True)
        def k(out):
            out[0] = 1
    """))
    assert "device function" in str(e) and "remove `device=True`" in str(e)


def test_a_cpu_jit_is_not_a_kernel(tmp_path):
    e = _error(write(tmp_path, "cpu.py", """
        import numba


        @numba.njit
        def k(out):
            out[0] = 1
    """))
    assert "not by `numba.cuda.jit`" in str(e)


def test_a_kernel_calls_only_device_functions(tmp_path):
    plain = write(tmp_path, "helper.py", """
        from numba import cuda


        def twice(x):
            return 2 * x


        @cuda.jit
        def k(out):
            out[0] = twice(1)
    """)
    e = _error(plain)
    assert "calls `twice`" in str(e) and "plain Python function" in str(e) and e.lineno == 4
    ok = write(tmp_path, "device.py", plain.read_text().replace("def twice", "@cuda.jit(device=True)\ndef twice"))
    solution = load_solution(ok, ("k",))
    assert set(solution.rebuilt.device_functions) == {"twice"}
    assert solution.kernels["k"].__globals__["twice"].__name__ == "twice"


def test_an_eager_signature_needs_no_gpu(tmp_path):
    path = write(tmp_path, "eager.py", """
        from numba import cuda


        @cuda.jit("void(float32[:], float32[:])")
        def k(out, a):
            out[0] = a[0]
    """)
    kernel = load_solution(path, ("k",)).rebuilt.kernels["k"]
    assert kernel.signatures == [{"text": "void(float32[:], float32[:])",
                                  "args": [{"array": "float32", "ndim": 1, "layout": "A"}] * 2}]
    e = _error(write(tmp_path, "bad_sig.py", "from numba import cuda\n\n\n@cuda.jit('void(flot32[:])')\n"
                                               "def k(out):\n    pass\n"))
    assert "running your file raised" in str(e) and e.lineno == 4


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
    e = _error(path)
    assert e.lineno == 4 and "NameError" in str(e) and "undefined_name" in str(e)


@pytest.mark.parametrize("escape, expected", [
    ("import sys\nsys.exit(3)\n", "raised SystemExit: 3"),
    ("raise KeyboardInterrupt('bye')\n", "raised KeyboardInterrupt: bye"),
    ("class Out(BaseException):\n    pass\n\n\nraise Out()\n", "raised Out"),
    ("import os\nos._exit(0)\n", "ended the process while it ran (exit status 0"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "stopped by signal SIGKILL"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", "stopped by signal SIGSEGV"),
    ("import no_such_module_here\n", "ModuleNotFoundError"),
])
def test_every_escape_at_import_is_a_clean_failure(tmp_path, escape, expected):
    e = _error(write(tmp_path, "escape.py", escape))
    assert expected in str(e), str(e)


def test_missing_kernel_lists_what_the_file_defines(tmp_path):
    path = write(tmp_path, "other.py", "def helper(x):\n    return x\n\n\ndef kern(out):\n    pass\n")
    e = _error(path)
    assert "no kernel named `k`" in str(e) and "helper, kern" in str(e)


def test_a_name_that_is_not_a_function(tmp_path):
    assert "is a int, not a kernel" in str(_error(write(tmp_path, "num.py", "k = 3\n")))


def test_a_kernel_made_elsewhere_is_refused(tmp_path):
    path = write(tmp_path, "made.py", """
        from numba import cuda

        exec("def k(out):\\n    out[0] = 1\\n")
        k = cuda.jit(k)
    """)
    assert "not a function defined at the top level" in str(_error(path))


def test_unreadable_files(tmp_path):
    assert "no such file" in str(_error(tmp_path / "absent.py"))
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# caf\xe9\n")
    assert "not UTF-8" in str(_error(latin))
    assert "cannot be read" in str(_error(tmp_path))            # a folder


def test_a_byte_order_mark_and_a_coding_line_are_read_as_python_reads_them(tmp_path):
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + KERNEL.replace("\n    ", "\n").encode())
    kernel = load_solution(bom, ("k",)).kernels["k"]
    lines, first = inspect.getsourcelines(kernel)
    assert (first, lines[0]) == (9, "def k(out):\n")           # the BOM moves no line
    latin = tmp_path / "latin1.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + KERNEL.replace("\n    ", "\n").encode())
    assert load_solution(latin, ("k",)).kernels["k"].__globals__["TPB"] == 4


def test_endless_module_level_loop_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "IMPORT_TIME_LIMIT_S", 0.3)
    e = _error(write(tmp_path, "spin.py", "x = 0\nwhile True:\n    x += 1\n"))
    assert "took too long" in str(e) and e.lineno in (2, 3)


def test_a_loop_that_swallows_the_timeout_is_killed(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "IMPORT_TIME_LIMIT_S", 0.2)
    monkeypatch.setattr(loader.sandbox, "KILL_GRACE_S", 0.3)
    path = write(tmp_path, "stubborn.py", """
        while True:
            try:
                while True:
                    pass
            except BaseException:
                pass
    """)
    assert "took too long" in str(_error(path))


def test_endless_loop_is_stopped_in_a_worker_thread_too(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "IMPORT_TIME_LIMIT_S", 0.3)
    path = write(tmp_path, "spin.py", "def spin():\n    while True:\n        pass\n\n\nspin()\n")
    caught = []
    worker = threading.Thread(target=lambda: caught.append(str(_error(path))))
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive() and "took too long" in caught[0]


def test_the_file_cannot_write_files(tmp_path):
    target = tmp_path / "written.txt"
    path = write(tmp_path, "writer.py", f"with open({str(target)!r}, 'w') as f:\n    f.write('x' * 10)\n")
    assert "File too large" in str(_error(path)) and (not target.exists() or target.stat().st_size == 0)


def test_printed_output_at_import_is_kept(tmp_path):
    path = write(tmp_path, "chatty.py", "print('hello')\nimport sys\nprint('oops', file=sys.stderr)\n" +
                 KERNEL.replace("\n    ", "\n"))
    assert load_solution(path, ("k",)).stdout == "hello\noops\n"


def test_every_failure_is_a_kernel_compile_error():
    assert issubclass(SolutionError, KernelCompileError) and issubclass(KernelSyntaxError, KernelCompileError)


def test_no_process_of_the_file_is_left_behind(tmp_path):
    lock = tmp_path / "held"
    path = write(tmp_path, "forker.py", f"import fcntl, os, time\nif os.fork() == 0:\n"
                 f"    fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)\n    fcntl.flock(fd, fcntl.LOCK_EX)\n"
                 f"    time.sleep(60)\ntime.sleep(0.5)\n" + KERNEL.replace("\n    ", "\n"))
    load_solution(path, ("k",))
    fd = os.open(lock, os.O_RDWR)
    for _ in range(100):        # the lock is free once the file's forked process is gone
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            time.sleep(0.05)
    else:
        pytest.fail("a process the file forked outlived the load")
    os.close(fd)


def test_a_file_that_closes_its_pipes_and_lingers_does_not_hold_the_check(tmp_path):
    path = write(tmp_path, "linger.py", "import os, time\nfor fd in range(3, 64):\n    try:\n        os.close(fd)\n"
                 "    except OSError:\n        pass\nos.close(1)\nos.close(2)\ntime.sleep(60)\n")
    started = time.monotonic()
    e = _error(path)
    assert time.monotonic() - started < 10 and "closed its connection to the checker" in str(e), str(e)
