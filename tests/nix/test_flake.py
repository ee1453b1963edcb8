"""The flake, default.nix and nix/ evaluated and built against the stand-in nixpkgs,
and what they build run with real Triton.

Runs with the system `nix` (2.8 on Debian 12) and, when TT_MODERN_NIX=1, also with
shared/tools/modern-nix.sh (Nix 2.26, private store in /tmp/n226). The end-to-end
tests (`test_e2e_*`) run what the system `nix` built: the private store's paths are
not at /nix/store, so nothing built by 2.26 can run here. A missing tool is a failure
that names it (tests never skip).

End to end: a venv over this interpreter (which has Triton from PyPI) with the shim
pip-installed from ./python, wrapped by the flake's `lib.wrapWithToolchain`, on a
machine whose only driver is a stand-in on LD_LIBRARY_PATH (Nix on a distribution
that is not NixOS). The stand-in's ptxas and cc append their arguments to $TT_RECORD,
which is how a test knows that the store's tools ran.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODERN = REPO.parent / "shared" / "tools" / "modern-nix.sh"
if not MODERN.exists():
    MODERN = Path("/work/shared/tools/modern-nix.sh")
CUDA = Path(os.environ.get("TT_CUDA", "/usr/local/cuda-13.0"))
# Builds run as the calling user (root here): the stand-in calls host tools, e.g. a
# Python under /root that build users cannot read.
CONFIG = (
    "experimental-features = nix-command flakes\n"
    "substituters =\nsandbox = false\nbuild-users-group =\n"
)
# Component -> the variable the wrapper exports for it (nix/wrap.nix, tritonVariables).
EXPORTED = {
    "ptxas": "TRITON_PTXAS_PATH",
    "ptxas-blackwell": "TRITON_PTXAS_BLACKWELL_PATH",
    "cuobjdump": "TRITON_CUOBJDUMP_PATH",
    "nvdisasm": "TRITON_NVDISASM_PATH",
    "libdevice": "TRITON_LIBDEVICE_PATH",
    "cuda-headers": "TRITON_CUDART_PATH",
    "cuda-crt-headers": "TRITON_CUDACRT_PATH",
    "cc": "CC",
}


def _missing(what: str) -> None:
    pytest.fail(f"{what} is required: the README's test command installs it")


class Nix:
    """One Nix installation: how to call it, and where its store lives on disk."""

    def __init__(self, name: str, argv: list[str], extra: list[str], real_root: str) -> None:
        self.name, self.argv, self.extra, self.real_root = name, argv, extra, real_root

    def __call__(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, NIX_CONFIG=CONFIG)
        cmd = [*self.argv, *args[:1], *self.extra, *args[1:]]
        proc = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=900, check=False
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed:\n{proc.stderr[-6000:]}")
        return proc

    def real(self, store_path: str) -> Path:
        return Path(self.real_root + store_path)


def _nixes() -> list:
    params = [pytest.param("system", id="nix-system")]
    if os.environ.get("TT_MODERN_NIX") == "1":
        params.append(pytest.param("modern", id="nix-2.26"))
    return params


def system_nix() -> Nix:
    if shutil.which("nix") is None:
        _missing("nix")
    return Nix("system", ["nix"], [], "")


@pytest.fixture(params=_nixes())
def nix(request: pytest.FixtureRequest) -> Nix:
    if request.param == "system":
        return system_nix()
    if not MODERN.exists():
        _missing(str(MODERN))
    # modern-nix.sh sets its own NIX_CONFIG, so CONFIG's settings are repeated here. It
    # builds in a mount namespace (its store is not at /nix/store) that holds only the
    # sandbox paths: those must include the stand-in's host tools, this interpreter's
    # virtual environment among them (e.g. a nox venv inside a clone under /check).
    # Without build users the builder is the calling user, and can read under /root.
    options = {
        "build-hook": "",
        "build-users-group": "",
        "sandbox-paths": " ".join(_sandbox_paths()),
    }
    extra = [arg for name, value in options.items() for arg in ("--option", name, value)]
    return Nix("modern", [str(MODERN)], extra, "/tmp/n226/store")


def _sandbox_paths() -> list[str]:
    """The host directories a build in modern-nix.sh's namespace sees: the system's, and
    this interpreter's prefixes (venv and base) where they lie outside those."""
    paths = ["/bin", "/usr", "/lib", "/lib64", "/etc", "/tmp", "/root"]
    for prefix in {sys.prefix, sys.base_prefix, os.path.realpath(sys.prefix)}:
        if not any(prefix == p or prefix.startswith(p + "/") for p in paths):
            paths.append(prefix)
    return paths


