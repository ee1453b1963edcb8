# Generic builder of the stand-in stdenv (tests only; the sandbox is off, so the host's
# /usr/bin tools are used). Inputs' bin/ go on PATH and their nix-support/setup-hook is
# sourced; then buildCommand runs, or else installPhase, postInstall, the Python
# packages' dist step, postFixup and installCheck, in that order; then setupHook and the
# propagated inputs go into nix-support.
set -eu
PATH=/usr/bin:/bin
for p in ${nativeBuildInputs:-} ${buildInputs:-}; do
  if [ -d "$p/bin" ]; then PATH="$p/bin:$PATH"; fi
  if [ -f "$p/nix-support/setup-hook" ]; then . "$p/nix-support/setup-hook"; fi
done
export PATH
if [ -n "${buildCommand:-}" ]; then
  eval "$buildCommand"
else
  eval "${installPhase:-mkdir -p \"\$out\"}"
  eval "${postInstall:-}"
  eval "${pythonOutputDist:-}"
  eval "${postFixup:-}"
  eval "${installCheck:-}"
fi
# fixupPhase: setupHook becomes nix-support/setup-hook, with @out@ replaced (substituteAll).
if [ -n "${setupHook:-}" ]; then
  mkdir -p "$out/nix-support"
  sed "s|@out@|$out|g" "$setupHook" > "$out/nix-support/setup-hook"
fi
if [ -n "${propagatedBuildInputs:-}" ]; then
  mkdir -p "$out/nix-support"
  echo "$propagatedBuildInputs" > "$out/nix-support/propagated-build-inputs"
fi
