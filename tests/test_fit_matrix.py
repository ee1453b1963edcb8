"""The fit matrix: the installed Triton release x real ptxas releases (PyPI's NVIDIA
wheels) x architectures, with Triton's own ahead-of-time compile as the judge.

For each ptxas release and each component the release runs (``ptxas`` below its
switch, ``ptxas-blackwell`` from it), the user's variable names that ptxas and the
vector-add kernel is compiled for every architecture the component serves, with the
shim active:

- where it compiles, the shim said "fits" and Triton compiled with that ptxas: a
  logging wrapper around it shows it assembled the kernel for the target (the shim's
  own probes, whose files are named ``triton-toolchain-probe-*``, left out), and the
  shim warned of nothing but the advisories that name it;
- where it does not, the error must be the shim's (``SettingError`` or
  ``MissingComponentError``, raised before Triton runs LLVM or ptxas) and name the
  ptxas's release; then stock Triton (``TRITON_TOOLCHAIN=off``) compiles the same cell
  and must fail too.

One deliberate difference is counted apart, not judged by stock Triton: an explicit
``ptxas-blackwell`` must assemble ``sm_100a`` whatever the target (``_catalog``
``always_assembles``: Triton runs it for every Blackwell target), so a 12.4 one is
refused for sm_90a on Triton 3.9, where stock Triton would assemble sm_90a with it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fit_fixtures import compile_archs, installed_triton, real_ptxas
from tool_fixtures import wrapper
from triton_toolchain.resolver._catalog import ADVISORIES, COMPONENT, ptxas_for, triton_release

# Judges real ptxas releases, downloaded from PyPI once (tools/fetch_ptxas.py).
pytestmark = pytest.mark.network

ROW = triton_release(installed_triton())
ARCHS = (80, 90, 100, 120)
PTXAS_RELEASES = ("12.4", "12.6", "13.1", "13.5")
SHIM_ERRORS = ("SettingError", "MissingComponentError")


def _variable(component: str) -> str:
    if component == "ptxas-blackwell" and ROW is not None and ROW.blackwell_variable:
        return ROW.blackwell_variable
    variable = COMPONENT[component].variable
    assert variable is not None
    return variable


def _served() -> list[tuple[str, list[int]]]:
    components = ("ptxas", "ptxas-blackwell") if ROW and ROW.blackwell_from else ("ptxas",)
    served = [(c, [a for a in ARCHS if ptxas_for(a, ROW) == c]) for c in components]
    return [(c, archs) for c, archs in served if archs]


def _assembled(log: Path, arch: int) -> bool:
    """Whether the wrapper logged the kernel's assembly for ``sm_<arch>``."""
    lines = log.read_text().splitlines() if log.exists() else []
    names = (f"--gpu-name=sm_{arch}", f"--gpu-name=sm_{arch}a")
    return any(
        "triton-toolchain-probe-" not in line and any(n in line.split() for n in names)
        for line in lines
    )


@pytest.mark.parametrize("release", PTXAS_RELEASES)
def test_every_verdict_agrees_with_tritons_own_compile(tmp_path: Path, release: str) -> None:
    cells = 0
    for component, archs in _served():
        variable = _variable(component)
        log = tmp_path / f"{component}.log"
        tool = wrapper(tmp_path / f"mine-{component}" / "ptxas", real_ptxas(release), log=log)
        results, stderr = compile_archs(tmp_path / component, archs, **{variable: str(tool)})
        assert "Traceback" not in stderr, stderr
        for arch in archs:
            cells += 1
            row = results[arch]
            if row["ok"]:
                assert _assembled(log, arch), (release, arch, "the user's ptxas did not run")
                others = [
                    w for w in row["warnings"] if not any(a.reference in w for a in ADVISORIES)
                ]
                assert others == [], (release, arch, others)
                continue
            error = str(row["error"])
            assert error.startswith(SHIM_ERRORS), (release, arch, error)
            assert release in error, error
            if arch != 100 and "cannot assemble sm_100a" in error:
                assert component == "ptxas-blackwell", error  # the rule in the docstring
                continue
            stock, _ = compile_archs(
                tmp_path / f"stock-{arch}", [arch], shim=False, **{variable: str(tool)}
            )
            assert not stock[arch]["ok"], (
                f"the shim refused ptxas {release} for sm_{arch} but stock Triton compiled: {error}"
            )
    assert cells == len(ARCHS)
