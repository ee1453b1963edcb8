"""Triton's AMD backend: ``doctor --arch gfx942`` and the HIP runtime Triton's launcher
opens, on the layouts ROCm comes in.

Real files: Debian's ``libamdhip64-5`` (ROCm 5.2.3, installed by ``tools/test.sh``)
copied into each layout, and a gcc-built stand-in (``hip_standin``) for the releases
Debian lacks. System paths (``/opt``, ``/run/opengl-driver``) are laid out in private
mount namespaces (``unshare -m``). What doctor says is checked against what runs: Triton's
own launcher (``HIPUtils``: its ``driver.c`` built and loaded, which opens the library and
checks its release) in the same layout, with the shim active and with stock Triton; and
Triton's real ahead-of-time compile for ``GPUTarget("hip", "gfx942", 64)``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import require_tool
from hip_standin import DEBIAN_LIBRARY, DEBIAN_RELEASE, real_library, standin
from triton_toolchain.cli._main import parse_arch
from triton_toolchain.resolver._catalog import (
    GFX_RULES,
    TritonRelease,
    major_minor,
    rocm_problem,
    triton_release,
)

pytestmark = pytest.mark.root  # mount namespaces


def _installed_release() -> TritonRelease:
    """The catalog's row of the installed Triton (3.9 in `matrices`, 3.6 in the `triton`
    session of 3.6)."""
    import triton

    release = triton_release(major_minor(triton.__version__))
    assert release is not None and release.hip_major_min is not None, triton.__version__
    return release


RELEASE = _installed_release()
TRITON_TOO_OLD = (
    f"ROCm 5.2 is older than Triton {RELEASE.first[0]}.{RELEASE.first[1]} and later accept"
)
# What Triton 3.9's launcher says of the real 5.2.3 library (backends/amd/driver.c).
TRITON_REFUSES = "libamdhip64 version 5.2.21153 is not supported! Required major version is >=6."
MARK = "hip-launcher: "
# Triton's launcher (HIPUtils: driver.c built against the wheel's HIP headers and loaded,
# which dlopens the library, checks hipDriverGetVersion and resolves its symbols).
LAUNCHER = f"""
import json
from triton.backends.amd import driver
try:
    driver.HIPUtils()
    result = {{"ok": True, "path": driver._get_path_to_hip_runtime_dylib()}}
except Exception as exc:
    result = {{"ok": False, "error": f"{{type(exc).__name__}}: {{exc}}"}}
print({MARK!r} + json.dumps(result))
"""


def _environ(tmp_path: Path, **extra: str) -> dict[str, str]:
    """This environment without the settings the layouts make, with private caches."""
    named = ("TRITON_", "ROCM_PATH", "HIP_PATH", "LD_LIBRARY_PATH", "CONDA_PREFIX", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if not k.startswith(named)}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    env["TRITON_CACHE_DIR"] = str(tmp_path / "triton-cache")
    env.update(extra)
    return env


def _run(argv: list[str], env: dict[str, str], script: str) -> subprocess.CompletedProcess[str]:
    """``argv`` in a private mount namespace set up by ``script`` (``sh``)."""
    unshare = require_tool("unshare", "util-linux")
    return subprocess.run(
        [
            unshare,
            "-m",
            "--propagation",
            "private",
            "sh",
            "-euc",
            f'{script}\nexec "$@"',
            "sh",
            *argv,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def doctor(gfx: str, env: dict[str, str], script: str = ":") -> tuple[int, dict[str, Any]]:
    done = _run(
        [sys.executable, "-m", "triton_toolchain", "doctor", "--arch", gfx, "--json"], env, script
    )
    assert done.returncode in (0, 1, 2), done.stderr
    return done.returncode, json.loads(done.stdout)


def child_report(code: str, env: dict[str, str], *argv: str) -> dict[str, Any]:
    """What ``code``, run in a child with ``argv``, prints as JSON on its last line."""
    done = subprocess.run(
        [sys.executable, "-c", code, *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def aot(env: dict[str, str]) -> dict[str, Any]:
    """Triton's real ahead-of-time compile for gfx942 (``AOT``) in a child: its report."""
    return child_report(AOT, env)


def launcher(env: dict[str, str], script: str = ":") -> dict[str, Any]:
    done = _run([sys.executable, "-c", LAUNCHER], env, script)
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARK)]
    assert lines, (done.stdout, done.stderr)
    result: dict[str, Any] = json.loads(lines[-1][len(MARK) :])
    return result


