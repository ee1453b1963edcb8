#!/usr/bin/env bash
# triton-toolchain on the reference GPU host (docs/gpu.md describes it), with torch in
# the process.
#
#   tests/gpu/run.sh WHEEL_DIR
#
# WHEEL_DIR holds the triton_toolchain and pyelftools wheels (no network there). The
# script makes a venv whose site-packages also reads the host's torch venv, installs the
# shim with `pip install --no-index`, and runs tests/gpu/workload.py:
#   stock layout   full workload (vector add, matmul, torch.compile on GPU and CPU, GB/s,
#                  TFLOP/s) and the cold-cache first launch, without and with the shim,
#                  alternating; torch-first (a TransformerEncoder, torch.compile forward
#                  and backward, Triton imported by Inductor) and its step time;
#   emulated layouts (unshare -m, run side by side: they check outcomes, not speed):
#     nixos      no /sbin/ldconfig, no linker cache, the driver only in
#                /run/opengl-driver/lib, LD_LIBRARY_PATH unset
#     wsl        the same, the driver only in /usr/lib/wsl/lib
#     planted    LD_LIBRARY_PATH starts with an empty entry; the current directory holds
#                a libcuda.so.1 (the CUDA toolkit's link stub)
#     compat     the CUDA toolkit's older forward-compatibility libcuda first on
#                LD_LIBRARY_PATH
#     no-ptxas   Triton's backends/nvidia/bin empty, the toolkit's ptxas still there
#     no-driver  no driver anywhere
#     no-python-h  the interpreter's Python.h hidden
#     cpu-versioned  torch.compile on the CPU with only g++-<N> on PATH
# "without" is the host's own python (shim not installed); "off" is the shim's venv with
# TRITON_TOOLCHAIN=off. Results: $OUT/runs.jsonl, $OUT/report.md, $OUT/report.json
# (OUT defaults to ./gpu-out), $OUT/doctor*.txt. Meant to finish in under 8 minutes.
set -euo pipefail

WHEELS=${1:?usage: tests/gpu/run.sh WHEEL_DIR}
WHEELS=$(cd "$WHEELS" && pwd)
OUT=${OUT:-$PWD/gpu-out}
HOST_PYTHON=${HOST_PYTHON:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORKLOAD=$HERE/workload.py
STEP_TIMEOUT=${STEP_TIMEOUT:-240}
mkdir -p "$OUT"
: >"$OUT/runs.jsonl"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

# --- the shim's venv ------------------------------------------------------------------------
VENV=$WORK/venv
# shellcheck source=tests/gpu/shim-venv.sh
. "$(dirname "${BASH_SOURCE[0]}")/shim-venv.sh"
shim_venv "$VENV" "$WHEELS"
SHIM_PYTHON=$VENV/bin/python
"$SHIM_PYTHON" -m triton_toolchain doctor >"$OUT/doctor.txt" 2>&1 || true
"$SHIM_PYTHON" -m triton_toolchain doctor -v >"$OUT/doctor-v.txt" 2>&1 || true
{ "$SHIM_PYTHON" -m triton_toolchain doctor --run; echo "exit status $?"; } >"$OUT/doctor-run.txt" 2>&1 || true
TRITON_DIR=$("$HOST_PYTHON" -c 'import importlib.util as u; print(u.find_spec("triton").submodule_search_locations[0])')
PY_INCLUDE=$("$HOST_PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
GXX=$(readlink -f /usr/bin/g++)
STUB=$(ls /usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so 2>/dev/null || true)
export WORK TRITON_DIR PY_INCLUDE GXX STUB

# run LAYOUT LABEL MODE PYTHON [VAR=VALUE...]: one workload, one JSON line into runs.jsonl.
run() {
  local layout=$1 label=$2 mode=$3 python=$4
  shift 4
  local line
  line=$(env "$@" LAYOUT="$layout" SHIM_LABEL="$label" T0="$(date +%s.%N)" \
    HOME="$WORK/home-$label" TRITON_CACHE_DIR="$WORK/cache-$RANDOM$RANDOM" \
    TORCHINDUCTOR_CACHE_DIR="$WORK/inductor-$RANDOM$RANDOM" \
    timeout "$STEP_TIMEOUT" "$python" "$WORKLOAD" "$mode" 2>>"$OUT/stderr.log" | tail -n 1) ||
    line=""
  if [ -z "$line" ]; then
    line=$(printf '{"mode": "%s", "ok": false, "layout": "%s", "shim_label": "%s", "error": "crashed or timed out (see stderr.log)"}' \
      "$mode" "$layout" "$label")
  fi
  printf '%s\n' "$line" >>"$OUT/runs.jsonl"
  log "$layout / $label / $mode: ${line:0:200}"
}

# --- emulated layouts (private mount namespace; needs root) ---------------------------------
# The setup of each layout, expanded by the inner bash (WORK & co. are exported).
# shellcheck disable=SC2016
hide_driver='
  mount -t tmpfs tmpfs /usr/local/nvidia
  for f in /usr/lib/libcuda* /lib/libcuda* /usr/lib/x86_64-linux-gnu/libcuda*; do
    if [ -e "$f" ]; then mount --bind /dev/null "$(readlink -f "$f")"; fi
  done
  touch "$WORK/empty" && mount --bind "$WORK/empty" /etc/ld.so.cache
  mount -t tmpfs tmpfs /usr/sbin
  unset LD_LIBRARY_PATH'
setup_of() {
  case $1 in
  nixos) echo 'mount -t tmpfs tmpfs /run && mkdir -p /run/opengl-driver/lib
      mount --bind /usr/local/nvidia/lib64 /run/opengl-driver/lib'"$hide_driver" ;;
  wsl) echo 'mkdir -p /usr/lib/wsl/lib && mount --bind /usr/local/nvidia/lib64 /usr/lib/wsl/lib'"$hide_driver" ;;
  no-driver) echo "$hide_driver" ;;
  planted) echo 'mkdir -p "$WORK/planted-$LABEL" && cp "$STUB" "$WORK/planted-$LABEL/libcuda.so.1"
      cd "$WORK/planted-$LABEL" && export LD_LIBRARY_PATH=":$LD_LIBRARY_PATH"' ;;
  compat) echo 'export LD_LIBRARY_PATH="/usr/local/cuda-13.0/compat:$LD_LIBRARY_PATH"' ;;
  no-ptxas) echo 'mkdir -p "$WORK/empty-bin" && mount --bind "$WORK/empty-bin" "$TRITON_DIR/backends/nvidia/bin"' ;;
  no-python-h) echo 'mount -t tmpfs tmpfs "$PY_INCLUDE"' ;;
  cpu-versioned) echo 'mkdir -p "$WORK/tools-$LABEL" && cd "$WORK/tools-$LABEL"
      for t in as ld openssl; do ln -sf "$(command -v $t)" .; done
      ln -sf "$GXX" "g++-$(basename "$GXX" | sed "s/.*-//")" && export PATH="$PWD"' ;;
  esac
}
mode_of() {
  case $1 in
  cpu-versioned) echo cpu ;;
  no-python-h | no-ptxas) echo quick ;;
  *) echo torch-first ;;
  esac
}
in_layout() {
  local name=$1 label=$2 python=$3
  shift 3
  local mode line
  mode=$(mode_of "$name")
  line=$(LABEL=$label timeout "$STEP_TIMEOUT" unshare -m --propagation private \
    bash -c "set -e; $(setup_of "$name"); exec /usr/bin/env $* LAYOUT=$name SHIM_LABEL=$label HOME=$WORK/home-$name-$label TRITON_CACHE_DIR=$WORK/cache-$name-$label TORCHINDUCTOR_CACHE_DIR=$WORK/inductor-$name-$label \"$python\" \"$WORKLOAD\" $mode" \
    2>>"$OUT/stderr-$name-$label.log" | tail -n 1) || line=""
  if [ -z "$line" ]; then
    line=$(printf '{"mode": "%s", "ok": false, "layout": "%s", "shim_label": "%s", "error": "crashed or timed out (see stderr-%s-%s.log)"}' "$mode" "$name" "$label" "$name" "$label")
  fi
  printf '%s\n' "$line" >>"$OUT/runs.jsonl"
  log "$name / $label: ${line:0:200}"
}
export -f in_layout setup_of mode_of log
export hide_driver OUT STEP_TIMEOUT WORKLOAD HOST_PYTHON SHIM_PYTHON

