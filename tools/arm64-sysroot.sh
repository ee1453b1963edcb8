#!/usr/bin/env bash
# An arm64 Debian root that runs here under qemu-user, for the tests that run the shim
# under an arm64 interpreter (tests/test_arm64.py), and the pieces of an arm64 CUDA 12.8
# toolkit from NVIDIA's aarch64 wheels.
#
#   tools/arm64-sysroot.sh            prepare what is missing (idempotent); print
#                                     root=<dir> and toolkit=<dir>
#   tools/arm64-sysroot.sh --binfmt   only make the kernel run arm64 ELF files (below)
#
# The root: Debian's arm64 python3 (3.11 in bookworm), python3-pyelftools (the shim's one
# dependency), libpython3-dev (Python.h) and libc-bin (the arm64 ldconfig), with their
# closure. apt, pointed at a private state (its own sources list, package lists, cache
# and an empty dpkg status; APT::Architecture=arm64), resolves the closure and downloads
# the .debs (`install --download-only`) without touching the system's dpkg; `dpkg -x`
# unpacks them, and /bin, /sbin, /lib move under /usr (a merged /usr, as Debian 12 and
# 13 install). About 25 MB from the Debian mirror the system uses, once.
#
# The toolkit: bin/ptxas, include/crt and nvvm/libdevice of NVIDIA's manylinux aarch64
# wheel nvidia-cuda-nvcc-cu12 12.8.93, include/cuda.h and lib/libcudart.so.12 of
# nvidia-cuda-runtime-cu12 12.8.90 (PyPI, 39 MB, once; `pip download --platform
# manylinux2014_aarch64`). The wheels carry no nvcc: no toolkit here is a CUDA home.
#
# binfmt_misc: mounted if it is not, and qemu-aarch64 (qemu-user-static) registered with
# the F flag (the interpreter is opened once, at registration, so a chroot without qemu
# in it runs arm64 programs). Needs root, as the tests' mount namespaces do.
#
# Environment:
#   TT_ARM64_DIR    where everything goes (default ~/.cache/triton-toolchain/arm64, under
#                   $XDG_CACHE_HOME if set)
#   TT_ARM64_SUITE  the Debian suite of the root (default bookworm, whatever this host runs)
set -euo pipefail

die() {
  echo "tools/arm64-sysroot.sh: $*" >&2
  exit 1
}

SUITE=${TT_ARM64_SUITE:-bookworm}
BASE=${TT_ARM64_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/triton-toolchain/arm64}
DIR=$BASE/$SUITE
ROOT=$DIR/root
PACKAGES="python3 python3-pyelftools libpython3-dev libc-bin"
STAMP="$SUITE $PACKAGES"  # a root prepared otherwise is prepared again
NVCC_WHEEL=nvidia-cuda-nvcc-cu12==12.8.93
RUNTIME_WHEEL=nvidia-cuda-runtime-cu12==12.8.90
TOOLKIT=$BASE/cuda-${NVCC_WHEEL#*==}
BINFMT=/proc/sys/fs/binfmt_misc
# A static qemu (a chroot holds none of its libraries): Debian 12's qemu-user-static;
# Debian 13's qemu-user is static, its qemu-user-static a transition to it.
QEMU=/usr/bin/qemu-aarch64-static
[ -x "$QEMU" ] || QEMU=/usr/bin/qemu-aarch64
# qemu-user-static's own registration (/usr/lib/binfmt.d/qemu-aarch64.conf): an ELF64
# little-endian executable or shared object for EM_AARCH64 (183).
MAGIC='\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
MASK='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'

binfmt() {
  [ -x "$QEMU" ] || die "no qemu-aarch64-static or qemu-aarch64: apt-get install qemu-user-static"
  if [ ! -e "$BINFMT/register" ]; then
    mount -t binfmt_misc binfmt_misc "$BINFMT" || die "cannot mount binfmt_misc on $BINFMT (root needed)"
  fi
  local entry=$BINFMT/qemu-aarch64
  if [ -e "$entry" ] && grep -q '^flags: .*F' "$entry" && grep -qx enabled "$entry"; then
    return
  fi
  # Registered without F (the interpreter would be looked for inside each chroot): again.
  if [ -e "$entry" ]; then echo -1 >"$entry"; fi
  echo ":qemu-aarch64:M::$MAGIC:$MASK:$QEMU:OCF" >"$BINFMT/register" ||
    die "cannot register qemu-aarch64 in $BINFMT"
}

# The mirror the system already uses (deb822 sources first, then one-line sources).
mirror() {
  local uri="" f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    uri=$(awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}' "$f")
    [ -n "$uri" ] && break
  done
  if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
    uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }' /etc/apt/sources.list)
  fi
  echo "${uri:-http://deb.debian.org/debian}"
}

