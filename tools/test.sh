#!/usr/bin/env bash
# Every test session (`nox`), as CI runs it (.ci/run calls this script).
#
#   tools/test.sh --help            say what it installs, downloads and registers; do nothing
#   tools/test.sh                   install what the tests need, then run every session
#   tools/test.sh -s lint           ... then only the sessions named (any nox arguments)
#   TT_SKIP_SYSTEM=1 tools/test.sh  leave the system packages alone (already installed)
#
# The system packages (Debian or Ubuntu, as root or through sudo): gcc and 32-bit gcc for
# the ELF fixtures, Nix, pkgconf (pkg-config, to read back the .pc files), the Debian
# keyring (tools/other-nix.sh), python3-venv, qemu-user and gcc's arm64 cross compiler
# (tests/test_arm64.py), strace (tests/test_cluster.py: who writes the activation record),
# zsh, fish and jq (tests/test_hostile_round4_env.py: `env`'s output evaluated by each
# shell and read by a second JSON reader). Then, each cached under
# ~/.cache/triton-toolchain: the other Debian release's Nix (tools/other-nix.sh
# --prepare), an arm64 Debian root with NVIDIA's arm64 CUDA pieces
# (tools/arm64-sysroot.sh, which registers qemu-aarch64 with binfmt_misc: root), the real
# ptxas releases of the fit tests (tools/fetch_ptxas.py), and nox and uv in a virtual
# environment of their own (test-tools; never into the system's Python). nox makes a venv
# per session, with Triton from PyPI (uv's cache makes later installs links). Without
# arguments, every session runs, two at a time (CI's two cores), `tests` (the longest)
# first; each session's output is printed when all have ended, then one line per session;
# the exit status is non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(gcc nix-bin pkgconf debian-archive-keyring python3-venv python3-dev
  qemu-user-static gcc-aarch64-linux-gnu libc6-dev-arm64-cross strace zsh fish jq
  libamdhip64-5 fuse3 libfuse3-dev)

if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/triton-toolchain"
  cat <<HELP
usage: tools/test.sh [NOX ARGUMENTS...]   (e.g. -s lint; \`nox -l\` lists the sessions)
       TT_SKIP_SYSTEM=1 tools/test.sh    leave the system packages alone

Runs every test session, as CI does. Nothing has been done yet; it will, in order:

1. Install Debian packages, system-wide, with apt-get (as root or through sudo;
   skipped with TT_SKIP_SYSTEM=1):
   ${PACKAGES[*]},
   and gcc-N-multilib (32-bit gcc, N the system gcc's major version); libamdhip64-5 is
   ROCm 5.2.3's HIP runtime, which the AMD tests lay out (tests/test_rocm.py).
2. Download the other Debian release's Nix (about 40 MB, tools/other-nix.sh) and an
   arm64 Debian root with NVIDIA's arm64 CUDA pieces (about 65 MB,
   tools/arm64-sysroot.sh), and register qemu-aarch64 with the kernel's binfmt_misc
   (system-wide, until reboot).
3. Download four real ptxas releases from PyPI (tools/fetch_ptxas.py).
4. Make a virtual environment with nox and uv from PyPI ($cache/test-tools).
5. Run the nox sessions, two at a time: each makes its own virtual environment (.nox/)
   and installs from PyPI one of ten Triton releases (about 1 GB each installed; uv's
   cache links later installs) or one of three CUDA builds of torch (several GB each).

Caches: $cache (steps 2-4) and uv's cache; plan for tens of GB of disk and,
on two cores, a few hours the first time.
HELP
  exit 0
fi

if [ "${TT_SKIP_SYSTEM:-0}" != 1 ]; then
  as_root=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || {
      echo "tools/test.sh: installing ${PACKAGES[*]} needs root (or sudo);" \
        "install them and run again with TT_SKIP_SYSTEM=1" >&2
      exit 1
    }
    as_root=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -q
  "${as_root[@]}" apt-get install -y -q "${PACKAGES[@]}"
  # 32-bit gcc as gcc-N-multilib, the system gcc's: the meta package gcc-multilib
  # conflicts with the arm64 cross compiler (Debian's gcc-N-aarch64-linux-gnu), and
  # libc6-dev-i386 recommends it: without --no-install-recommends apt removes the cross
  # compiler to install it.
  "${as_root[@]}" apt-get install -y -q --no-install-recommends \
    "gcc-$(gcc -dumpversion | cut -d. -f1)-multilib"
fi

tools/other-nix.sh --prepare
tools/arm64-sysroot.sh

tools_venv="${XDG_CACHE_HOME:-$HOME/.cache}/triton-toolchain/test-tools"
[ -x "$tools_venv/bin/python" ] || python3 -m venv "$tools_venv"
"$tools_venv/bin/python" -m pip install -q --upgrade nox uv
"$tools_venv/bin/python" tools/fetch_ptxas.py
nox=("$tools_venv/bin/python" -m nox)
[ $# -eq 0 ] || exec "${nox[@]}" "$@"

logs=$(mktemp -d)
"${nox[@]}" --list --json |
  "$tools_venv/bin/python" -c 'import json, sys; print("\n".join(s["session"] for s in json.load(sys.stdin)))' \
    >"$logs/sessions"
status=0
# shellcheck disable=SC2016
xargs -d '\n' -P 2 -I '{}' sh -c '"$3" -m nox -s "$1" >"$2/$(echo "$1" | tr -c "a-z0-9.\n-" _).log" 2>&1' \
  sh '{}' "$logs" "$tools_venv/bin/python" <"$logs/sessions" || status=$?
for log in "$logs"/*.log; do cat "$log"; done
grep -h "^nox > Session" "$logs"/*.log
exit "$status"