# A layout: where the library goes (under the test's directory), the environment that
# points there, the namespace's setup, and the path doctor sees. Each takes a builder,
# ``make(directory) -> path of the library Triton would be given``.
Layout = tuple[dict[str, str], str, str, str]  # env, script, path seen, source


def _opt_rocm_versioned(tmp: Path, make: Callable[[Path], Path]) -> Layout:
    name = make(tmp / "opt" / "rocm-6.4.1" / "lib").name
    return {}, f"mount --bind {tmp / 'opt'} /opt", f"/opt/rocm-6.4.1/lib/{name}", "opt-rocm"


def _rocm_path(tmp: Path, make: Callable[[Path], Path]) -> Layout:
    path = make(tmp / "rocm" / "lib")
    return {"ROCM_PATH": str(tmp / "rocm")}, ":", str(path), "ROCM_PATH"


def _hip_path(tmp: Path, make: Callable[[Path], Path]) -> Layout:
    path = make(tmp / "hip" / "lib")
    return {"HIP_PATH": str(tmp / "hip")}, ":", str(path), "HIP_PATH"


def _ld_library_path(tmp: Path, make: Callable[[Path], Path]) -> Layout:
    path = make(tmp / "libs")
    return {"LD_LIBRARY_PATH": str(tmp / "libs")}, ":", str(path), "LD_LIBRARY_PATH"


def _nixos(tmp: Path, make: Callable[[Path], Path]) -> Layout:
    # NixOS: the driver's libraries in /run/opengl-driver/lib, no ROCm in /opt.
    name = make(tmp / "opengl-driver" / "lib").name
    script = (
        "mount -t tmpfs tmpfs /run\nmkdir /run/opengl-driver\n"
        f"mount --bind {tmp / 'opengl-driver'} /run/opengl-driver"
    )
    return {}, script, f"/run/opengl-driver/lib/{name}", "nixos"


def _conda(tmp: Path, make: Callable[[Path], Path]) -> Layout:
    path = make(tmp / "conda" / "lib")
    return {"CONDA_PREFIX": str(tmp / "conda")}, ":", str(path), "conda"


def _torch_wheel(tmp: Path, make: Callable[[Path], Path]) -> Layout:
    # PyTorch's ROCm wheel keeps the HIP runtime in torch/lib (what Triton looks at).
    torch = tmp / "site" / "torch"
    path = make(torch / "lib")
    (torch / "__init__.py").write_text("")
    (torch / "version.py").write_text("__version__ = '2.9.0+rocm6.4'\ncuda = None\nhip = '6.4'\n")
    return {"PYTHONPATH": str(tmp / "site")}, ":", str(path), "torch"


LAYOUTS: dict[str, Callable[[Path, Callable[[Path], Path]], Layout]] = {
    "opt-rocm-X.Y.Z-only": _opt_rocm_versioned,
    "ROCM_PATH": _rocm_path,
    "HIP_PATH": _hip_path,
    "LD_LIBRARY_PATH": _ld_library_path,
    "nixos": _nixos,
    "conda": _conda,
    "torch-wheel": _torch_wheel,
}
# The layouts stock Triton 3.9 finds a library in by itself: it looks for the
# unversioned libamdhip64.so in the torch/lib of the site directories (not of the torch
# that `import torch` gives, here on PYTHONPATH), LD_LIBRARY_PATH, HIP_PATH, ROCM_PATH,
# the linker cache and /opt/rocm/lib only.
STOCK_FINDS = {"ROCM_PATH", "HIP_PATH", "LD_LIBRARY_PATH"}


def _source(doc: dict[str, Any]) -> dict[str, Any]:
    hip: dict[str, Any] = doc["components"]["libamdhip64"]
    return hip