prepare_root() {
  local apt=$DIR/apt
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
  : >"$apt/status"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) $SUITE main" >"$apt/sources.list"
  local opts=(
    -o "Dir::Etc::SourceList=$apt/sources.list"
    -o "Dir::Etc::SourceParts=-"
    -o "Dir::Etc::Preferences=/dev/null"
    -o "Dir::Etc::PreferencesParts=-"
    -o "Dir::State::Lists=$apt/lists"
    -o "Dir::Cache=$apt/cache"
    -o "Dir::State::status=$apt/status"
    -o "APT::Architecture=arm64"
    -o "APT::Architectures=arm64"
    -o "APT::Install-Recommends=false"
    -o "Debug::NoLocking=true"
  )
  apt-get "${opts[@]}" -q update >"$apt/update.log" 2>&1 || {
    cat "$apt/update.log" >&2
    die "apt-get update of $SUITE (arm64) failed"
  }
  # shellcheck disable=SC2086
  apt-get "${opts[@]}" -q -y install --download-only $PACKAGES >"$apt/download.log" 2>&1 || {
    cat "$apt/download.log" >&2
    die "apt-get install --download-only of $PACKAGES from $SUITE (arm64) failed"
  }
  rm -rf "$ROOT.new"
  mkdir -p "$ROOT.new"
  local deb d
  for deb in "$apt"/cache/archives/*.deb; do dpkg -x "$deb" "$ROOT.new"; done
  for d in bin sbin lib; do
    if [ -d "$ROOT.new/$d" ] && [ ! -L "$ROOT.new/$d" ]; then
      mkdir -p "$ROOT.new/usr/$d"
      cp -a "$ROOT.new/$d/." "$ROOT.new/usr/$d/"
      rm -rf "$ROOT.new/$d"
    fi
    ln -sfn "usr/$d" "$ROOT.new/$d"
  done
  mkdir -p "$ROOT.new"/{etc,proc,dev,tmp,run}
  chmod 1777 "$ROOT.new/tmp"
  [ -x "$ROOT.new/usr/bin/python3" ] || die "no python3 unpacked under $ROOT.new"
  echo "$STAMP" >"$ROOT.new/.triton-toolchain-stamp"
  rm -rf "$ROOT"
  mv "$ROOT.new" "$ROOT"
  rm -f "$apt"/cache/archives/*.deb
}

prepare_toolkit() {
  local tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_aarch64 \
    -d "$tmp" "$NVCC_WHEEL" "$RUNTIME_WHEEL" || die "pip download of $NVCC_WHEEL $RUNTIME_WHEEL (aarch64) failed"
  rm -rf "$TOOLKIT.new"
  python3 - "$TOOLKIT.new" "$tmp"/*.whl <<'PY'
import pathlib, shutil, sys, zipfile
# wheel path prefix -> where it goes in the toolkit
WANTED = {
    "nvidia/cuda_nvcc/bin/ptxas": "bin/ptxas",
    "nvidia/cuda_nvcc/include/crt/": "include/crt/",
    "nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc": "nvvm/libdevice/libdevice.10.bc",
    "nvidia/cuda_runtime/include/cuda.h": "include/cuda.h",
    "nvidia/cuda_runtime/lib/libcudart.so.12": "lib/libcudart.so.12",
}
out = pathlib.Path(sys.argv[1])
for name in sys.argv[2:]:
    with zipfile.ZipFile(name) as wheel:
        for info in wheel.infolist():
            for prefix, dest in WANTED.items():
                if info.filename.startswith(prefix) and not info.is_dir():
                    target = out / (dest + info.filename[len(prefix):])
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with wheel.open(info) as src, open(target, "wb") as dst:
                        shutil.copyfileobj(src, dst)
(out / "bin/ptxas").chmod(0o755)
PY
  mv "$TOOLKIT.new" "$TOOLKIT"
}

binfmt
if [ "${1:-}" = --binfmt ]; then exit 0; fi
mkdir -p "$DIR"
if [ "$(cat "$ROOT/.triton-toolchain-stamp" 2>/dev/null)" != "$STAMP" ]; then
  prepare_root
fi
[ -x "$TOOLKIT/bin/ptxas" ] || prepare_toolkit
echo "root=$ROOT"
echo "toolkit=$TOOLKIT"
