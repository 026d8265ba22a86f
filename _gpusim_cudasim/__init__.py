"""The start-up half of gpusim's drop-in for numba's CUDA simulator: standard library only.

``gpusim_cudasim.pth`` (installed beside this package) runs, at every interpreter start,

    import os; os.environ.get("GPUSIM_CUDASIM") and __import__("_gpusim_cudasim").from_environment()

so an unset variable costs one dictionary look-up. When it is set, ``enable`` puts a finder at the front of
``sys.meta_path`` that waits for ``numba.cuda`` (or ``numba_cuda_mlir.cuda``) to be imported and then hands
numba's simulator to ``gpusim.cudasim.adapter``. Nothing here imports gpusim, numba or NumPy: importing
gpusim costs half a second, and this module also backs the pytest plugin that every pytest run loads.

Settings (the environment is how child processes inherit them):

* ``GPUSIM_CUDASIM`` — ``1`` (a kernel gpusim cannot run falls back to numba's simulator, said once per
  kernel on stderr) or ``strict`` (such a kernel is an error). Unset, empty or ``0``: off.
* ``GPUSIM_CUDASIM_FAULTS`` — what a fault gpusim finds does: ``raise``, ``report`` or ``off``, for all
  kinds or per kind, e.g. ``race=off,uninit=off`` (kinds: oob, race, skipped, divergence, uninit, timeout,
  limit; by default race, uninit and skipped are reported, the rest raised: ``gpusim.cudasim.policy``).
* ``GPUSIM_CUDASIM_MAX_STEPS`` — every launch's step budget (by default it grows with the launch's threads:
  ``gpusim.cudasim.budget``).
* ``GPUSIM_CUDASIM_ALIGNMENT`` — ``gpu``: ``alignment=`` arrays are placed as on a GPU, instead of refused as
  numba's simulator refuses them (``gpusim.cudasim.alignment``).

This package lives outside ``gpusim/`` only so that it can be imported without importing gpusim.
(PYTEST_DONT_REWRITE: the hook imports this before pytest starts, and pytest would warn that it is too late to
rewrite its asserts; it has none. Under ``filterwarnings = error`` that warning would stop the run.)
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

ENV_MODE = "GPUSIM_CUDASIM"
ENV_FAULTS = "GPUSIM_CUDASIM_FAULTS"
MODES = {"1": "fallback", "true": "fallback", "on": "fallback", "yes": "fallback", "fallback": "fallback",
         "strict": "strict"}
OFF = {"", "0", "false", "off", "no"}

#: the settings in force: None until ``enable`` is called
settings: dict | None = None


def parse_mode(value: str) -> str | None:
    """``GPUSIM_CUDASIM``'s value -> "fallback", "strict" or None (off); ValueError for anything else."""
    v = value.strip().lower()
    if v in OFF:
        return None
    if v not in MODES:
        raise ValueError(f"{ENV_MODE}={value!r}: use 1 (fall back to numba's simulator where gpusim cannot run "
                         "a kernel), strict (make that an error) or 0 (off)")
    return MODES[v]


def from_environment() -> None:
    """The start-up hook: enable the drop-in if ``GPUSIM_CUDASIM`` asks for it. Never raises: a bad value
    is said once on stderr and leaves numba's simulator as it is."""
    try:
        mode = parse_mode(os.environ.get(ENV_MODE, ""))
    except ValueError as e:
        sys.stderr.write(f"gpusim: {e}; the drop-in is off\n")
        return
    if mode is not None:
        enable(mode, os.environ.get(ENV_FAULTS) or None)


def enable(mode: str = "fallback", faults: str | None = None) -> None:
    """Make every kernel launched through numba's simulator API run on gpusim, in this process and (through
    the environment) its children. Before ``numba.cuda`` is imported this also turns numba's simulator on;
    after, it takes effect at once if the simulator is what was imported."""
    global settings
    if mode not in ("fallback", "strict"):
        raise ValueError(f"mode must be 'fallback' or 'strict', not {mode!r}")
    os.environ[ENV_MODE] = "strict" if mode == "strict" else "1"
    if faults is not None:
        os.environ[ENV_FAULTS] = faults
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    config = sys.modules.get("numba.core.config")  # numba reads its environment when numba is imported,
    if config is not None and "numba.cuda" not in sys.modules:  # (as gpusim does): have it read it again
        config.reload_config()
    settings = {"mode": mode, "faults": faults}
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    if "numba.cuda" in sys.modules and hasattr(sys.modules["numba.cuda"], "jit"):
        _attach()


def disable() -> None:
    """Undo ``enable``: numba's simulator runs its kernels itself again; the environment is cleared."""
    global settings
    settings = None
    os.environ.pop(ENV_MODE, None)
    os.environ.pop(ENV_FAULTS, None)
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Finder)]
    adapter = sys.modules.get("gpusim.cudasim.adapter")
    if adapter is not None:
        adapter.detach()


def _attach() -> None:
    if settings is None:
        return
    from gpusim.cudasim import adapter

    adapter.attach(settings["mode"], settings["faults"])


def _patch_random(module) -> None:
    adapter = sys.modules.get("gpusim.cudasim.adapter")
    if settings is not None and adapter is not None:
        adapter.patch_random(module)


# ------------------------------------------------------------------------------------------- the finder

_MLIR = "numba_cuda_mlir.cuda"


class _Finder(importlib.abc.MetaPathFinder):
    """Two jobs, both only while enabled:

    * after ``numba.cuda`` has been imported (by whichever finder owns it: numba-cuda installs its own), attach
      gpusim to its simulator;
    * ``numba_cuda_mlir.cuda`` and its submodules, which have no simulator, become numba-cuda's simulator
      modules (``numba.cuda`` with ``NUMBA_ENABLE_CUDASIM=1``), so kernels written against numba-cuda-mlir's
      API run on gpusim too.
    """

    def find_spec(self, name, path, target=None):
        if settings is None:
            return None
        if name == "numba.cuda":
            spec = self._spec_from_others(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _AttachAfter(spec.loader)
            return spec
        if name == "numba.cuda.random":  # its host-side set-up of generators: vectorised (adapter.patch_random)
            spec = self._spec_from_others(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _AttachAfter(spec.loader, _patch_random)
            return spec
        if name == _MLIR or name.startswith(_MLIR + "."):
            return importlib.machinery.ModuleSpec(name, _Alias("numba.cuda" + name[len(_MLIR):]))
        return None

    def _spec_from_others(self, name, path, target):
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                return spec
        return None


class _AttachAfter(importlib.abc.Loader):
    """Runs the real loader, then attaches gpusim to the simulator it set up (or ``then(module)``)."""

    def __init__(self, loader, then=None):
        self.loader = loader
        self.then = then

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        if self.then is None:
            _attach()
        else:
            self.then(module)

    def __getattr__(self, name):  # get_code, get_source, is_package, ... of the real loader
        return getattr(self.loader, name)


class _Alias(importlib.abc.Loader):
    """Loads a module as another module that is already (or can be) imported under its own name."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        import importlib

        try:
            module = importlib.import_module(self.target)
        except ModuleNotFoundError as e:
            raise ModuleNotFoundError(f"{spec.name} has no counterpart in numba-cuda's simulator, which gpusim "
                                      f"runs kernels through ({self.target}: {e})", name=spec.name) from None
        self.own_spec = module.__spec__
        return module

    def exec_module(self, module):
        # the import system has just set the target's __spec__ to the alias's: give it its own back
        module.__spec__ = self.own_spec
