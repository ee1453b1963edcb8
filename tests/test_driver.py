from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import conftest
import pytest
from elf_fixtures import (
    COMPAT_VERSION,
    REAL_VERSION,
    built,
    install_driver,
    install_stub,
    install_wsl,
    kernel_module,
    write_ld_cache,
)
from tool_fixtures import fake_host
from triton_toolchain.resolver._discovery._driver import (
    DRIVER_STEPS,
    STUB_REASON,
    file_version,
    kernel_module_version,
    loaded_in_process,
)
from triton_toolchain.resolver._discovery._host import Host
from triton_toolchain.resolver._discovery._search import Context
from triton_toolchain.resolver._model import Choice
from triton_toolchain.resolver._resolve import resolve_all
from triton_toolchain.runtime._errors import SettingError

SRC = str(conftest.SRC)
X64 = "usr/lib/x86_64-linux-gnu"
I386 = "usr/lib/i386-linux-gnu"
NO_DRIVER = "no NVIDIA driver is installed"


def reasons(choice: Choice) -> dict[str, str]:
    return {r.path: r.reason for r in choice.rejected}


def resolve_driver(
    host: Host,
    *,
    explicit: str | None = None,
    manifest_dirs: tuple[Path, ...] | None = None,
    manifest_link: Path | None = None,
    strict: bool = False,
) -> tuple[Choice, Choice]:
    """``(libcuda, libcuda-link)`` as the resolver's cascade gives them on ``host``, with
    ``TRITON_LIBCUDA_PATH=explicit`` and, given ``manifest_dirs``, a real manifest file
    (``manifest_file(host)``) listing them; a wrong setting raises its ``SettingError``."""
    environ = dict(host.environ)
    if explicit is not None:
        environ["TRITON_LIBCUDA_PATH"] = explicit
    if manifest_dirs is not None:
        doc = {"schema": 1, "strict": strict, "driver_dirs": [str(d) for d in manifest_dirs]}
        doc["components"] = {"libcuda-link": {"path": str(manifest_link)}} if manifest_link else {}
        manifest_file(host).write_text(json.dumps(doc))
        environ["TRITON_TOOLCHAIN_MANIFEST"] = str(manifest_file(host))
    tc = resolve_all(host=host.replace(environ=environ))
    errors = [c.error for c in (tc["libcuda"], tc["libcuda-link"]) if c.error]
    if errors:
        raise SettingError("; ".join(errors))
    return tc["libcuda"], tc["libcuda-link"]


def manifest_file(host: Host) -> Path:
    return host.root / "triton-toolchain-manifest.json"


def manifest_source(host: Host) -> str:
    return f"manifest:{manifest_file(host)}"


# --- the real layouts ------------------------------------------------------------------


def test_debian_multiarch_chooses_x86_64_and_rejects_i386(tmp_path: Path) -> None:
    x64 = install_driver(tmp_path / X64, dev_link=True)
    i386 = install_driver(tmp_path / I386, variant="i386")
    write_ld_cache(tmp_path / "etc/ld.so.cache", [i386.parent, x64.parent])
    kernel_module(tmp_path)

    libcuda, link = resolve_driver(fake_host(tmp_path), explicit=None)

    assert (libcuda.path, libcuda.version) == (str(x64), REAL_VERSION)
    assert str(libcuda.source) == "discovered:ld.so.cache"
    assert reasons(libcuda) == {str(i386): "ELF32 i386, this Python is x86-64"}
    assert link.path == str(x64.parent) and link.source == libcuda.source
    assert link.notes == ()  # libcuda.so is there for -lcuda