# Outcomes first, side by side (they do not measure speed).
for layout in ${LAYOUTS-nixos wsl planted compat no-ptxas no-driver no-python-h cpu-versioned}; do
  printf '%s without %s\n%s shim %s\n' "$layout" "$HOST_PYTHON" "$layout" "$SHIM_PYTHON"
done | xargs -r -P "${PARALLEL:-8}" -L 1 bash -c 'in_layout "$0" "$1" "$2"'

# --- stock layout, alone on the machine: outcomes and speed (STOCK=0: none) -----------------
if [ "${STOCK:-1}" = 1 ]; then
  run stock without torch-first "$HOST_PYTHON"
  run stock shim torch-first "$SHIM_PYTHON"
fi
for _ in $(seq "${FULL_PAIRS:-2}"); do
  run stock without full "$HOST_PYTHON"
  run stock shim full "$SHIM_PYTHON"
done
for _ in $(seq "${FIRST_RUNS:-3}"); do
  run stock without first "$HOST_PYTHON"
  run stock shim first "$SHIM_PYTHON"
done
[ "${STOCK:-1}" = 1 ] && run stock off quick "$SHIM_PYTHON" TRITON_TOOLCHAIN=off

"$HOST_PYTHON" "$WORKLOAD" report "$OUT" || true
if [ -n "${BENCH:-}" ]; then
  # What the shim adds to `import triton` and `import torch` on a machine with a driver
  # (which activation loads), against TRITON_TOOLCHAIN=off in the same run.
  # With FAST_PATH=1, also where that time goes (bench/fast_path.py), for both imports.
  (cd "$HERE/../.." && timeout "${BENCH_TIMEOUT:-300}" "$SHIM_PYTHON" bench/activation.py \
    --runs "${BENCH_RUNS:-9}" >"$OUT/bench-activation.txt" 2>&1) || true
  cat "$OUT/bench-activation.txt" >&2
  if [ -n "${FAST_PATH:-}" ]; then
    for module in triton torch; do
      (cd "$HERE/../.." && timeout "${BENCH_TIMEOUT:-300}" "$SHIM_PYTHON" bench/fast_path.py \
        --runs "${BENCH_RUNS:-9}" --module "$module" >>"$OUT/bench-fast-path.txt" 2>&1) || true
    done
    cat "$OUT/bench-fast-path.txt" >&2
  fi
fi
# A cold start with torch, 8 workers on the one GPU (issue 23): $OUT/cluster.txt.
if [ "${CLUSTER:-1}" = 1 ]; then
  log "cluster: torchrun, 8 workers, empty cache, on and off"
  OUT=$OUT COLD=0 bash "$HERE/cluster.sh" "$WHEELS" >&2 || log "cluster: failed"
fi
log "done: $OUT/report.md"
