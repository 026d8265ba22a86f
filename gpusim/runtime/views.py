"""Slices of arrays in kernels (``a[1:]``, ``a[i, :]``, ``sm[::-2]``): views that share the array's memory.

A ``View`` is an array as the kernel sees it (its shape, ``.size``, ``.ndim``) over a *base* array handle: view
element ``[j0, j1, ...]`` is base element ``offset + j0*s0 + j1*s1 + ...`` (row-major flat ids of the base).
The offset, the lengths and the strides may differ per lane (``res[gid:]``): then they are lane vectors of the
chunk. An access through a view is bounds-checked against the view (the fault names the view and its base),
then happens on the base: the race shadow, the observers and the memory traffic are the base array's.

Slices follow Python's (and numba's) rules: a negative start or stop counts from the end, both are clipped to
the dimension, a zero step is a fault; an integer index drops its dimension and must lie inside it.
"""

from __future__ import annotations

import numpy as np

from ..faults import KernelError, OutOfBounds
from ..observe.events import ArrayInfo
from .memory import ArrayHandle


class View:
    __slots__ = ("base", "offset", "lengths", "strides", "name", "dtype", "space", "shape", "size", "ndim",
                 "writable")

    def __init__(self, base, offset, lengths: list, strides: list, name: str):
        self.base, self.offset, self.lengths, self.strides, self.name = base, offset, lengths, strides, name
        self.dtype, self.space, self.writable = base.dtype, base.space, base.writable
        self.shape = tuple(n if isinstance(n, np.ndarray) else np.int64(n) for n in lengths)
        size = np.int64(1)
        for n in self.shape:
            size = size * n
        self.size = size
        self.ndim = np.int64(len(lengths))


def _pick(v, lanes, full: bool):
    return v if not isinstance(v, np.ndarray) or full else v[lanes]


def _clip(value, n, step):
    """Python's ``slice.indices`` for one bound given (start or stop): from the end if negative, clipped."""
    neg = step < 0
    v = np.where(value < 0, value + n, value)
    low = np.where(neg, -1, 0)
    high = np.where(neg, n - 1, n)
    return np.where(v < 0, low, np.where(v >= n, high, v))