def test_nixos_driver_link_without_ldconfig(tmp_path: Path) -> None:
    store = tmp_path / f"nix/store/abc-nvidia-x11-{REAL_VERSION}/lib"
    install_driver(store)
    (tmp_path / "run").mkdir()
    (tmp_path / "run/opengl-driver").symlink_to(store.parent)
    kernel_module(tmp_path)

    libcuda, link = resolve_driver(fake_host(tmp_path), explicit=None)

    assert libcuda.path == str(tmp_path / "run/opengl-driver/lib/libcuda.so.1")
    assert (libcuda.version, str(libcuda.source)) == (REAL_VERSION, "discovered:nixos")
    assert not (tmp_path / "etc/ld.so.cache").exists()
    assert link.path == str(tmp_path / "run/opengl-driver/lib")
    assert "has no unversioned libcuda.so" in link.notes[0]


def test_wsl2_copies_absent_from_linker_cache(tmp_path: Path) -> None:
    wsl = install_wsl(tmp_path / "usr/lib/wsl/lib")
    other = tmp_path / "usr/lib/x86_64-linux-gnu"
    other.mkdir(parents=True)
    write_ld_cache(tmp_path / "etc/ld.so.cache", [other])
    assert not wsl.is_symlink()

    libcuda, link = resolve_driver(fake_host(tmp_path), explicit=None)

    assert libcuda.path == str(wsl)
    assert (libcuda.version, str(libcuda.source)) == (None, "discovered:wsl")
    assert link.path == str(wsl.parent) and link.notes == ()


@pytest.mark.parametrize("stubs", ["lib/stubs", "targets/x86_64-linux/lib/stubs"])
def test_conda_stub_only_and_i386_driver_in_cache(tmp_path: Path, stubs: str) -> None:
    # triton-lang/triton#1617 and #6558: the toolkit stub in the environment, a 32-bit
    # driver library in the linker cache, no 64-bit driver.
    conda = tmp_path / "home/u/miniforge3/envs/t"
    stub = install_stub(conda / stubs)
    i386 = install_driver(tmp_path / I386, variant="i386")
    write_ld_cache(tmp_path / "etc/ld.so.cache", [i386.parent])

    host = fake_host(tmp_path, {"CONDA_PREFIX": str(conda)})
    libcuda, link = resolve_driver(host, explicit=None)

    assert libcuda.path is None
    assert reasons(libcuda)[str(i386)] == "ELF32 i386, this Python is x86-64"
    assert link.path == str(stub.parent)
    assert str(link.source) == "discovered:CONDA_PREFIX"
    (note,) = link.notes
    assert NO_DRIVER in note and str(stub.parent) in note
    assert "launcher built" in note and "nothing can be launched" in note


def test_container_driver_via_ld_library_path(tmp_path: Path) -> None:
    lib64 = install_driver(tmp_path / "usr/local/nvidia/lib64")
    env = {"LD_LIBRARY_PATH": f"{lib64.parent}:{tmp_path}/usr/local/nvidia/lib"}

    libcuda, link = resolve_driver(fake_host(tmp_path, env), explicit=None)
    assert (libcuda.path, str(libcuda.source)) == (str(lib64), "discovered:LD_LIBRARY_PATH")
    assert link.path == str(lib64.parent)

    # Without the variable, the container toolkit's fixed directory still finds it.
    libcuda, _ = resolve_driver(fake_host(tmp_path), explicit=None)
    assert (libcuda.path, str(libcuda.source)) == (str(lib64), "discovered:container")


def test_gpu_host_real_driver_over_compat_and_stub(tmp_path: Path) -> None:
    real = install_driver(tmp_path / "usr/local/nvidia/lib64")
    install_driver(tmp_path / "usr/lib")
    cuda = tmp_path / "usr/local/cuda-13.0"
    compat = install_driver(cuda / "compat", COMPAT_VERSION)
    stub = install_stub(cuda / "targets/x86_64-linux/lib/stubs", so1_link=True)
    kernel_module(tmp_path)
    # A common misconfiguration: compat and stubs on LD_LIBRARY_PATH ahead of the driver.
    env = {
        "LD_LIBRARY_PATH": ":".join(
            str(d) for d in (compat.parent, stub.parent, real.parent, real.parent.parent / "lib")
        ),
        "CUDA_HOME": str(tmp_path / "usr/local/cuda"),
    }

    libcuda, link = resolve_driver(fake_host(tmp_path, env), explicit=None)

    assert (libcuda.path, libcuda.version) == (str(real), REAL_VERSION)
    assert reasons(libcuda) == {
        str(compat): f"libcuda {COMPAT_VERSION} (CUDA compat) does not match kernel module "
        f"{REAL_VERSION}",
        str(stub.parent / "libcuda.so.1"): STUB_REASON,
    }
    assert link.path == str(real.parent)
    assert kernel_module_version(fake_host(tmp_path)) == REAL_VERSION


