"""Memory as the generated lane code touches it: declaring shared, local and const arrays, and every load,
store and atomic — bounds-checked per dimension on active lanes only, recorded in the race shadow
(``races.py``), and reported to the observers.

``MemoryAccess`` is a part of ``Runtime``: it uses the runtime's chunk geometry, fault records and clock.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..device import WARP_SIZE
from ..faults import DataRace, OutOfBounds, UninitializedRead
from ..observe import races
from ..observe.events import AccessEvent, ArrayInfo
from .memory import ArrayHandle, apply_atomic, const_handle, local_handle, shared_handle
from .views import View


def _frozen(a: np.ndarray) -> np.ndarray:
    """``a`` made read-only, for the observers: every array handed to them is one the engine only reads
    afterwards (atomics apply before they observe, so their element ids are never handed to numba frozen)."""
    a.flags.writeable = False
    return a


@njit(cache=True)
def _within(v, n):
    """Is every index in ``v`` in ``[0, n)``?"""
    for k in range(v.size):
        if v[k] < 0 or v[k] >= n:
            return False
    return True


class MemoryAccess:
    # -- arrays ---------------------------------------------------------------------------------------
    def _register(self, key, info: ArrayInfo) -> None:
        if key not in self.arrays:
            self.arrays[key] = info
            for o in self.observers:
                o.on_array(info)

    def shared_array(self, decl, name, shape, dtype, m, line, alignment=16):
        h = self.shared.get(decl)
        if h is not None:
            return h
        size = int(np.prod(shape, dtype=np.int64))
        if size == 0:  # dynamic shared memory: every such array starts at the same address
            key = ("dyn", dtype.str)
            if self.dyn_buffer is None:
                self.dyn_buffer = np.zeros((self.nb, max(self.shared_mem, 8)), np.uint8)
            n = self.shared_mem // dtype.itemsize
            prev = self.arrays.get(key)
            aid = prev.id if prev else self._new_id()
            h = self.shared.get(key)
            if h is None:
                h = shared_handle(aid, name, (n,), dtype, self.nb, 0, self.dyn_buffer)
                for k2, h2 in self.shared.items():  # an alias with the same element size: one shadow
                    if isinstance(k2, tuple) and k2[0] == "dyn" and h2.dtype.itemsize == dtype.itemsize \
                            and h.shadow is not None:
                        h.shadow = h2.shadow
                        break
                self.shared[key] = h
            self._register(key, h.info)
            self.shared[decl] = h
            return h
        key = ("shared", decl)
        prev = self.arrays.get(key)
        offset = sum(self.shared_static_bytes.values())
        if prev is None:
            align = max(16, alignment)  # numba-cuda's alignment= (16 bytes at least, as without it)
            offset = (offset + align - 1) // align * align
            self.shared_static_bytes[decl] = size * dtype.itemsize + (offset - sum(self.shared_static_bytes.values()))
        aid = prev.id if prev else self._new_id()
        h = shared_handle(aid, name, shape, dtype, self.nb, prev.base_address if prev else offset)
        self._register(key, h.info)
        self.shared[decl] = h
        return h

    def local_array(self, decl, name, shape, dtype, m, line):
        key = ("local", decl)
        prev = self.arrays.get(key)
        aid = prev.id if prev else self._new_id()
        h = local_handle(aid, name, shape, dtype, self.N)
        self._register(key, h.info)
        return h

    def const_array(self, spec):
        _, array, name = spec
        h = self.const_handles.get(id(array))
        if h is None:
            aid = self._new_id()
            h = const_handle(aid, name, array, 0)
            self.const_handles[id(array)] = h
            self._register(("const", id(array)), h.info)
        return h

    def field(self, A: ArrayHandle, name: str) -> ArrayHandle:
        """The field ``name`` of an array of records as an array of its own (``FieldView``): a view of the
        records' memory, one per launch for each array and field, with its own race shadow (two fields are
        different bytes) and the addresses of the field's bytes for the observers."""
        key = (id(A), name)
        h = self.field_handles.get(key)
        if h is not None:
            return h
        if name in ("real", "imag") and A.dtype.fields is None:  # a complex array's parts
            sub, offset = (), (0 if name == "real" else A.dtype.itemsize // 2)
            view = A.data.real if name == "real" else A.data.imag
        else:
            sub, offset = A.dtype.fields[name][0].shape, A.dtype.fields[name][1]
            view = A.data[name]
        if A.space in ("shared", "local"):  # stored (blocks or lanes, size): the element id picks the row
            view = view.reshape((A.data.shape[0],) + tuple(A.shape_i) + sub)
        elif A.data.size == 0:
            view = view.reshape(tuple(A.shape_i) + sub)
        base = view.dtype.base if view.dtype.subdtype is not None else view.dtype
        per = A.space in ("shared", "local")
        shape = tuple(view.shape[1:]) if per else tuple(view.shape)
        strides = tuple(int(s) for s in (view.strides[1:] if per else view.strides))
        info = ArrayInfo(self._new_id(), f"{A.name}.{name}", A.space, base, shape, A.info.base_address + offset,
                         strides, A.info)
        flat = view.view()
        try:
            flat.shape = (-1,)  # one stride over every element: a 1-D view (atomics and fast loads use it)
        except AttributeError:
            flat = None  # a nested array field: loads and stores index the view by its own shape
        h = ArrayHandle(info, view, flat, track=A.shadow is not None, writable=A.writable)
        if per and h.shadow is not None:  # one entry per element of every block's copy
            h.shadow = races.Shadow(view.size)
        if A.space == "local":
            h.written = np.zeros(view.size, np.bool_)
        self.field_handles[key] = h
        self._register(("field", id(A), name), info)
        return h

    def _new_id(self):
        self.next_id += 1
        return self.next_id

    # -- memory access --------------------------------------------------------------------------------
    def _locate(self, A: ArrayHandle, m, idx, line, access):
        """Active lanes, per-dimension bounds check, element ids. Returns (lanes, flat, uniform_index)."""
        if not isinstance(A, ArrayHandle):
            raise TypeError(f"{type(A).__name__} is not an array")
        if len(idx) != len(A.shape_i):
            raise IndexError(f"array {A.name!r} has {len(A.shape_i)} dimensions but is indexed with {len(idx)}")
        lanes = self.active(m)
        if lanes.size == 0:
            return lanes, None, False
        uniform = True
        sel = []
        for v in idx:
            if isinstance(v, np.ndarray):
                uniform = False
                if v.dtype.kind not in "iub":
                    raise TypeError(f"array index must be an integer, not {v.dtype}")
                sel.append(v if lanes.size == self.N else v[lanes])
            else:
                if isinstance(v, (float, np.floating)):
                    raise TypeError(f"array index must be an integer, not {type(v).__name__}")
                sel.append(int(v))
        bad = None
        for d, v in enumerate(sel):
            n = A.shape_i[d]
            if isinstance(v, np.ndarray):
                if not _within(v, n):  # one pass; the lanes' mask only when some lane is out
                    b = (v < 0) | (v >= n)
                    bad = b if bad is None else (bad | b)
            elif v < 0 or v >= n:
                bad = np.ones(lanes.size, bool)
                break
        if bad is not None:
            k = int(np.flatnonzero(bad)[0])
            index = tuple(int(v[k]) if isinstance(v, np.ndarray) else int(v) for v in sel)
            dims = [d for d in range(len(index)) if not 0 <= index[d] < A.shape_i[d]]
            d = dims[0]
            what = "Negative index" if index[d] < 0 else "Index"
            summary = (f"{what} {index[d]} is out of bounds for dimension {d} of {A.space} array {A.name!r} "
                       f"(size {A.shape_i[d]}) on {access}.")
            f = OutOfBounds(summary, shape=A.shape_i, access=access)
            f.details.append(f"the array's shape is {A.shape_i}")
            self.record(f, line, int(lanes[k]), A.name, index, (access,))
            self.faults[(OutOfBounds, line, A.name, (access,))].count += int(bad.sum()) - 1
            keep = ~bad
            lanes = lanes[keep]
            sel = [v[keep] if isinstance(v, np.ndarray) else v for v in sel]
            if lanes.size == 0:
                return lanes, None, False
        flat = 0
        for v, s in zip(sel, A.cstrides):
            flat = flat + (v * s if s != 1 else v)
        if not isinstance(flat, np.ndarray):
            flat = np.full(lanes.size, flat, np.int64)
        else:
            flat = flat.astype(np.int64, copy=False)
        return lanes, flat, uniform

    def _elems(self, A: ArrayHandle, lanes, flat):
        if A.space == "shared":
            return self.lane_block[lanes] * int(A.size) + flat
        if A.space == "local":
            return lanes * int(A.size) + flat
        return flat

    def _track(self, A, elems, lanes, line, kind, access):
        now = self.now
        self.now += 1
        sh = A.shadow
        if sh is None:
            if A.space == "local":
                if kind == races.READ:
                    unw = ~A.written[elems]
                    if unw.any():
                        k = int(np.flatnonzero(unw)[0])
                        self._uninit(A, lanes[k], elems[k], line, int(unw.sum()))
                else:
                    A.written[elems] = True
            return
        res = races.record_lanes(sh, elems, lanes, self.lane_block, self.lane_warp_in_block, self.T, self.NW, now,
                                 int(line), kind, A.space == "shared", self.b0, self.bar_time, self.wbar_time)
        if res[races.R_UNINITS]:
            k = int(res[races.R_UNINIT_POS])
            self._uninit(A, lanes[k], elems[k], line, int(res[races.R_UNINITS]))
        if res[races.R_RACES]:
            k = int(res[races.R_RACE_POS])
            self._race(A, lanes[k], elems[k], line, res, access)

    def _index_of(self, A, elem):
        flat = int(elem) % int(A.size) if A.space in ("shared", "local") else int(elem)
        return tuple(int(i) for i in np.unravel_index(flat, A.shape_i)) if A.shape_i else ()

    def _uninit(self, A, lane, elem, line, count):
        index = self._index_of(A, elem)
        f = UninitializedRead(f"Read of {A.space} array {A.name!r} at {list(index)} before any thread wrote it.")
        self.record(f, line, int(lane), A.name, index)
        self.faults[(UninitializedRead, line, A.name, ())].count += count - 1

    def _race(self, A, lane, elem, line, res, access):
        index = self._index_of(A, elem)
        hazard = races.HAZARDS[int(res[races.R_HAZARD])]
        other = int(res[races.R_OTHER_TID])
        oline = int(res[races.R_OTHER_LINE])
        if other >= 0:
            ob, ot = self.info.split_gtid(other)
            who = f"thread {ot} of block {ob}"
        else:
            ob = ot = None
            who = "several other threads"
        f = DataRace(
            f"Data race on {A.space} array {A.name!r} at {list(index)}: {hazard} between threads with no "
            f"barrier between them.",
            other_block=ob, other_thread=ot, other_lineno=oline, other_source_line=self.src(oline),
            hazard=hazard)
        f.details.append(f"the other access: {who} at line {oline}: {self.src(oline).strip()}")
        if ob is not None and self.where(lane)[0] != ob:
            f.details.append("the threads are in different blocks, and blocks are never ordered within a launch")
        self.record(f, line, int(lane), A.name, index, (oline,))
        self.faults[(DataRace, line, A.name, (oline,))].count += int(res[races.R_RACES]) - 1

    def _observe(self, A, kind, line, lanes, flat, uniform=False, op=""):
        if lanes.size == self.N:  # every lane: the identities are the chunk's, computed once
            ids = self._full_ids
            if ids is None:
                gt = self.b0 * self.T + lanes
                blk = gt // self.T
                ids = self._full_ids = tuple(_frozen(a) for a in (gt, blk, blk * self.NW + (gt % self.T) // WARP_SIZE))
            gt, blk, warp = ids
            phase = self._full_phase  # every lane's block's phase: the same until a barrier changes it
            if phase is None:
                phase = self._full_phase = _frozen(self.phase[self.lane_block])
        else:  # the chunk's lane tables instead of dividing by the block size
            bl = self.lane_block[lanes]
            blk = bl + self.b0
            warp = blk * self.NW
            warp += self.lane_warp_in_block[lanes]
            gt, blk, warp = _frozen(self.b0 * self.T + lanes), _frozen(blk), _frozen(warp)
            phase = _frozen(self.phase[bl])
        # observers see read-only arrays: they cannot change what the kernel computes
        loop = self.loop
        ev = AccessEvent(A.info, kind, int(line), gt, blk, warp, _frozen(flat), phase, uniform, op,
                         loop, self.loop_iteration if loop is not None else 0)
        for o in self.observers:
            o.on_access(ev)

    def ld_uniform(self, A: ArrayHandle, m, idx, line):
        """A load at an index the same for every lane (GRID): one NumPy scalar, even when it faulted."""
        v = self.ld(A, m, idx, line)
        if isinstance(v, np.ndarray):
            return v[0] if v.ndim and v.size else A.dtype.type(0)
        return v

    def ld(self, A: ArrayHandle, m, idx, line):
        if len(idx) == 1 and type(idx[0]) is tuple:  # a[t] with t a tuple variable
            idx = idx[0]
        if type(A) is View:  # a slice: checked against the view, then an access of its base array
            A, lanes, flat, uniform = self.through_view(A, m, idx, line, "read")
        else:
            lanes, flat, uniform = self._locate(A, m, idx, line, "read")
        if flat is None:
            if uniform and A.space in ("global", "const") and lanes.size == 0 and not any(
                    isinstance(v, np.ndarray) for v in idx):
                return A.dtype.type(0)
            return np.zeros(self.N, A.dtype)
        elems = self._elems(A, lanes, flat)
        self._track(A, elems, lanes, line, races.READ, "read")
        if self.observers:
            self._observe(A, "ld", line, lanes, flat, uniform)
        if A.flat is not None:
            src = A.flat
            vals = src[elems] if not (uniform and A.space in ("global", "const")) else src[elems[0]]
        else:  # a strided view (a record's field): the element ids over the data's own shape
            vals = A.data[np.unravel_index(elems, A.data.shape)]
            if uniform and A.space in ("global", "const"):
                vals = vals[0]
        if uniform and A.space in ("global", "const"):
            return vals
        if lanes.size == self.N:
            return vals
        out = np.zeros(self.N, A.dtype)
        out[lanes] = vals
        return out

    def st(self, A: ArrayHandle, m, idx, value, line):
        if not A.writable:
            raise TypeError(f"{A.space} array {A.name!r} is read-only")
        if len(idx) == 1 and type(idx[0]) is tuple:  # a[t] = v with t a tuple variable
            idx = idx[0]
        if type(A) is View:  # a slice: checked against the view, then an access of its base array
            A, lanes, flat, uniform = self.through_view(A, m, idx, line, "write")
        else:
            lanes, flat, uniform = self._locate(A, m, idx, line, "write")
        if flat is None:
            return
        elems = self._elems(A, lanes, flat)
        self._track(A, elems, lanes, line, races.WRITE, "write")
        if self.observers:
            self._observe(A, "st", line, lanes, flat, uniform)
        if isinstance(value, np.ndarray) and value.ndim:
            v = value if lanes.size == self.N else value[lanes]
        else:
            v = value
        if isinstance(v, tuple):
            raise TypeError("cannot store a tuple into an array element")
        if A.flat is not None:
            A.flat[elems] = v
        else:
            A.data[np.unravel_index(elems, A.data.shape)] = v

    def atomic(self, op, A: ArrayHandle, m, idx, value, cmp, used, line):
        if not A.writable:
            raise TypeError(f"{A.space} array {A.name!r} is read-only")
        if not isinstance(idx, tuple):
            idx = (idx,)
        if type(A) is View:  # a slice: checked against the view, then an access of its base array
            A, lanes, flat, uniform = self.through_view(A, m, idx, line, "atomic")
        else:
            lanes, flat, uniform = self._locate(A, m, idx, line, "atomic")
        if flat is None:
            return np.zeros(self.N, A.dtype)
        elems = self._elems(A, lanes, flat)
        self._track(A, elems, lanes, line, races.ATOMIC, "atomic")

        def pick(v):
            if isinstance(v, np.ndarray) and v.ndim:
                return v if lanes.size == self.N else v[lanes]
            return v

        if A.flat is None:
            raise TypeError(f"atomics need a contiguous array; {A.name!r} is not")
        olds = apply_atomic(op, A.flat, elems, pick(value), None if cmp is None else pick(cmp))
        if self.observers:
            self._observe(A, "atom" if used else "red", line, lanes, flat, uniform, op)
        if lanes.size == self.N:
            return olds
        out = np.zeros(self.N, A.dtype)
        out[lanes] = olds
        return out
