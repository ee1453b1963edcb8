#!/usr/bin/env bash
# On the GPU host, with its own torch and Triton: (1) what the shim says runs is what
# runs: for each setting (none, TRITON_PTXAS_PATH only, the Blackwell variable only,
# both), `doctor --json`'s `runs` for the GPU's target and `which <component> --arch`
# against the binary that assembled a kernel Triton compiled and launched on the GPU
# (logging wrappers around the host Triton's own binaries; its bin directory replaced by
# them in a private mount namespace); (2) what the shim costs on this quiet machine
# (bench/activation.py and bench/resolve.py). Results: $OUT/what-runs.txt, $OUT/bench.txt.
#
#   tests/gpu/what-runs.sh WHEEL_DIR      (the triton_toolchain and pyelftools wheels)
set -euo pipefail
WHEELS=$(cd "${1:?usage: tests/gpu/what-runs.sh WHEEL_DIR}" && pwd)
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
PY=$VENV/bin/python
BIN=$("$PY" -c 'import importlib.util as u, os; print(os.path.dirname(u.find_spec("triton").origin) + "/backends/nvidia/bin")')
LOG=$WORK/runs.log
mkdir -p "$WORK/real" "$WORK/wrappers" "$WORK/mine" "$WORK/mine-blackwell"
wrap() { printf '#!/bin/sh\nprintf "%%s\\n" "$0 $*" >> %s\nexec %s "$@"\n' "$LOG" "$2" >"$1"; chmod 755 "$1"; }
for tool in ptxas ptxas-blackwell cuobjdump nvdisasm; do
  [ -e "$BIN/$tool" ] && wrap "$WORK/wrappers/$tool" "$WORK/real/$tool"
done
wrap "$WORK/mine/ptxas" "$WORK/real/ptxas"
wrap "$WORK/mine-blackwell/ptxas" "$WORK/real/ptxas-blackwell"
cat >"$WORK/launch.py" <<'EOF'
import json, warnings
import torch, triton
from triton_toolchain.cli import _kernel
x = torch.rand(1 << 20, device="cuda"); y = torch.rand_like(x); out = torch.empty_like(x)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        _kernel.add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
        torch.cuda.synchronize()
        result = {"ok": bool(torch.allclose(out, x + y)), "error": None}
    except Exception as exc:
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:600]}
result["warnings"] = [str(w.message) for w in caught if "triton-toolchain" in str(w.message)]
print("LAUNCH " + json.dumps(result))
EOF
run_ns() {  # the host Triton's bin replaced by the wrappers, in a private mount namespace
  unshare -m --propagation private sh -c 'mount -n --bind "$1" "$2" && mount -n --bind "$3" "$1" && shift 3 && exec "$@"' \
    sh "$BIN" "$WORK/real" "$WORK/wrappers" env "$@"
}
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  echo "Triton $("$PY" -c 'import importlib.metadata as m; print(m.version("triton"))'), torch $("$PY" -c 'import importlib.metadata as m; print(m.version("torch"))')"
  for setting in none ptxas-only blackwell-only both; do
    vars=(HOME="$WORK/home-$setting" TRITON_CACHE_DIR="$WORK/cache-$setting")
    case $setting in
      ptxas-only) vars+=(TRITON_PTXAS_PATH="$WORK/mine/ptxas") ;;
      blackwell-only) vars+=(TRITON_PTXAS_BLACKWELL_PATH="$WORK/mine-blackwell/ptxas") ;;
      both) vars+=(TRITON_PTXAS_PATH="$WORK/mine/ptxas" TRITON_PTXAS_BLACKWELL_PATH="$WORK/mine-blackwell/ptxas") ;;
    esac
    runs=$(run_ns "${vars[@]}" "$PY" -m triton_toolchain doctor --json | "$PY" -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["runs"]))')
    component=$("$PY" -c 'import json, sys; print(json.loads(sys.argv[1])["component"])' "$runs")
    arch=$("$PY" -c 'import json, sys; print(json.loads(sys.argv[1])["arch"])' "$runs")
    which=$(run_ns "${vars[@]}" "$PY" -m triton_toolchain which "$component" --arch "$arch" 2>&1 || true)
    : >"$LOG"
    launch=$(run_ns "${vars[@]}" "$PY" "$WORK/launch.py" 2>&1 | grep '^LAUNCH ' || true)
    ran=$(grep -v triton-toolchain-probe- "$LOG" | grep -- "--gpu-name=sm_${arch}" | cut -d' ' -f1 | sort -u | tr '\n' ' ')
    echo "== $setting"
    echo "doctor runs: $runs"
    echo "which $component --arch $arch: $which"
    echo "launch: $launch"
    echo "assembled by: $ran"
  done
} >"$OUT/what-runs.txt" 2>&1
cat "$OUT/what-runs.txt"
(cd "$HERE/../../bench" && "$PY" activation.py --runs 21 && "$PY" resolve.py --runs 9) >"$OUT/bench.txt" 2>&1 || true
cat "$OUT/bench.txt"
