"""The plan (``resolver/_plan.py``) and its completion (``runtime/_activate.complete``):
which parts a resolution leaves pending, the drivers per backend, a plan completed part
by part equal to the whole one, on a fake machine (``test_resolve.machine``) and, for
``complete``, in a fresh interpreter that imports the installed Triton."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hostile import clean_env, run
from test_resolve import host_of, machine
from triton_toolchain.resolver._catalog import (
    AT_IMPORT_IF_IN_MANIFEST,
    AT_IMPORT_IF_NAMED,
    CATALOG,
    COMPONENT,
    COMPONENTS,
    PARTS,
    Part,
    part_components,
)
from triton_toolchain.resolver._discovery._host import Host
from triton_toolchain.resolver._plan import (
    Plan,
    in_manifest_at_import,
    left_out,
    plan_of,
    without_history,
)
from triton_toolchain.resolver._resolve import resolve_all
from triton_toolchain.runtime import BACKENDS
from triton_toolchain.runtime._activate import AT_TORCH, AT_TRITON, with_part
from triton_toolchain.runtime._record import plan_fits

LATER: tuple[Part, ...] = ("torch", "launcher", "target", "sass")


def _plan(host: Host, parts: tuple[Part, ...]) -> Plan:
    """The plan of ``parts`` on ``host``, made as ``resolve_plan`` makes it."""
    return plan_of(
        resolve_all(
            90,
            host=host,
            leave_out=left_out(parts, host),
            unless_in_manifest=in_manifest_at_import(parts),
        )
    )


# ----------------------------------------------------------------------- the catalog


def test_every_component_belongs_to_the_import_or_to_later_parts() -> None:
    assert PARTS[0] == "import" and set(PARTS[1:]) == set(LATER)
    for spec in COMPONENTS:
        assert spec.parts, spec.name
        assert set(spec.parts) <= set(PARTS), spec.name
        assert spec.parts == ("import",) or "import" not in spec.parts, spec.name
    assert part_components("launcher") & part_components("torch") == {"python-headers"}


def test_a_pending_part_never_includes_the_driver() -> None:
    """A driver and its link directory are the import's: so a pending part, resolved
    later, may be kept as a record even where a driver is mapped already
    (``_activate.resolved_plan``)."""
    drivers = [spec for spec in CATALOG if spec.kind == "driver"]
    assert {spec.backend for spec in drivers} == set(BACKENDS)
    for spec in drivers:
        # Triton's AMD launcher links nothing (it opens the HIP runtime by its path).
        assert (spec.link is not None) == (spec.backend == "nvidia"), spec.name
        assert spec.link is None or COMPONENT[spec.link].backend == spec.backend
        for name in (spec.name, *([spec.link] if spec.link else [])):
            assert COMPONENT[name].parts == ("import",), name
            assert not any(name in part_components(p) for p in LATER), name


def test_the_parts_kept_at_import_are_later_parts() -> None:
    assert AT_IMPORT_IF_IN_MANIFEST <= AT_IMPORT_IF_NAMED <= set(LATER)
    assert "torch" not in AT_IMPORT_IF_NAMED  # `import triton` judges no C++ compiler


# ------------------------------------------------------------------------- plan_of


def test_a_whole_plan_has_nothing_pending_and_its_driver_per_backend(tmp_path: Path) -> None:
    paths = machine(tmp_path)
    host = host_of(tmp_path, paths)
    tc = resolve_all(90, host=host)
    plan = plan_of(tc)
    assert plan["pending"] == [] and plan["torch"] is not None
    assert plan["drivers"] == {
        "nvidia": {
            "library": tc["libcuda"].path,
            "link": str(paths["driver"].parent),
            "user": False,
        }
    }
    assert plan_fits(without_history(plan))
    assert _plan(host, PARTS) == plan


def test_import_triton_leaves_the_later_parts_pending(tmp_path: Path) -> None:
    host = host_of(tmp_path, machine(tmp_path))
    plan = _plan(host, AT_TRITON)
    assert plan["pending"] == list(LATER) and plan["torch"] is None
    components = set(plan["toolchain"]["components"])
    assert components == part_components("import")
    assert {s["component"] for s in plan["settings"]} <= part_components("import")
    assert plan["drivers"]["nvidia"]["library"] is not None  # the import's part
    eager = _plan(host, AT_TORCH)
    assert eager["pending"] == ["target", "sass"] and eager["torch"] is not None


def test_a_part_alone_holds_no_driver(tmp_path: Path) -> None:
    host = host_of(tmp_path, machine(tmp_path))
    for part in LATER:
        plan = _plan(host, (part,))
        assert set(plan["toolchain"]["components"]) == part_components(part), part
        assert plan["drivers"] == {}, part
        assert part not in plan["pending"], part


def test_a_named_component_of_a_later_part_is_resolved_at_import(tmp_path: Path) -> None:
    """``CC`` (launcher's part) and ``TRITON_CUOBJDUMP_PATH`` (the SASS dump's) are
    judged at the import, so a wrong one is warned of there; their parts stay pending
    while a component of them is missing. ``CXX`` waits for torch all the same."""
    paths = machine(tmp_path)
    cuobjdump = paths["triton"] / "backends/nvidia/bin/ptxas"
    host = host_of(
        tmp_path,
        paths,
        CC="/nonexistent/gcc",
        CXX="/nonexistent/g++",
        TRITON_CUOBJDUMP_PATH=str(cuobjdump),
    )
    assert left_out(AT_TRITON, host) == (
        part_components("torch") | part_components("launcher") | part_components("sass")
    ) - {"cc", "cuobjdump"} | part_components("target")
    plan = _plan(host, AT_TRITON)
    assert {"cc", "cuobjdump"} <= set(plan["toolchain"]["components"])
    assert "cxx" not in plan["toolchain"]["components"]
    assert plan["pending"] == list(LATER)  # Python.h, nvdisasm still missing
    cc = next(s for s in plan["settings"] if s["component"] == "cc")
    assert cc["error"] and "/nonexistent/gcc" in cc["error"]
    # A part resolved alone keeps nothing else, named or not.
    assert left_out(("torch",), host) == frozenset(c.name for c in COMPONENTS) - part_components(
        "torch"
    )


def test_only_the_import_takes_what_the_manifest_names() -> None:
    taken = in_manifest_at_import(AT_TRITON)
    assert taken == part_components("target") | part_components("sass")
    assert in_manifest_at_import(AT_TORCH) == taken
    assert all(in_manifest_at_import((p,)) == frozenset() for p in LATER)


def test_the_users_driver_variable_is_said_per_backend(tmp_path: Path) -> None:
    paths = machine(tmp_path)
    host = host_of(tmp_path, paths, TRITON_LIBCUDA_PATH=str(paths["driver"].parent))
    driver = _plan(host, AT_TRITON)["drivers"]["nvidia"]
    assert driver["user"] is True and driver["link"] == str(paths["driver"].parent)


def test_no_driver_is_a_backend_without_a_library(tmp_path: Path) -> None:
    paths = machine(tmp_path)
    for f in paths["driver"].parent.glob("libcuda*"):
        f.unlink()
    plan = _plan(host_of(tmp_path, paths), AT_TRITON)
    assert plan["drivers"]["nvidia"]["library"] is None
    libcuda = next(s for s in plan["settings"] if s["component"] == "libcuda")
    assert libcuda["value"] == plan["drivers"]["nvidia"]["link"]  # the link directory, if any


# ------------------------------------------------------------------ completion


def test_completed_part_by_part_the_plan_is_the_whole_one(tmp_path: Path) -> None:
    """The import's plan, completed with each pending part (``with_part``), holds what
    the whole resolution holds: every component chosen alike, every setting, torch's
    part, nothing pending."""
    host = host_of(tmp_path, machine(tmp_path))
    plan = _plan(host, AT_TRITON)
    for done, part in enumerate(LATER, start=1):
        plan = with_part(plan, _plan(host, (part,)))
        assert plan["pending"] == list(LATER[done:]), part
    whole = _plan(host, PARTS)
    assert plan["toolchain"] == whole["toolchain"]
    key = lambda s: s["component"]  # noqa: E731
    assert sorted(plan["settings"], key=key) == sorted(whole["settings"], key=key)
    assert plan["torch"] == whole["torch"] and plan["drivers"] == whole["drivers"]


def test_torch_before_the_launcher_keeps_its_python_h(tmp_path: Path) -> None:
    host = host_of(tmp_path, machine(tmp_path))
    with_torch = with_part(_plan(host, AT_TRITON), _plan(host, ("torch",)))
    assert with_torch["pending"] == ["launcher", "target", "sass"]
    built = with_part(with_torch, _plan(host, ("launcher",)))
    added = set(built["toolchain"]["components"]) - set(with_torch["toolchain"]["components"])
    assert added == {"cc"} and built["torch"] == with_torch["torch"]
    assert built["pending"] == ["target", "sass"]


COMPLETE = """
import json, sys
import triton
from triton_toolchain.runtime import _activate
before = _activate.current().plan
first = _activate.complete("launcher")
middle = _activate.current().plan
again = _activate.complete("launcher")
after = _activate.current().plan
print(json.dumps({
    "before": before["pending"], "after": after["pending"],
    "added": sorted(set(after["toolchain"]["components"]) - set(before["toolchain"]["components"])),
    "warnings": [list(first), list(again)], "same": middle is after,
    "knob_cc": "knobs.build.cc" in _activate.current().applied,
}))
"""


def test_complete_resolves_a_pending_part_once(tmp_path: Path) -> None:
    """In a process that imported Triton: ``complete("launcher")`` adds the C compiler
    and ``Python.h`` and drops the part from the pending ones; a second call does
    nothing (the same plan in force)."""
    env = clean_env(tmp_path / "home")
    env.pop("CC", None)
    done = run([sys.executable, "-c", COMPLETE], env).clean()
    assert done.returncode == 0, done.output
    got: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert got["before"] == list(LATER), got
    assert got["after"] == ["torch", "target", "sass"], got
    assert got["added"] == ["cc", "python-headers"], got
    assert got["warnings"] == [[], []] and got["same"] is True, got
    assert got["knob_cc"] is False, got  # the launcher's part brings no knob of Triton's