@pytest.mark.parametrize("name", LAYOUTS)
def test_a_rocm_6_4_runtime_is_found_in_each_layout_and_is_what_triton_opens(
    tmp_path: Path, name: str
) -> None:
    extra, script, seen, source = LAYOUTS[name](tmp_path, lambda d: standin(d, (6, 4, 43482)))
    env = _environ(tmp_path, **extra)
    status, doc = doctor("gfx942", env, script)
    hip = _source(doc)
    assert (status, doc["backend"], doc["target"]) == (0, "amd", "gfx942"), doc["goals"]
    assert (hip["path"], hip["version"], hip["source"]) == (
        seen,
        "6.4.43482",
        f"discovered:{source}",
    )
    assert doc["goals"]["triton"]["steps"] == {"compile": True, "launch": True}
    # torch.compile on the AMD GPU: only with a torch built with ROCm (the wheel's).
    torch_gpu = doc["goals"]["torch-gpu"]
    if name == "torch-wheel":
        assert torch_gpu["ready"] and doc["versions"]["torch_hip"] == "6.4", torch_gpu
    else:
        verdict = torch_gpu["verdict"]
        assert not torch_gpu["ready"] and ("without ROCm" in verdict or "not installed" in verdict)
    # Triton's launcher, with the shim: it opens the library doctor named.
    assert launcher(env, script) == {"ok": True, "path": seen}
    # Stock Triton finds it only in the layouts its own search covers.
    stock = launcher({**env, "TRITON_TOOLCHAIN": "off"}, script)
    if name in STOCK_FINDS:
        assert stock["ok"], stock
    else:
        assert not stock["ok"] and "cannot locate libamdhip64.so" in stock["error"], stock


@pytest.mark.parametrize("name", LAYOUTS)
def test_debians_real_rocm_5_2_library_is_refused_in_each_layout_as_triton_refuses_it(
    tmp_path: Path, name: str
) -> None:
    extra, script, seen, source = LAYOUTS[name](tmp_path, real_library)
    env = _environ(tmp_path, **extra)
    status, doc = doctor("gfx942", env, script)
    hip = _source(doc)
    assert status == 1 and hip["path"] is None, hip
    verdict = doc["goals"]["triton"]
    assert verdict["steps"] == {"compile": True, "launch": False}
    assert verdict["missing"] == ["libamdhip64"] and "ROCm 6 or newer" in verdict["fix"]
    refused = {r["path"]: r for r in hip["rejected"]}
    assert refused[seen]["source"] == f"discovered:{source}"
    assert refused[seen]["reason"].startswith(TRITON_TOO_OLD), refused[seen]
    # Triton's own launcher, given that library, refuses it for the same reason.
    given = launcher({**env, "TRITON_TOOLCHAIN": "off", "TRITON_LIBHIP_PATH": seen}, script)
    assert given == {"ok": False, "error": f"RuntimeError: {TRITON_REFUSES}"}
    # With the shim, the launcher stops with doctor's account instead.
    shim = launcher(env, script)
    assert not shim["ok"] and shim["error"].startswith(
        "MissingComponentError: libamdhip64 not found"
    )
    assert f"{seen} (discovered:{source}): {TRITON_TOO_OLD}" in shim["error"]


def test_debians_multiarch_package_as_installed_is_read_from_the_file(tmp_path: Path) -> None:
    """The package itself (``/usr/lib/x86_64-linux-gnu/libamdhip64.so.5``, no
    unversioned link): found through the linker cache and refused, its release read from
    the library (5.2.21153), which Triton's launcher reports the same."""
    status, doc = doctor("gfx942", _environ(tmp_path))
    hip = _source(doc)
    reasons = {r["path"]: r["reason"] for r in hip["rejected"]}
    multiarch = [p for p in reasons if p.endswith("-linux-gnu/libamdhip64.so.5")]
    assert status == 1 and multiarch, hip
    assert all(reasons[p].startswith(TRITON_TOO_OLD) for p in multiarch)
    assert os.path.realpath(multiarch[0]) == str(DEBIAN_LIBRARY.resolve())
    # The same file through an unversioned link (Triton 3.6-3.8 take no other name).
    link = tmp_path / "libamdhip64.so"
    link.symlink_to(DEBIAN_LIBRARY)
    given = launcher(_environ(tmp_path, TRITON_TOOLCHAIN="off", TRITON_LIBHIP_PATH=str(link)))
    assert given["error"] == f"RuntimeError: {TRITON_REFUSES}"
    assert DEBIAN_RELEASE in given["error"]


