#!/usr/bin/env bash
# doctor without --arch on the GPU host: the target it judges for is the GPU's, as the
# chosen driver reports it (docs/gpu.md, "doctor reads the GPU's architecture").
#
#   tests/gpu/doctor-arch.sh WHEEL_DIR      (the triton_toolchain and pyelftools wheels)
#
# The shim is installed into a venv layered over the host's torch venv, as
# tests/gpu/fit.sh does. Results: $OUT/doctor-arch.txt.
set -euo pipefail
WHEELS=$(cd "${1:?usage: tests/gpu/doctor-arch.sh WHEEL_DIR}" && pwd)
OUT=${OUT:-$PWD/gpu-out}
HOST_PYTHON=${HOST_PYTHON:-/opt/torch/.venv/bin/python3}
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
VENV=$WORK/venv
# shellcheck source=tests/gpu/shim-venv.sh
. "$(dirname "${BASH_SOURCE[0]}")/shim-venv.sh"
shim_venv "$VENV" "$WHEELS"
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  echo "\$ triton-toolchain doctor"
  HOME=$WORK/home "$VENV/bin/python" -m triton_toolchain doctor || echo "exit $?"
  echo "\$ triton-toolchain doctor --json | arch, notes"
  HOME=$WORK/home "$VENV/bin/python" -m triton_toolchain doctor --json |
    "$VENV/bin/python" -c 'import json, sys; d = json.load(sys.stdin); print(d["arch"], d["notes"])'
} >"$OUT/doctor-arch.txt" 2>&1
cat "$OUT/doctor-arch.txt"
