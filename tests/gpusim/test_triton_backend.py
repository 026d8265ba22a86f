"""The Triton back end: the programs it writes (no torch or triton needed), what it refuses, and (with the
``[gpu]`` extra) the kernels of ``triton_kernels.py`` run through Triton's interpreter and compiled for sm_90."""

from __future__ import annotations

import importlib.util
import inspect
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float32

from gpusim.backends.triton import NotTranslatable, translate
from gpusim.frontend.compiler import compile_module
from gpusim.launch import arg_type

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HAVE_TRITON = all(importlib.util.find_spec(m) is not None for m in ("torch", "triton"))


def program(kernel, args, block=32, **kw):
    f = kernel.py_func
    names = f.__code__.co_varnames[:f.__code__.co_argcount]
    return translate(compile_module(f, tuple(arg_type(v, n) for v, n in zip(args, names))), block, **kw)


def body(p) -> list[str]:
    lines = p.source.splitlines()
    start = next(k for k, ln in enumerate(lines) if ln.startswith("def "))
    return lines[start + 1:]


def code(line: str) -> str:
    return line.split("#")[0].strip()


@cuda.jit
def add_ten(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i] + 10


def test_threads_are_the_lanes_of_one_program_per_block():
    p = program(add_ten, (np.zeros(4, np.float32), np.zeros(4, np.float32)), block=4)
    text = "\n".join(code(ln) for ln in body(p))
    assert p.lanes == 32 and p.block == (4, 1, 1)            # 4 threads padded to a warp, a power of two
    assert "_lane = tl.arange(0, 32)" in text
    assert "_live = _lane < 4" in text                        # the padding lanes are masked off
    assert "i = _tx" in text and "_tx = _lane" in text
    assert re.search(r"tl\.store\(out \+ i\.to\(tl\.int64\), \w+, mask=_live\)", text)
    # numba types float32 + int64 literal as float64: the program computes in float64 and converts back
    assert "tl.full((), 10.0, tl.float64)" in text and ".to(tl.float32)" in text


def test_every_generated_line_names_its_source_line():
    p = program(add_ten, (np.zeros(4, np.float32), np.zeros(4, np.float32)), block=4)
    lines = body(p)
    first = add_ten.py_func.__code__.co_firstlineno           # the decorator's line; "def" is the next
    assert all(re.search(r"# \d+", ln) for ln in lines)
    assert sum(ln.endswith(f"# {first + 3}: out[i] = a[i] + 10") for ln in lines) == 1   # a run's first line
    assert sum(ln.endswith(f"# {first + 2}: i = cuda.threadIdx.x") for ln in lines) == 1
    assert sum(ln.endswith(f"# {first + 3}") for ln in lines) == 2                       # the rest of the run
    assert p.line_map[len(p.source.splitlines())] == first + 3


@cuda.jit
def per_block_and_per_lane(out, flags, n):
    i = cuda.grid(1)
    if flags[cuda.blockIdx.x] > 0:        # the same for the whole block: one scalar branch
        if i < n:                         # per lane: a mask
            out[i] = 1.0
        else:
            out[i - n] = 2.0


def test_block_uniform_branches_are_scalar_ifs_and_per_lane_branches_masks():
    p = program(per_block_and_per_lane, (np.zeros(64, np.float32), np.zeros(2, np.int32), 40))
    lines = [code(ln) for ln in body(p)]
    ifs = [ln for ln in lines if ln.startswith("if ")]
    assert len(ifs) == 1                                      # only the block-uniform condition is a Python if
    cond = ifs[0][3:-1]
    load = next(ln for ln in lines if "tl.load(flags" in ln)
    assert any(ln.startswith(f"{cond} = ({load.split(' = ')[0]}") for ln in lines)   # computed from the load
    assert "mask" not in load                                 # a scalar load at a block-uniform index
    masks = [ln for ln in lines if re.match(r"_m\d+ = ", ln)]
    assert any("& ~" in ln for ln in masks)                   # the else branch runs under mask & ~cond
    assert sum("tl.store(out" in ln for ln in lines) == 2


@cuda.jit
def reduce_in_registers(a, out):
    s = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    stride = 32
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def scatter_to_scratch(a, out):
    s = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    s[(t * 5) % 64] = a[t]
    cuda.syncthreads()
    out[t] = s[t]


