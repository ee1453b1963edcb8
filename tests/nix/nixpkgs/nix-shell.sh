#!/bin/sh
# Stand-in for `nix-shell -p PKG... --run 'CMD ARG...'` (tests only): what stdenv's
# setup.sh does with a shell's inputs, as far as Python packages go. Each package, and
# every package it propagates (nix-support/propagated-build-inputs), once: its bin/ on
# PATH, its site-packages on PYTHONPATH (python's setup hook, addPythonPath: no .pth
# file there is read), and its nix-support/setup-hook sourced.
#   nix-shell.sh PKG... -- CMD [ARG...]
set -eu
seen=""
activate() {
  local p s
  for p in "$@"; do
    case " $seen " in *" $p "*) continue ;; esac
    seen="$seen $p"
    if [ -f "$p/nix-support/propagated-build-inputs" ]; then
      activate $(cat "$p/nix-support/propagated-build-inputs")
    fi
    if [ -d "$p/bin" ]; then PATH="$p/bin:$PATH"; fi
    for s in "$p"/lib/python3*/site-packages; do
      if [ -d "$s" ]; then PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$s"; fi
    done
    if [ -f "$p/nix-support/setup-hook" ]; then . "$p/nix-support/setup-hook"; fi
  done
}
packages=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  packages="$packages $1"
  shift
done
if [ $# -eq 0 ]; then
  echo "usage: nix-shell.sh PKG... -- CMD [ARG...]" >&2
  exit 2
fi
shift
activate $packages
export PATH PYTHONPATH
exec "$@"
