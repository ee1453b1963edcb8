#!/usr/bin/env bash
# The cold start on the reference GPU host (issue 23; docs/gpu.md, "Cold start, 8
# workers"):
# - N workers at once: bench/cluster.py, torchrun with 8 local workers on the one GPU,
#   each importing torch and Triton and launching a small Triton kernel, an empty cache
#   every run, the shim on against TRITON_TOOLCHAIN=off, interleaved ($OUT/cluster.txt);
# - unless COLD=0, the first process alone: bench/activation.py (every case, import
#   triton and import torch), bench/cold_path.py (where its time goes, for both), and
#   whether the driver's libraries are read without pyelftools as pyelftools reads them
#   ($OUT/cold.txt);
# - with BEFORE=DIR (the package's source of an earlier commit: DIR/triton_toolchain),
#   bench/activation.py and bench/fast_path.py again, that source first on PYTHONPATH,
#   then this one's, in the same venv: the change measured on this host ($OUT/cold.txt).
#
#   tests/gpu/cluster.sh WHEEL_DIR      (WORKERS=0: without the workers)
#
# WHEEL_DIR holds the triton_toolchain and pyelftools wheels; the shim is installed into
# a venv layered over the host's torch venv, as tests/gpu/run.sh does. Meant to finish
# in under 3 minutes for the workers, 4 more for the first process.
set -euo pipefail
WHEELS=$(cd "${1:?usage: tests/gpu/cluster.sh WHEEL_DIR}" && pwd)
BEFORE=${BEFORE:+$(cd "$BEFORE" && pwd)}
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
if [ "${WORKERS:-1}" = 1 ]; then
  "$VENV/bin/python" "$HERE/../../bench/cluster.py" --runs "$RUNS" --workers 8 --kernel \
    2>&1 | tee -a "$OUT/cluster.txt"
fi
cd "$HERE/../../bench"
if [ "${COLD:-1}" = 1 ]; then
  {
    nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
    "$VENV/bin/python" - <<'PY'
import glob
from triton_toolchain.resolver._discovery import _elf
for path in sorted(glob.glob("/usr/lib/*-linux-gnu/libcuda.so*")):
    with open(path, "rb") as stream:
        plain, full = _elf._plain(stream), _elf._parse(stream)
    print(path, "read plainly:", plain is not None, "as pyelftools reads it:", plain == full)
PY
  } >"$OUT/cold.txt" 2>&1 || true
  for args in "activation.py --runs 7" "cold_path.py --runs 7" "cold_path.py --runs 7 --module torch"; do
    echo "\$ python bench/$args" >>"$OUT/cold.txt"
    # shellcheck disable=SC2086  # the arguments are words
    "$VENV/bin/python" $args 2>&1 | tee -a "$OUT/cold.txt" || true
  done
fi
if [ -n "$BEFORE" ]; then
  for args in "activation.py --runs 7" "fast_path.py --runs 9"; do
    for who in before after; do
      echo "\$ python bench/$args   # $who" >>"$OUT/cold.txt"
      if [ "$who" = before ]; then path=$BEFORE; else path=; fi
      # shellcheck disable=SC2086  # the arguments are words
      PYTHONPATH=$path "$VENV/bin/python" $args 2>&1 | tee -a "$OUT/cold.txt" || true
    done
  done
fi
