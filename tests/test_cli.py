"""The command line, run as a user runs it (``python -m triton_toolchain``) on this
machine, with the driver given by Triton's own variable where a test needs one."""

from __future__ import annotations

import itertools
import json
import os
import pwd
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from elf_fixtures import install_driver
from test_screen import no_driver_manifest, package_dir, unwrap
from triton_toolchain import __version__, resolve
from triton_toolchain.cli._main import JSON_SCHEMA
from triton_toolchain.cli._report import _triton_dir_once
from triton_toolchain.resolver._catalog import COMPONENT_NAMES, GOALS
from triton_toolchain.resolver._manifest import SCHEMA


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
    return subprocess.run(
        [sys.executable, "-m", "triton_toolchain", *args],
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        check=False,
    )


@pytest.fixture
def driver_env(tmp_path: Path) -> dict[str, str]:
    """``TRITON_LIBCUDA_PATH`` naming a directory with a real x86-64 ``libcuda.so.1``."""
    install_driver(tmp_path / "driver")
    return {"TRITON_LIBCUDA_PATH": str(tmp_path / "driver")}


def goals_of(*args: str, env: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """``doctor --json``'s verdicts, the reference the text is checked against."""
    done = cli("doctor", "--json", *args, env=env)
    goals: dict[str, dict[str, Any]] = json.loads(done.stdout)["goals"]
    return goals


def test_doctor_answers_each_goal_in_one_screen() -> None:
    """On this machine as it is (no driver here): one line per goal with the verdict
    that --json gives, the fix under each goal not ready, no looked-at places; exit
    status by Triton kernels."""
    goals = goals_of()
    done = cli("doctor")
    assert len(done.stdout.splitlines()) <= 40, done.stdout
    lines = unwrap(done.stdout)  # lines of more than 100 columns wrap
    for name, goal in GOALS.items():
        line = next(x for x in lines if x.startswith(goal.title + " "))
        assert line.split(None, len(goal.title.split()))[-1] == goals[name]["verdict"]
        following = lines[lines.index(line) + 1]
        if goals[name]["ready"]:
            assert not following.startswith("  fix:")
        else:
            assert following == f"  fix: {goals[name]['fix']}"
    assert "looked at:" not in done.stdout
    for name in COMPONENT_NAMES:
        assert f"\n{name} " in done.stdout
    assert done.returncode == (0 if goals["triton"]["ready"] else 1), done.stdout
    # Without a command: the same report.
    bare = cli()
    assert bare.returncode == done.returncode and bare.stdout == done.stdout


def test_doctor_is_ready_when_the_driver_is_given(driver_env: dict[str, str]) -> None:
    done = cli("doctor", "--arch", "sm_90a", env=driver_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "target sm_90" in done.stdout
    assert "env:TRITON_LIBCUDA_PATH" in done.stdout
    triton = next(x for x in done.stdout.splitlines() if x.startswith("Triton kernels "))
    assert triton.split()[-1] == "ready"
    assert goals_of(env=driver_env)["triton"] == {
        "title": "Triton kernels",
        "ready": True,
        "verdict": "ready",
        "missing": [],
        "blocked": [],
        "fix": None,
        "steps": {"compile": True, "launch": True},
    }


def test_doctor_verbose_shows_strictly_more() -> None:
    plain = cli("doctor").stdout.splitlines()
    verbose = cli("doctor", "-v").stdout.splitlines()
    assert plain[-1].endswith("triton-toolchain doctor -v")
    assert verbose[: len(plain) - 1] == plain[:-1]
    assert len(verbose) > len(plain)
    assert "  looked at:" in verbose
    # Each place looked at, on a line of its own (wrapped at the screen's width), with
    # Triton's package directory said once, above, as the plain table says it.
    triton_dir = str(package_dir("triton"))
    shown = unwrap("\n".join(verbose))
    tc = resolve()
    for choice in tc:
        for place in choice.searched:
            assert f"    {_triton_dir_once(place, triton_dir)}" in shown, place


def test_doctor_for_compile_hides_launch_details() -> None:
    goals = goals_of()
    for args in (("--for", "compile"), ("--for", "compile", "-v")):
        done = cli("doctor", *args)
        assert done.returncode == (0 if goals["triton"]["steps"]["compile"] else 1)
        assert "Triton kernels (compile)" in done.stdout
        assert "libcuda" not in done.stdout and "python-headers" not in done.stdout
        assert "torch.compile" not in done.stdout
        assert "ptxas-blackwell" in done.stdout
    launch = cli("doctor", "--for", "launch")
    assert launch.returncode == (0 if goals["triton"]["steps"]["launch"] else 1)
    assert "libcuda" in launch.stdout and "libdevice" not in launch.stdout
    every = cli("doctor", "--for", "all")
    assert every.returncode == cli("doctor").returncode
    assert all(g.title in every.stdout for g in GOALS.values())


def test_doctor_for_a_goal_shows_it_and_exits_by_it() -> None:
    goals = goals_of()
    for name, goal in GOALS.items():
        done = cli("doctor", "--for", name)
        assert done.returncode == (0 if goals[name]["ready"] else 1), (name, done.stdout)
        titles = [g.title for g in GOALS.values() if f"\n{g.title} " in done.stdout]
        assert titles == [goal.title]
        for component in COMPONENT_NAMES:
            assert (f"\n{component} " in done.stdout) is (component in goal.components)
    assert cli("doctor", "--for", "hopper").returncode == 2


def test_doctor_json_is_the_resolution_and_the_goals(driver_env: dict[str, str]) -> None:
    done = cli("doctor", "--json", env=driver_env)
    doc = json.loads(done.stdout)
    assert list(doc["components"]) == list(COMPONENT_NAMES)
    libcuda = doc["components"]["libcuda"]
    assert libcuda["source"] == "env:TRITON_LIBCUDA_PATH"
    assert libcuda["path"] == os.path.join(driver_env["TRITON_LIBCUDA_PATH"], "libcuda.so.1")
    assert doc["refused_by_triton"] == []
    assert list(doc["goals"]) == list(GOALS)
    for goal in doc["goals"].values():
        assert {"ready", "missing", "fix"} <= set(goal)
        assert (goal["fix"] is None) is goal["ready"]
    assert done.returncode == (0 if doc["goals"]["triton"]["ready"] else 1)


def test_which_prints_the_path_or_explains(driver_env: dict[str, str]) -> None:
    done = cli("which", "libdevice")
    assert done.returncode == 0
    assert done.stdout.strip() == resolve()["libdevice"].path
    missing = cli("which", "libcuda", env={"TRITON_TOOLCHAIN_MANIFEST": ""})
    if resolve()["libcuda"].path is None:
        assert missing.returncode == 1
        assert "libcuda not found" in missing.stderr and "fix:" in missing.stderr
    assert cli("which", "libcuda", env=driver_env).returncode == 0


def test_env_exports_for_sh_fish_and_json(driver_env: dict[str, str]) -> None:
    sh = cli("env", env=driver_env)
    assert sh.returncode == 0
    script = sh.stdout + '\nprintf "%s" "$TRITON_LIBCUDA_PATH"'
    shown = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, check=True)
    assert shown.stdout == driver_env["TRITON_LIBCUDA_PATH"]
    fish = cli("env", "--format", "fish", env=driver_env)
    assert f"set -gx TRITON_LIBCUDA_PATH {driver_env['TRITON_LIBCUDA_PATH']};" in fish.stdout
    doc = json.loads(cli("env", "--format", "json", env=driver_env).stdout)
    assert doc["TRITON_LIBCUDA_PATH"] == driver_env["TRITON_LIBCUDA_PATH"]
    assert doc["TRITON_LIBDEVICE_PATH"] == resolve()["libdevice"].path


def test_lock_writes_a_manifest_that_resolves_without_processes(
    tmp_path: Path, driver_env: dict[str, str]
) -> None:
    out = tmp_path / "m.json"
    done = cli("lock", "-o", str(out), env=driver_env)
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == SCHEMA
    assert doc["driver_dirs"] == [driver_env["TRITON_LIBCUDA_PATH"]]
    assert "libcuda" not in doc["components"]

    probe = (
        "import sys, json\n"
        "spawned = []\n"
        "sys.addaudithook(lambda e, a: spawned.append(a) if e == 'subprocess.Popen' else None)\n"
        "import triton_toolchain\n"
        "tc = triton_toolchain.resolve()\n"
        "print(json.dumps({'spawned': len(spawned), 'elftools': 'elftools' in sys.modules,\n"
        "  'sources': sorted({str(c.source).split(':')[0] for c in tc if c.path})}))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
    run = subprocess.run(
        [sys.executable, "-c", probe],
        env={**env, "TRITON_TOOLCHAIN_MANIFEST": str(out)},
        capture_output=True,
        text=True,
        check=True,
    )
    seen = json.loads(run.stdout)
    assert seen == {"spawned": 0, "elftools": False, "sources": ["manifest"]}


def test_lock_never_overwrites_without_force(tmp_path: Path) -> None:
    out = tmp_path / "mine.json"
    out.write_text("my own notes\n")
    done = cli("lock", "-o", str(out))
    assert done.returncode == 2
    assert "not overwriting" in done.stderr and "--force" in done.stderr
    assert out.read_text() == "my own notes\n"
    assert cli("lock", "-o", str(out), "--force").returncode in (0, 1)
    assert json.loads(out.read_text())["schema"] == SCHEMA


def test_bad_manifest_variable_is_exit_2_with_the_fix(tmp_path: Path) -> None:
    done = cli("doctor", env={"TRITON_TOOLCHAIN_MANIFEST": str(tmp_path / "none.json")})
    assert done.returncode == 2
    assert "TRITON_TOOLCHAIN_MANIFEST" in done.stderr and "lock" in done.stderr
    assert "Traceback" not in done.stderr


def test_bad_setting_is_exit_2_without_traceback() -> None:
    done = cli("doctor", env={"TRITON_PTXAS_PATH": "relative/ptxas"})
    assert done.returncode == 2
    assert "error: ptxas: TRITON_PTXAS_PATH='relative/ptxas'" in done.stdout  # on the screen
    assert "Traceback" not in done.stderr


def test_bad_architecture_argument_is_refused() -> None:
    done = cli("doctor", "--arch", "hopper")
    assert done.returncode == 2
    assert "not an architecture" in done.stderr


def test_check_manifest_judges_each_entry(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    assert cli("lock", "-o", str(good)).returncode in (0, 1)
    done = cli("check-manifest", str(good))
    assert done.returncode == 0, done.stdout
    assert "ok       ptxas" in done.stdout and f"schema {SCHEMA}" in done.stdout

    minor = 13 if sys.version_info[:2] == (3, 12) else 12  # another Python than this one
    other_python = tmp_path / f"py3{minor}"
    other_python.mkdir()
    (other_python / "Python.h").write_text("")
    (other_python / "patchlevel.h").write_text(
        "#define PY_MAJOR_VERSION 3\n"
        f"#define PY_MINOR_VERSION {minor}\n"
        f'#define PY_VERSION "3.{minor}.1"\n'
    )
    doc = json.loads(good.read_text())
    doc["components"]["python-headers"] = {"path": str(other_python)}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    done = cli("check-manifest", str(bad))
    assert done.returncode == 1
    assert "REJECTED python-headers" in done.stdout and f"3.{minor}" in done.stdout

    bad.write_text('{"schema": 1, "components": {"ptxas": {"path": "ptxas"}}}')
    done = cli("check-manifest", str(bad))
    assert done.returncode == 2
    assert "components.ptxas.path" in done.stderr


def test_lock_to_an_unwritable_place_is_exit_2_without_traceback(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    done = cli("lock", "-o", str(blocker / "manifest.json"))
    assert done.returncode == 2
    assert f"cannot write {blocker / 'manifest.json'}" in done.stderr
    assert "Traceback" not in done.stderr


def test_unusable_search_directories_are_skipped_without_traceback(tmp_path: Path) -> None:
    """A directory name longer than the system allows (as an unreadable one on Python
    before 3.12) makes pathlib raise: such PATH, CONDA_PREFIX and HOME values are looked
    at and passed over."""
    too_long = "/" + "x" * 5000
    env = {
        "PATH": f"{too_long}:{os.environ['PATH']}",
        "CONDA_PREFIX": too_long,
        "CUDA_HOME": too_long,
        "LD_LIBRARY_PATH": too_long,
        "HOME": too_long,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    done = cli("which", "cc", env=env)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == cli("which", "cc").stdout.strip()


def test_doctor_json_run_stays_json_and_carries_the_self_test(
    driver_env: dict[str, str],
) -> None:
    done = cli("doctor", "--json", "--run", env=driver_env)
    doc = json.loads(done.stdout)
    steps = {step["name"].split(":")[0]: step for step in doc["self_test"]["steps"]}
    assert doc["self_test"]["ok"] is (done.returncode == 0)
    assert any(name.startswith("compile") and step["ok"] for name, step in steps.items())


# ------------------------------------------------------------- answers that fit


def _fits(lines: list[str], width: int) -> list[str]:
    """The lines wider than ``width`` that could have wrapped: not an ``error:`` line
    (kept whole to be copied), not one word alone (a path longer than the line)."""
    return [x for x in lines if len(x) > width and not x.startswith("error: ") and " " in x.strip()]


@pytest.mark.parametrize("columns", [80, 60])
def test_doctor_fits_columns_with_hanging_indents(columns: int) -> None:
    env = {"COLUMNS": str(columns)}
    plain = cli("doctor", env=env).stdout.splitlines()
    verbose = cli("doctor", "-v", env=env).stdout.splitlines()
    assert _fits(plain, columns) == [] and _fits(verbose, columns) == []
    # A fix that wraps continues under itself: four columns deeper than `  fix:`.
    fixes = [i for i, line in enumerate(plain) if line.startswith("  fix: ")]
    assert fixes, plain
    for i in fixes:
        for line in itertools.takewhile(lambda x: x.startswith("   "), plain[i + 1 :]):
            assert line.startswith("      ") and line[6] != " ", line
    assert any(line.startswith("      ") for line in plain), "nothing wrapped at this width"
    # Without COLUMNS and without a terminal: 100 columns.
    wide = cli("doctor", env={"COLUMNS": ""}).stdout.splitlines()
    assert _fits(wide, 100) == [] and any(len(x) > columns for x in wide)


def test_doctor_verbose_says_tritons_directory_once() -> None:
    triton_dir = str(package_dir("triton"))
    verbose = cli("doctor", "-v").stdout
    assert verbose.count(triton_dir) == 2, verbose  # above the table, and in "packages:"
    assert "    triton-bundled: backends/nvidia/bin/ptxas" in verbose.splitlines()


def test_doctor_json_carries_the_versions_a_schema_and_places_as_objects(
    driver_env: dict[str, str],
) -> None:
    from importlib import metadata

    done = cli("doctor", "--json", env=driver_env)
    doc = json.loads(done.stdout)
    assert doc["schema"] == JSON_SCHEMA == 2
    versions = doc["versions"]
    assert versions["triton-toolchain"] == __version__
    assert versions["triton"] == metadata.version("triton")
    python = subprocess.run(
        [sys.executable, "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert versions["python"] == python.stdout.strip()
    try:
        torch = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch = None
    assert versions["torch"] == torch
    tc = resolve()
    for name, component in doc["components"].items():
        places = component["searched"]
        assert all(set(place) == {"source", "path"} for place in places), places
        # The same places as the resolution's, each split at its first ": ".
        resolved = [p for p in tc[name].searched if "TRITON_LIBCUDA_PATH" not in p]
        if "TRITON_LIBCUDA_PATH" not in str(component["source"]):
            assert [f"{p['source']}: {p['path']}" for p in places] == resolved


def test_a_stale_setting_of_another_goal_is_noted_and_the_goal_asked_for_decides() -> None:
    goals = goals_of()
    compile_ready = goals["triton"]["steps"]["compile"]
    stale = {"CUDA_HOME": "/nonexistent/cuda", "CC": "/nonexistent/gcc"}
    done = cli("doctor", "--for", "compile", env=stale)
    assert done.returncode == (0 if compile_ready else 1), done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert not any(line.startswith("error: ") for line in lines), done.stdout
    assert "note: cuda-home (not used by this goal): CUDA_HOME='/nonexistent/cuda'" in (
        " ".join(unwrap(done.stdout))
    )
    assert any(line.startswith("note: cc (not used by this goal): CC=") for line in lines)
    # Where the goal uses the setting, it is the error it was, exit status 2.
    extensions = cli("doctor", "--for", "extensions", env=stale)
    assert extensions.returncode == 2
    assert "error: cuda-home: CUDA_HOME='/nonexistent/cuda'" in extensions.stdout
    launch = cli("doctor", "--for", "launch", env=stale)
    assert launch.returncode == 2 and "error: cc: CC='/nonexistent/gcc'" in launch.stdout
    # Every goal shown: every wrong setting is an error.
    assert cli("doctor", env=stale).returncode == 2


def test_lock_without_a_driver_suggests_a_command_that_runs(tmp_path: Path) -> None:
    manifest = no_driver_manifest(tmp_path)
    env = {"TRITON_TOOLCHAIN_MANIFEST": str(manifest)}
    out = tmp_path / "image.json"
    done = cli("lock", "-o", str(out), env=env)
    assert done.returncode == 1 and out.is_file(), done.stderr
    text = " ".join(done.stderr.split())
    suggested = re.findall(r"`triton-toolchain (lock [^`]*)`", text)[0]
    assert suggested == f"lock --no-driver --force -o {out}"
    again = cli(*suggested.split(), env=env)
    assert again.returncode == 0, again.stderr
    # To standard output, the suggestion writes nowhere either.
    stdout = cli("lock", env=env)
    assert "`triton-toolchain lock --no-driver`" in " ".join(stdout.stderr.split())


def test_doctor_run_prints_warnings_after_the_header_and_details_under_their_step(
    tmp_path: Path,
) -> None:
    """A warning raised while Triton is imported (the shim's own, for a value of
    TRITON_TOOLCHAIN it does not know; Triton 3.9's own about FP fusion) comes after the
    header; a failed step's account (no driver: the launcher cannot be linked) is
    indented under the step."""
    env = {
        "TRITON_TOOLCHAIN": "maybe",
        "TRITON_TOOLCHAIN_MANIFEST": str(no_driver_manifest(tmp_path)),
        "TRITON_CACHE_DIR": str(tmp_path / "triton-cache"),
    }
    base = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
    done = subprocess.run(
        [sys.executable, "-m", "triton_toolchain", "doctor", "--run"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**base, **env},
        check=False,
    )
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"triton-toolchain {__version__}: "), done.stdout
    warnings = [i for i, line in enumerate(lines) if line.startswith("warning: ")]
    assert warnings and "TRITON_TOOLCHAIN='maybe'" in lines[warnings[0]], done.stdout
    target = next(i for i, line in enumerate(lines) if line.startswith("target "))
    assert min(warnings) > target
    failed = next(i for i, line in enumerate(lines) if line.startswith("  FAILED   "))
    steps = ("  ok ", "  skipped ", "  FAILED ")
    block = list(itertools.takewhile(lambda x: not x.startswith(steps), lines[failed + 1 :]))
    assert any(line.strip().startswith("fix: ") for line in block), lines[failed:]
    assert all(line.startswith("      ") for line in block), block


def test_help_names_torch_and_every_option_has_help_text() -> None:
    top = cli("--help").stdout
    assert "torch" in top and "Triton" in top
    env = cli("env", "--help").stdout
    assert "--format {sh,fish,json}" in env and "fish: set -gx" in " ".join(env.split())
    run = cli("run", "--help").stdout
    assert "-- CMD [ARGS...]" in run and "the program to run" in run


# `doctor --json` with every resolution it makes listed: the components each one
# looked for, written to the file named by the first argument.
COUNTED_DOCTOR = """
import json, sys
from triton_toolchain.cli import _main
resolutions = []
real = _main.resolve_all
def counted(*args, **kwargs):
    tc = real(*args, **kwargs)
    resolutions.append(sorted(c.component for c in tc))
    return tc
_main.resolve_all = counted
status = _main.main(["doctor", "--json"])
with open(sys.argv[1], "w") as f:
    json.dump(resolutions, f)
sys.exit(status)
"""


def test_doctor_resolves_the_toolchain_once_for_the_gpus_architecture(tmp_path: Path) -> None:
    """With a driver that sees an sm_90 GPU and no ``--arch``, ``doctor`` looks for the
    driver alone, asks it for the GPU, then resolves every component once, for sm_90:
    not a whole resolution for any architecture first and another for the GPU's."""
    import driver_standin
    from hostile import clean_env

    lib = driver_standin.driver(tmp_path / "drv", cuda_version=13000, capability=(9, 0))
    env = clean_env(tmp_path / "home", TRITON_LIBCUDA_PATH=str(lib.parent))
    counted = tmp_path / "resolutions.json"
    done = subprocess.run(
        [sys.executable, "-c", COUNTED_DOCTOR, str(counted)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    doc = json.loads(done.stdout)
    assert doc["arch"] == 90, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    resolutions = json.loads(counted.read_text())
    assert resolutions == [["libcuda"], sorted(COMPONENT_NAMES)], resolutions


def test_lock_pins_a_cache_per_user(tmp_path: Path, driver_env: dict[str, str]) -> None:
    """``lock --cache NAME=DIR`` writes the pin as given (``$USER`` kept for each user to
    expand); ``doctor --json`` with that manifest reports the directory for this user,
    from the manifest; a wrong pin is exit 2 naming the option, and writes nothing."""
    out = tmp_path / "site.json"
    pin = f"{tmp_path}/scratch/$USER/triton"
    env = {**driver_env, "HOME": str(tmp_path)}
    done = cli("lock", "--cache", f"triton={pin}", "-o", str(out), env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["caches"] == {"triton": pin}
    doctor = cli("doctor", "--json", env={**env, "TRITON_TOOLCHAIN_MANIFEST": str(out)})
    cache = json.loads(doctor.stdout)["caches"]["triton"]
    user = pwd.getpwuid(os.getuid()).pw_name
    assert cache["path"] == f"{tmp_path}/scratch/{user}/triton", cache
    assert cache["source"] == "manifest" and cache["error"] is None, cache
    for wrong, said in (
        ("tmp=/x", "caches.tmp: is no cache; use triton, inductor"),
        ("triton=relative", "caches.triton: is str 'relative'; give an absolute directory"),
        ("triton", "'triton': give NAME=DIRECTORY"),
    ):
        refused = cli("lock", "--cache", wrong, "-o", str(tmp_path / "no.json"), env=env)
        assert refused.returncode == 2 and said in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr and not (tmp_path / "no.json").exists()
    twice = cli("lock", "--cache", f"triton={pin}", "--cache", "triton=/y", env=env)
    assert twice.returncode == 2 and "triton is pinned twice" in twice.stderr, twice.stderr
