"""The flake, default.nix and nix/ evaluated and built against the stand-in nixpkgs.

Runs with the system `nix` (2.8 on Debian 12) and, when TT_MODERN_NIX=1, also with
shared/tools/modern-nix.sh (Nix 2.26, private store in /tmp/n226). Missing nix or
CUDA fails under CI=true and skips (with the reason) elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODERN = REPO.parent / "shared" / "tools" / "modern-nix.sh"
if not MODERN.exists():
    MODERN = Path("/work/shared/tools/modern-nix.sh")
CUDA = Path(os.environ.get("TT_CUDA", "/usr/local/cuda-13.0"))
# Builds run as the calling user (root here): the stand-in calls host tools, e.g. a
# Python under /root that build users cannot read.
CONFIG = "experimental-features = nix-command flakes\nsubstituters =\nsandbox = false\nbuild-users-group =\n"


def _missing(what: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is required in CI")
    pytest.skip(f"{what} not available")


class Nix:
    """One Nix installation: how to call it, and where its store lives on disk."""

    def __init__(self, name: str, argv: list[str], extra: list[str], real_root: str) -> None:
        self.name, self.argv, self.extra, self.real_root = name, argv, extra, real_root

    def __call__(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, NIX_CONFIG=CONFIG)
        cmd = [*self.argv, *args[:1], *self.extra, *args[1:]]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
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


@pytest.fixture(params=_nixes())
def nix(request: pytest.FixtureRequest) -> Nix:
    if request.param == "system":
        if shutil.which("nix") is None:
            _missing("nix")
        return Nix("system", ["nix"], [], "")
    if not MODERN.exists():
        _missing(str(MODERN))
    sandbox = ["--option", "build-hook", "", "--option", "sandbox-paths", "/bin /usr /lib /lib64 /etc /tmp /root"]
    return Nix("modern", [str(MODERN)], sandbox, "/tmp/n226/store")


@pytest.fixture(scope="session")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the work tree (untracked files included) whose stand-in names this host's tools."""
    if not (CUDA / "bin" / "ptxas").exists():
        _missing(f"a CUDA toolkit with ptxas at {CUDA} (set TT_CUDA)")
    dest = tmp_path_factory.mktemp("flake") / "repo"
    shutil.copytree(REPO, dest, ignore=shutil.ignore_patterns(".git", "result*", "__pycache__", ".nox"))
    host = {
        "python": sys.executable,
        "python_include": sysconfig.get_paths()["include"],
        "python_version": f"{sys.version_info.major}.{sys.version_info.minor}",
        "cuda": str(CUDA),
        "cc": shutil.which("gcc") or "/usr/bin/gcc",
    }
    (dest / "tests/nix/nixpkgs/host.json").write_text(json.dumps(host))
    return dest


def flake_args(repo: Path) -> list[str]:
    return ["--no-write-lock-file", "--override-input", "nixpkgs", f"path:{repo}/tests/nix/nixpkgs"]


def build(nix: Nix, *args: str) -> str:
    out = nix("build", "--no-link", "--json", *args).stdout
    return json.loads(out)[0]["outputs"]["out"]


def test_every_nix_file_parses() -> None:
    if shutil.which("nix-instantiate") is None:
        _missing("nix-instantiate")
    files = [p for p in REPO.rglob("*.nix") if ".git" not in p.parts]
    assert len(files) >= 10
    for f in files:
        proc = subprocess.run(["nix-instantiate", "--parse", str(f)], capture_output=True, text=True)
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
    assert doc["schema"] == 1 and isinstance(doc["strict"], bool) and isinstance(doc["generator"], str)
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


def wrapped(repo: Path, program: str) -> str:
    return (
        f"let t = import {repo}/default.nix {{ nixpkgs = {repo}/tests/nix/nixpkgs; }}; "
        f'in t.lib.wrapWithToolchain t.pkgs {{ program = "{program}"; }}'
    )


def test_wrapper_exports_toolchain_and_user_settings_win(nix: Nix, repo: Path) -> None:
    out = build(nix, "--impure", "--expr", wrapped(repo, "/usr/bin/env"))
    wrapper = str(nix.real(out) / "bin/env")
    env = dict(os.environ, TRITON_PTXAS_PATH="/mine/ptxas")
    env.pop("CC", None)
    env.pop("TRITON_LIBCUDA_PATH", None)
    seen = dict(line.split("=", 1) for line in subprocess.check_output([wrapper], env=env, text=True).splitlines() if "=" in line)
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
      shimManifest = builtins.match ".*manifest.json.*site-packages/triton_toolchain/manifest.json.*" shim.postInstall != null;
    }"""
    attr = f"path:{repo}#legacyPackages.x86_64-linux.python3.pkgs"
    got = json.loads(nix("eval", "--json", attr, *flake_args(repo), "--apply", apply).stdout)
    for key in ("triton", "tritonCuda", "tritonBin", "torchTriton", "torchClosure"):
        assert "triton-toolchain" in got[key], key
    assert got["activates"] and got["shimManifest"]


def test_triton_compiles_with_the_manifest_ptxas(repo: Path, tmp_path: Path) -> None:
    """A real Triton (this interpreter's) under the wrapper assembles with the manifest's ptxas."""
    try:
        import triton  # noqa: F401
    except ImportError:
        _missing("triton in the Python running the tests")
    nix = Nix("system", ["nix"], [], "")
    if shutil.which("nix") is None:
        _missing("nix")
    python = str(Path(build(nix, "--impure", "--expr", wrapped(repo, sys.executable))) / "bin" / Path(sys.executable).name)
    record = tmp_path / "ptxas.log"
    script = (
        "import triton, triton.language as tl\n"
        "from triton.backends.compiler import GPUTarget\n"
        "from triton.compiler import ASTSource\n"
        "@triton.jit\n"
        "def k(x, y, n, B: tl.constexpr):\n"
        "    o = tl.program_id(0) * B + tl.arange(0, B)\n"
        "    tl.store(y + o, tl.load(x + o, mask=o < n) * 2, mask=o < n)\n"
        "src = ASTSource(k, signature={'x': '*fp32', 'y': '*fp32', 'n': 'i32', 'B': 'constexpr'}, constexprs={'B': 128})\n"
        "print(len(triton.compile(src, target=GPUTarget('cuda', 90, 32)).asm['cubin']))\n"
    )
    env = dict(os.environ, TT_RECORD=str(record), TRITON_CACHE_DIR=str(tmp_path / "cache"), HOME=str(tmp_path))
    for var in ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_TOOLCHAIN_MANIFEST"):
        env.pop(var, None)
    (tmp_path / "aot.py").write_text(script)
    out = subprocess.run([python, str(tmp_path / "aot.py")], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    assert int(out.stdout.split()[-1]) > 0
    runs = record.read_text().splitlines()
    assert any("--version" in r for r in runs)
    assert any("sm_90" in r and "--version" not in r for r in runs), runs
