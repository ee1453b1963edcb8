#!/usr/bin/env bash
# Every test session (`nox`), as CI runs it (.ci/run calls this script).
#
#   tools/test.sh                   install what the tests need, then run every session
#   tools/test.sh -s lint           ... then only the sessions named (any nox arguments)
#   TT_SKIP_SYSTEM=1 tools/test.sh  leave the system packages alone (already installed)
#
# The system packages (Debian or Ubuntu, as root or through sudo): gcc and 32-bit gcc
# for the ELF fixtures, Nix, pkgconf (pkg-config, to read back the .pc files), the
# Debian keyring (tools/other-nix.sh), python3-venv. Then the other Debian release's
# Nix (tools/other-nix.sh --prepare, cached under ~/.cache/triton-toolchain/other-nix),
# and nox and uv in a virtual environment of their own under
# ~/.cache/triton-toolchain/test-tools (never into the system's Python). nox makes a
# venv per session, with Triton from PyPI (uv's cache makes later installs links).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(gcc gcc-multilib nix-bin pkgconf debian-archive-keyring python3-venv)

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
fi

tools/other-nix.sh --prepare

tools_venv="${XDG_CACHE_HOME:-$HOME/.cache}/triton-toolchain/test-tools"
[ -x "$tools_venv/bin/python" ] || python3 -m venv "$tools_venv"
"$tools_venv/bin/python" -m pip install -q --upgrade nox uv
exec "$tools_venv/bin/python" -m nox "$@"