def test_shared_arrays_in_registers_or_fenced_scratch():
    a = np.zeros(128, np.float32)
    p = program(reduce_in_registers, (a, np.zeros(2, np.float32)), block=64)
    text = "\n".join(code(ln) for ln in body(p))
    assert p.register_arrays == ["s"] and p.smem_bytes == 0 and "_smem" not in p.source
    assert "tl.gather(" in text                               # s[t + stride]: another thread's element
    assert text.count("tl.debug_barrier()") == 2              # the two syncthreads, nothing more
    q = program(scatter_to_scratch, (a, np.zeros(64, np.float32)), block=64)
    lines = [code(ln) for ln in body(q)]
    assert q.scratch_arrays == ["s"] and q.smem_bytes == 256
    k = next(j for j, ln in enumerate(lines) if ln.startswith("tl.store(_sh"))
    assert lines[k + 1] == "tl.debug_barrier()"              # the store is fenced before any later access
    assert not any("_sh" in ln for ln in lines[:k] if not ln.startswith("_sh"))   # (nothing before it to fence)


@cuda.jit
def divergent_loop(a, out):
    i = cuda.threadIdx.x
    k = 0
    while a[i] > k:
        k += 1
        if k == 7:
            break
    out[i] = k


def test_a_divergent_loop_runs_while_any_lane_is_left():
    p = program(divergent_loop, (np.zeros(32, np.int64), np.zeros(32, np.int64)))
    lines = [code(ln) for ln in body(p)]
    head = next(ln for ln in lines if ln.startswith("while "))
    assert re.match(r"while \(tl\.max\(_lm\d+\.to\(tl\.int32\), 0\) > 0\)", head)   # any lane left
    assert any(re.match(r"_brk\d+ = _brk\d+ \| _m\d+", ln) for ln in lines)


# -- refusals: each names the construct and the line --------------------------------------------------------------
@cuda.jit
def uses_print(a):
    print(a[0])


@cuda.jit
def uses_atomic_inc(a):
    cuda.atomic.inc(a, 0, 10)


@cuda.jit
def uses_atomic_nanmax(a):
    cuda.atomic.nanmax(a, 0, 1.0)


@cuda.jit
def indexes_with_a_float(a):
    a[1.5] = 0


@cuda.jit
def one_name_two_arrays(a, b, c):
    x = a
    if c > 0:
        x = b
    x[0] = 1.0


@cuda.jit
def counts_leading_zeros_of_int8(a, out):
    out[0] = cuda.clz(a[0])


@cuda.jit(device=True)
def triangle(n):
    if n <= 0:
        return 0
    return n + triangle(n - 1)


@cuda.jit
def calls_a_recursion(a):
    a[0] = triangle(4)


REFUSALS = [
    (uses_print, (np.zeros(2),), "print() in a kernel", "print(a[0])"),
    (uses_atomic_inc, (np.zeros(2, np.uint32),), "cuda.atomic.inc has no Triton translation", "atomic.inc"),
    (uses_atomic_nanmax, (np.zeros(2),), "cuda.atomic.nanmax has no Triton translation", "atomic.nanmax"),
    (indexes_with_a_float, (np.zeros(2),), "always fails (array index must be an integer", "a[1.5] = 0"),
    (one_name_two_arrays, (np.zeros(2), np.zeros(2), 1), "refers to different arrays", "x = b"),
    (counts_leading_zeros_of_int8, (np.zeros(2, np.int8), np.zeros(2, np.int32)), "clz() of a int8", "cuda.clz"),
]


def test_a_per_thread_array_with_constant_indices_is_registers_and_its_loops_are_written_out():
    from tests.gpusim.triton_kernels import case_local_tables

    kernel, _grid, block, args, _expect = case_local_tables()
    text = "\n".join(code(ln) for ln in body(program(kernel, args, block=block)))
    reg = sorted(set(re.findall(r"\b(_loc\d+_reg_\d+) = tl\.zeros\(\[32\], tl\.int32\)", text)))
    assert len(reg) == 6                                          # reg[2, 3]: one register per element
    assert not re.search(r"_loc\d+_reg = ", text)                 # and no table for it
    assert re.search(r"_loc\d+_tab = tl\.zeros\(\[32, 4\], tl\.int32\)", text)  # tab[(t + k) % 4]: a table
    loops = re.findall(r"^for \w+ in range\((.*)\):$", text, re.M)
    # the loops over reg's indices are written out; those that index only the table stay loops
    assert len(loops) == 2 and "tl.full((), 4, tl.int64), 1" in loops[0] and ", n, 1" in loops[1]