# --- bad candidates --------------------------------------------------------------------


def test_bad_files_are_rejected_with_reasons(tmp_path: Path) -> None:
    dirs = [tmp_path / name for name in ("text", "short", "isdir", "loop", "good")]
    (dirs[0] / "libcuda.so.1").parent.mkdir()
    (dirs[0] / "libcuda.so.1").write_text("not a library\n")
    dirs[1].mkdir()
    (dirs[1] / "libcuda.so.1").write_bytes(built().read_bytes()[:2000])
    (dirs[2] / "libcuda.so.1").mkdir(parents=True)
    dirs[3].mkdir()
    (dirs[3] / "libcuda.so.1").symlink_to("libcuda.so.2")
    (dirs[3] / "libcuda.so.2").symlink_to("libcuda.so.1")
    good = install_driver(dirs[4])
    env = {"LD_LIBRARY_PATH": ":".join(str(d) for d in dirs)}

    libcuda, _ = resolve_driver(fake_host(tmp_path, env), explicit=None)

    assert libcuda.path == str(good)
    got = reasons(libcuda)
    assert got[str(dirs[0] / "libcuda.so.1")] == "not an ELF file (starts with b'not ')"
    assert got[str(dirs[1] / "libcuda.so.1")].startswith("truncated or malformed ELF file")
    assert got[str(dirs[2] / "libcuda.so.1")] == "is a directory, a regular file was expected"
    assert got[str(dirs[3] / "libcuda.so.1")] == "is a symlink loop"


def test_empty_ld_library_path_entry_never_uses_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd = tmp_path / "cwd"
    install_driver(cwd)
    monkeypatch.chdir(cwd)
    env = {"LD_LIBRARY_PATH": f":lib:{tmp_path}/nothing"}

    libcuda, link = resolve_driver(fake_host(tmp_path / "root", env), explicit=None)

    assert libcuda.path is None and link.path is None
    assert reasons(libcuda) == {
        "''": "empty entry (means the current directory), ignored",
        "lib": "relative entry, ignored",
    }
    assert not any(str(cwd) in s or s.endswith(": libcuda.so.1") for s in libcuda.searched)


def test_world_writable_directory_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    lib = install_driver(shared)
    shared.chmod(0o777)
    safe = install_driver(tmp_path / "usr/local/nvidia/lib64")

    host = fake_host(tmp_path, {"LD_LIBRARY_PATH": str(shared)})
    libcuda, _ = resolve_driver(host, explicit=None)

    assert libcuda.path == str(safe)
    assert reasons(libcuda)[str(lib)] == (
        f"not trusted: directory {shared} is writable by everyone"
    )


def test_damaged_linker_cache_is_reported_and_skipped(tmp_path: Path) -> None:
    cache = tmp_path / "etc/ld.so.cache"
    cache.parent.mkdir()
    cache.write_bytes(b"glibc-ld.so.cache1.1" + b"\xff" * 12)
    lib = install_driver(tmp_path / X64)

    libcuda, _ = resolve_driver(fake_host(tmp_path), explicit=None)

    assert (libcuda.path, str(libcuda.source)) == (str(lib), "discovered:system")
    assert "is a damaged linker cache" in reasons(libcuda)[str(cache)]


