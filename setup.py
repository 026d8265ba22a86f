"""Build hook: ship ``gpusim_cudasim.pth`` at the top of site-packages, in wheels and in editable installs.

The file is the start-up hook of gpusim's drop-in for numba's CUDA simulator (``_gpusim_cudasim``): one line,
run by every interpreter start, that does nothing unless ``GPUSIM_CUDASIM`` is set. A ``.pth`` file must sit
beside the packages, outside all of them, which setuptools has no setting for: ``build_py`` copies it there for
a wheel, and the editable wheel writes it next to setuptools' own path hook. Everything else is in
pyproject.toml.
"""

import pathlib

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = pathlib.Path("_gpusim_cudasim") / "gpusim_cudasim.pth"


class BuildPyWithPth(build_py):
    def run(self):
        super().run()
        self.copy_file(str(PTH), str(pathlib.Path(self.build_lib) / PTH.name), preserve_mode=0)

    def get_output_mapping(self):
        mapping = super().get_output_mapping()
        mapping[str(pathlib.Path(self.build_lib) / PTH.name)] = str(PTH)
        return mapping


class _WithPth:
    """An editable-install strategy that also writes the ``.pth`` file into the editable wheel."""

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, wheel, files, mapping):
        self.inner(wheel, files, mapping)
        wheel.writestr(PTH.name, PTH.read_text())

    def __enter__(self):
        self.inner.__enter__()
        return self

    def __exit__(self, *exc):
        return self.inner.__exit__(*exc)


class EditableWheelWithPth(editable_wheel):
    def _select_strategy(self, name, tag, build_lib):
        return _WithPth(super()._select_strategy(name, tag, build_lib))


setup(cmdclass={"build_py": BuildPyWithPth, "editable_wheel": EditableWheelWithPth})