def test_the_gpu_architecture_needs_its_rocm_release(tmp_path: Path) -> None:
    """gfx12 (RX 9000) needs ROCm 6.4: a 6.3 runtime is refused for gfx1201 with the
    rule's source and taken for gfx942; a 6.4 one serves both."""
    env = _environ(tmp_path, ROCM_PATH=str(tmp_path / "r63"))
    path = standin(tmp_path / "r63" / "lib", (6, 3, 42131))
    status, doc = doctor("gfx1201", env)
    refused = {r["path"]: r["reason"] for r in _source(doc)["rejected"]}
    rule = next(r for r in GFX_RULES if r.prefix == "gfx12")
    assert status == 1 and refused[str(path)] == (
        f"ROCm 6.3 cannot run gfx1201, needs 6.4 or newer ({rule.source})"
    )
    status, doc = doctor("gfx942", env)
    assert status == 0 and _source(doc)["path"] == str(path)
    env = _environ(tmp_path, ROCM_PATH=str(tmp_path / "r64"))
    path = standin(tmp_path / "r64" / "lib", (6, 4, 0))
    status, doc = doctor("gfx1201", env)
    assert status == 0 and _source(doc)["path"] == str(path)


def test_a_wrong_triton_libhip_path_is_an_error_naming_it(tmp_path: Path) -> None:
    """TRITON_LIBHIP_PATH is checked like the rest: the real 5.2 library is exit status
    2 with the variable, its value, the reason and the fix; a file of another name is
    refused as Triton would refuse it."""
    real = real_library(tmp_path / "deb")
    status, doc = doctor("gfx942", _environ(tmp_path, TRITON_LIBHIP_PATH=str(real)))
    error = _source(doc)["error"]
    assert status == 2 and error.startswith(f"TRITON_LIBHIP_PATH={str(real)!r}: {TRITON_TOO_OLD}")
    assert "fix: install ROCm 6 or newer" in error
    other = tmp_path / "libhip.so"
    other.write_bytes(b"")
    status, doc = doctor("gfx942", _environ(tmp_path, TRITON_LIBHIP_PATH=str(other)))
    assert status == 2 and "is not named libamdhip64.so*" in _source(doc)["error"]


