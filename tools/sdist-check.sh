#!/usr/bin/env bash
# The packager's check: the unpacked source archive's tests, run as an unprivileged user
# (made here with useradd) with no network (a private network namespace), in a virtual
# environment of Debian's python3.11 holding the package, Triton, pytest, hypothesis and
# pyelftools (installed first, with the network). Run as root from the repository:
#   PYTHON=.venv/bin/python tools/sdist-check.sh [WORK_DIR]   (PYTHON: one with build and
#   hatchling; WORK_DIR: /var/tmp/tt-sdist-check)
set -euo pipefail
cd "$(dirname "$0")/.."
top=${1:-/var/tmp/tt-sdist-check}
user=ttsdist
rm -rf "$top" && mkdir -p "$top/dist"
"${PYTHON:-python3}" -m build --no-isolation --sdist -o "$top/dist" python >/dev/null
tar -xzf "$top"/dist/*.tar.gz -C "$top"
src=$(ls -d "$top"/triton_toolchain-*/)
id "$user" >/dev/null 2>&1 || useradd -m -s /bin/sh "$user"
uv venv -q -p /usr/bin/python3.11 "$top/venv"
# Copies, not uv's links into its cache: the venv stays root's, readable by the user.
VIRTUAL_ENV="$top/venv" uv pip install -q --link-mode=copy "$src" triton==3.9.0 pytest \
  hypothesis pyelftools
chown -R "$user:" "$src"
cd "$src"
exec unshare -n setpriv --reuid="$user" --regid="$user" --init-groups \
  env -i PATH="$top/venv/bin:/usr/bin:/bin" HOME="/home/$user" LANG=C.UTF-8 \
  "$top/venv/bin/python" -m pytest -q -p no:cacheprovider -m "not root and not network"
