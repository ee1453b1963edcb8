#!/usr/bin/env bash
# A change of the shim measured on the GPU host, the version before against the version
# after, each installed from its wheels into its own venv layered over the host's torch
# venv (tests/gpu/shim-venv.sh):
# - bench/before_after.py --cold --resolve: the warm hit, the first process (a manifest on
#   an empty cache, a miss) and resolve() from a manifest after `import triton`, every
#   run of both versions interleaved;
# - bench/resolve.py and bench/activation.py for each version, before first (every
#   target's verdict).
# Output: $OUT/before-after.txt. Meant to finish in under 6 minutes.
# CASES: before_after.py's case options ("--cold --resolve"; empty: the warm hit only);
# EACH=0 leaves out the per-version resolve.py and activation.py.
#
#   tests/gpu/before-after.sh BEFORE_WHEEL_DIR AFTER_WHEEL_DIR    (RUNS=15)
set -euo pipefail
BEFORE=$(cd "${1:?usage: tests/gpu/before-after.sh BEFORE_WHEEL_DIR AFTER_WHEEL_DIR}" && pwd)
AFTER=$(cd "${2:?usage: tests/gpu/before-after.sh BEFORE_WHEEL_DIR AFTER_WHEEL_DIR}" && pwd)
OUT=${OUT:-$PWD/gpu-out}
HOST_PYTHON=${HOST_PYTHON:-/opt/torch/.venv/bin/python3}
RUNS=${RUNS:-15}
CASES=${CASES---cold --resolve}
EACH=${EACH:-1}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# shellcheck source=tests/gpu/shim-venv.sh
. "$HERE/shim-venv.sh"
shim_venv "$WORK/before" "$BEFORE"
shim_venv "$WORK/after" "$AFTER"
unset PYTHONDONTWRITEBYTECODE
cd "$HERE/../../bench"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  "$WORK/after/bin/python" -c 'import sys, triton; print(sys.version.split()[0], "triton", triton.__version__)'
  echo "\$ python bench/before_after.py --runs $RUNS $CASES before=... after=..."
  python=$WORK/before/bin/python
  # shellcheck disable=SC2086  # the options are words
  "$python" before_after.py --runs "$RUNS" $CASES "before=$python" "after=$WORK/after/bin/python"
  [ "$EACH" = 0 ] && exit 0
  for args in "resolve.py --runs 9" "activation.py --runs 9"; do
    for who in before after; do
      echo "\$ python bench/$args   # $who"
      # shellcheck disable=SC2086  # the arguments are words
      "$WORK/$who/bin/python" $args || true
    done
  done
} 2>&1 | tee "$OUT/before-after.txt"
