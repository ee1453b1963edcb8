"""Stand-in for what nixpkgs' Triton changes in Triton's source (tests only).

Applied to a copy of the host's installed Triton by ./triton.nix, each change as the
nixpkgs patch it models does it, with the values nixpkgs substitutes (replaceVars) given
as a JSON object; an anchor that is not found fails the build, so a Triton release
that moved the code is noticed:

- 0001-_build-allow-extra-cc-flags.patch: `ccCmdExtraFlags` appended to the launcher's
  cc command in runtime/build.py (nixpkgs: `-Wl,-rpath,/run/opengl-driver/lib`);
- 0002-nvidia-driver-short-circuit-before-ldconfig.patch: `libcuda_dirs()` returns
  `libcudaStubsDir` when it exists, after TRITON_LIBCUDA_PATH and before ldconfig
  (left as the literal placeholder without CUDA, as replaceVars leaves a null);
- 0003-nvidia-cudart-a-systempath.patch (CUDA only): `cudaToolkitIncludeDirs` first in
  the NVIDIA driver's include_dirs, and `#include <cuda.h>`;
- 3.7.1's build.py change: without CC, the compiler is `ccDefault` (stdenv.cc's cc)
  rather than gcc or clang from PATH.

Usage: triton-patches.py TRITON_PACKAGE_DIR VALUES_JSON
"""

import json
import sys
from pathlib import Path


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    if old not in text:
        sys.exit(f"triton-patches.py: {rel}: anchor not found: {old!r}")
    path.write_text(text.replace(old, new, 1))


def main() -> None:
    root = Path(sys.argv[1])
    values = json.loads(sys.argv[2])
    flags = values["ccCmdExtraFlags"]
    edit(
        root,
        "runtime/build.py",
        '    cc_cmd = [cc, src, "-O3", "-shared", "-fPIC", "-Wno-psabi", "-o", so]\n',
        '    cc_cmd = [cc, src, "-O3", "-shared", "-fPIC", "-Wno-psabi", "-o", so]\n'
        f"    import shlex  # nixpkgs 0001\n    cc_cmd.extend(shlex.split({flags!r}))\n",
    )
    stubs = values["libcudaStubsDir"] or "@libcudaStubsDir@"
    edit(
        root,
        "backends/nvidia/driver.py",
        "        return [env_libcuda_path]\n\n",
        "        return [env_libcuda_path]\n\n"
        f"    if os.path.exists({stubs!r}):  # nixpkgs 0002\n        return [{stubs!r}]\n\n",
    )
    includes = values["cudaToolkitIncludeDirs"]
    if includes:
        edit(
            root,
            "backends/nvidia/driver.py",
            'include_dirs = [os.path.join(dirname, "include")]\n',
            "import shlex  # nixpkgs 0003\n"
            f'include_dirs = [*shlex.split({includes!r}), os.path.join(dirname, "include")]\n',
        )
        edit(root, "backends/nvidia/driver.c", '#include "cuda.h"\n', "#include <cuda.h>\n")
    cc = values["ccDefault"]
    edit(
        root,
        "runtime/build.py",
        '        cc = os.environ.get("CC")\n',
        f'        cc = os.environ.get("CC", {cc!r})  # nixpkgs 3.7.1: stdenv.cc\n',
    )


if __name__ == "__main__":
    main()
