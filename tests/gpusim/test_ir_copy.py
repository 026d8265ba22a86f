"""``gpusim.ir.walk.copy_tree``: the copy the IR passes make of a module or function, cheaper than
``copy.deepcopy`` but the same where it matters: every node is new, a node reached twice is copied once,
and a pass changing the copy leaves the original as it was."""

from __future__ import annotations

import copy

import numpy as np
from numba import cuda

from gpusim.frontend import compile_module
from gpusim.ir import nodes as N
from gpusim.ir.types import FLOAT32, INT64, array_of
from gpusim.ir.walk import children, copy_tree, walk_exprs, walk_stmts

TABLE = np.arange(8, dtype=np.float32)


@cuda.jit(device=True)
def scaled(x, k):
    return x * k + 1.0


@cuda.jit
def kernel(a, out, n):
    i = cuda.grid(1)
    s = cuda.shared.array(32, np.float32)
    if i < n:
        s[cuda.threadIdx.x] = a[i] * TABLE[i % 8]
    cuda.syncthreads()
    if i < n:
        out[i] = scaled(s[cuda.threadIdx.x], np.float32(2.0))


def module() -> N.Module:
    a = np.zeros(4, np.float32)
    return compile_module(kernel, (array_of(a), array_of(a), INT64))


def nodes_of(m: N.Module) -> list:
    found = []
    for fn in m.functions.values():
        found.append(fn)
        found.extend(fn.params)
        for s in walk_stmts(fn.body):
            found.append(s)
            for e in children(s):
                found.extend(walk_exprs(e))
    return found


def test_the_copy_lists_the_same_and_shares_no_node():
    m = module()
    c = copy_tree(m)
    assert c.dump() == m.dump() == copy.deepcopy(m).dump()
    original = {id(x) for x in nodes_of(m)}
    copied = nodes_of(c)
    assert len(copied) == len(nodes_of(m)) > 20
    assert not original & {id(x) for x in copied}


def test_changing_the_copy_leaves_the_original_unchanged():
    m = module()
    before = m.dump()
    c = copy_tree(m)
    for fn in c.functions.values():
        fn.var_uni.clear()
        for s in walk_stmts(fn.body):
            s.line = 999
            for e in children(s):
                for x in walk_exprs(e):
                    x.uni = N.Uni.GRID
        fn.body.clear()
    assert m.dump() == before


def test_types_and_frozen_arrays_are_shared_a_node_reached_twice_is_copied_once():
    m = module()
    c = copy_tree(m)
    assert c.entry.params[0].type is m.entry.params[0].type
    const = [x for x in nodes_of(m) if isinstance(x, N.ConstArray)]
    const_c = [x for x in nodes_of(c) if isinstance(x, N.ConstArray)]
    assert len(const) == len(const_c) == 1
    assert const_c[0] is not const[0] and const_c[0].data is const[0].data
    x = N.Const(1.5, type=FLOAT32)
    stmt = N.Assign("y", N.Binary("add", x, x, type=FLOAT32))
    body = copy_tree([stmt])
    new = body[0].value
    assert new.left is new.right and new.left is not x and new.left.value == 1.5
