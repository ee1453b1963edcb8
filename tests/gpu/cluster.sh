#!/usr/bin/env bash
# N workers at once on the reference GPU host (issue 23): bench/cluster.py, torchrun
# with 8 local workers on the one GPU, each importing torch and Triton and launching a
# small Triton kernel, an empty cache every run, the shim on against
# TRITON_TOOLCHAIN=off, interleaved (docs/gpu.md, "Cold start, 8 workers").
#
#   tests/gpu/cluster.sh WHEEL_DIR
#
# WHEEL_DIR holds the triton_toolchain and pyelftools wheels; the shim is installed into
# a venv layered over the host's torch venv, as tests/gpu/run.sh does. Results:
# $OUT/cluster.txt. Meant to finish in under 5 minutes.
set -euo pipefail
WHEELS=$(cd "${1:?usage: tests/gpu/cluster.sh WHEEL_DIR}" && pwd)
OUT=${OUT:-$PWD/gpu-out}
HOST_PYTHON=${HOST_PYTHON:-/opt/torch/.venv/bin/python3}
RUNS=${RUNS:-5}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
VENV=$WORK/venv
# shellcheck source=tests/gpu/shim-venv.sh
. "$HERE/shim-venv.sh"
shim_venv "$VENV" "$WHEELS"
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  nproc
  "$VENV/bin/python" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} >"$OUT/cluster.txt" 2>&1 || true
"$VENV/bin/python" "$HERE/../../bench/cluster.py" --runs "$RUNS" --workers 8 --kernel \
  2>&1 | tee -a "$OUT/cluster.txt"
