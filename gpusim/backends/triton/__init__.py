"""The Triton back end: gpusim's typed kernel IR -> a readable Triton program, one program per CUDA block.

``translate(module, block)`` (``program.py``) writes the program's text; it needs neither torch nor triton.
``launcher`` loads, runs and compiles it (with the optional ``[gpu]`` extra). The mapping from CUDA to
Triton is in ``codegen.py`` (statements, masks, loops), ``expressions.py``, ``memory.py`` (global, shared and
local arrays) and ``warps.py``; docs/triton.md explains it with an example.
"""

from .codegen import NotTranslatable
from .program import Program, translate

__all__ = ["NotTranslatable", "Program", "translate"]