@cuda.jit
def register_tile(a, out):
    tx = cuda.threadIdx.x
    acc = cuda.local.array(4, float32)
    ra = cuda.local.array(4, float32)
    for i in range(4):
        acc[i] = 0.0
    for q in range(8):                  # q indexes no per-thread array: it stays a loop
        for i in range(4):
            ra[i] = a[q, tx * 4 + i]
        for i in range(4):
            acc[i] += ra[i] * ra[i]
    for i in range(4):
        out[tx * 4 + i] = acc[i]


def test_only_loops_whose_variable_indexes_a_per_thread_array_are_written_out():
    p = program(register_tile, (np.zeros((8, 128), np.float32), np.zeros(128, np.float32)), block=32)
    text = "\n".join(code(ln) for ln in body(p))
    loops = re.findall(r"^for \w+ in range\((.*)\):$", text, re.M)
    assert len(loops) == 1 and "tl.full((), 8, tl.int64), 1" in loops[0]
    inside = text.split("for ", 1)[1]
    assert len(re.findall(r"_loc\d+_acc_\d = tl\.fma\(", inside)) == 4      # the i loops: written out
    assert not re.search(r"^i = ", inside.split("\n", 1)[1].split("_loc")[0], re.M)  # no dead i = k per copy


def test_a_shared_tile_inner_product_is_one_dot():
    from tests.gpusim.triton_kernels import case_tile_product_scratch, case_tile_products

    kernel, _grid, block, args, _expect = case_tile_products()
    lines = [code(ln) for ln in body(program(kernel, args, block=block))]
    text = "\n".join(lines)
    assert len(re.findall(r"^for \w+ in range\(", text, re.M)) == 1   # only the k-steps loop is left, and
    #                                                                  with register tiles it may be pipelined
    dots = [ln for ln in lines if "tl.dot(" in ln]
    assert len(dots) == 2 and all('input_precision="ieee"' in ln for ln in dots)   # never TF32
    # sa[ty, j] and sb[j, tx] of planes stored at [ty, tx] are the planes themselves; sc[tx, j] is gathered
    assert "tl.dot(tl.reshape(_sh1_sa, [16, 16]), tl.reshape(_sh2_sb, [16, 16]), tl.reshape(acc, [16, 16])" in text
    assert text.count("tl.gather(") == 1
    # the float64 accumulator of float32 products: the products as float32, their sum in float64 over the
    # first (slowest) axis, j: within each thread (test_a_float64_tile_sum_stays_in_each_thread)
    assert ("tl.reshape(acc64, [16, 16]) + tl.sum((tl.trans(tl.reshape(_sh1_sa, [16, 16]))[:, :, None]"
            " * tl.reshape(_sh2_sb, [16, 16])[:, None, :]).to(tl.float64), 0)") in text
    assert "[None, :, :]" not in text     # never j between the rows and the columns (it spans threads)
    kernel, _grid, block, args, _expect = case_tile_product_scratch()
    text = "\n".join(code(ln) for ln in body(program(kernel, args, block=block)))
    assert len(re.findall(r"tl\.dot\(", text)) == 1 and "tl.arange(0, 16)[None, :] < 8" in text   # K 8 -> 16
    assert re.search(r"^acc = tl\.where\(_m\d+, tl\.reshape\(_dot\d+, \[1024\]\), acc\)$", text, re.M)  # masked
    # a dot on a scratch tile: its k-steps loop is not software-pipelined (the tile's loads after its stores)
    assert re.search(r"^for _k\d+ in tl\.range\(.*, num_stages=1\):$", text, re.M)


@pytest.mark.parametrize("kernel,args,message,source", REFUSALS, ids=[r[0].__name__ for r in REFUSALS])
def test_what_cannot_be_translated_is_named_with_its_line(kernel, args, message, source):
    with pytest.raises(NotTranslatable) as info:
        program(kernel, args)
    e = info.value
    assert message in e.message and e.message.startswith("the Triton back end cannot translate this")
    lines, first = inspect.getsourcelines(kernel.py_func)
    expected = first + next(k for k, ln in enumerate(lines) if source in ln and not ln.lstrip().startswith("def"))
    assert e.filename == __file__ and e.lineno == expected and source in e.source_line


