"""The compiled back end's disk cache is keyed by its own sources: an edit of a compiled helper (``rt_access.py``,
``rt_sync.py``, ``rtlib.py``) gives every kernel a new key and empties numba's cache of the helpers, which numba
itself would keep (it checks a function against its own file only)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpusim.backends.compiled import cache

GPUSIM = Path(cache.__file__).resolve().parents[2]


@pytest.fixture
def sources(tmp_path, monkeypatch):
    """A copy of the compiled back end's sources (and the few outside files its compiled code reads), which the
    cache reads instead of the real ones."""
    package = tmp_path / "gpusim" / "backends" / "compiled"
    shutil.copytree(GPUSIM / "backends" / "compiled", package, ignore=shutil.ignore_patterns("__pycache__"))
    for name in cache.OUTSIDE:
        (tmp_path / "gpusim" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(GPUSIM / name, tmp_path / "gpusim" / name)
    monkeypatch.setattr(cache, "PACKAGE", package)
    monkeypatch.setattr(cache, "_DIGEST", None)
    return package


def _key(text: str) -> str:
    cache._DIGEST = None          # a new process
    return cache.key_of(text)


@pytest.mark.parametrize("helper", ["rt_access.py", "rt_sync.py", "rtlib.py", "layout.py"])
def test_editing_a_compiled_helper_gives_every_kernel_a_new_key(sources, helper):
    before = _key("def run(): pass")
    assert _key("def run(): pass") == before, "the same sources and text: the same key"
    assert _key("def run(): return 1") != before
    path = sources / helper
    path.write_text(path.read_text() + "\n# edited\n")
    assert _key("def run(): pass") != before, f"an edit of {helper} kept the old key: its machine code is stale"


def test_an_outside_constant_the_helpers_take_in_changes_the_key(sources):
    before = _key("def run(): pass")
    device = sources.parents[1] / "device.py"
    device.write_text(device.read_text() + "\n# edited\n")
    assert _key("def run(): pass") != before


def test_numbas_cache_of_the_helpers_is_emptied_when_their_sources_change(sources, tmp_path):
    folder = tmp_path / "numba_cache"
    folder.mkdir()

    def plant():
        for name in ("external._site_end-1.py311.nbi", "external._site_end-1.py311.1.nbc", "cache.cpython-311.pyc"):
            (folder / name).write_text("x")

    plant()
    assert cache.refresh_helper_cache(folder), "no stamp: filled from unknown sources"
    assert sorted(p.name for p in folder.iterdir()) == ["cache.cpython-311.pyc", cache.STAMP]
    plant()
    assert not cache.refresh_helper_cache(folder), "the same sources: the cache is kept"
    assert len(list(folder.glob("*.nb?"))) == 2
    (sources / "rt_sync.py").write_text((sources / "rt_sync.py").read_text() + "\n# edited\n")
    assert cache.refresh_helper_cache(folder)
    assert not list(folder.glob("*.nb?")), "an edit of rt_sync.py left numba's old machine code of the helpers"
    before = _key("def run(): pass")
    codegen = sources / "codegen.py"   # writes kernels' text (they get new keys) but no helper is compiled from it
    codegen.write_text(codegen.read_text() + "\n# edited\n")
    plant()
    assert not cache.refresh_helper_cache(folder)
    assert _key("def run(): pass") != before
