"""Front end: a kernel function and its argument types -> the typed, checked, analysed IR (``compile_module``).

``source`` reads the function, ``names`` resolves what its names refer to, ``typing`` holds numba-cuda's typing
rules, ``lower``/``expressions``/``calls`` turn the syntax tree into IR, ``compiler`` drives it all and runs
the IR passes.
"""

from .compiler import compile_module

__all__ = ["compile_module"]
