"""The flake, default.nix and nix/ evaluated and built against the stand-in nixpkgs,
and what they build run with real Triton.

Runs with a Nix the flake supports (nix/minimum-nix.nix: 2.18 or newer): the system `nix`
where it is one (Debian 13's 2.26), else the other Debian release's through
tools/other-nix.sh (on Debian 12, trixie's 2.26), on the system's /nix/store, so that what
it builds runs here. An older Nix (Debian 12's 2.8, or bookworm's through
tools/other-nix.sh on Debian 13) runs only to see the flake and default.nix refuse it with
a message naming the minimum. A missing tool is a failure that names it (tests never
skip).

End to end: a venv over this interpreter (which has Triton from PyPI) with the shim
pip-installed from ./python, wrapped by the flake's `lib.wrapWithToolchain`, on a
machine whose only driver is a stand-in on LD_LIBRARY_PATH (Nix on a distribution
that is not NixOS). The stand-in's ptxas, cc and c++ append their arguments to
$TT_RECORD, which is how a test knows that the store's tools ran.
"""

from __future__ import annotations

import functools
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
from triton_toolchain import __version__

REPO = Path(__file__).resolve().parents[2]
OTHER_NIX = REPO / "tools" / "other-nix.sh"
MINIMUM_NIX = REPO / "nix" / "minimum-nix.nix"
CUDA = Path(os.environ.get("TT_CUDA", "/usr/local/cuda-13.0"))
# Builds run as the calling user (root here): the stand-in calls host tools, e.g. a
# Python under /root that build users cannot read.
CONFIG = (
    "experimental-features = nix-command flakes\n"
    "substituters =\nsandbox = false\nbuild-users-group =\n"
)


def _missing(what: str) -> None:
    pytest.fail(f"{what} is required: the README's test command installs it")


