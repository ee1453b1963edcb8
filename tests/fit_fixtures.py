"""Real ptxas binaries of several CUDA releases (PyPI's NVIDIA wheels, fetched and cached
by ``tools/fetch_ptxas.py``), and Triton's real ahead-of-time compile in a child process
(``tests/fit_compile.py``), with the shim active or off."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from fit_compile import MARK
from hostile import clean_env

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"


def _fetcher() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fetch_ptxas", ROOT / "tools" / "fetch_ptxas.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def installed_triton() -> tuple[int, int]:
    """``(major, minor)`` of the installed Triton, from its metadata: importing Triton
    here would activate the shim in the test process, whose knobs then write
    ``TRITON_PTXAS_PATH`` and the rest into this process's environment for every later
    test."""
    from importlib.metadata import version

    major, minor = version("triton").split(".")[:2]
    return int(major), int(minor)


def triton_package() -> Path:
    """The installed ``triton`` package directory, found without importing it."""
    spec = importlib.util.find_spec("triton")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


FETCH = _fetcher()
RELEASES: dict[str, str] = {v.rsplit(".", 1)[0]: v for _p, v in FETCH.RELEASES}


def real_ptxas(release: str) -> Path:
    """The real ptxas of CUDA ``release`` (``"12.6"``), fetched once into the cache: a
    download, so only a test marked ``network`` may ask (a packager's sandbox leaves
    those out; conftest.RUNNING is the test being run)."""
    import conftest

    test = conftest.RUNNING[-1] if conftest.RUNNING else None
    assert test is None or test.get_closest_marker("network"), (
        f"{test.nodeid if test else ''} asks for a real ptxas (a download from PyPI): mark it "
        "`network`"
    )
    version = RELEASES[release]
    project = next(p for p, v in FETCH.RELEASES if v == version)
    return Path(FETCH.fetch(project, version, FETCH.cache_root()))


def compile_archs(
    home: Path,
    archs: list[int],
    *,
    shim: bool = True,
    after_import: dict[str, str] | None = None,
    **variables: str,
) -> tuple[dict[int, dict[str, Any]], str]:
    """Triton's AOT compile of the vector-add kernel for each of ``archs`` in one child
    process with ``variables`` set (and ``after_import`` set in its ``os.environ`` after
    ``import triton``): arch -> ``{"ok", "error", "warnings"}`` (an arch the
    child did not report, because an LLVM abort ended it, counts as failed), and the
    child's standard error."""
    env = clean_env(home, **variables)
    if not shim:
        env["TRITON_TOOLCHAIN"] = "off"
    settings = [f"{k}={v}" for k, v in (after_import or {}).items()]
    done = subprocess.run(
        [sys.executable, str(TESTS / "fit_compile.py"), *settings, *map(str, archs)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    results: dict[int, dict[str, Any]] = {}
    for line in done.stdout.splitlines():
        if line.startswith(MARK):
            row = json.loads(line[len(MARK) :])
            results[int(row["arch"])] = row
    for arch in archs:
        results.setdefault(
            arch,
            {"ok": False, "error": f"the process ended ({done.returncode})", "warnings": []},
        )
    return results, done.stderr