def _cuda_files() -> tuple[Path, Path, Path]:
    """A real ptxas, libdevice.10.bc and the directory of cuda.h: a CUDA toolkit's
    (TT_CUDA, default /usr/local/cuda-13.0) or else those in Triton's wheel."""
    places = [(CUDA / "bin/ptxas", CUDA / "nvvm/libdevice/libdevice.10.bc", CUDA / "include")]
    spec = importlib.util.find_spec("triton")
    if spec is not None and spec.submodule_search_locations:
        wheel = Path(next(iter(spec.submodule_search_locations))) / "backends" / "nvidia"
        places.append((wheel / "bin/ptxas", wheel / "lib/libdevice.10.bc", wheel / "include"))
    for ptxas, libdevice, include in places:
        if ptxas.is_file() and libdevice.is_file() and (include / "cuda.h").is_file():
            return ptxas, libdevice, include
    _missing(
        f"a ptxas, libdevice.10.bc and cuda.h (a CUDA toolkit at {CUDA}: set TT_CUDA; "
        "or Triton's wheel)"
    )
    raise AssertionError  # unreachable


@pytest.fixture(scope="session")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the work tree (untracked files included) whose stand-in names this host's tools."""
    ptxas, libdevice, include = _cuda_files()
    gcc = shutil.which("gcc")
    if gcc is None:
        _missing("gcc")
    python_include = sysconfig.get_paths()["include"]
    if not Path(python_include, "Python.h").is_file():
        _missing(f"Python.h of {sys.executable} in {python_include} (python3-dev)")
    dest = tmp_path_factory.mktemp("flake") / "repo"
    shutil.copytree(
        REPO,
        dest,
        ignore=shutil.ignore_patterns(".git", "result*", "__pycache__", ".nox", ".*_cache"),
    )
    host = {
        "python": sys.executable,
        "python_include": python_include,
        "python_version": f"{sys.version_info.major}.{sys.version_info.minor}",
        "ptxas": str(ptxas),
        "libdevice": str(libdevice),
        "cuda_include": str(include),
        "cc": gcc,
    }
    (dest / "tests/nix/nixpkgs/host.json").write_text(json.dumps(host))
    return dest


def flake_args(repo: Path) -> list[str]:
    return ["--no-write-lock-file", "--override-input", "nixpkgs", f"path:{repo}/tests/nix/nixpkgs"]


def build(nix: Nix, *args: str) -> str:
    out = nix("build", "--no-link", "--json", *args).stdout
    return json.loads(out)[0]["outputs"]["out"]


def build_all(nix: Nix, repo: Path, *attrs: str) -> dict[str, str]:
    """Build flake attributes: attribute -> its `out` path. (One `nix build` each: with
    several, `--json` does not list them in the order given.)"""
    return {a: build(nix, f"path:{repo}#{a}", *flake_args(repo)) for a in attrs}


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """This environment without anything that would configure Triton or the shim, so
    that what a test sees comes from what it is testing."""
    drop = {
        "CC",
        "PYTHONPATH",
        "TT_RECORD",
        "LD_LIBRARY_PATH",
        "CONDA_PREFIX",
        "CUDA_HOME",
        "CUDA_PATH",
    }
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("TRITON_")}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), **extra)
    return env