@dataclass(frozen=True)
class Nix:
    """One Nix installation: what runs its programs (`nix`, `nix-instantiate`: the
    system's, or through tools/other-nix.sh), its version, the settings it runs with
    (after CONFIG) and the environment it needs."""

    launcher: tuple[str, ...]
    version: str
    config: str = ""
    env: tuple[tuple[str, str], ...] = ()

    def __call__(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """`nix ARGS`."""
        return self.run("nix", *args, check=check)

    def run(self, program: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, **dict(self.env), NIX_CONFIG=CONFIG + self.config)
        cmd = [*self.launcher, program, *args]
        proc = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=900, check=False
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed:\n{proc.stderr[-6000:]}")
        return proc


def _version_of(argv: list[str], env: dict[str, str]) -> tuple[int, ...]:
    """`nix --version` ("nix (Nix) 2.26.3") as numbers."""
    done = subprocess.run(
        [*argv, "--version"],
        env=dict(os.environ, **env),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    match = re.search(r"(\d+(?:\.\d+)+)", done.stdout)
    if done.returncode != 0 or match is None:
        pytest.fail(f"{' '.join(argv)} --version failed:\n{done.stdout}{done.stderr[-4000:]}")
    return tuple(int(n) for n in match.group(1).split("."))


def minimum_nix() -> tuple[int, ...]:
    """The oldest Nix the flake supports, as nix/minimum-nix.nix states it."""
    found = re.search(r'minimum = "([\d.]+)";', MINIMUM_NIX.read_text())
    assert found, MINIMUM_NIX
    return tuple(int(n) for n in found.group(1).split("."))


def _other_nix(**env: str) -> tuple[list[str], dict[str, str]]:
    """tools/other-nix.sh (the other Debian release's Nix), fetched if need be: how to
    launch its programs, and the environment."""
    for tool in ("apt-get", "apt-cache", "dpkg"):
        if shutil.which(tool) is None:
            _missing(f"{tool} (tools/other-nix.sh fetches the other Debian release's Nix)")
    prepared = subprocess.run(
        [str(OTHER_NIX), "--prepare"],
        env=dict(os.environ, **env),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if prepared.returncode != 0:
        pytest.fail(f"tools/other-nix.sh --prepare failed:\n{prepared.stderr[-4000:]}")
    return [str(OTHER_NIX), "--program"], env


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


@functools.cache
def modern_nix() -> Nix:
    """The Nix the tests run with, on /nix/store: the system's where it is new enough,
    else tools/other-nix.sh's (trixie's on Debian 12) on the system store."""
    system = shutil.which("nix")
    if system is None:
        _missing("nix")
    minimum = minimum_nix()
    version = _version_of(["nix"], {})
    if version >= minimum:
        return Nix((), _dotted(version))
    launcher, env = _other_nix(TT_OTHER_NIX_STORE="system")
    other = _version_of([*launcher, "nix"], env)
    if other < minimum:
        pytest.fail(
            f"no Nix {_dotted(minimum)} or newer: the system's is {_dotted(version)}, "
            f"tools/other-nix.sh's {_dotted(other)} (set TT_OTHER_NIX_SUITE)"
        )
    return Nix(tuple(launcher), _dotted(other), env=tuple(env.items()))


def old_nix(store: Path) -> Nix:
    """A Nix older than the flake's minimum, with a private store at `store`: the
    system's where it is one (Debian 12's 2.8), else tools/other-nix.sh's (bookworm's on
    Debian 13, or TT_OTHER_NIX_SUITE's)."""
    minimum = minimum_nix()
    if shutil.which("nix") is not None and (version := _version_of(["nix"], {})) < minimum:
        return Nix((), _dotted(version), config=f"store = {store}\n")
    launcher, env = _other_nix(TT_OTHER_NIX_STORE="private")
    version = _version_of([*launcher, "nix"], env)
    if version >= minimum:
        pytest.fail(
            f"tools/other-nix.sh's Nix is {_dotted(version)}, not older than "
            f"{_dotted(minimum)}: set TT_OTHER_NIX_SUITE=bookworm"
        )
    return Nix(tuple(launcher), _dotted(version), env=tuple(env.items()))


@pytest.fixture
def nix() -> Nix:
    return modern_nix()


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


def _host_triton() -> tuple[Path, str]:
    """This interpreter's installed Triton (the stand-in's source-built Triton is a
    patched copy of it) and its release."""
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        _missing("triton in the Python running the tests")
    package = Path(next(iter(spec.submodule_search_locations)))
    infos = sorted(package.parent.glob("triton-*.dist-info"))
    if not infos:
        _missing(f"Triton's dist-info next to {package}")
    version = infos[-1].name.removeprefix("triton-").removesuffix(".dist-info")
    return package, version


def _host_gxx() -> tuple[str, str, str]:
    """The host's g++, its full version and the directory of its own omp.h (GCC's
    private include directory: /usr/lib/gcc/<triple>/<N>/include on Debian), which the
    stand-in's gcc lays out as nixpkgs' gcc does."""
    gxx = shutil.which("g++")
    if gxx is None:
        _missing("g++")
    version = subprocess.run(
        [gxx, "-dumpfullversion"], capture_output=True, text=True, check=True
    ).stdout.strip()
    omp = subprocess.run(
        [gxx, "-print-file-name=include/omp.h"], capture_output=True, text=True, check=True
    ).stdout.strip()
    if not (os.path.isabs(omp) and os.path.isfile(omp)):
        _missing(f"g++'s own omp.h (`g++ -print-file-name=include/omp.h` says {omp!r}: libgomp)")
    return gxx, version, os.path.dirname(omp)


def _host_interpreter(venv: Path) -> Path:
    """The interpreter the stand-in's Python runs: a venv over this one that sees its
    packages (pip, hatchling, pyelftools, pytest, torch) through a directory of links,
    a plain entry of sys.path, without Triton and the shim: in an environment under
    test, Triton is the store's, the only shim is a store one, and the only .pth files
    that run are those of the store's packages (none of this environment's: its own
    shim's hook, editable installs), as with nixpkgs' interpreter, which has no
    packages of its own."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin/python"
    site = subprocess.check_output(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        text=True,
    ).strip()
    packages = venv / "host-packages"
    packages.mkdir()
    for parent in dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib")):
        for entry in Path(parent).iterdir():
            under_test = "triton" in entry.name  # Triton, the shim, their metadata
            if not under_test and not (packages / entry.name).exists():
                (packages / entry.name).symlink_to(entry)
    Path(site, "00-host-packages.pth").write_text(f"{packages}\n")
    return python


@pytest.fixture(scope="session")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the work tree (untracked files included) whose stand-in names this host's tools."""
    ptxas, libdevice, include = _cuda_files()
    triton, triton_version = _host_triton()
    gcc = shutil.which("gcc")
    if gcc is None:
        _missing("gcc")
    gxx, gcc_version, omp_include = _host_gxx()
    python_include = sysconfig.get_paths()["include"]
    if not Path(python_include, "Python.h").is_file():
        _missing(f"Python.h of {sys.executable} in {python_include} (python3-dev)")
    dest = tmp_path_factory.mktemp("flake") / "repo"
    shutil.copytree(
        REPO,
        dest,
        ignore=shutil.ignore_patterns(
            ".git", "result*", "__pycache__", ".nox", ".venv", ".*_cache"
        ),
    )
    host = {
        "python": str(_host_interpreter(dest.parent / "host-python")),
        "python_include": python_include,
        "python_version": f"{sys.version_info.major}.{sys.version_info.minor}",
        "ptxas": str(ptxas),
        "libdevice": str(libdevice),
        "cuda_include": str(include),
        "cc": gcc,
        "cxx": gxx,
        "gcc_version": gcc_version,
        "omp_include": omp_include,
        "triton": str(triton),
        "triton_version": triton_version,
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
        "CXX",
        "CPATH",
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


def test_every_nix_file_parses(nix: Nix) -> None:
    files = [str(p) for p in REPO.rglob("*.nix") if not {".git", ".venv", ".nox"} & set(p.parts)]
    assert len(files) >= 10
    nix.run("nix-instantiate", "--parse", *files)


def test_unit_tests_of_pure_functions(nix: Nix, repo: Path) -> None:
    """tests/nix/unit.nix against the stand-in's lib (`checks.<system>.unit` runs it
    against the flake's nixpkgs' lib): no failure."""
    unit = repo / "tests/nix/unit.nix"
    failures = json.loads(
        nix("eval", "--json", "--impure", "--expr", f"import {unit} {{ }}").stdout
    )
    assert failures == []


def test_unit_check_fails_naming_the_failed_test(nix: Nix, repo: Path, tmp_path: Path) -> None:
    """`checks.unit` fails, naming the test, when one of tests/nix/unit/'s tests fails
    (here lock.nix's, made to expect another URL)."""
    tree = tmp_path / "clone"
    shutil.copytree(repo, tree, symlinks=True)
    lock = tree / "tests/nix/unit/lock.nix"
    lock.write_text(lock.read_text().replace("https://github.com/", "https://example.org/"))
    top = f"import {tree}/default.nix {{ nixpkgs = {tree}/tests/nix/nixpkgs; }}"
    done = nix("build", "--no-link", "--impure", "--expr", f"({top}).checks.unit", check=False)
    assert done.returncode != 0, done.stdout
    assert "tests/nix/unit.nix:" in done.stderr and "lock.lockedTarball" in done.stderr, (
        done.stderr[-3000:]
    )


def test_an_older_nix_is_told_the_minimum(repo: Path, tmp_path: Path) -> None:
    """A Nix older than nixpkgs' minimum (Debian 12's 2.8) evaluates neither the flake nor
    default.nix: both stop with an error that names the minimum and that Nix."""
    old = old_nix(tmp_path / "store")
    minimum = _dotted(minimum_nix())
    standin = f"{repo}/tests/nix/nixpkgs"
    attempts = {
        "flake": old(
            "eval",
            f"path:{repo}#packages.x86_64-linux.default.name",
            *flake_args(repo),
            check=False,
        ),
        "default.nix": old(
            "eval",
            "--impure",
            "--expr",
            f"(import {repo}/default.nix {{ nixpkgs = {standin}; }}).default.name",
            check=False,
        ),
    }
    for what, done in attempts.items():
        assert done.returncode != 0, (what, done.stdout)
        assert (
            f"triton-toolchain needs Nix {minimum} or newer" in done.stderr
            and f"this is Nix {old.version}" in done.stderr
        ), (what, done.stderr[-3000:])


def test_flake_check_builds(nix: Nix, repo: Path) -> None:
    """`nix flake check`, builds included: the shim's tests, the manifest check and the
    formatting check (the stand-in's nixfmt, ./nixpkgs/nixfmt.py) pass."""
    nix("flake", "check", f"path:{repo}", *flake_args(repo))


def test_flake_outputs_evaluate(nix: Nix, repo: Path) -> None:
    nix("flake", "check", "--no-build", f"path:{repo}", *flake_args(repo))
    shown = nix("flake", "show", "--json", f"path:{repo}", *flake_args(repo)).stdout
    outputs = json.loads(shown)
    for system in ("x86_64-linux", "aarch64-linux"):
        assert set(outputs["packages"][system]) == {"default", "manifest", "python"}
        assert set(outputs["apps"][system]) == {"default", "vector-add", "doctor"}
        assert set(outputs["checks"][system]) == {"shim-tests", "manifest", "formatting", "unit"}
        assert "default" in outputs["devShells"][system]
    assert "default" in outputs["overlays"]


def validate_manifest(path: str) -> dict:
    """docs/manifest.md, schema 2: known keys, absolute existing paths of the right kind;
    the C and C++ compilers are stdenv.cc's `cc` and `c++`, openmp the directory of
    gcc's own omp.h, cuda-home the set's merged toolkit (nvcc, cuda.h, libcudart.so)."""
    doc = json.loads(Path(path).read_text())
    assert set(doc) <= {"schema", "generator", "strict", "driver_dirs", "components"}
    assert (
        doc["schema"] == 2 and isinstance(doc["strict"], bool) and isinstance(doc["generator"], str)
    )
    assert doc["driver_dirs"] == ["/run/opengl-driver/lib"]
    files = {"ptxas", "ptxas-blackwell", "cuobjdump", "nvdisasm", "cc", "cxx", "libdevice"}
    dirs = {"python-headers", "cuda-headers", "cuda-crt-headers", "libcuda-link"}
    dirs |= {"openmp", "cuda-home"}
    c = doc["components"]
    assert set(c) == files | dirs
    for name, component in c.items():
        assert set(component) <= {"path", "version"}, name
        p = component["path"]
        assert p.startswith("/nix/store/"), (name, p)
        real = Path(p)
        assert real.is_file() if name in files else real.is_dir(), (name, p)
        if name in files - {"libdevice"}:
            assert os.access(real, os.X_OK), (name, p)
        if name in {"ptxas", "ptxas-blackwell", "cuobjdump", "nvdisasm", "cuda-home"}:
            assert component["version"] == "12.9", name
    assert (Path(c["cuda-headers"]["path"]) / "cuda.h").is_file()
    assert (Path(c["libcuda-link"]["path"]) / "libcuda.so.1").exists()
    assert_host_compilers(c)
    home = Path(c["cuda-home"]["path"])
    assert "-cuda-merged-12.9" in c["cuda-home"]["path"]
    for inside in ("bin/nvcc", "include/cuda.h", "lib/libcudart.so"):
        assert (home / inside).exists(), inside
    return doc


def assert_host_compilers(c: dict) -> None:
    """`cc` and `cxx` are the same wrapper's `cc` and `c++`; openmp is its gcc's own
    include directory (lib/gcc/<triple>/<version>/include), holding omp.h."""
    wrapper = c["cc"]["path"].removesuffix("/bin/cc")
    assert c["cxx"]["path"] == f"{wrapper}/bin/c++", c
    assert re.fullmatch(
        r"/nix/store/[^/]+-gcc-[^/]+/lib/gcc/x86_64-unknown-linux-gnu/[^/]+/include",
        c["openmp"]["path"],
    ), c["openmp"]
    assert (Path(c["openmp"]["path"]) / "omp.h").is_file()


def test_manifest_is_built_and_valid(nix: Nix, repo: Path) -> None:
    out = build(nix, f"path:{repo}#manifest", *flake_args(repo))
    validate_manifest(out)


def wrapped_expr(repo: Path, program: str) -> str:
    return (
        f"let t = import {repo}/default.nix {{ nixpkgs = {repo}/tests/nix/nixpkgs; }}; "
        f'in t.lib.wrapWithToolchain t.pkgs {{ program = "{program}"; }}'
    )


def test_wrapper_exports_toolchain_and_user_settings_win(nix: Nix, repo: Path) -> None:
    """The wrapper exports the manifest and each component's variable, Triton's and
    torch's (CXX, CUDA_HOME), where the user has not set it; CUDA_HOME not where the
    user set CUDA_PATH, which torch reads in its place."""
    out = build(nix, "--impure", "--expr", wrapped_expr(repo, "/usr/bin/env"))
    wrapper = str(Path(out) / "bin/env")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"CC", "CXX", "CUDA_HOME", "CUDA_PATH", "TRITON_LIBCUDA_PATH"}
    }

    def seen_with(**extra: str) -> dict[str, str]:
        lines = subprocess.check_output([wrapper], env={**env, **extra}, text=True)
        return dict(line.split("=", 1) for line in lines.splitlines() if "=" in line)

    seen = seen_with(TRITON_PTXAS_PATH="/mine/ptxas")
    assert seen["TRITON_PTXAS_PATH"] == "/mine/ptxas"
    manifest = validate_manifest(seen["TRITON_TOOLCHAIN_MANIFEST"])
    c = manifest["components"]
    assert seen["TRITON_PTXAS_BLACKWELL_PATH"] == c["ptxas-blackwell"]["path"]
    assert seen["TRITON_CUOBJDUMP_PATH"] == c["cuobjdump"]["path"]
    assert seen["TRITON_NVDISASM_PATH"] == c["nvdisasm"]["path"]
    assert seen["TRITON_LIBDEVICE_PATH"] == c["libdevice"]["path"]
    assert seen["TRITON_CUDART_PATH"] == c["cuda-headers"]["path"]
    assert seen["TRITON_CUDACRT_PATH"] == c["cuda-crt-headers"]["path"]
    assert seen["CC"] == c["cc"]["path"]
    assert seen["CXX"] == c["cxx"]["path"]
    assert seen["CUDA_HOME"] == c["cuda-home"]["path"]
    assert "TRITON_LIBCUDA_PATH" not in seen
    mine = seen_with(CXX="/mine/g++", CUDA_PATH="/mine/cuda")
    assert (mine["CXX"], mine["CUDA_PATH"]) == ("/mine/g++", "/mine/cuda")
    assert "CUDA_HOME" not in mine
    assert seen_with(CUDA_HOME="/mine/cuda")["CUDA_HOME"] == "/mine/cuda"


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
    "cxx",
    "openmp",
    "cuda-home",
    "libcuda-link",
}


def test_packages_and_checks_are_built(nix: Nix, repo: Path) -> None:
    """packages.default (the shim, carrying the manifest and its .pth hook),
    packages.python, checks.manifest (the shim's check-manifest) and checks.shim-tests."""
    system = "x86_64-linux"
    out = build_all(
        nix, repo, "default", "python", f"checks.{system}.manifest", f"checks.{system}.shim-tests"
    )
    site = Path(out["default"]) / SITE
    assert (site / "triton_toolchain/__init__.py").is_file()
    pth = (site / "triton_toolchain.pth").read_text()
    assert pth == (repo / "python/src/triton_toolchain.pth").read_text()
    validate_manifest(f"{out['default']}/{SITE}/triton_toolchain/manifest.json")

    report = Path(out[f"checks.{system}.manifest"]).read_text().splitlines()
    verdicts = {line.split()[1]: line.split()[0] for line in report[:-1]}
    assert verdicts == dict.fromkeys(MANIFEST_COMPONENTS, "ok"), report
    assert report[-1] == "schema 2, strict=false, driver_dirs: /run/opengl-driver/lib"
    assert Path(out[f"checks.{system}.shim-tests"]).exists()

    wrapper = Path(out["python"]) / "bin/python3"
    assert "TRITON_TOOLCHAIN_MANIFEST" in wrapper.read_text()


def test_built_shim_checks_and_reports_the_manifest_it_carries(repo: Path, tmp_path: Path) -> None:
    """No wrapper: the Nix-built shim finds the manifest inside its package, and doctor
    gives every component from it, with the manifest as its source."""
    nix = modern_nix()
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

    # lib/pkgconfig/triton-toolchain.pc, read by the real pkg-config, says the manifest's.
    pc_dir = Path(build_all(nix, repo, "default")["default"]) / "lib/pkgconfig"
    pc_env = {**env, "PKG_CONFIG_PATH": str(pc_dir), "PKG_CONFIG_LIBDIR": str(pc_dir)}
    pkg_config = shutil.which("pkg-config")
    assert pkg_config, "pkg-config is not installed; install pkgconf (see README: Tests)"
    for variable, component in (
        ("python_include", "python-headers"),
        ("cuda_include", "cuda-headers"),
    ):
        got = subprocess.run(
            [pkg_config, f"--variable={variable}", "triton-toolchain"],
            env=pc_env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert got == json.loads(manifest.read_text())["components"][component]["path"]

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
    """packages.python, a python.withPackages environment: the shim's .pth hook (run
    from the environment's site directories) activates the shim when Triton, nixpkgs'
    as it is, is imported."""
    nix = modern_nix()
    python = Path(build_all(nix, repo, "python")["python"]) / "bin/python3"
    script = (
        "import json, triton, triton_toolchain\n"
        "from triton_toolchain.runtime import _activate\n"
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
    version = _host_triton()[1]
    assert got["triton"].startswith("/nix/store/") and f"-triton-{version}/" in got["triton"]
    assert got["shim"].startswith("/nix/store/")
    assert got["mode"] not in (None, "pending", "off"), got
    assert got["manifest"].startswith("/nix/store/") and got["manifest"].endswith(".json")


# --- what real nixpkgs asks of the flake (the stand-in is as strict) -------------------


def standin(repo: Path, config: str, *, overlay: str | None) -> str:
    """A Nix expression: the stand-in nixpkgs with `config`, and the flake's overlay
    of that name (`default`, `rebuild-triton`; taken through default.nix) or none."""
    nixpkgs = f"{repo}/tests/nix/nixpkgs"
    overlays = (
        f"[ (import {repo}/default.nix {{ nixpkgs = {nixpkgs}; }}).overlays.{overlay} ]"
        if overlay
        else "[ ]"
    )
    return f"import {nixpkgs} {{ config = {config}; overlays = {overlays}; }}"


def eval_json(nix: Nix, expr: str) -> object:
    return json.loads(nix("eval", "--json", "--impure", "--expr", expr).stdout)


def eval_fails(nix: Nix, expr: str) -> str:
    """Evaluate `expr` (strictly, to JSON), which must fail; its error."""
    proc = nix("eval", "--json", "--impure", "--expr", expr, check=False)
    assert proc.returncode != 0, f"{expr} evaluated: {proc.stdout}"
    return proc.stderr


CUDA_CONFIG = "{ cudaSupport = true; allowUnfree = true; }"


def test_stand_in_refuses_what_nixpkgs_refuses(nix: Nix, repo: Path) -> None:
    """CUDA's packages are unfree, and broken without config.cudaSupport; triton-bin is
    unfree (its bundled ptxas); CUDA 12.9 has no cuda_crt; a Triton's `.override`
    declares Triton's arguments (lib.customisation's mirrorFunctionArgs)."""
    unfree = eval_fails(
        nix, f"({standin(repo, '{ }', overlay=None)}).cudaPackages.cuda_nvcc.drvPath"
    )
    assert "unfree license (\u2018CUDA EULA\u2019)" in unfree, unfree
    broken = eval_fails(
        nix,
        f"({standin(repo, '{ allowUnfree = true; }', overlay=None)})"
        ".cudaPackages.cuda_nvcc.drvPath",
    )
    assert "marked as broken" in broken and "config.cudaSupport" in broken, broken
    wheel = eval_fails(
        nix,
        f"({standin(repo, '{ cudaSupport = true; }', overlay=None)})"
        ".python3.pkgs.triton-bin.drvPath",
    )
    assert "unfree license (\u2018unfreeRedistributable mit\u2019)" in wheel, wheel
    crt = eval_fails(
        nix, f"({standin(repo, CUDA_CONFIG, overlay=None)}).cudaPackages.cuda_crt.drvPath"
    )
    assert "no cuda_crt redistributable for CUDA 12.9" in crt, crt
    pkgs = standin(repo, CUDA_CONFIG, overlay=None)
    got = eval_json(
        nix,
        f"let pkgs = {pkgs}; in {{ "
        "nvcc = pkgs.cudaPackages.cuda_nvcc.name; "
        "nvcc13 = pkgs.cudaPackages_13_0.cuda_nvcc.name; "
        "cudart = pkgs.cudaPackages.cuda_cudart.outputs; "
        "triton = pkgs.python3.pkgs.triton.outputs; "
        "args = builtins.attrNames (pkgs.lib.functionArgs pkgs.python3.pkgs.triton.override); "
        "passesCuda = pkgs.python3.pkgs.triton ? cudaPackages; }",
    )
    assert (
        got["nvcc"] == "cuda12.9-cuda_nvcc-12.9.86"
        and got["nvcc13"] == "cuda13.0-cuda_nvcc-13.0.88"
    )
    assert got["cudart"] == ["out", "dev", "include", "lib", "static", "stubs"]
    assert got["triton"] == ["out", "dist"]
    assert {"cudaPackages", "cudaSupport", "config"} <= set(got["args"])
    assert got["passesCuda"] is False


def test_flake_package_set_takes_licences_as_nixpkgs_does(nix: Nix, repo: Path) -> None:
    """The flake's package set (nix/config.nix) accepts a package whose licence
    expression holds with free licences and CUDA's EULA (and, for Triton, the wheel's
    unfreeRedistributable), read as nixpkgs reads it (check-meta.nix's isUnfree,
    lib.licenses.isFree): `AND [ unfree mit ]` is refused, as a list holding it is;
    `OR [ unfree mit ]` and `AND [ nvidiaCudaRedist mit ]` are accepted."""
    top = f"import {repo}/default.nix {{ nixpkgs = {repo}/tests/nix/nixpkgs; }}"
    cases = {
        "unfree": ("x", "l.unfree", False),
        "andUnfreeMit": ("x", "l.AND [ l.unfree l.mit ]", False),
        "orUnfreeMit": ("x", "l.OR [ l.unfree l.mit ]", True),
        "andCudaMit": ("x", "l.AND [ l.nvidiaCudaRedist l.mit ]", True),
        "listHoldingAnd": ("x", "[ l.mit (l.AND [ l.nvidiaCuda l.unfree ]) ]", False),
        "cudaWithUnfree": ("x", "l.WITH l.nvidiaCuda l.unfree", False),
        "cudaPlus": ("x", "l.PLUS l.nvidiaCudaRedist", True),
        "tritonWheel": ("triton", "l.AND [ l.unfreeRedistributable l.mit ]", True),
        "otherWheel": ("x", "l.AND [ l.unfreeRedistributable l.mit ]", False),
    }
    bindings = " ".join(
        f'{name} = accepts "{pname}" ({licence});' for name, (pname, licence, _) in cases.items()
    )
    got = eval_json(
        nix,
        f"let pkgs = ({top}).pkgs; l = pkgs.lib.licenses; "
        "accepts = pname: license: (builtins.tryEval (pkgs.stdenv.mkDerivation { "
        'inherit pname; version = "1"; buildCommand = "touch $out"; '
        "meta.license = license; }).drvPath).success; "
        f"in {{ {bindings} }}",
    )
    assert got == {name: verdict for name, (_, _, verdict) in cases.items()}


OVERLAYS = ("default", "rebuild-triton")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_leaves_a_package_set_without_cuda_as_it_was(
    nix: Nix, repo: Path, overlay: str
) -> None:
    """Without config.cudaSupport (unfree allowed, so only `broken` stands in the way):
    triton, triton-no-cuda and CPU torch are the very derivations they are without the
    overlay, and the shim there carries a manifest without CUDA components."""
    config = "{ allowUnfree = true; }"
    drvs = (
        "ps: { triton = ps.triton.drvPath; no-cuda = ps.triton-no-cuda.drvPath; "
        "torch = ps.torch.drvPath; }"
    )
    plain = eval_json(nix, f"({drvs}) ({standin(repo, config, overlay=None)}).python3.pkgs")
    overlaid = eval_json(nix, f"({drvs}) ({standin(repo, config, overlay=overlay)}).python3.pkgs")
    assert overlaid == plain
    out = build(
        nix,
        "--impure",
        "--expr",
        f"({standin(repo, config, overlay=overlay)}).python3.pkgs.triton-toolchain.manifest",
    )
    doc = json.loads(Path(out).read_text())
    assert set(doc["components"]) == {"cc", "cxx", "openmp", "python-headers"}, doc
    assert_host_compilers(doc["components"])
    assert doc["driver_dirs"] == ["/run/opengl-driver/lib"]


# What a binary cache serves: with CUDA, every Triton, torch and a package on top of torch.
CACHED = (
    "ps: { triton = ps.triton.drvPath; triton-cuda = ps.triton-cuda.drvPath; "
    "triton-bin = ps.triton-bin.drvPath; torch = ps.torch.drvPath; "
    "torch-triton = ps.torch.triton.drvPath; torch-bin = ps.torch-bin.drvPath; "
    "torchvision = ps.torchvision.drvPath; }"
)


def test_default_overlay_changes_no_derivation_of_a_cuda_set(nix: Nix, repo: Path) -> None:
    """With CUDA, under overlays.default, triton, triton-cuda, triton-bin, torch (and its
    Triton), torch-bin and torchvision (a package on top of torch) have the very drvPath
    they have without the overlay: nothing a binary cache serves is rebuilt. Under
    overlays.rebuild-triton each of them is another derivation (what it costs)."""
    plain, default, rebuild = (
        eval_json(nix, f"({CACHED}) ({standin(repo, CUDA_CONFIG, overlay=o)}).python3.pkgs")
        for o in (None, "default", "rebuild-triton")
    )
    assert len(plain) == 7
    assert default == plain
    assert all(rebuild[name] != plain[name] for name in plain), rebuild


def test_overlays_give_every_triton_the_shim(nix: Nix, repo: Path) -> None:
    """Every Triton of a CUDA set (triton, triton-cuda, triton-bin, torch's, torch-bin's)
    has the shim among the modules python.withPackages takes (`requiredPythonModules`),
    and so has torch: under overlays.default through passthru only (no dependency, no
    change to Triton's files); under overlays.rebuild-triton as a dependency
    (propagated), with the activation appended to Triton's __init__.py."""
    apply = """ps: let
      names = drvs: map (d: d.pname or d.name) drvs;
      tritons = {
        triton = ps.triton;
        tritonCuda = ps.triton-cuda;
        tritonBin = ps.triton-bin;
        torchTriton = ps.torch.triton;
        torchBinTriton = ps.torch-bin.triton;
      };
    in {
      required = builtins.mapAttrs (_: t: names t.requiredPythonModules) tritons;
      propagated = builtins.mapAttrs (_: t: names t.propagatedBuildInputs) tritons;
      activates = builtins.mapAttrs
        (_: t: builtins.match ".*triton-activate.py.*" (t.postInstall or "") != null) tritons;
      torchClosure = names (ps.requiredPythonModules [ ps.torch ]);
      shimManifest = builtins.match
        ".*manifest.json.*site-packages/triton_toolchain/manifest.json.*"
        ps.triton-toolchain.postInstall != null;
    }"""
    got = {
        overlay: eval_json(
            nix, f"({apply}) ({standin(repo, CUDA_CONFIG, overlay=overlay)}).python3.pkgs"
        )
        for overlay in OVERLAYS
    }
    for overlay, seen in got.items():
        assert "triton-toolchain" in seen["torchClosure"], overlay
        assert seen["shimManifest"], overlay
        for triton, required in seen["required"].items():
            assert "triton-toolchain" in required, (overlay, triton)
    default, rebuild = got["default"], got["rebuild-triton"]
    for triton in default["required"]:
        assert "triton-toolchain" not in default["propagated"][triton], triton
        assert not default["activates"][triton], triton
        assert "triton-toolchain" in rebuild["propagated"][triton], triton
        assert rebuild["activates"][triton], triton


def _shim_manifest(nix: Nix, pkgs: str, triton: str) -> dict:
    """The manifest carried by the shim that `triton` (an expression over `ps` and
    `pkgs`) brings into the environments that hold it."""
    expr = (
        f"let pkgs = {pkgs}; ps = pkgs.python3.pkgs; triton = {triton}; "
        'shims = builtins.filter (d: (d.pname or null) == "triton-toolchain") '
        "triton.requiredPythonModules; "
        "in (builtins.head shims).manifest"
    )
    return json.loads(Path(build(nix, "--impure", "--expr", expr)).read_text())


def test_manifest_follows_the_cuda_packages_triton_is_built_with(nix: Nix, repo: Path) -> None:
    """torch takes `triton-cuda.override { inherit cudaPackages; }`: a CUDA 13 torch's
    Triton, and a Triton overridden to CUDA 13, carry CUDA 13's toolchain (its ptxas,
    headers, cuda_crt); the set's own Triton carries 12.9's. None of them drags the whole
    toolkit in as a CUDA home (the overlay leaves cuda-home to wrappers and mkManifest)."""
    pkgs = standin(repo, CUDA_CONFIG, overlay="default")
    default = _shim_manifest(nix, pkgs, "ps.triton")
    assert default["components"]["ptxas"]["version"] == "12.9"
    assert "-cuda12.9-cuda_nvcc-" in default["components"]["ptxas"]["path"]
    assert "cuda-home" not in default["components"]
    cases = {
        "torch": "(ps.torch.override { cudaPackages = pkgs.cudaPackages_13_0; }).triton",
        "triton": "ps.triton.override { cudaPackages = pkgs.cudaPackages_13_0; }",
    }
    for case, triton in cases.items():
        c = _shim_manifest(nix, pkgs, triton)["components"]
        assert c["ptxas"]["version"] == c["ptxas-blackwell"]["version"] == "13.0", case
        assert "-cuda13.0-cuda_nvcc-" in c["ptxas"]["path"], (case, c)
        assert "-cuda13.0-cuda_cudart-" in c["cuda-headers"]["path"], (case, c)
        assert "-cuda13.0-cuda_crt-" in c["cuda-crt-headers"]["path"], (case, c)
        assert "-cuda13.0-cuda_cudart-" in c["libcuda-link"]["path"], (case, c)
        assert "cuda-home" not in c, case


def flake_set(repo: Path, overlay: str) -> str:
    """A Nix expression: the flake's own package set (nix/nixpkgs.nix: CUDA on, CUDA's
    and the Triton wheel's licences accepted) over the stand-in, with that overlay."""
    standin = f"{repo}/tests/nix/nixpkgs"
    overlays = f"(import {repo}/default.nix {{ nixpkgs = {standin}; }}).overlays"
    return (
        f"import {repo}/nix/nixpkgs.nix {{ nixpkgs = {standin}; "
        f'system = "x86_64-linux"; overlays = [ {overlays}.{overlay} ]; }}'
    )


def test_triton_bin_is_accepted_built_and_carries_the_shim(nix: Nix, repo: Path) -> None:
    """The flake's own package set accepts triton-bin's licence (the wheel bundles NVIDIA's
    ptxas): it builds, from the wheel. Under overlays.default it is nixpkgs' as it is, and
    the shim comes with it into environments (requiredPythonModules); under
    overlays.rebuild-triton the shim is propagated and the activation appended."""
    shim_of = (
        "t: builtins.head (builtins.filter (d: (d.pname or null) == "
        '"triton-toolchain") t.requiredPythonModules)'
    )
    for overlay in OVERLAYS:
        pkgs = flake_set(repo, overlay)
        real = Path(build(nix, "--impure", "--expr", f"({pkgs}).python3.pkgs.triton-bin"))
        init = (real / SITE / "triton/__init__.py").read_text()
        assert "stand-in for the PyPI wheel" in init
        assert (real / SITE / "triton/third_party/cuda/bin/ptxas").is_symlink()
        propagated = (real / "nix-support/propagated-build-inputs").read_text().split()
        shims = [p for p in propagated if p.endswith(f"-triton-toolchain-{__version__}")]
        if overlay == "default":
            assert "_triton_toolchain_after_import()" not in init
            assert shims == [], propagated
            shims = [
                build(nix, "--impure", "--expr", f"({shim_of}) ({pkgs}).python3.pkgs.triton-bin")
            ]
        else:
            assert "_triton_toolchain_after_import()" in init
        assert len(shims) == 1, (overlay, propagated)
        manifest = json.loads(
            (Path(shims[0]) / SITE / "triton_toolchain/manifest.json").read_text()
        )
        assert manifest["components"]["ptxas"]["version"] == "12.9"


def _input_sources(nix: Nix, drv: str) -> set[str]:
    """Every source path (not derivation output) that `drv` and its dependencies copy
    into the store."""
    shown = json.loads(nix("derivation", "show", "--recursive", drv).stdout)
    return {src for d in shown.values() for src in d["inputSrcs"]}


def test_only_tracked_sources_go_into_the_store(nix: Nix, repo: Path, tmp_path: Path) -> None:
    """Through default.nix (no flake, no git), in a tree with an untracked .nox virtual
    environment and __pycache__ directories: the shim's source, the shim's tests and
    the formatting check's files are copied without them."""
    tree = tmp_path / "clone"
    shutil.copytree(repo, tree, symlinks=True)
    for junk in (
        ".nox/tests/lib/python3.11/site-packages/big.py",
        "python/src/triton_toolchain/__pycache__/_cli.cpython-311.pyc",
        "tests/__pycache__/conftest.cpython-311-pytest-9.2.0.pyc",
        "nix/__pycache__/junk.pyc",
    ):
        (tree / junk).parent.mkdir(parents=True, exist_ok=True)
        (tree / junk).write_text("untracked\n")
    top = f"import {tree}/default.nix {{ nixpkgs = {tree}/tests/nix/nixpkgs; }}"
    drvs = eval_json(
        nix,
        f"let t = {top}; in "
        "[ t.default.drvPath t.checks.shim-tests.drvPath t.checks.formatting.drvPath ]",
    )
    sources = set().union(*(_input_sources(nix, d) for d in drvs))
    copied = []
    for src in sources:
        real = Path(src)
        copied += [real] if real.is_file() else list(real.rglob("*"))
    names = {p.name for p in copied}
    assert not names & {".nox", "__pycache__", "big.py"}, sorted(names)
    assert not [p for p in copied if p.suffix == ".pyc"]
    # What should be there is.
    assert {"pyproject.toml", "_main.py", "test_manifest.py", "conftest.py", "overlay.nix"} <= names


def test_wrapper_variables_match_the_shims_catalog(nix: Nix, repo: Path) -> None:
    """nix/wrap.nix's component -> variable table (Triton's variables, torch's CXX and
    CUDA_HOME) is the shim's own, exactly (triton_toolchain.resolver._catalog.exported_variables()):
    the flake's manifest carries every exported component."""
    from triton_toolchain.resolver import _catalog

    table = eval_json(
        nix,
        f"(import {repo}/nix/lib.nix {{ lib = import {repo}/tests/nix/nixpkgs/lib; }})"
        ".tritonVariables",
    )
    assert table == _catalog.exported_variables()


def test_nixpkgs_triton_and_the_shim_agree_or_the_shim_wins(repo: Path, tmp_path: Path) -> None:
    """The flake's Triton is nixpkgs' (the stand-in's: patches 0001-0003, 3.7.1's tool
    links and CC default) with the shim. Where nixpkgs already sets something, the
    shim's choice is the same (ptxas, cuda.h's directory, the compiler) or replaces it
    (the driver the launcher loads: the host's, found at run time, instead of the stub
    and the NixOS-only rpath). Run once with TRITON_TOOLCHAIN=off (nixpkgs' Triton as
    it is) and once with the shim, on a machine whose driver is a stand-in on
    LD_LIBRARY_PATH."""
    nix = modern_nix()
    top = f"import {repo}/default.nix {{ nixpkgs = {repo}/tests/nix/nixpkgs; }}"
    python = Path(
        build(nix, "--impure", "--expr", f"(({top}).pkgs.python3.withPackages (ps: [ ps.triton ]))")
    )
    manifest = json.loads(Path(build_all(nix, repo, "manifest")["manifest"]).read_text())
    c = manifest["components"]

    import driver_standin

    version = _kernel_module_version()
    driver_dir = tmp_path / "host-driver"
    if version:
        driver_standin.driver(driver_dir, marker="nixpkgs-triton", version=version)
    else:
        driver_standin.driver(driver_dir, marker="nixpkgs-triton")
    script = tmp_path / "probe.py"
    script.write_text(
        """
import glob, json, os
import triton
from triton import knobs
from triton.backends.nvidia import driver
from triton.runtime import build
from elftools.elf.elffile import ELFFile

r = {
    "ptxas": knobs.nvidia.ptxas.path,
    "ptxas_blackwell": knobs.nvidia.ptxas_blackwell.path,
    "libcuda_dirs": driver.libcuda_dirs(),
    "include_dirs": driver.include_dirs,
    "impl": knobs.build.impl is not None,
    "cc": build._find_compiler("c"),
}
driver.CudaUtils()
(module,) = glob.glob(os.path.join(os.environ["TRITON_CACHE_DIR"], "*", "cuda_utils*.so"))
with open(module, "rb") as f:
    dynamic = ELFFile(f).get_section_by_name(".dynamic")
    r["rpath"] = [t.rpath for t in dynamic.iter_tags("DT_RPATH")]
    r["runpath"] = [t.runpath for t in dynamic.iter_tags("DT_RUNPATH")]
print(json.dumps(r))
"""
    )

    def probe(**extra: str) -> tuple[dict, list[str]]:
        run = tmp_path / f"run-{len(list(tmp_path.glob('run-*')))}"
        env = clean_env(
            run,
            TRITON_CACHE_DIR=str(run / "cache"),
            TT_RECORD=str(run / "record"),
            LD_LIBRARY_PATH=str(driver_dir),
            **extra,
        )
        run.mkdir()
        done = subprocess.run(
            [str(python / "bin/python3"), str(script)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-5000:]
        record = run / "record"
        return json.loads(done.stdout.splitlines()[-1]), record.read_text().splitlines()

    off, off_record = probe(TRITON_TOOLCHAIN="off")
    shim, shim_record = probe()

    # ptxas: nixpkgs links Triton's own to cudaPackages' (3.7.1); the shim names the same.
    assert os.path.realpath(off["ptxas"]) == c["ptxas"]["path"], off
    assert os.path.realpath(off["ptxas_blackwell"]) == c["ptxas-blackwell"]["path"], off
    assert (shim["ptxas"], shim["ptxas_blackwell"]) == (
        c["ptxas"]["path"],
        c["ptxas-blackwell"]["path"],
    )
    # cuda.h: 0003 puts cuda_cudart's include directory first; it is the manifest's.
    assert off["include_dirs"][0] == shim["include_dirs"][0] == c["cuda-headers"]["path"]
    # The compiler: 3.7.1's default is stdenv.cc's cc, the manifest's; the shim builds
    # the launcher itself (knobs.build.impl) with it.
    assert off["cc"] == c["cc"]["path"] and not off["impl"]
    assert shim["impl"]
    argvs = []
    for record in (off_record, shim_record):
        builds = [r for r in record if r.startswith("cc ") and "cuda_utils" in r]
        assert len(builds) == 1, record
        argvs.append(builds[0].split())
    off_argv, shim_argv = argvs
    stubs = c["libcuda-link"]["path"]
    # The driver: 0002 links against cuda_cudart's stub and 0001 adds the NixOS driver
    # directory as rpath; the shim links against the same stub but points the launcher
    # at the driver this machine has.
    assert off["libcuda_dirs"] == [stubs], off
    assert f"-L{stubs}" in off_argv and "-Wl,-rpath,/run/opengl-driver/lib" in off_argv, off_argv
    assert off["rpath"] + off["runpath"] == ["/run/opengl-driver/lib"], off
    assert shim["libcuda_dirs"] == [str(driver_dir)], shim
    assert f"{stubs}/libcuda.so.1" in shim_argv, shim_argv
    assert shim["rpath"] == [str(driver_dir)], shim


# --- which environment activates the shim, and by which means (overlays.default) ------

ENV_PROBE = """
import json, os
variables = {k: os.environ.get(k) for k in ("TRITON_TOOLCHAIN_MANIFEST", "TRITON_PTXAS_PATH")}
import triton
from triton.backends.nvidia import driver
report = {
    "variables": variables,
    "triton": os.path.realpath(triton.__file__),
    "libcuda_dirs": driver.libcuda_dirs(),
}
try:
    from triton_toolchain.runtime import _activate
except ImportError:
    report["mode"] = report["manifest"] = None
else:
    a = _activate.current()
    report["mode"] = a and a.mode
    report["manifest"] = a and a.toolchain and a.toolchain.manifest
print(json.dumps(report))
"""


@dataclass(frozen=True)
class Probe:
    """Runs ENV_PROBE in an environment under test, on a machine whose driver is a
    stand-in on LD_LIBRARY_PATH; what it says about Triton and the shim there."""

    tmp_path: Path
    driver_dir: Path

    def __call__(self, *argv: str) -> dict:
        run = self.tmp_path / f"run-{len(list(self.tmp_path.glob('run-*')))}"
        run.mkdir()
        script = run / "probe.py"
        script.write_text(ENV_PROBE)
        env = clean_env(
            run,
            TRITON_CACHE_DIR=str(run / "cache"),
            LD_LIBRARY_PATH=str(self.driver_dir),
            PYTHONWARNINGS="error::RuntimeWarning",
        )
        done = subprocess.run(
            [*argv, str(script)], env=env, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, done.stderr[-5000:]
        report = json.loads(done.stdout.splitlines()[-1])
        # Triton is the store's (nixpkgs' as the stand-in builds it), not this machine's.
        assert re.search(r"^/nix/store/[^/]+-triton-", report["triton"]), report
        return report

    def assert_active(self, report: dict) -> None:
        """The shim activated from a manifest in the store, and chose the host's driver
        (nixpkgs' Triton alone links against cuda_cudart's stub)."""
        assert report["mode"] not in (None, "pending", "off"), report
        assert report["manifest"].startswith("/nix/store/"), report
        assert report["libcuda_dirs"] == [str(self.driver_dir)], report

    def assert_absent(self, report: dict) -> None:
        """No shim: nixpkgs' Triton as it is (its stub, patch 0002), no variable."""
        assert report["mode"] is None, report
        assert report["libcuda_dirs"] != [str(self.driver_dir)], report
        assert report["libcuda_dirs"][0].endswith("/lib/stubs"), report
        assert report["variables"] == dict.fromkeys(report["variables"]), report


@pytest.fixture
def probe(tmp_path: Path) -> Probe:
    import driver_standin

    version = _kernel_module_version()
    driver_dir = tmp_path / "host-driver"
    if version:
        driver_standin.driver(driver_dir, marker="nix-environments", version=version)
    else:
        driver_standin.driver(driver_dir, marker="nix-environments")
    return Probe(tmp_path, driver_dir)


def _manifest_ptxas(path: str) -> dict:
    return json.loads(Path(path).read_text())["components"]["ptxas"]


def test_with_packages_torch_holds_the_shim_and_activates_it(
    nix: Nix, repo: Path, probe: Probe
) -> None:
    """`python3.withPackages (ps: [ ps.torch ])` of a CUDA set under overlays.default
    holds the shim (torch's Triton brings it through passthru), whose .pth hook, run
    from the environment's site directories, activates it on `import triton` with the
    manifest of Triton's CUDA (12.9). Without the overlay the same environment has no
    shim and Triton keeps nixpkgs' choices."""
    envs = {
        overlay: build(
            nix,
            "--impure",
            "--expr",
            f"({standin(repo, CUDA_CONFIG, overlay=overlay)}).python3.withPackages "
            "(ps: [ ps.torch ])",
        )
        for overlay in ("default", None)
    }
    with_shim = probe(f"{envs['default']}/bin/python3")
    probe.assert_active(with_shim)
    assert re.search(r"-triton-toolchain-[^/]+/", with_shim["manifest"]), with_shim
    assert _manifest_ptxas(with_shim["manifest"])["version"] == "12.9"
    probe.assert_absent(probe(f"{envs[None]}/bin/python3"))


def test_with_packages_torch_and_the_shim_take_the_shim_added(
    nix: Nix, repo: Path, probe: Probe
) -> None:
    """`python3.withPackages (ps: [ ps.torch ps.triton-toolchain ])` holds two shims (the
    one Triton brings and the one added, whose manifest has a CUDA home): buildEnv would
    fail on their different files (the stand-in is as strict: two shims of equal
    priority collide), but Triton's has a lower priority, so the one added wins."""
    pkgs = standin(repo, CUDA_CONFIG, overlay="default")
    env = build(
        nix,
        "--impure",
        "--expr",
        f"({pkgs}).python3.withPackages (ps: [ ps.torch ps.triton-toolchain ])",
    )
    report = probe(f"{env}/bin/python3")
    probe.assert_active(report)
    assert "cuda-home" in json.loads(Path(report["manifest"]).read_text())["components"]
    collide = (
        f"let pkgs = {pkgs}; ps = pkgs.python3.pkgs; shims = builtins.filter "
        '(d: (d.pname or null) == "triton-toolchain") ps.triton.requiredPythonModules; '
        "equal = (builtins.head shims).overrideAttrs "
        "(p: { meta = p.meta // { priority = 5; }; }); "
        "in pkgs.python3.withPackages (_: [ ps.triton-toolchain equal ])"
    )
    done = nix("build", "--no-link", "--impure", "--expr", collide, check=False)
    assert done.returncode != 0 and "collision between" in done.stderr, done.stderr[-3000:]


def test_pythonpath_only_shell_activates_through_the_shims_setup_hook(
    nix: Nix, repo: Path, probe: Probe
) -> None:
    """A shell that finds packages through PYTHONPATH alone (`nix-shell -p
    python3Packages.torch`; ./nixpkgs/nix-shell.sh does what stdenv's setup does there):
    torch alone brings no shim (nothing of a cached derivation names it). With
    `python3Packages.triton-toolchain` added, its setup hook exports the manifest and
    Triton's variables, and hands the shim's site-packages to nixpkgs' sitecustomize.py
    (NIX_PYTHONPATH), which runs the .pth hook: the shim activates."""
    pkgs = standin(repo, CUDA_CONFIG, overlay="default")
    torch, shim = (
        build(nix, "--impure", "--expr", f"({pkgs}).python3.pkgs.{name}")
        for name in ("torch", "triton-toolchain")
    )
    shell = ["sh", f"{repo}/tests/nix/nixpkgs/nix-shell.sh"]
    probe.assert_absent(probe(*shell, torch, "--", "python3"))
    report = probe(*shell, torch, shim, "--", "python3")
    probe.assert_active(report)
    manifest = report["variables"]["TRITON_TOOLCHAIN_MANIFEST"]
    assert manifest and report["manifest"] == manifest, report
    assert report["variables"]["TRITON_PTXAS_PATH"] == _manifest_ptxas(manifest)["path"]


def test_wrapped_program_activates_where_its_package_holds_the_shim(
    nix: Nix, repo: Path, probe: Probe
) -> None:
    """A program wrapped by wrapPythonPrograms (buildPythonApplication) makes the
    packages its derivation propagates site directories (site.addsitedir): with
    `triton-toolchain` among its dependencies the .pth hook activates the shim; with
    torch alone (a derivation that names no shim, as nixpkgs' programs are) it does
    not, and `lib.wrapWithToolchain` is the way for such a program."""
    pkgs = standin(repo, CUDA_CONFIG, overlay="default")
    runner = probe.tmp_path / "runner.py"
    runner.write_text(
        "#!/usr/bin/env python3\n"
        "import runpy, sys\nrunpy.run_path(sys.argv[1], run_name='__main__')\n"
    )

    def app(dependencies: str) -> str:
        expr = (
            f"let ps = ({pkgs}).python3.pkgs; in ps.buildPythonApplication {{ "
            f'pname = "probe-app"; version = "1"; dependencies = [ {dependencies} ]; '
            f'installPhase = "install -D -m755 ${{{runner}}} $out/bin/probe-app"; }}'
        )
        return f"{build(nix, '--impure', '--expr', expr)}/bin/probe-app"

    probe.assert_active(probe(app("ps.torch ps.triton-toolchain")))
    probe.assert_absent(probe(app("ps.torch")))


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
    nix = modern_nix()
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
    manifest = validate_manifest(manifest_file.group(1))

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
    the host's driver is the store's, and comes from the wrapper's manifest. The wrapper
    also exports Triton's own variables (for a Triton without the shim); each holds the
    manifest's value for its component, and the shim attributes such a variable to the
    manifest, not to the environment. (Needs the shim's attribution of exported
    variables equal to the active manifest's entries.)"""
    done = wrapped.run(tmp_path, "-m", "triton_toolchain", "doctor", "--json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    doc = json.loads(done.stdout)
    assert doc["manifest"] == wrapped.manifest_file
    # Schema 2's components are among them: torch.compile's and cpp_extension's.
    assert {"cxx", "openmp", "cuda-home"} <= set(wrapped.manifest["components"])
    for name, entry in wrapped.manifest["components"].items():
        got = doc["components"][name]
        # The wrapper's exports equal the manifest's entries: attributed to the manifest.
        source = f"manifest:{wrapped.manifest_file}"
        assert (got["path"], got["source"]) == (entry["path"], source), name
        assert got["path"].startswith("/nix/store/"), name
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
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton_toolchain.cli._kernel import CONSTEXPRS, SIGNATURE, add_kernel

src = ASTSource(add_kernel, signature=SIGNATURE, constexprs=CONSTEXPRS)
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
