#!/usr/bin/env bash
# Where importing the shim's modules goes on the GPU host (issue 23: the resolver took
# 12-16 ms there against 5-6 ms on the CPU machine): whether the installed package has
# its byte code, then `python -X importtime` of the hit path's modules and of the
# resolver, after the standard library modules `import triton` loads anyway, three
# times, each module's own time ($OUT/import-cost.txt).
#
#   tests/gpu/import-cost.sh WHEEL_DIR
set -euo pipefail
WHEELS=$(cd "${1:?usage: tests/gpu/import-cost.sh WHEEL_DIR}" && pwd)
OUT=${OUT:-$PWD/gpu-out}
HOST_PYTHON=${HOST_PYTHON:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
VENV=$WORK/venv
# shellcheck source=tests/gpu/shim-venv.sh
. "$HERE/shim-venv.sh"
shim_venv "$VENV" "$WHEELS"
unset PYTHONDONTWRITEBYTECODE
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
{
  echo "byte code files installed: $(find "$site/triton_toolchain" -name '*.pyc' | wc -l)"
  echo "python: $("$VENV/bin/python" -c 'import sys; print(sys.version.split()[0], len(sys.path), "path entries", sys.flags.dont_write_bytecode)')"
  preload=$(cd "$HERE/../../bench" && TRITON_TOOLCHAIN=off "$VENV/bin/python" -c '
import os
from activation import stdlib_loaded_by
print(", ".join(stdlib_loaded_by("triton", dict(os.environ))))')
  for i in 1 2 3 4; do
    echo "--- run $i"
    TRITON_TOOLCHAIN=off "$VENV/bin/python" -X importtime -c "import $preload
import triton_toolchain.runtime._activate
import triton_toolchain.resolver._observe, triton_toolchain.resolver._plan" 2>&1 | grep triton_toolchain
  done
  echo "byte code files after: $(find "$site/triton_toolchain" -name '*.pyc' | wc -l)"
} >"$OUT/import-cost.txt" 2>&1
