#!/usr/bin/env bash
# The first process on the reference GPU host (issue 23): bench/activation.py (every
# case, import triton and import torch) and bench/cold_path.py (where the first process's
# time goes), in a venv layered over the host's torch venv, as tests/gpu/run.sh makes it;
# and whether the driver's libraries are read without pyelftools, as pyelftools reads
# them (docs/gpu.md, "Cold start, 8 workers").
#
#   tests/gpu/cold.sh WHEEL_DIR
#
# Results: $OUT/cold.txt. Meant to finish in under 5 minutes.
set -euo pipefail
WHEELS=$(cd "${1:?usage: tests/gpu/cold.sh WHEEL_DIR}" && pwd)
OUT=${OUT:-$PWD/gpu-out}
HOST_PYTHON=${HOST_PYTHON:-/opt/torch/.venv/bin/python3}
RUNS=${RUNS:-7}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
VENV=$WORK/venv
# shellcheck source=tests/gpu/shim-venv.sh
. "$HERE/shim-venv.sh"
shim_venv "$VENV" "$WHEELS"
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  nproc
  "$VENV/bin/python" - <<'PY'
import glob
from triton_toolchain._discovery import _elf
for path in sorted(glob.glob("/usr/lib/*-linux-gnu/libcuda.so*")):
    with open(path, "rb") as stream:
        plain, full = _elf._plain(stream), _elf._parse(stream)
    print(path, "read plainly:", plain is not None, "as pyelftools reads it:", plain == full)
PY
} >"$OUT/cold.txt" 2>&1 || true
cd "$HERE/../../bench"
for args in "activation.py --runs $RUNS" "cold_path.py --runs $RUNS" \
  "cold_path.py --runs $RUNS --module torch"; do
  echo "\$ python bench/$args" >>"$OUT/cold.txt"
  # shellcheck disable=SC2086  # the arguments are words
  "$VENV/bin/python" $args 2>&1 | tee -a "$OUT/cold.txt" || true
done
