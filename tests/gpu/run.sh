#!/usr/bin/env bash
# triton-toolchain on the reference GPU host (docs/gpu.md describes it).
#
#   tests/gpu/run.sh WHEEL_DIR
#
# WHEEL_DIR holds the triton_toolchain and pyelftools wheels (no network there). The
# script makes a venv whose site-packages also reads the host's torch venv, installs the
# shim with `pip install --no-index`, and runs tests/gpu/workload.py:
#   stock layout   full workload (vector add, matmul, torch.compile, GB/s, TFLOP/s) and the
#                  cold-cache first launch (3 runs), without and with the shim;
#   nixos layout   (unshare -m) no /sbin/ldconfig, no linker cache, the driver only in
#                  /run/opengl-driver/lib, /usr/local/nvidia and /usr/lib/libcuda* hidden,
#                  LD_LIBRARY_PATH unset: vector add without and with the shim;
#   no-ptxas       (unshare -m) Triton's backends/nvidia/bin empty, the CUDA toolkit's
#                  ptxas still in /usr/local/cuda: vector add without and with the shim.
# "without" is the host's own python (shim not installed); "off" is the shim's venv with
# TRITON_TOOLCHAIN=off. Results: $OUT/runs.jsonl, $OUT/report.md, $OUT/report.json
# (OUT defaults to ./gpu-out). Meant to finish in well under 8 minutes.
set -euo pipefail

WHEELS=${1:?usage: tests/gpu/run.sh WHEEL_DIR}
WHEELS=$(cd "$WHEELS" && pwd)
OUT=${OUT:-$PWD/gpu-out}
HOST_PYTHON=${HOST_PYTHON:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORKLOAD=$HERE/workload.py
STEP_TIMEOUT=${STEP_TIMEOUT:-150}
mkdir -p "$OUT"
: >"$OUT/runs.jsonl"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

# --- the shim's venv ------------------------------------------------------------------------
VENV=$WORK/venv
log "venv at $VENV"
"$HOST_PYTHON" -m venv --without-pip "$VENV"
HOST_SITE=$("$HOST_PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
VENV_SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# Read torch's venv (and its .pth files) first; the shim's .pth sorts after it.
printf 'import site; site.addsitedir(%s)\n' "'$HOST_SITE'" >"$VENV_SITE/00-host-venv.pth"
"$HOST_PYTHON" -m pip install --quiet --no-index --find-links "$WHEELS" \
  --target "$VENV_SITE" triton-toolchain pyelftools
SHIM_PYTHON=$VENV/bin/python
"$SHIM_PYTHON" -m triton_toolchain doctor -v >"$OUT/doctor.txt" 2>&1 || true
# The self-test: compile, build and load the launcher, launch and check (exit status last).
{ "$SHIM_PYTHON" -m triton_toolchain doctor --run; echo "exit status $?"; } >"$OUT/doctor-run.txt" 2>&1 || true
# Resolution speed against Triton's own lookups on a machine with a real driver.
"$SHIM_PYTHON" "$HERE/../../bench/resolve.py" --runs 9 >"$OUT/bench-resolve.txt" 2>&1 || true
TRITON_DIR=$("$HOST_PYTHON" -c 'import importlib.util as u; print(u.find_spec("triton").submodule_search_locations[0])')
export WORK TRITON_DIR

# run LAYOUT LABEL MODE PYTHON [VAR=VALUE...]: one workload, one JSON line into runs.jsonl.
run() {
  local layout=$1 label=$2 mode=$3 python=$4
  shift 4
  local line
  line=$(env "$@" LAYOUT="$layout" SHIM_LABEL="$label" T0="$(date +%s.%N)" \
    TRITON_CACHE_DIR="$WORK/cache-$RANDOM$RANDOM" \
    timeout "$STEP_TIMEOUT" "$python" "$WORKLOAD" "$mode" 2>>"$OUT/stderr.log" | tail -n 1) ||
    line=""
  if [ -z "$line" ]; then
    line=$(printf '{"mode": "%s", "ok": false, "layout": "%s", "shim_label": "%s", "error": "crashed or timed out (see stderr.log)"}' \
      "$mode" "$layout" "$label")
  fi
  printf '%s\n' "$line" >>"$OUT/runs.jsonl"
  log "$layout / $label / $mode: ${line:0:160}"
}

# --- stock layout ---------------------------------------------------------------------------
# Two alternating pairs: the spread between runs of one kind is the run-to-run noise.
for _ in $(seq "${FULL_PAIRS:-2}"); do
  run stock without full "$HOST_PYTHON"
  run stock shim full "$SHIM_PYTHON"
done
for _ in $(seq "${FIRST_RUNS:-3}"); do
  run stock without first "$HOST_PYTHON"
  run stock shim first "$SHIM_PYTHON"
done
run stock off quick "$SHIM_PYTHON" TRITON_TOOLCHAIN=off

# --- emulated layouts (private mount namespace; needs root) ---------------------------------
# in_layout NAME LABEL PYTHON [VAR=VALUE...]: the quick workload inside layout NAME.
in_layout() {
  local name=$1 label=$2 python=$3
  shift 3
  local setup
  # The setup is expanded by the inner bash (WORK, TRITON_DIR are exported).
  # shellcheck disable=SC2016
  case $name in
  nixos)
    setup='
      mount -t tmpfs tmpfs /run && mkdir -p /run/opengl-driver/lib
      mount --bind /usr/local/nvidia/lib64 /run/opengl-driver/lib
      mount -t tmpfs tmpfs /usr/local/nvidia
      for f in /usr/lib/libcuda* /usr/lib/x86_64-linux-gnu/libcuda*; do
        if [ -e "$f" ]; then mount --bind /dev/null "$(readlink -f "$f")"; fi
      done
      touch "$WORK/empty" && mount --bind "$WORK/empty" /etc/ld.so.cache
      mount -t tmpfs tmpfs /usr/sbin
      unset LD_LIBRARY_PATH'
    ;;
  no-ptxas)
    setup='mkdir -p "$WORK/empty-bin" && mount --bind "$WORK/empty-bin" "$TRITON_DIR/backends/nvidia/bin"'
    ;;
  esac
  local line
  line=$(timeout "$STEP_TIMEOUT" unshare -m --propagation private \
    bash -c "set -e; $setup; exec env $* LAYOUT=$name SHIM_LABEL=$label TRITON_CACHE_DIR=$WORK/cache-$name-$label \"$python\" \"$WORKLOAD\" quick" \
    2>>"$OUT/stderr.log" | tail -n 1) || line=""
  if [ -z "$line" ]; then
    line=$(printf '{"mode": "quick", "ok": false, "layout": "%s", "shim_label": "%s", "error": "crashed or timed out (see stderr.log)"}' "$name" "$label")
  fi
  printf '%s\n' "$line" >>"$OUT/runs.jsonl"
  log "$name / $label: ${line:0:160}"
}

for layout in ${LAYOUTS-nixos no-ptxas}; do
  in_layout "$layout" without "$HOST_PYTHON"
  in_layout "$layout" shim "$SHIM_PYTHON"
done

"$HOST_PYTHON" "$WORKLOAD" report "$OUT"
log "done: $OUT/report.md"