def test_ld_so_conf_includes_under_the_root(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    (etc / "ld.so.conf.d").mkdir(parents=True)
    (etc / "ld.so.conf").write_text(
        "# comment\n/usr/lib/none\ninclude /etc/ld.so.conf.d/*.conf\ninclude ld.so.conf\n"
    )
    (etc / "ld.so.conf.d/nvidia.conf").write_text("/opt/nvidia/lib64  # driver\n")
    lib = install_driver(tmp_path / "opt/nvidia/lib64")

    libcuda, _ = resolve_driver(fake_host(tmp_path), explicit=None)

    assert (libcuda.path, str(libcuda.source)) == (str(lib), "discovered:ld.so.conf")
    assert f"discovered:ld.so.conf: {tmp_path}/usr/lib/none/libcuda.so.1" in libcuda.searched


def test_version_from_file_name_and_kernel_module_files(tmp_path: Path) -> None:
    lib = install_driver(tmp_path / "a", "535.104.05")
    wsl = install_wsl(tmp_path / "wsl")
    assert file_version(lib) == "535.104.05"
    assert file_version(wsl) is None and file_version(wsl.parent / "libcuda.so.1.1") is None
    host = fake_host(tmp_path)
    assert kernel_module_version(host) is None
    sys_version = tmp_path / "sys/module/nvidia/version"
    sys_version.parent.mkdir(parents=True)
    sys_version.write_text("570.86.10\n")
    assert kernel_module_version(host) == "570.86.10"
    proc = tmp_path / "proc/driver/nvidia/version"
    proc.parent.mkdir(parents=True)
    proc.write_text(
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build\n"
    )
    assert kernel_module_version(host) == "580.95.05"


# --- TRITON_LIBCUDA_PATH -----------------------------------------------------------------


def test_explicit_directory_is_used(tmp_path: Path) -> None:
    lib = install_driver(tmp_path / "drv")
    kernel_module(tmp_path)

    libcuda, link = resolve_driver(fake_host(tmp_path), explicit=str(lib.parent))

    assert (libcuda.path, libcuda.version) == (str(lib), REAL_VERSION)
    assert str(libcuda.source) == str(link.source) == "env:TRITON_LIBCUDA_PATH"
    assert link.path == str(lib.parent)


def test_explicit_newer_compat_is_the_intended_forward_compat_driver(tmp_path: Path) -> None:
    compat = install_driver(tmp_path / "usr/local/cuda-13.0/compat", "590.10.01")
    kernel_module(tmp_path)

    libcuda, _ = resolve_driver(fake_host(tmp_path), explicit=str(compat.parent))

    assert (libcuda.path, libcuda.version) == (str(compat), "590.10.01")
    assert (
        "forward-compatibility driver 590.10.01 over kernel module 580.159.04" in libcuda.notes[0]
    )
    assert "as it was named" in libcuda.notes[0]


def test_newer_compat_on_ld_library_path_is_forward_compat_elsewhere_rejected(
    tmp_path: Path,
) -> None:
    """NVIDIA's documented forward compatibility: LD_LIBRARY_PATH=/usr/local/cuda/compat.
    Found there, a newer compat copy is chosen; found anywhere else, it is refused."""
    compat = install_driver(tmp_path / "usr/local/cuda-13.0/compat", "590.10.01")
    install_driver(tmp_path / "usr/lib/x86_64-linux-gnu")
    kernel_module(tmp_path)

    chosen, _ = resolve_driver(
        fake_host(tmp_path, {"LD_LIBRARY_PATH": str(compat.parent)}), explicit=None
    )
    assert (chosen.path, chosen.version) == (str(compat), "590.10.01")

    conf = tmp_path / "etc/ld.so.conf"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text("/usr/local/cuda-13.0/compat\n")  # ld.so.conf is read under the root
    elsewhere, _ = resolve_driver(fake_host(tmp_path), explicit=None)
    assert elsewhere.version == REAL_VERSION
    assert any(
        r.path == str(compat) and "590.10.01 (CUDA compat) does not match" in r.reason
        for r in elsewhere.rejected
    )


def _bad_explicit(tmp_path: Path, case: str) -> tuple[str, str]:
    if case == "relative":
        return "usr/lib", "is not an absolute path"
    if case == "missing":
        return str(tmp_path / "nope"), "does not exist"
    if case == "file":
        lib = install_driver(tmp_path / "d")
        return str(lib), f"is a file, not a directory; Triton takes its directory, {lib.parent}"
    if case == "no-libcuda":
        (tmp_path / "d").mkdir()
        return str(tmp_path / "d"), "holds neither libcuda.so.1 nor libcuda.so"
    if case == "i386":
        lib = install_driver(tmp_path / I386, variant="i386")
        return str(lib.parent), "ELF32 i386, this Python is x86-64"
    if case == "i386-stub":
        stub = install_stub(tmp_path / "usr/local/cuda/lib64/stubs", variant="i386")
        return str(stub.parent), "libcuda.so: ELF32 i386, this Python is x86-64"
    # an older compat copy: a different version from the kernel module
    compat = install_driver(tmp_path / "usr/local/cuda-13.0/compat", COMPAT_VERSION)
    return str(compat.parent), (
        f"libcuda {COMPAT_VERSION} (CUDA compat) does not match kernel module {REAL_VERSION}"
    )


@pytest.mark.parametrize(
    "case",
    ["relative", "missing", "file", "no-libcuda", "i386", "i386-stub", "compat"],
)
def test_invalid_explicit_setting_raises(tmp_path: Path, case: str) -> None:
    install_driver(tmp_path / "usr/local/nvidia/lib64")  # discovery would succeed: not used
    kernel_module(tmp_path)
    value, why = _bad_explicit(tmp_path, case)

    with pytest.raises(SettingError) as info:
        resolve_driver(fake_host(tmp_path), explicit=value)

    message = str(info.value)
    assert message.startswith(f"TRITON_LIBCUDA_PATH={value!r}: ")
    assert why in message
    assert "or unset TRITON_LIBCUDA_PATH" in message
    assert "to the directory holding" in message


@pytest.mark.parametrize("layout", ["lib64/stubs", "mylibs"])
def test_explicit_stub_directory_is_the_link_directory(tmp_path: Path, layout: str) -> None:
    """A toolkit stub directory in TRITON_LIBCUDA_PATH (machines that build without a
    GPU, and what ``env`` exports there) is the link directory; the run-time driver is
    looked for as if the variable were unset, and found where there is one."""
    stub = install_stub(tmp_path / "usr/local/cuda" / layout)

    libcuda, link = resolve_driver(fake_host(tmp_path), explicit=str(stub.parent))

    assert libcuda.path is None and libcuda.error is None
    assert (link.path, str(link.source)) == (str(stub.parent), "env:TRITON_LIBCUDA_PATH")
    assert NO_DRIVER in link.notes[0]
    assert "holds a CUDA toolkit link stub: it is the link directory" in libcuda.notes[0]

    driver = install_driver(tmp_path / X64)
    libcuda, link = resolve_driver(fake_host(tmp_path), explicit=str(stub.parent))
    assert (libcuda.path, str(libcuda.source)) == (str(driver), "discovered:system")
    assert link.path == str(stub.parent) and link.notes == ()


# --- manifests ---------------------------------------------------------------------------


def test_manifest_driver_dir(tmp_path: Path) -> None:
    lib = install_driver(tmp_path / "run/opengl-driver/lib")
    install_driver(tmp_path / "usr/local/nvidia/lib64")

    libcuda, link = resolve_driver(fake_host(tmp_path), explicit=None, manifest_dirs=(lib.parent,))

    source = manifest_source(fake_host(tmp_path))
    assert (libcuda.path, str(libcuda.source), libcuda.version) == (str(lib), source, REAL_VERSION)
    assert (link.path, str(link.source)) == (str(lib.parent), source)


def test_manifest_link_dir_is_taken(tmp_path: Path) -> None:
    lib = install_driver(tmp_path / "drv")
    stubs = install_stub(tmp_path / "nix/store/x-cuda_cudart-stubs/lib/stubs").parent

    libcuda, link = resolve_driver(
        fake_host(tmp_path),
        explicit=None,
        manifest_dirs=(lib.parent,),
        manifest_link=stubs,
    )

    assert libcuda.path == str(lib)
    assert (link.path, str(link.source)) == (str(stubs), manifest_source(fake_host(tmp_path)))


def test_manifest_version_mismatch_is_rejected_without_elf(tmp_path: Path) -> None:
    old = install_driver(tmp_path / "run/opengl-driver/lib", "570.86.10")
    kernel_module(tmp_path)

    libcuda, _ = resolve_driver(
        fake_host(tmp_path),
        explicit=None,
        manifest_dirs=(old.parent,),
        strict=True,
    )

    assert libcuda.path is None
    assert reasons(libcuda) == {
        str(old): f"libcuda 570.86.10 does not match kernel module {REAL_VERSION}"
    }


def test_nix_on_ubuntu_falls_back_to_the_host_driver(tmp_path: Path) -> None:
    missing = tmp_path / "run/opengl-driver/lib"
    host_lib = install_driver(tmp_path / X64)

    libcuda, link = resolve_driver(
        fake_host(tmp_path),
        explicit=None,
        manifest_dirs=(missing,),
    )

    assert (libcuda.path, str(libcuda.source)) == (str(host_lib), "discovered:system")
    assert f"{manifest_source(fake_host(tmp_path))}: {missing}/libcuda.so.1" in libcuda.searched
    assert f"driver directories ({missing}) hold no usable driver" in libcuda.notes[0]
    assert "the host's driver is looked for" in libcuda.notes[0]
    assert link.path == str(host_lib.parent)


def test_strict_manifest_does_not_discover(tmp_path: Path) -> None:
    missing = tmp_path / "run/opengl-driver/lib"
    install_driver(tmp_path / X64)
    install_stub(tmp_path / "usr/local/cuda/lib64/stubs")

    libcuda, link = resolve_driver(
        fake_host(tmp_path),
        explicit=None,
        manifest_dirs=(missing,),
        strict=True,
    )

    assert libcuda.path is None and link.path is None
    assert libcuda.searched == (f"{manifest_source(fake_host(tmp_path))}: {missing}/libcuda.so.1",)
    assert "strict" in libcuda.notes[0] and "discovery is off" in libcuda.notes[0]
    assert link.searched == ()


def test_manifest_resolution_imports_no_elftools_and_runs_nothing(tmp_path: Path) -> None:
    lib = install_driver(tmp_path / "run/opengl-driver/lib")
    kernel_module(tmp_path)
    manifest = tmp_path / "m.json"
    manifest.write_text(
        json.dumps({"schema": 1, "driver_dirs": [str(lib.parent)], "components": {}})
    )
    code = f"""
import json, subprocess, sys
from pathlib import Path
def refuse(*a, **k):
    raise AssertionError("a process was started")
subprocess.Popen = refuse
from triton_toolchain.resolver._discovery._host import Host
from triton_toolchain.resolver._resolve import resolve_all
environ = {{"TRITON_TOOLCHAIN_MANIFEST": {str(manifest)!r}}}
host = Host(root=Path({str(tmp_path)!r}), environ=environ, machine="x86_64")
tc = resolve_all(host=host)
print(json.dumps([tc["libcuda"].path, tc["libcuda-link"].path, "elftools" in sys.modules]))
"""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        env={"PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == [str(lib), str(lib.parent), False]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert "triton_toolchain.resolver._discovery._driver" in imported
    assert not {m for m in imported if m.startswith("elftools")}


# --- this process and this machine ---------------------------------------------------------


def test_library_loaded_in_this_process_comes_first(tmp_path: Path) -> None:
    lib = install_driver(tmp_path / "loaded")
    code = f"""
import ctypes, json
from pathlib import Path
from triton_toolchain.resolver._discovery._host import Host
from triton_toolchain.resolver._resolve import resolve_all
ctypes.CDLL({str(lib)!r})
libcuda = resolve_all(host=Host(environ={{}}))["libcuda"]
print(json.dumps([libcuda.path, str(libcuda.source)]))
"""
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        check=True,
    )
    path, source = json.loads(done.stdout)
    # /proc/self/maps names the real file the symlink pointed to.
    assert (Path(path).resolve(), source) == (lib.resolve(), "discovered:loaded-in-process")
    # Another root has no /proc/self/maps of this process: nothing loaded there.
    assert list(loaded_in_process(fake_host(tmp_path), Context())) == []
    assert DRIVER_STEPS[0] is loaded_in_process


def test_a_fake_roots_mapped_driver_comes_first_but_the_shims_own(tmp_path: Path) -> None:
    """``/proc/self/maps`` is read through ``Host`` (under its root): a fake root's maps
    reach ``loaded_in_process``, and the driver the shim itself loaded is not counted."""
    root = tmp_path / "root"
    lib = install_driver(root / "mapped")
    other = install_driver(root / "usr" / "lib" / "x86_64-linux-gnu")
    maps = root / "proc" / "self" / "maps"
    maps.parent.mkdir(parents=True)
    maps.write_text(
        "55d0c8a00000-55d0c8a28000 r--p 00000000 08:01 131 /usr/bin/python3.11\n"
        f"7f3a1c000000-7f3a1c200000 r-xp 00000000 08:01 4242 {lib.resolve()}\n"
        f"7f3a1c200000-7f3a1c210000 rw-p 00200000 08:01 4242 {lib.resolve()}\n"
        "7ffd5e7f0000-7ffd5e811000 rw-p 00000000 00:00 0 [stack]\n"
    )
    host = fake_host(root)
    found = [(c.path, str(c.source)) for c in loaded_in_process(host, Context())]
    assert found == [(lib.resolve(), "discovered:loaded-in-process")]
    libcuda = resolve_all(host=host)["libcuda"]
    assert (Path(libcuda.path or ""), str(libcuda.source)) == (
        lib.resolve(),
        "discovered:loaded-in-process",
    )
    shims = host.replace(loaded_by_shim=frozenset({str(lib.resolve())}))
    assert list(loaded_in_process(shims, Context())) == []
    assert Path(resolve_all(host=shims)["libcuda"].path or "").parent == other.parent


def _ldconfig_has_libcuda() -> bool:
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=True)
    return any("libcuda.so.1 " in line and "x86-64" in line for line in out.stdout.splitlines())


def test_this_machine_truthfully() -> None:
    host = Host.current()
    libcuda, link = resolve_driver(host, explicit=None)
    has_module = Path("/proc/driver/nvidia/version").exists()
    assert (kernel_module_version(host) is not None) == has_module
    if _ldconfig_has_libcuda() or has_module:
        assert libcuda.path is not None and link.path == str(Path(libcuda.path).parent)
    else:  # this development machine: no driver at all
        assert libcuda.path is None
        assert libcuda.rejected == ()  # nothing even resembling a driver
        assert "discovered:system: /usr/lib/x86_64-linux-gnu/libcuda.so.1" in libcuda.searched
        cache_line = "discovered:ld.so.cache: /etc/ld.so.cache ("
        assert any(s.startswith(cache_line) for s in libcuda.searched)
        assert link.path is None or NO_DRIVER in link.notes[0]


def test_this_machine_explicit_setting_of_a_system_dir() -> None:
    # /usr/lib/x86_64-linux-gnu exists everywhere here and holds no libcuda: an error.
    with pytest.raises(SettingError, match=r"holds neither libcuda\.so\.1 nor libcuda\.so"):
        resolve_driver(Host.current(), explicit="/usr/lib/x86_64-linux-gnu")