class Slicing:
    """``Runtime.view``: part of ``Runtime`` (uses its masks and fault records)."""

    def view(self, A, spec: tuple, m, line: int, text: str):
        base = A.base if isinstance(A, View) else A
        if isinstance(A, View):
            offset, dims = A.offset, list(zip(A.lengths, A.strides))
        else:
            offset, dims = np.int64(0), [(np.int64(n), np.int64(s)) for n, s in zip(A.shape_i, A.cstrides)]
        lanes = self.active(m)
        lengths, strides = [], []
        for d, (item, (n, stride)) in enumerate(zip(spec, dims)):
            if item[0] == "i":
                i = item[1]
                bad = (i < 0) | (i >= n)
                if np.any(bad if not isinstance(bad, np.ndarray) else bad[lanes] if lanes.size else False):
                    self._view_fault(A, base, text, d, i, n, bad, lanes, line)
                    i = np.where(bad, 0, i)
                offset = offset + i * stride
                continue
            _, start, stop, step = item
            if step is None:
                step = np.int64(1)
            zero = step == 0
            if np.any(zero if not isinstance(zero, np.ndarray) else zero[lanes] if lanes.size else False):
                k = int(np.flatnonzero(np.broadcast_to(zero, (self.N,))[lanes])[0]) if lanes.size else 0
                self.record(KernelError(f"slice step cannot be zero (dimension {d} of {text})"), line,
                            int(lanes[k]) if lanes.size else 0, base.name, None)
                step = np.where(zero, 1, step)
            neg = step < 0
            start = np.where(neg, n - 1, 0) if start is None else _clip(start, n, step)
            stop = np.where(neg, -1, n) if stop is None else _clip(stop, n, step)
            length = np.where(neg, (start - stop - step - 1) // np.where(neg, -step, 1),
                              (stop - start + step - 1) // np.where(neg, 1, step))
            length = np.maximum(length, 0)
            offset = offset + start * stride
            lengths.append(_scalar(length))
            strides.append(_scalar(step * stride))
        return View(base, _scalar(offset), lengths, strides, text)

    def reshape(self, A, shape: tuple, m, line: int, text: str):
        """``A.reshape(shape)``: a view of ``A``'s elements in row-major order (``A`` contiguous)."""
        base = A.base if isinstance(A, View) else A
        if any(isinstance(x, np.ndarray) for x in shape) or (isinstance(A, View) and any(
                isinstance(x, np.ndarray) for x in (A.offset, *A.lengths, *A.strides))):
            raise TypeError("reshape to a shape that differs between threads is not supported by gpusim")
        lengths = [int(n) for n in (A.lengths if isinstance(A, View) else A.shape_i)]
        size = int(np.prod(lengths, dtype=np.int64))
        if isinstance(A, View):
            expect, acc = [], 1
            for n in reversed(lengths):
                expect.append(acc)
                acc *= n
            contiguous = all(n <= 1 or int(s) == e for n, s, e in zip(lengths, A.strides, reversed(expect)))
            offset = int(A.offset)
        else:
            contiguous, offset = base.flat is not None or len(lengths) <= 1, 0
        new = [int(d) for d in shape]
        unknown = [k for k, d in enumerate(new) if d == -1]
        known = int(np.prod([d for d in new if d != -1], dtype=np.int64))
        if len(unknown) == 1 and known > 0 and size % known == 0:
            new[unknown[0]] = size // known
        elif len(unknown) == 1 and known == 0 and size == 0:
            new[unknown[0]] = 0
        lanes = self.active(m)
        bad = None
        if not contiguous:
            bad = f"{text}: the array is not contiguous (numba-cuda reshapes contiguous arrays only)"
        elif any(d < 0 for d in new) or int(np.prod(new, dtype=np.int64)) != size:
            bad = f"{text}: cannot reshape an array of size {size} into shape {tuple(int(d) for d in shape)}"
        if bad is not None:
            if lanes.size:
                self.record(KernelError(bad), line, int(lanes[0]), base.name, None)
            new = [0] * len(new)
        strides, acc = [], 1
        for n in reversed(new):
            strides.append(np.int64(acc))
            acc *= n
        return View(base, np.int64(offset), [np.int64(n) for n in new], list(reversed(strides)), text)

    def reinterpret(self, A, dtype: np.dtype, m, line: int, text: str):
        """``A.view(dtype)`` of a 1-D contiguous global or const array: an array over the same bytes."""
        base = A.base if isinstance(A, View) else A
        if isinstance(A, View):
            if len(A.lengths) != 1 or any(isinstance(x, np.ndarray) for x in (A.offset, A.lengths[0], A.strides[0])) \
                    or (int(A.lengths[0]) > 1 and int(A.strides[0]) != 1):
                raise TypeError("view(dtype) of a strided or per-thread slice is not supported by gpusim")
            offset, length = int(A.offset), int(A.lengths[0])
        else:
            if len(A.shape_i) != 1:
                raise TypeError("view(dtype) of an array of more than one dimension is not supported by gpusim")
            offset, length = 0, int(A.shape_i[0])
        if base.space not in ("global", "const") or base.flat is None:
            raise TypeError(f"view(dtype) of a {base.space} array is not supported by gpusim")
        b0, nbytes = offset * base.dtype.itemsize, length * base.dtype.itemsize
        if nbytes % dtype.itemsize:
            lanes = self.active(m)
            if lanes.size:
                self.record(KernelError(f"{text}: {nbytes} bytes cannot be viewed as {dtype} elements of "
                                        f"{dtype.itemsize} bytes"), line, int(lanes[0]), base.name, None)
            nbytes = 0
        key = ("view", id(base), b0, nbytes, dtype.str)
        h = self.field_handles.get(key)
        if h is None:
            data = base.flat.view(np.uint8)[b0:b0 + nbytes].view(dtype)
            info = ArrayInfo(self._new_id(), text, base.space, np.dtype(dtype), (data.size,),
                             base.info.base_address + b0, None, base.info)
            h = ArrayHandle(info, data, data, track=base.shadow is not None, writable=base.writable)
            self.field_handles[key] = h
            self._register(key, info)
        return h

    def _view_fault(self, A, base, text, d, i, n, bad, lanes, line):
        full = lanes.size == self.N
        b = np.broadcast_to(bad, (self.N,))[lanes] if isinstance(bad, np.ndarray) else np.ones(lanes.size, bool)
        k = int(np.flatnonzero(b)[0]) if lanes.size else 0
        iv = int(_pick(np.broadcast_to(i, (self.N,)), lanes, full)[k]) if isinstance(i, np.ndarray) else int(i)
        nv = int(_pick(np.broadcast_to(n, (self.N,)), lanes, full)[k]) if isinstance(n, np.ndarray) else int(n)
        what = "Negative index" if iv < 0 else "Index"
        f = OutOfBounds(f"{what} {iv} is out of bounds for dimension {d} (size {nv}) of {base.space} array "
                        f"{base.name!r} in the view {text}.", shape=tuple(base.shape_i), access="view")
        self.record(f, line, int(lanes[k]) if lanes.size else 0, base.name, None, ("view",))

    def through_view(self, V: View, m, idx, line, access):
        """An access ``V[idx]``: (base, lanes, base flat ids, uniform) after checking ``idx`` against ``V``."""
        if len(idx) != len(V.lengths):
            raise IndexError(f"the view {V.name} has {len(V.lengths)} dimensions but is indexed with {len(idx)}")
        lanes = self.active(m)
        if lanes.size == 0:
            return V.base, lanes, None, False
        full = lanes.size == self.N
        sel = [(_pick(v, lanes, full) if isinstance(v, np.ndarray) else int(v)) for v in idx]
        lengths = [_pick(n, lanes, full) for n in V.lengths]
        bad = None
        for v, n in zip(sel, lengths):
            b = (np.asarray(v) < 0) | (np.asarray(v) >= n)
            if np.any(b):
                b = np.broadcast_to(b, (lanes.size,))
                bad = b if bad is None else (bad | b)
        if bad is not None:
            k = int(np.flatnonzero(bad)[0])
            index = tuple(int(np.broadcast_to(v, (lanes.size,))[k]) for v in sel)
            shape = tuple(int(np.broadcast_to(n, (lanes.size,))[k]) for n in lengths)
            d = next(d for d in range(len(index)) if not 0 <= index[d] < shape[d])
            what = "Negative index" if index[d] < 0 else "Index"
            f = OutOfBounds(f"{what} {index[d]} is out of bounds for dimension {d} of the view {V.name} (size "
                            f"{shape[d]}) of {V.base.space} array {V.base.name!r} on {access}.", shape=shape,
                            access=access)
            f.details.append(f"the view's shape is {shape}; the array's is {tuple(V.base.shape_i)}")
            self.record(f, line, int(lanes[k]), V.name, index, (access,))
            self.faults[(OutOfBounds, line, V.name, (access,))].count += int(bad.sum()) - 1
            keep = ~bad
            lanes = lanes[keep]
            sel = [v[keep] if isinstance(v, np.ndarray) else v for v in sel]
            if lanes.size == 0:
                return V.base, lanes, None, False
        flat = V.offset[lanes] if isinstance(V.offset, np.ndarray) else V.offset
        for v, s in zip(sel, V.strides):
            s = s[lanes] if isinstance(s, np.ndarray) else s
            flat = flat + v * s
        uniform = not any(isinstance(x, np.ndarray) for x in [V.offset, *V.strides, *idx])
        flat = np.broadcast_to(np.asarray(flat, np.int64), (lanes.size,)).copy()
        return V.base, lanes, flat, uniform


def _scalar(v):
    """A value the same on every lane as one int64, else the lane vector."""
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return np.int64(v)
    return v if isinstance(v, np.ndarray) else np.int64(v)
