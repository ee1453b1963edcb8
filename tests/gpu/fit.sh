#!/usr/bin/env bash
# Fit on the reference GPU host (issue 21): the driver's CUDA version and the GPU's
# architecture read, every ptxas the machine has judged by the shim, and a kernel
# compiled and launched with each (docs/gpu.md, "Fit").
#
#   tests/gpu/fit.sh WHEEL_DIR [EXTRA_PTXAS...]
#
# WHEEL_DIR holds the triton_toolchain and pyelftools wheels; EXTRA_PTXAS are ptxas
# binaries carried in (a 13.5 from PyPI). The shim is installed into a venv layered over
# the host's torch venv, as tests/gpu/run.sh does; tests/gpu/fit.py does the rest.
# Results: $OUT/fit.json, $OUT/fit.txt. Meant to finish in under 4 minutes.
set -euo pipefail
WHEELS=$(cd "${1:?usage: tests/gpu/fit.sh WHEEL_DIR [EXTRA_PTXAS...]}" && pwd)
shift
OUT=${OUT:-$PWD/gpu-out}
HOST_PYTHON=${HOST_PYTHON:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
VENV=$WORK/venv
# shellcheck source=tests/gpu/shim-venv.sh
. "$(dirname "${BASH_SOURCE[0]}")/shim-venv.sh"
shim_venv "$VENV" "$WHEELS"
EXTRA=()
for p in "$@"; do EXTRA+=("$(cd "$(dirname "$p")" && pwd)/$(basename "$p")"); done
chmod +x "${EXTRA[@]}" 2>/dev/null || true
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv >"$OUT/fit.txt" 2>&1 || true
HOME=$WORK/home "$VENV/bin/python" -m triton_toolchain doctor --arch 90 -v >>"$OUT/fit.txt" 2>&1 || true
HOME=$WORK/home "$VENV/bin/python" "$HERE/fit.py" "$OUT/fit.json" "${EXTRA[@]}" 2>&1 | tee -a "$OUT/fit.txt"