def test_every_nix_file_parses() -> None:
    instantiate = shutil.which("nix-instantiate")
    if instantiate is None:
        _missing("nix-instantiate")
    files = [p for p in REPO.rglob("*.nix") if ".git" not in p.parts]
    assert len(files) >= 10
    for f in files:
        proc = subprocess.run(
            [instantiate, "--parse", str(f)], capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, f"{f}: {proc.stderr}"


def test_unit_tests_of_pure_functions(nix: Nix, repo: Path) -> None:
    failures = json.loads(nix("eval", "--json", "--file", str(repo / "tests/nix/unit.nix")).stdout)
    assert failures == []


def test_flake_outputs_evaluate(nix: Nix, repo: Path) -> None:
    nix("flake", "check", "--no-build", f"path:{repo}", *flake_args(repo))
    shown = nix("flake", "show", "--json", f"path:{repo}", *flake_args(repo)).stdout
    outputs = json.loads(shown)
    for system in ("x86_64-linux", "aarch64-linux"):
        assert set(outputs["packages"][system]) == {"default", "manifest", "python"}
        assert set(outputs["apps"][system]) == {"default", "vector-add", "doctor"}
        assert set(outputs["checks"][system]) == {"shim-tests", "manifest", "formatting"}
        assert "default" in outputs["devShells"][system]
    assert "default" in outputs["overlays"]


def validate_manifest(nix: Nix, path: str) -> dict:
    """docs/manifest.md, schema 1: known keys, absolute existing paths of the right kind."""
    doc = json.loads(nix.real(path).read_text())
    assert set(doc) <= {"schema", "generator", "strict", "driver_dirs", "components"}
    assert (
        doc["schema"] == 1 and isinstance(doc["strict"], bool) and isinstance(doc["generator"], str)
    )
    assert doc["driver_dirs"] == ["/run/opengl-driver/lib"]
    files = {"ptxas", "ptxas-blackwell", "cuobjdump", "nvdisasm", "cc", "libdevice"}
    dirs = {"python-headers", "cuda-headers", "cuda-crt-headers", "libcuda-link"}
    assert set(doc["components"]) == files | dirs
    for name, component in doc["components"].items():
        assert set(component) <= {"path", "version"}, name
        p = component["path"]
        assert p.startswith("/nix/store/"), (name, p)
        real = nix.real(p)
        assert real.is_file() if name in files else real.is_dir(), (name, p)
        if name in files - {"libdevice"}:
            assert os.access(real, os.X_OK), (name, p)
        if name in {"ptxas", "ptxas-blackwell", "cuobjdump", "nvdisasm"}:
            assert component["version"] == "12.8", name
    assert (nix.real(doc["components"]["cuda-headers"]["path"]) / "cuda.h").is_file()
    assert (nix.real(doc["components"]["libcuda-link"]["path"]) / "libcuda.so.1").exists()
    return doc


def test_manifest_is_built_and_valid(nix: Nix, repo: Path) -> None:
    out = build(nix, f"path:{repo}#manifest", *flake_args(repo))
    validate_manifest(nix, out)


def wrapped_expr(repo: Path, program: str) -> str:
    return (
        f"let t = import {repo}/default.nix {{ nixpkgs = {repo}/tests/nix/nixpkgs; }}; "
        f'in t.lib.wrapWithToolchain t.pkgs {{ program = "{program}"; }}'
    )


def test_wrapper_exports_toolchain_and_user_settings_win(nix: Nix, repo: Path) -> None:
    out = build(nix, "--impure", "--expr", wrapped_expr(repo, "/usr/bin/env"))
    wrapper = str(nix.real(out) / "bin/env")
    env = dict(os.environ, TRITON_PTXAS_PATH="/mine/ptxas")
    env.pop("CC", None)
    env.pop("TRITON_LIBCUDA_PATH", None)
    seen = dict(
        line.split("=", 1)
        for line in subprocess.check_output([wrapper], env=env, text=True).splitlines()
        if "=" in line
    )
    assert seen["TRITON_PTXAS_PATH"] == "/mine/ptxas"
    manifest = validate_manifest(nix, seen["TRITON_TOOLCHAIN_MANIFEST"])
    c = manifest["components"]
    assert seen["TRITON_PTXAS_BLACKWELL_PATH"] == c["ptxas-blackwell"]["path"]
    assert seen["TRITON_CUOBJDUMP_PATH"] == c["cuobjdump"]["path"]
    assert seen["TRITON_NVDISASM_PATH"] == c["nvdisasm"]["path"]
    assert seen["TRITON_LIBDEVICE_PATH"] == c["libdevice"]["path"]
    assert seen["TRITON_CUDART_PATH"] == c["cuda-headers"]["path"]
    assert seen["TRITON_CUDACRT_PATH"] == c["cuda-crt-headers"]["path"]
    assert seen["CC"] == c["cc"]["path"]
    assert "TRITON_LIBCUDA_PATH" not in seen


def test_overlay_makes_triton_and_torch_carry_the_shim(nix: Nix, repo: Path) -> None:
    apply = """ps: let
      names = drvs: map (d: d.pname or d.name) drvs;
      shim = ps.triton-toolchain;
    in {
      triton = names ps.triton.propagatedBuildInputs;
      tritonCuda = names ps.triton-cuda.propagatedBuildInputs;
      tritonBin = names ps.triton-bin.propagatedBuildInputs;
      torchTriton = names ps.torch.triton.propagatedBuildInputs;
      torchClosure = names (ps.requiredPythonModules [ ps.torch ]);
      activates = builtins.match ".*triton-activate.py.*" ps.triton-cuda.postInstall != null;
      shimManifest = builtins.match
        ".*manifest.json.*site-packages/triton_toolchain/manifest.json.*" shim.postInstall != null;
    }"""
    attr = f"path:{repo}#legacyPackages.x86_64-linux.python3.pkgs"
    got = json.loads(nix("eval", "--json", attr, *flake_args(repo), "--apply", apply).stdout)
    for key in ("triton", "tritonCuda", "tritonBin", "torchTriton", "torchClosure"):
        assert "triton-toolchain" in got[key], key
    assert got["activates"] and got["shimManifest"]


SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
MANIFEST_COMPONENTS = {
    "ptxas",
    "ptxas-blackwell",
    "cuobjdump",
    "nvdisasm",
    "cc",
    "python-headers",
    "cuda-headers",
    "cuda-crt-headers",
    "libdevice",
    "libcuda-link",
}


def test_packages_and_checks_are_built(nix: Nix, repo: Path) -> None:
    """packages.default (the shim, carrying the manifest and its .pth hook),
    packages.python, checks.manifest (the shim's check-manifest) and checks.shim-tests."""
    system = "x86_64-linux"
    out = build_all(
        nix, repo, "default", "python", f"checks.{system}.manifest", f"checks.{system}.shim-tests"
    )
    site = nix.real(out["default"]) / SITE
    assert (site / "triton_toolchain/__init__.py").is_file()
    pth = (site / "triton_toolchain.pth").read_text()
    assert pth == (repo / "python/src/triton_toolchain.pth").read_text()
    validate_manifest(nix, f"{out['default']}/{SITE}/triton_toolchain/manifest.json")

    report = nix.real(out[f"checks.{system}.manifest"]).read_text().splitlines()
    verdicts = {line.split()[1]: line.split()[0] for line in report[:-1]}
    assert verdicts == dict.fromkeys(MANIFEST_COMPONENTS, "ok"), report
    assert report[-1] == "schema 1, strict=false, driver_dirs: /run/opengl-driver/lib"
    assert nix.real(out[f"checks.{system}.shim-tests"]).exists()

    wrapper = nix.real(out["python"]) / "bin/python3"
    assert "TRITON_TOOLCHAIN_MANIFEST" in wrapper.read_text()


def test_built_shim_checks_and_reports_the_manifest_it_carries(repo: Path, tmp_path: Path) -> None:
    """No wrapper: the Nix-built shim finds the manifest inside its package, and doctor
    gives every component from it, with the manifest as its source."""
    nix = system_nix()
    site = Path(build_all(nix, repo, "default")["default"]) / SITE
    manifest = site / "triton_toolchain/manifest.json"
    env = clean_env(tmp_path, PYTHONPATH=str(site))

    def shim(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "triton_toolchain", *args]
        return subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=120, check=False
        )

    checked = shim("check-manifest", str(manifest))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert sum(line.startswith("ok ") for line in checked.stdout.splitlines()) == len(
        MANIFEST_COMPONENTS
    )

    doc = json.loads(shim("doctor", "--json").stdout)
    assert doc["manifest"] == str(manifest)
    entries = json.loads(manifest.read_text())["components"]
    for name, entry in entries.items():
        got = doc["components"][name]
        assert (got["path"], got["source"]) == (entry["path"], f"manifest:{manifest}"), name
        assert got["path"].startswith("/nix/store/"), name