def test_doctor_screen_for_gfx942_names_the_target_and_the_fix(tmp_path: Path) -> None:
    done = _run(
        [sys.executable, "-m", "triton_toolchain", "doctor", "--arch", "gfx942"],
        _environ(tmp_path, COLUMNS="200"),
        ":",
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert "target gfx942 (AMD); manifest: none" in lines
    goal = next(line for line in lines if line.startswith("Triton kernels (AMD)"))
    assert goal.endswith(
        "partly: can compile kernels; cannot launch kernels: libamdhip64 not found"
    )
    assert any(line.startswith("  fix: install ROCm 6 or newer") for line in lines)
    assert any("libamdhip64.so.5" in line and TRITON_TOO_OLD in line for line in lines)


def test_env_which_and_run_serve_the_amd_target(tmp_path: Path) -> None:
    """``env --arch gfx942`` exports TRITON_LIBHIP_PATH (and the host compilers), which
    Triton's launcher then opens with the shim off; ``which libamdhip64`` prints it;
    ``run --arch gfx942`` hands it to the program (``lock``, ``pkg-config`` and
    ``check-manifest``: ``test_rocm_lock``)."""
    path = standin(tmp_path / "rocm" / "lib", (6, 4, 0))
    env = _environ(tmp_path, ROCM_PATH=str(tmp_path / "rocm"))
    cli = [sys.executable, "-m", "triton_toolchain"]
    done = _run([*cli, "env", "--arch", "gfx942", "--format", "json"], env, ":")
    exported = json.loads(done.stdout)
    assert done.returncode == 0 and exported["TRITON_LIBHIP_PATH"] == str(path), done.stderr
    assert not {"TRITON_PTXAS_PATH", "TRITON_LIBCUDA_PATH"} & set(exported)
    stock = {**_environ(tmp_path), **exported, "TRITON_TOOLCHAIN": "off"}
    assert launcher(stock) == {"ok": True, "path": str(path)}
    done = _run([*cli, "which", "libamdhip64"], env, ":")
    assert (done.returncode, done.stdout) == (0, f"{path}\n")
    done = _run(
        [*cli, "run", "--arch", "gfx942", "--", "sh", "-c", "echo $TRITON_LIBHIP_PATH"], env, ":"
    )
    assert (done.returncode, done.stdout) == (0, f"{path}\n")
    done = _run([*cli, "which", "ptxas", "--arch", "gfx942"], env, ":")
    assert done.returncode == 2 and "ptxas is the NVIDIA backend's" in done.stderr
    done = _run([*cli, "doctor", "--arch", "gfx942", "--run"], env, ":")
    assert done.returncode == 2 and done.stderr.startswith("error: --run with --arch gfx942")


def test_parse_arch_takes_amd_names_and_keeps_nvidia_numbers() -> None:
    assert parse_arch("gfx942") == "gfx942" and parse_arch("gfx90a:xnack-") == "gfx90a"
    assert parse_arch("GFX1201") == "gfx1201"
    assert parse_arch("sm_90a") == 90 and parse_arch("9.0") == 90 and parse_arch("100") == 100


def test_the_minimum_is_the_installed_tritons_own() -> None:
    """``TritonRelease.hip_major_min`` of the installed release is the number its
    launcher source checks."""
    import triton

    source = Path(triton.__file__).parent / "backends" / "amd" / "driver.c"
    text = source.read_text()
    assert f"#define TRITON_HIP_DRIVER_REQ_MAJOR_VERSION ({RELEASE.hip_major_min})" in text
    assert rocm_problem("6.0.0", RELEASE, "gfx942") is None
    assert rocm_problem("5.7.31921", RELEASE, "gfx942") is not None


AOT = """
import json, triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton_toolchain.cli import _kernel
src = ASTSource(_kernel.add_kernel, _kernel.SIGNATURE, constexprs=_kernel.CONSTEXPRS)
kernel = triton.compile(src, target=GPUTarget("hip", "gfx942", 64))
import triton_toolchain
act = triton_toolchain.activate()
patched = [k for k in act.applied if k.endswith("._get_path_to_hip_runtime_dylib")]
print(json.dumps({"hsaco": len(kernel.asm["hsaco"]), "mode": act.mode, "patched": patched}))
"""


def test_triton_compiles_for_gfx942_ahead_of_time_as_doctor_says(tmp_path: Path) -> None:
    """doctor's compile step for gfx942 is ready with nothing from ROCm on the machine;
    Triton's real compile (LLVM to a code object, linked in process) agrees, with the
    shim active, while the launch step waits for a HIP runtime."""
    env = _environ(tmp_path)
    _, doc = doctor("gfx942", env)
    assert doc["goals"]["triton"]["steps"]["compile"] is True
    result = aot(env)
    assert result["hsaco"] > 0 and result["mode"] == "knobs", result
    assert result["patched"] == ["patch:triton.backends.amd.driver._get_path_to_hip_runtime_dylib"]


def test_without_a_gpu_doctor_shows_the_amd_compile_goal_beside_nvidias(tmp_path: Path) -> None:
    """No GPU, no --arch: the NVIDIA goals as before, and the AMD backend's compile goal
    (ready: Triton compiles for AMD with nothing from the machine), in the JSON apart
    from the NVIDIA goals; not where a goal waits for a package (no torch: the
    `triton` session of 3.6), where the screen says what to install first."""
    env = _environ(tmp_path, COLUMNS="100")
    done = _run([sys.executable, "-m", "triton_toolchain", "doctor", "--json"], env, ":")
    doc = json.loads(done.stdout)
    assert list(doc["goals"]) == ["triton", "torch-gpu", "torch-cpu", "extensions"]
    waits = any("not installed" in g["verdict"] for g in doc["goals"].values())
    assert waits == (importlib.util.find_spec("torch") is None)
    text = _run([sys.executable, "-m", "triton_toolchain", "doctor"], env, ":").stdout
    if waits:
        assert "other_backends" not in doc and "compile for AMD" not in text
    else:
        amd = doc["other_backends"]["amd"]["goals"]["triton"]
        assert (amd["title"], amd["verdict"], amd["steps"]) == (
            "compile for AMD",
            "ready",
            {"compile": True},
        )
        assert "compile for AMD       ready" in text.splitlines()
    done = _run([sys.executable, "-m", "triton_toolchain", "doctor", "--arch", "90"], env, ":")
    assert "compile for AMD" not in done.stdout


TWO_COPIES = """
import ctypes, json, sys
ctypes.CDLL(sys.argv[1])  # a HIP runtime already in the process (torch's, say)
from triton_toolchain.resolver._resolve import resolve_all
hip = resolve_all(backend="amd", gfx="gfx942")["libamdhip64"]
print(json.dumps({"path": hip.path, "source": str(hip.source), "error": hip.error}))
"""


def test_a_second_hip_runtime_beside_one_already_loaded_is_refused(tmp_path: Path) -> None:
    """Two HIP runtimes in one process cannot work: the one already mapped is taken
    (Triton takes it first too), and TRITON_LIBHIP_PATH naming another is an error
    saying which one is loaded (Triton 3.9 refuses only TheRock's over another)."""
    loaded = standin(tmp_path / "a", (6, 4, 0))
    other = standin(tmp_path / "b" / "lib", (6, 4, 1))
    real = os.path.realpath(loaded)

    def resolved(**extra: str) -> dict[str, Any]:
        env = _environ(tmp_path, TRITON_TOOLCHAIN="off", **extra)
        return child_report(TWO_COPIES, env, str(loaded))

    got = resolved(ROCM_PATH=str(tmp_path / "b"))
    assert (got["path"], got["source"]) == (real, "discovered:loaded-in-process"), got
    got = resolved(TRITON_LIBHIP_PATH=str(other))
    assert got["path"] is None and got["error"].startswith(
        f"TRITON_LIBHIP_PATH={str(other)!r}: this process has already loaded another HIP "
        f"runtime, {real}"
    ), got


@pytest.fixture
def mallory() -> Iterator[str]:
    """A real user, made with useradd for this test and removed after it."""
    name = f"tthip{uuid.uuid4().hex[:6]}"
    useradd = require_tool("useradd", "passwd")
    subprocess.run([useradd, "-M", "-U", "-s", "/usr/sbin/nologin", name], check=True)
    try:
        yield name
    finally:
        subprocess.run([require_tool("userdel", "passwd"), name], check=False)


def test_a_hip_runtime_another_user_planted_is_never_loaded(tmp_path: Path, mallory: str) -> None:
    """A libamdhip64 in a directory another user owns, first on LD_LIBRARY_PATH (where
    stock Triton takes it): refused for trust before anything asks it its version, and
    the next one, root's, is taken; the planted library's constructor never ran."""
    marker = tmp_path / "planted-library-was-loaded"
    planted_dir = tmp_path / "planted"
    standin(planted_dir, (6, 4, 0), loaded_marker=marker)
    chown = require_tool("chown", "coreutils")
    subprocess.run([chown, "-R", f"{mallory}:{mallory}", str(planted_dir)], check=True)
    good = standin(tmp_path / "rocm" / "lib", (6, 4, 1))
    env = _environ(tmp_path, LD_LIBRARY_PATH=str(planted_dir), ROCM_PATH=str(tmp_path / "rocm"))
    status, doc = doctor("gfx942", env)
    hip = _source(doc)
    assert (status, hip["path"]) == (0, str(good)), hip
    reasons = {r["path"]: r["reason"] for r in hip["rejected"]}
    assert mallory in reasons[str(planted_dir / "libamdhip64.so")], reasons
    assert launcher(env) == {"ok": True, "path": str(good)}
    assert not marker.exists()
    # Stock Triton loads the planted one (its constructor runs).
    stock = launcher({**env, "TRITON_TOOLCHAIN": "off"})
    assert stock == {"ok": True, "path": str(planted_dir / "libamdhip64.so")}
    assert marker.exists()


def test_a_manifests_driver_dirs_serve_the_amd_backend_too(tmp_path: Path) -> None:
    """A manifest's driver_dirs (the host's driver directories, schema unchanged) are
    looked in for libamdhip64.so: one there of ROCm 6.4 is taken under the manifest's
    name; Debian's 5.2 there is refused as the manifest's entry (exit status 2, a wrong
    manifest, as on the NVIDIA side), and discovery goes on."""
    good = standin(tmp_path / "hip", (6, 4, 2))
    old = real_library(tmp_path / "old")
    manifest = tmp_path / "manifest.json"
    for directory, ok in ((good.parent, True), (old.parent, False)):
        document = {"schema": 2, "driver_dirs": [str(directory)], "components": {}}
        manifest.write_text(json.dumps(document))
        env = _environ(tmp_path, TRITON_TOOLCHAIN_MANIFEST=str(manifest))
        status, doc = doctor("gfx942", env)
        hip = _source(doc)
        if ok:
            assert (status, hip["path"], hip["source"]) == (0, str(good), f"manifest:{manifest}")
            continue
        refused = {r["path"]: r for r in hip["rejected"]}
        assert status == 2 and hip["path"] is None
        assert doc["manifest_rejections"] == [
            f"{manifest}: driver_dirs[0]: {old} rejected: {refused[str(old)]['reason']}"
        ]
        assert refused[str(old)]["source"] == f"manifest:{manifest}"
        assert refused[str(old)]["reason"].startswith(TRITON_TOO_OLD)


def test_therocks_rocm_sdk_is_left_to_triton_and_said(tmp_path: Path) -> None:
    """Where TheRock's ``rocm_sdk`` is importable, Triton 3.9 takes its library first:
    the shim's lookup hands over to Triton's, and doctor says so beside its choice
    (``TritonRelease.therock_first``, checked against the installed driver.py)."""
    therock = standin(tmp_path / "therock" / "lib", (7, 0, 0))
    package = tmp_path / "site" / "rocm_sdk"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        f"def find_libraries(*names):\n    return [{str(therock)!r}]\n"
    )
    other = standin(tmp_path / "rocm" / "lib", (6, 4, 0))
    env = _environ(tmp_path, PYTHONPATH=str(tmp_path / "site"), ROCM_PATH=str(tmp_path / "rocm"))
    status, doc = doctor("gfx942", env)
    hip = _source(doc)
    assert (status, hip["path"]) == (0, str(other))
    said = any(n.startswith(f"TheRock's rocm_sdk is installed ({package})") for n in hip["notes"])
    # Triton 3.6-3.8 do not ask rocm_sdk: the shim's choice is theirs too.
    assert said == RELEASE.therock_first
    import triton

    source = Path(triton.__file__).parent / "backends" / "amd" / "driver.py"
    assert ("import rocm_sdk" in source.read_text()) == RELEASE.therock_first
    expected = therock if RELEASE.therock_first else other
    assert launcher(env) == {"ok": True, "path": str(expected)}
    # TRITON_LIBHIP_PATH chooses another, for the shim and for Triton alike.
    chosen = _environ(tmp_path, PYTHONPATH=str(tmp_path / "site"), TRITON_LIBHIP_PATH=str(other))
    assert launcher(chosen) == {"ok": True, "path": str(other)}


