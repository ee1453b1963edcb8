"""Advisories (``_catalog.ADVISORIES``): every field of every row checked, each row with a
real ptxas of an affected release and of a fixed one (PyPI's NVIDIA wheels,
``tools/fetch_ptxas.py``), flagged only where the installed Triton runs that ptxas for
the row's targets, and seen where users look: ``doctor``'s default screen, ``doctor
--json`` and one warning at the first compile that runs it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

import pytest
from fit_fixtures import compile_archs, installed_triton, real_ptxas
from hostile import clean_env, cli
from tool_fixtures import fake_host, locate, wrapper
from triton_toolchain.cli._report import Installed, advisory_lines, doctor_report, judge
from triton_toolchain.resolver._catalog import (
    ADVISORIES,
    ARCH_RELEASES,
    Certainty,
    advised_archs,
    advisories_for,
    arch_problem,
    parse_release,
    ptxas_for,
    triton_ptx_version,
    triton_release,
)
from triton_toolchain.resolver._discovery import LOCATORS
from triton_toolchain.resolver._discovery._host import Host
from triton_toolchain.resolver._discovery._search import Context
from triton_toolchain.resolver._discovery._tools import check_tool, tool_release
from triton_toolchain.resolver._resolve import resolve_all

pytestmark = pytest.mark.network  # real ptxas releases from PyPI

TRITON = installed_triton()
RELEASE_ROW = triton_release(TRITON)
ROW = {a.reference: a for a in ADVISORIES}

# Per row: a release it names (a real ptxas of it), its target, a release outside its
# range (the fixed one where one is known) and a target it does not name.
CASES: dict[str, tuple[str, int, str, int]] = {
    "pytorch/pytorch#181248": ("13.1", 100, "13.5", 90),
    "pytorch/pytorch#190973": ("13.3", 100, "13.5", 120),
    "triton-lang/triton#11781": ("12.9", 90, "13.3", 80),
}


def _release(path: Path) -> tuple[int, int]:
    found, problem = tool_release(path, Host())
    assert found is not None, problem
    version = parse_release(found)
    assert version is not None
    return version


def test_every_row_is_whole_and_consistent() -> None:
    """Each field of each row: the source, targets CUDA can assemble in the whole range,
    an ordered range, a fixed release after it, one-line texts, a known certainty."""
    assert set(CASES) == set(ROW), "every row has its case below"
    for row in ADVISORIES:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+#\d+", row.reference), row
        assert row.archs and all(a in ARCH_RELEASES for a in row.archs), row
        first, last = row.releases
        assert first <= last, row
        for arch in row.archs:
            for end in (first, last):
                assert arch_problem(arch, f"{end[0]}.{end[1]}") is None, (row, arch)
        assert row.fixed_in is None or row.fixed_in > last, row
        for text in (row.effect, row.kernels, row.basis):
            assert text and "\n" not in text and text == " ".join(text.split()), row
        assert row.certainty in get_args(Certainty), row


@pytest.mark.parametrize("reference", sorted(CASES))
def test_a_row_flags_its_release_at_its_target_and_nothing_else(reference: str) -> None:
    """The real ptxas of an affected release is flagged for the row's target as the role
    each Triton release runs there; not as the other role, not at another target, not a
    release outside the range (the fixed one)."""
    row = ROW[reference]
    bad, arch, good, other_arch = CASES[reference]
    first, last = row.releases
    assert first <= _release(real_ptxas(bad)) <= last
    outside = _release(real_ptxas(good))
    assert not first <= outside <= last
    if row.fixed_in is not None:
        assert outside >= row.fixed_in
    for triton in ((3, 4), (3, 6), (3, 8), (3, 9)):
        release = triton_release(triton)
        role = ptxas_for(arch, release)
        other_role = "ptxas" if role == "ptxas-blackwell" else "ptxas-blackwell"
        assert row in advisories_for(role, bad, arch, release), (triton, role)
        assert row in advisories_for(role, bad, None, release), (triton, role)
        assert advised_archs(row, role, None, release) == (arch,)
        assert row not in advisories_for(other_role, bad, arch, release), (triton, role)
        assert row not in advisories_for(role, bad, other_arch, release)
        assert row not in advisories_for(role, good, arch, release)


def _triton(root: Path, version: str, ptxas: Path, blackwell: Path) -> Host:
    """A host whose Triton ``version`` bundles the real ``ptxas`` and ``blackwell``."""
    pkg = root / "site-packages" / "triton"
    bindir = pkg / "backends" / "nvidia" / "bin"
    bindir.mkdir(parents=True)
    (pkg / "__init__.py").write_text(f'__version__ = "{version}"\n')
    wrapper(bindir / "ptxas", ptxas)
    wrapper(bindir / "ptxas-blackwell", blackwell)
    major, minor = map(int, version.split(".")[:2])
    return fake_host(
        root, {"PATH": str(root / "empty")}, triton_dir=pkg, triton=triton_release((major, minor))
    )


def test_tritons_own_ptxas_is_flagged_up_to_3_8_on_hopper_and_not_on_3_9(tmp_path: Path) -> None:
    """Triton 3.8's bundled pair (ptxas 12.9, ptxas-blackwell 13.3): its ptxas runs for
    sm_90 (triton-lang/triton#11781) and its ptxas-blackwell for sm_100
    (pytorch/pytorch#190973), each on the default screen (no target) with its reference.
    3.9 runs ptxas-blackwell from sm_90: the same ptxas 12.9 is flagged for nothing, and
    a fixed ptxas-blackwell (13.5) for nothing either."""
    p129, p133, p135 = real_ptxas("12.9"), real_ptxas("13.3"), real_ptxas("13.5")
    old = _triton(tmp_path / "3.8", "3.8.0", p129, p133)
    tc = resolve_all(None, host=old)
    assert (tc["ptxas"].version, tc["ptxas-blackwell"].version) == ("12.9", "13.3")
    installed = Installed.of(old)
    lines = advisory_lines(tc, installed.triton_release, whole=True)  # doctor -v's
    assert len(lines) == 2, lines
    assert lines[0].startswith("advisory: ptxas for sm_90: ptxas 12.9 can reuse input")
    assert lines[0].endswith("; fixed in CUDA 13.3 (confirmed; triton-lang/triton#11781)")
    assert lines[1].startswith("advisory: ptxas-blackwell for sm_100: ptxas 13.3 drops")
    assert lines[1].endswith("; fixed in CUDA 13.4 (reported; pytorch/pytorch#190973)")
    text = doctor_report(
        tc, header="h", verdicts=judge(tc, installed), installed=installed, verbose=False
    )
    # The default screen: one short line each, with its reference (the whole text is -v's).
    short = advisory_lines(tc, installed.triton_release)
    assert short == [
        "advisory: ptxas for sm_90: ptxas 12.9 is known bad there (confirmed; "
        "triton-lang/triton#11781)",
        "advisory: ptxas-blackwell for sm_100: ptxas 13.3 is known bad there (reported; "
        "pytorch/pytorch#190973)",
    ]
    assert all(line in text.splitlines() for line in short), text
    new = _triton(tmp_path / "3.9", "3.9.0", p129, p135)
    tc = resolve_all(None, host=new)
    assert tc["ptxas"].version == "12.9"
    assert advisory_lines(tc, Installed.of(new).triton_release) == []
    text = doctor_report(
        tc, header="h", verdicts=judge(tc, Installed.of(new)), installed=Installed.of(new)
    )
    assert "advisory" not in text


def test_discovery_prefers_a_ptxas_no_advisory_names(tmp_path: Path) -> None:
    """Triton 3.8 bundles ptxas 12.9 and CUDA_HOME has a 13.3: for sm_90 the 13.3 one is
    taken (triton-lang/triton#11781), for sm_80 Triton's own is kept; alone, the 12.9
    is taken with the advisory noted. Named by the user, it is honoured, noted, not
    passed over."""
    p129 = real_ptxas("12.9")
    host = _triton(tmp_path / "t", "3.8.0", p129, real_ptxas("13.3"))
    bundled = host.triton_dir / "backends/nvidia/bin/ptxas"  # type: ignore[operator]
    home = tmp_path / "cuda-13.3"
    other = wrapper(home / "bin" / "ptxas", real_ptxas("13.3"))
    with_home = host.replace(environ={**host.environ, "CUDA_HOME": str(home)})
    assert locate(LOCATORS, "ptxas", with_home, Context(arch=90)).path == str(other)
    assert locate(LOCATORS, "ptxas", with_home, Context(arch=80)).path == str(bundled)
    alone = locate(LOCATORS, "ptxas", host, Context(arch=90))
    assert alone.path == str(bundled)
    assert any("triton-lang/triton#11781" in n for n in alone.notes), alone.notes
    named = check_tool("ptxas", host, bundled, Context(arch=90, named=True))
    assert named.problem is None and not named.advised_against
    assert named.note is not None and "triton-lang/triton#11781" in named.note


def _variable(component: str) -> str:
    if component == "ptxas-blackwell" and RELEASE_ROW and RELEASE_ROW.blackwell_variable:
        return RELEASE_ROW.blackwell_variable
    return "TRITON_PTXAS_PATH"


@pytest.mark.parametrize("reference", sorted(CASES))
def test_doctor_shows_each_row_on_its_default_screen_and_in_json(
    tmp_path: Path, reference: str
) -> None:
    """The installed Triton, the variable of the role it runs for the row's target set to
    a real ptxas of an affected release: ``doctor`` (no target: the machine has no GPU)
    prints one ``advisory:`` line with the reference, ``--json`` lists it; ``--arch`` of
    another target shows none. A release that refuses that ptxas says so instead."""
    row = ROW[reference]
    bad, arch, _good, other_arch = CASES[reference]
    role = ptxas_for(arch, RELEASE_ROW)
    env = clean_env(tmp_path / "home", **{_variable(role): str(real_ptxas(bad))})
    screen = cli("doctor", env=env)
    flat = " ".join(screen.stdout.split())
    if triton_ptx_version(TRITON, bad) is None or RELEASE_ROW is None:
        assert f"knows no PTX version for CUDA {bad}" in screen.output, screen.output
        return
    expected = advisories_for(role, bad, None, RELEASE_ROW)
    assert row in expected
    # One line per row matching this tool in its role (the release's own bundled tool in
    # the other role may have rows of its own: Triton 3.6's ptxas 12.8 at sm_90).
    assert flat.count(f"advisory: {role} for ") == len(expected), screen.stdout
    assert f"advisory: {role} for sm_{arch}: ptxas {bad} " in flat, screen.stdout
    assert f"{row.certainty}; {reference})" in flat, screen.stdout
    doc = json.loads(cli("doctor", "--json", env=env).stdout)
    (entry,) = [a for a in doc["advisories"] if a["reference"] == reference]
    assert (entry["component"], entry["release"], entry["archs"]) == (role, bad, [arch])
    assert entry["certainty"] == row.certainty and entry["effect"] == row.effect
    fixed = row.fixed_in
    assert entry["fixed_in"] == (f"{fixed[0]}.{fixed[1]}" if fixed else None)
    elsewhere = cli("doctor", "--arch", str(other_arch), env=env)
    assert reference not in elsewhere.output, elsewhere.output


def test_an_explicit_ptxas_with_advisories_warns_once_per_advisory_and_compiles(
    tmp_path: Path,
) -> None:
    """The user's ptxas 12.9 for sm_90 and sm_100 in one process, both variables set:
    honoured (the compiles succeed), one warning per advisory at the compile it concerns
    (triton-lang/triton#11781 for sm_90, pytorch/pytorch#190973 for sm_100). Releases
    whose lookup takes no target warn at no compile (``doctor`` says it there)."""
    tool = str(real_ptxas("12.9"))
    variables = {"TRITON_PTXAS_PATH": tool}
    if RELEASE_ROW is not None and RELEASE_ROW.blackwell_variable:
        variables[RELEASE_ROW.blackwell_variable] = tool
    results, _err = compile_archs(tmp_path / "home", [90, 100], **variables)
    if triton_ptx_version(TRITON, "12.9") is None:
        assert not results[90]["ok"] and "12.9" in str(results[90]["error"]), results
        return
    assert results[90]["ok"] and results[100]["ok"], results
    targeted = RELEASE_ROW is not None and RELEASE_ROW.ptxas_lookup == "get_ptxas(arch)"
    for arch, reference in ((90, "triton-lang/triton#11781"), (100, "pytorch/pytorch#190973")):
        warnings = results[arch]["warnings"]
        if not targeted:
            assert warnings == [], results
            continue
        assert len(warnings) == 1 and reference in warnings[0], results
        assert "ptxas 12.9" in warnings[0] and "names it" in warnings[0], warnings
