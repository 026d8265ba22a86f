"""Device pointers under the drop-in: ``__cuda_array_interface__`` on numba's simulator's device arrays, and
an integer address passed for a ``CPointer`` parameter of an eager signature.

numba's simulator keeps a device array's data in a NumPy array and gives it no CUDA Array Interface, so a
kernel declared ``void(CPointer(uint8), uint32)`` and launched with ``ary.__cuda_array_interface__["data"][0]``
(numba-cuda's ``doc_examples/test_cpointer``) cannot run on it. Under the drop-in the interface describes that
NumPy array, its ``data`` the array's real address, and every address it hands out is remembered (weakly). A
launch passing an integer for a ``CPointer(T)`` parameter gets, in its place, the memory from that address to
the end of the array it points into, as a 1-D array of ``T``: the kernel indexes it as it would the pointer,
and gpusim's bounds checks stop at the end of the allocation (a GPU would read on past it).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..faults import LaunchError

#: address of each array whose interface was read -> the array (weakly: a freed array is forgotten)
_handed_out: dict[int, weakref.ref] = {}


def _address(ary: np.ndarray) -> int:
    return int(ary.__array_interface__["data"][0])


def array_interface(device_array: Any) -> dict:
    """``__cuda_array_interface__`` (version 3) for a simulator device array: its NumPy array's layout and
    address."""
    ary = device_array._ary
    ptr = _address(ary)
    if ary.size:
        for dead in [p for p, ref in _handed_out.items() if ref() is None]:
            del _handed_out[dead]
        _handed_out[ptr] = weakref.ref(ary)
    return {"shape": ary.shape, "strides": None if ary.flags.c_contiguous else ary.strides,
            "typestr": ary.dtype.str, "data": (ptr if ary.size else 0, False), "version": 3, "stream": None}


def pointee(address: int, dtype: np.dtype) -> np.ndarray:
    """The memory from ``address`` to the end of the handed-out array it points into, as 1-D ``dtype``."""
    for start, ref in _handed_out.items():
        ary = ref()
        if ary is None or not (start <= address < start + ary.nbytes):
            continue
        if not ary.flags.c_contiguous:
            raise LaunchError("a pointer into a non-contiguous device array: gpusim cannot lay it out as memory")
        flat = ary.reshape(-1).view(np.uint8)[address - start:]
        usable = flat.size - flat.size % dtype.itemsize
        if (address - start) % dtype.alignment:
            raise LaunchError(f"pointer 0x{address:x} is not aligned for {dtype}")
        return flat[:usable].view(dtype)
    raise LaunchError(f"pointer 0x{address:x} does not point into a device array whose __cuda_array_interface__ "
                      "was read: gpusim only follows pointers it handed out")