def test_a_relative_rocm_path_is_refused_where_it_names_a_library(tmp_path: Path) -> None:
    """ROCM_PATH=rocm (relative: Triton joins it to wherever the program runs) is
    refused, saying so, though a ROCm 6.4 library lies there from this directory."""
    standin(tmp_path / "rocm" / "lib", (6, 4, 0))
    env = _environ(tmp_path, ROCM_PATH="rocm")
    done = _run(
        [sys.executable, "-m", "triton_toolchain", "doctor", "--arch", "gfx942", "--json"],
        env,
        f"cd {tmp_path}",
    )
    hip = _source(json.loads(done.stdout))
    assert hip["path"] != str(tmp_path / "rocm" / "lib" / "libamdhip64.so")
    refused = {r["path"]: r["reason"] for r in hip["rejected"]}
    assert refused[str(tmp_path / "rocm" / "lib" / "libamdhip64.so")] == (
        "ROCM_PATH='rocm' is relative (to wherever the program runs); give it absolute"
    )


def test_a_versioned_triton_libhip_path_is_judged_as_the_installed_triton_judges_it(
    tmp_path: Path,
) -> None:
    """TRITON_LIBHIP_PATH=.../libamdhip64.so.6: Triton 3.9 takes it, 3.6-3.8 refuse any
    name but libamdhip64.so (``TritonRelease.libhip_versioned``); doctor says the same as
    stock Triton's launcher does."""
    versioned = standin(tmp_path / "rocm" / "lib", (6, 4, 0), dev=False)
    env = _environ(tmp_path, TRITON_LIBHIP_PATH=str(versioned))
    status, doc = doctor("gfx942", env)
    stock = launcher({**env, "TRITON_TOOLCHAIN": "off"})
    if RELEASE.libhip_versioned:
        assert (status, _source(doc)["path"]) == (0, str(versioned))
        assert stock == {"ok": True, "path": str(versioned)}
    else:
        assert status == 2 and "does not end in libamdhip64.so" in _source(doc)["error"]
        assert not stock["ok"] and "does not point to a valid libamdhip64.so" in stock["error"]
