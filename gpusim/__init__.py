"""gpusim: run numba.cuda kernels on the CPU, all threads at once, and find their faults.

See ``gpusim.backends.lanes.codegen`` for the execution model, ``gpusim.devices`` for several devices.
"""

from .cudasim import install, uninstall
from .devices import DeviceRace, LinkTraffic, System, Topology
from .faults import (
    BarrierDivergence,
    DataRace,
    KernelCompileError,
    KernelError,
    KernelFault,
    KernelSyntaxError,
    KernelTimeout,
    LaunchError,
    OutOfBounds,
    UninitializedRead,
    UnsupportedConstruct,
)
from .launch import Kernel, compile_kernel, jit, launch
from .observe.events import AccessEvent, ArrayInfo, LaunchInfo, Observer
from .report import LaunchReport, PrintRecord

__all__ = [
    "AccessEvent", "ArrayInfo", "BarrierDivergence", "DataRace", "DeviceRace", "Kernel", "KernelCompileError",
    "KernelError", "KernelFault", "KernelSyntaxError", "KernelTimeout", "LaunchError", "LaunchInfo",
    "LaunchReport", "LinkTraffic", "Observer", "OutOfBounds", "PrintRecord", "System", "Topology",
    "UninitializedRead", "UnsupportedConstruct", "compile_kernel", "install", "jit", "launch", "uninstall",
]