def test_a_recursion_is_refused_at_the_recursive_call():
    # device functions are inlined into the Triton program: a recursive one would never end
    with pytest.raises(NotTranslatable, match="a recursive call of the device function 'triangle'") as info:
        program(calls_a_recursion, (np.zeros(2, np.int64),))
    lines, first = inspect.getsourcelines(triangle.py_func)
    assert info.value.lineno == first + next(k for k, ln in enumerate(lines) if "triangle(n - 1)" in ln)


def test_a_block_larger_than_the_gpu_allows_is_refused():
    with pytest.raises(NotTranslatable, match="a block of 2048 threads"):
        program(add_ten, (np.zeros(4, np.float32), np.zeros(4, np.float32)), block=(64, 32))


def test_a_tile_read_by_columns_is_a_window_of_its_transpose_made_once():
    from tests.gpusim.triton_kernels import (
        case_rows_back,
        case_transpose_quarters,
        case_transpose_reversed,
        case_transpose_square,
        case_transpose_steps,
        case_transpose_strided_rows,
        case_transpose_tall,
    )

    def lines_of(case):
        kernel, _grid, block, args, _expect = case()
        return [code(ln) for ln in body(program(kernel, args, block=block))]

    # 16 x 4 block, four planes of rows ty + 4k, read tile[tx, ty + 4k] in a loop of four trips
    lines = lines_of(case_transpose_quarters)
    text = "\n".join(lines)
    assert "tl.gather(" not in text and text.count("tl.trans(") == 1
    assert "tl.join(tl.join(_sh1_tile_0, _sh1_tile_1), tl.join(_sh1_tile_2, _sh1_tile_3))" in text
    loop = next(k for k, ln in enumerate(lines) if ln.startswith("for "))
    before, inside = "\n".join(lines[:loop]), "\n".join(lines[loop:])
    assert "tl.trans(" in before                                    # made before the loop, which stores nothing
    assert before.count("tl.split(") == 3                           # ... and its four windows split off there
    assert "tl.trans(" not in inside and "tl.split(" not in inside
    picks = r"tl\.where\(k == 0, _win\d+, tl\.where\(k == 1, _win\d+, tl\.where\(k == 2, _win\d+, _win\d+\)\)\)"
    assert re.search(picks, inside)                                 # a trip picks its window in registers
    # a 16 x 8 block on a 32 x 16 tile: the window moves along both axes of the transpose, by q and by k
    lines = lines_of(case_transpose_tall)
    loop = next(k for k, ln in enumerate(lines) if ln.startswith("for "))
    assert "\n".join(lines[:loop]).count("tl.split(") == 3 and "tl.gather(" not in "\n".join(lines)
    inside = "\n".join(lines[loop:])
    assert re.search(r"^_w\d+ = q \* 2 \+ k$", inside, re.M) and re.search(r"tl\.where\(_w\d+ == 0, _win", inside)
    # one plane of a padded tile, read tile[tx, ty] by a square block: the transpose itself
    text = "\n".join(lines_of(case_transpose_square))
    assert "tl.trans(tl.reshape(_sh1_tile, [16, 16]), (1, 0))" in text and "tl.gather(" not in text
    # a loop that stores into the tile: its transpose is made inside the loop, after each trip's store
    lines = lines_of(case_transpose_steps)
    loop = next(k for k, ln in enumerate(lines) if ln.startswith("for "))
    assert not any("tl.trans(" in ln for ln in lines[:loop]) and any("tl.trans(" in ln for ln in lines[loop:])
    # tile[tx, 15 - y]: the element falls as ty rises, no window of the transpose: gathers, as before
    text = "\n".join(lines_of(case_transpose_reversed))
    assert "tl.trans(" not in text and text.count("tl.gather(") == 4
    # 32 x 8 threads, tile[ty + j, tx] for j in range(0, 32, 8): the store loop is written out (four planes)
    # and the read loop's window index is j // 8
    text = "\n".join(lines_of(case_transpose_strided_rows))
    assert "tl.gather(" not in text and text.count("tl.split(") == 3 and "tl.store(_sh" not in text
    assert re.search(r"^_w\d+ = \(j // 8\)$", text, re.M)
    # tile[ty + 4k, tx]: each thread's own element of plane k, a select; tile[ty + 4k + 1, tx]: the gathers
    text = "\n".join(lines_of(case_rows_back))
    assert ("tl.where(k == 0, _sh1_tile_0, tl.where(k == 1, _sh1_tile_1, tl.where(k == 2, _sh1_tile_2, "
            "_sh1_tile_3)))") in text
    assert text.count("tl.gather(") == 4 and "tl.trans(" not in text