def test_flake_python_activates_the_shim_when_triton_is_imported(
    repo: Path, tmp_path: Path
) -> None:
    """packages.python finds Triton through PYTHONPATH (no site directory, so no .pth
    hook): the overlay's code at the end of triton/__init__.py activates the shim."""
    nix = system_nix()
    python = Path(build_all(nix, repo, "python")["python"]) / "bin/python3"
    script = (
        "import json, triton, triton_toolchain\n"
        "from triton_toolchain import _activate\n"
        "a = _activate.current()\n"
        "print(json.dumps({'triton': triton.__file__, 'shim': triton_toolchain.__file__,\n"
        "    'mode': a and a.mode, 'manifest': a and a.toolchain and a.toolchain.manifest}))\n"
    )
    done = subprocess.run(
        [str(python), "-W", "error::RuntimeWarning", "-c", script],
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    got = json.loads(done.stdout.splitlines()[-1])
    assert got["triton"].startswith("/nix/store/") and "-triton-3.6.0/" in got["triton"]
    assert got["shim"].startswith("/nix/store/")
    assert got["mode"] not in (None, "pending", "off"), got
    assert got["manifest"].startswith("/nix/store/") and got["manifest"].endswith(".json")


# --- end to end: real Triton, the pip-installed shim, the flake's wrapper ---------------


def _kernel_module_version() -> str | None:
    """The loaded NVIDIA kernel module's version, so that the driver stand-in matches it."""
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
    except OSError:
        return None
    match = re.search(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    return match.group(1) if match else None


@dataclass(frozen=True)
class Wrapped:
    python: Path  # the wrapper around the venv's python
    venv_site: Path  # where the shim was pip-installed
    manifest_file: str  # the store manifest the wrapper exports
    manifest: dict
    driver_dir: Path  # the host's driver (a stand-in), on LD_LIBRARY_PATH

    def run(self, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
        """Run the wrapped python as a user would, with a fresh Triton cache and the
        stand-in tools recording into tmp_path/record."""
        env = clean_env(
            tmp_path,
            TRITON_CACHE_DIR=str(tmp_path / "triton-cache"),
            TT_RECORD=str(tmp_path / "record"),
            LD_LIBRARY_PATH=str(self.driver_dir),
        )
        return subprocess.run(
            [str(self.python), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )


@pytest.fixture(scope="session")
def wrapped(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Wrapped:
    """A venv over this interpreter (Triton from PyPI), the shim pip-installed into it
    from ./python, wrapped by the flake's lib.wrapWithToolchain with the stand-in's
    store toolchain, and a driver stand-in for LD_LIBRARY_PATH."""
    spec = importlib.util.find_spec("triton")
    if spec is None:
        _missing("triton in the Python running the tests")
    for module in ("pip", "hatchling"):
        if importlib.util.find_spec(module) is None:
            _missing(f"{module} in the Python running the tests")
    nix = system_nix()
    base = tmp_path_factory.mktemp("e2e")

    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    venv_python = venv / "bin/python"
    venv_site = Path(
        subprocess.check_output(
            [str(venv_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            text=True,
        ).strip()
    )
    # Layer the venv over this interpreter's environment (Triton, pyelftools, pip, hatchling).
    parents = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (venv_site / "00-parent-environment.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in parents)
    )
    env = clean_env(base, PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    pip = [
        str(venv_python),
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        # The venv sees the parent environment, which may hold the shim (nox installs it
        # there): without this, pip would uninstall it from the parent.
        "--ignore-installed",
    ]
    done = subprocess.run(
        [*pip, str(repo / "python")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert (venv_site / "triton_toolchain.pth").is_file()

    out = build(nix, "--impure", "--expr", wrapped_expr(repo, str(venv_python)))
    python = Path(out) / "bin/python"
    manifest_file = re.search(r"TRITON_TOOLCHAIN_MANIFEST='([^']+)'", python.read_text())
    assert manifest_file, python.read_text()
    manifest = validate_manifest(nix, manifest_file.group(1))

    import driver_standin

    version = _kernel_module_version()
    driver_dir = base / "host-driver"
    if version:
        driver_standin.driver(driver_dir, marker="nix-e2e", version=version)
    else:
        driver_standin.driver(driver_dir, marker="nix-e2e")
    return Wrapped(python, venv_site, manifest_file.group(1), manifest, driver_dir)


def test_e2e_doctor_reports_the_store_toolchain(wrapped: Wrapped, tmp_path: Path) -> None:
    """`python -m triton_toolchain doctor --json` under the wrapper: every component but
    the host's driver is the store's. The wrapper exports TRITON_TOOLCHAIN_MANIFEST and,
    for a Triton without the shim, Triton's own variables: the shim counts those as
    explicit settings (source env:VARIABLE, value the store path); the components that
    have no such variable come from the manifest."""
    done = wrapped.run(tmp_path, "-m", "triton_toolchain", "doctor", "--json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    doc = json.loads(done.stdout)
    assert doc["manifest"] == wrapped.manifest_file
    for name, entry in wrapped.manifest["components"].items():
        got = doc["components"][name]
        # The wrapper's exports equal the manifest's entries: attributed to the manifest.
        source = f"manifest:{wrapped.manifest_file}"
        assert (got["path"], got["source"]) == (entry["path"], source), name
        assert got["path"].startswith("/nix/store/"), name
    assert {"python-headers", "libcuda-link"} <= set(wrapped.manifest["components"]) - set(EXPORTED)
    driver = doc["components"]["libcuda"]
    assert Path(driver["path"]).parent == wrapped.driver_dir, driver
    assert driver["source"].startswith("discovered:"), driver


E2E_PROLOGUE = """
import json, os, sys
import triton, triton_toolchain
report = {
    "triton": triton.__file__,
    "triton_version": triton.__version__,
    "shim": triton_toolchain.__file__,
}
"""


def _e2e(wrapped: Wrapped, tmp_path: Path, body: str) -> tuple[dict, list[str]]:
    """Run E2E_PROLOGUE + body under the wrapper; the report (JSON, last line) and the
    stand-in tools' record."""
    script = tmp_path / "e2e.py"
    script.write_text(E2E_PROLOGUE + body + "print(json.dumps(report))\n")
    done = wrapped.run(tmp_path, str(script))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    report = json.loads(done.stdout.splitlines()[-1])
    # Real Triton from this interpreter's environment, the shim pip-installed in the venv.
    assert report["triton_version"].startswith("3."), report
    assert not report["triton"].startswith("/nix/store/"), report
    assert Path(report["shim"]).parent.parent == wrapped.venv_site, report
    record = tmp_path / "record"
    return report, record.read_text().splitlines() if record.exists() else []


def test_e2e_triton_assembles_with_the_stores_ptxas(wrapped: Wrapped, tmp_path: Path) -> None:
    """Triton compiles a kernel ahead of time for sm_90: the store's ptxas ran."""
    body = """
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

@triton.jit
def k(x, y, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(y + o, tl.load(x + o, mask=o < n) * 2, mask=o < n)

signature = {"x": "*fp32", "y": "*fp32", "n": "i32", "B": "constexpr"}
src = ASTSource(k, signature=signature, constexprs={"B": 128})
report["cubin"] = len(triton.compile(src, target=GPUTarget("cuda", 90, 32)).asm["cubin"])
"""
    report, record = _e2e(wrapped, tmp_path, body)
    assert report["cubin"] > 0
    ptxas = [r for r in record if r.startswith("ptxas ")]
    assert any("--version" in r for r in ptxas), record
    assert any("sm_90" in r and "--version" not in r for r in ptxas), record


def test_e2e_triton_builds_its_launcher_with_the_stores_compiler(
    wrapped: Wrapped, tmp_path: Path
) -> None:
    """Triton builds its cuda_utils module: the store's cc ran, against the store's link
    stub and headers, and the module loads the host's driver (the stand-in)."""
    body = """
import ctypes, glob
from elftools.elf.elffile import ELFFile
from triton.backends.nvidia.driver import CudaUtils

CudaUtils()
(module,) = glob.glob(os.path.join(os.environ["TRITON_CACHE_DIR"], "*", "cuda_utils*.so"))
with open(module, "rb") as f:
    dynamic = ELFFile(f).get_section_by_name(".dynamic")
    report["needed"] = [t.needed for t in dynamic.iter_tags("DT_NEEDED")]
    report["rpath"] = [t.rpath for t in dynamic.iter_tags("DT_RPATH")]
libcuda = ctypes.CDLL("libcuda.so.1")
libcuda.triton_toolchain_standin_marker.restype = ctypes.c_char_p
report["marker"] = libcuda.triton_toolchain_standin_marker().decode()
"""
    report, record = _e2e(wrapped, tmp_path, body)
    c = wrapped.manifest["components"]
    builds = [r for r in record if r.startswith("cc ") and "cuda_utils" in r]
    assert len(builds) == 1, record
    argv = builds[0].split()
    assert "-shared" in argv
    assert f"{c['libcuda-link']['path']}/libcuda.so.1" in argv, argv
    assert f"-I{c['python-headers']['path']}" in argv, argv
    assert f"-I{c['cuda-headers']['path']}" in argv, argv
    assert "libcuda.so.1" in report["needed"], report
    assert report["rpath"] == [str(wrapped.driver_dir)], report
    assert report["marker"] == "nix-e2e", report
