# Stand-in for nixpkgs' makeWrapper setup hook: --set, --set-default, --run,
# --add-flags. --set-default exports VAR only when it is not set at all, as nixpkgs'
# does; --run writes its command into the wrapper as it is.
_tt_quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
makeWrapper() {
  original="$1"; wrapper="$2"; shift 2
  if [ ! -x "$original" ]; then echo "makeWrapper: $original is not an executable" >&2; return 1; fi
  flags=""
  mkdir -p "$(dirname "$wrapper")"
  {
    echo "#!/bin/sh"
    while [ $# -gt 0 ]; do
      case "$1" in
        --set) echo "export $2=$(_tt_quote "$3")"; shift 3 ;;
        --set-default) echo "if [ -z \"\${$2+set}\" ]; then export $2=$(_tt_quote "$3"); fi"; shift 3 ;;
        --run) printf '%s\n' "$2"; shift 2 ;;
        --add-flags) flags="$flags $2"; shift 2 ;;
        *) echo "makeWrapper (stand-in): unknown option $1" >&2; return 1 ;;
      esac
    done
    echo "exec $(_tt_quote "$original")$flags \"\$@\""
  } > "$wrapper"
  chmod +x "$wrapper"
}