def test_translating_imports_neither_torch_nor_triton():
    script = (f"import sys, numpy as np; sys.path.insert(0, {str(ROOT)!r}); "
              "import tests.gpusim.test_triton_backend as t; "
              "t.program(t.add_ten, (np.zeros(4, np.float32), np.zeros(4, np.float32)), block=4); "
              "print(sorted(m for m in ('torch', 'triton') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("[]")


# -- with torch and triton: run and compile ------------------------------------------------------------------------
needs_triton = pytest.mark.skipif(not HAVE_TRITON, reason="torch and triton are not installed (the [gpu] extra)")


def run_script(mode: str) -> str:
    out = subprocess.run([sys.executable, str(HERE / "triton_kernels.py"), mode], capture_output=True, text=True,
                         timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


@cuda.jit
def tile_sum64(a, b, out):
    sa = cuda.shared.array((16, 16), float32)
    sb = cuda.shared.array((16, 16), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = 0.0
    for t0 in range(0, a.shape[1], 16):
        sa[ty, tx] = a[ty, t0 + tx]
        sb[ty, tx] = b[t0 + ty, tx]
        cuda.syncthreads()
        for j in range(16):
            acc += sa[ty, j] * sb[j, tx]
        cuda.syncthreads()
    out[ty, tx] = acc


@needs_triton
@pytest.mark.slow
def test_a_float64_tile_sum_stays_in_each_thread():
    """A 16 x 16 block is 8 warps, one thread per output: compiled for sm_90, each k-step's sum is that
    thread's 16 float64 additions (15 within the tl.sum, one onto acc) of its 16 float32 products, and no
    value crosses threads but the tiles' staging (no shuffle). With j between rows and columns in the sum's
    product (the first version) the reduction ran across threads: 80 shuffles and 41 float64 additions."""
    from gpusim.backends.triton import launcher

    args = (np.zeros((16, 32), np.float32), np.zeros((32, 16), np.float32), np.zeros((16, 16), np.float64))
    p = program(tile_sum64, args, block=(16, 16))
    assert p.num_warps == 8 and "tl.sum(" in p.source
    ptx = launcher.compile_aot(p).asm["ptx"]
    assert len(re.findall(r"\badd\.(?:rn\.)?f64\b", ptx)) == 16
    assert len(re.findall(r"\bmul\.(?:rn\.)?f32\b", ptx)) == 16
    assert "shfl" not in ptx


@needs_triton
@pytest.mark.slow
def test_a_transposed_tile_moves_through_shared_memory_once_as_in_cuda():
    """transpose_quarters and transpose_strided_rows compiled for sm_90: what the CUDA kernel does per thread
    (a hand count: four rows of the tile loaded and stored, one barrier, four elements of a column read back
    and stored) and nothing more: four shared stores and four shared loads (the one layout conversion the
    window split needs), two barriers (the kernel's and that conversion's), no shuffle. With four gathers per
    trip it was 16 of each."""
    from gpusim.backends.triton import launcher
    from tests.gpusim.triton_kernels import case_transpose_quarters, case_transpose_strided_rows

    for case in (case_transpose_quarters, case_transpose_strided_rows):
        kernel, _grid, block, args, _expect = case()
        ptx = launcher.compile_aot(program(kernel, args, block=block)).asm["ptx"]
        counts = {w: len(re.findall(rf"\b{w}\.", ptx)) for w in ("ld.global", "st.global", "st.shared", "ld.shared")}
        assert counts == {"ld.global": 4, "st.global": 4, "st.shared": 4, "ld.shared": 4}, (case.__name__, counts)
        assert len(re.findall(r"\bbar\.sync\b", ptx)) == 2 and "shfl" not in ptx, case.__name__


@needs_triton
@pytest.mark.slow
def test_the_kernels_give_cudas_results_under_the_interpreter():
    out = run_script("interpret")
    assert re.search(r"^(\d+) passed, 0 failed$", out, re.M)
    assert "FAIL" not in out


@needs_triton
@pytest.mark.slow
def test_the_kernels_compile_ahead_of_time_for_sm90():
    out = run_script("aot")
    assert re.search(r"^(\d+) passed, 0 failed$", out, re.M)

