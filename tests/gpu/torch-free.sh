#!/usr/bin/env bash
# On the GPU host: the torch-free launch of `doctor --run` and nix/vector-add.py with
# Triton 3.6, whose own launcher imports torch (torch is blocked in these processes).
#   tests/gpu/torch-free.sh WHEEL_DIR     (WHEEL_DIR holds pyelftools' wheel)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY=${HOST_PYTHON:-/opt/torch/.venv/bin/python3}
export PYTHONPATH="$HERE/python/src:$(ls "$1"/pyelftools-*.whl)"
export TRITON_CACHE_DIR=$(mktemp -d)
block='import sys; sys.modules["torch"] = None'
echo "== doctor --run, torch blocked"
"$PY" -c "$block; from triton_toolchain.cli._main import main; sys.exit(main(['doctor', '--run']))" 2>&1 | tail -6
echo "exit status ${PIPESTATUS[0]}"
echo "== nix/vector-add.py, torch blocked"
"$PY" -c "$block; import runpy; runpy.run_path('$HERE/nix/vector-add.py', run_name='__main__')" 2>&1 | tail -6
echo "exit status ${PIPESTATUS[0]}"
echo "== nix/vector-add.py, with torch"
"$PY" "$HERE/nix/vector-add.py" 2>&1 | tail -3
echo "exit status ${PIPESTATUS[0]}"
