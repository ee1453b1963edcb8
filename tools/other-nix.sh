#!/usr/bin/env bash
# The other Debian release's Nix, unpacked privately: on Debian 12 (bookworm, nix-bin 2.8)
# it is trixie's nix-bin (2.26), the Nix the tests run with there (the flake needs 2.18 or
# newer, nix/minimum-nix.nix); on Debian 13 (trixie, 2.26) it is bookworm's (2.8), which
# the tests run only to see it refuse the flake with a message naming the minimum.
#
#   tools/other-nix.sh ARGS...        run that Nix (`nix ARGS...`)
#   tools/other-nix.sh --program NAME ARGS...
#                                     run one of its other programs (nix-instantiate, …)
#   tools/other-nix.sh --prepare      fetch and unpack it now; print its version
#   tools/other-nix.sh --store-root   where its store lies on disk: a store path /nix/store/X
#                                     is the file <store-root>/nix/store/X
#
# How: apt, pointed at the other suite's package lists kept in a private directory
# (never the system's), lists nix-bin's run-time library closure (Depends and
# Pre-Depends, followed through the lib* packages: the shared libraries the `nix`
# binary loads), downloads those .debs with `apt-get download` and unpacks them with
# `dpkg -x`. Nothing is installed; the binary runs through the unpacked dynamic loader
# with the unpacked libraries. First call: about 40 MB from the Debian mirror the
# system uses.
#
# Environment:
#   TT_OTHER_NIX_DIR    where everything goes (default: ~/.cache/triton-toolchain/other-nix,
#                       under $XDG_CACHE_HOME if set)
#   TT_OTHER_NIX_SUITE  the suite to take nix-bin from, instead of the other release's
#   TT_OTHER_NIX_STORE  `private` (default): a store of its own, <dir>/<suite>/store, whose
#                       builds run in a mount namespace that sees the sandbox paths;
#                       `system`: the system's /nix/store, as that Nix would use once
#                       installed, so that what it builds runs here (single-user, root)
#   NIX_CONFIG          appended after this script's settings: experimental-features
#                       nix-command flakes, no substituters, sandbox false, no build
#                       users, sandbox-paths for /bin/sh builders, the store
set -euo pipefail

die() {
  echo "tools/other-nix.sh: $*" >&2
  exit 1
}

other_suite() {
  local codename=""
  if [ -r /etc/os-release ]; then
    # shellcheck disable=SC1091
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  fi
  case $codename in
  bookworm) echo trixie ;;
  trixie) echo bookworm ;;
  *) die "Debian 12 (bookworm) or 13 (trixie) expected, this is '${codename:-unknown}'; set TT_OTHER_NIX_SUITE" ;;
  esac
}

SUITE=${TT_OTHER_NIX_SUITE:-$(other_suite)}
BASE=${TT_OTHER_NIX_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/triton-toolchain/other-nix}
DIR=$BASE/$SUITE
ROOT=$DIR/root
case ${TT_OTHER_NIX_STORE:-private} in
private) STORE=$DIR/store ;;
system) STORE="" ;;
*) die "TT_OTHER_NIX_STORE is '$TT_OTHER_NIX_STORE'; set it to private or system" ;;
esac

# The mirror the system already uses (deb822 sources first, then one-line sources).
mirror() {
  local uri=""
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    uri=$(awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}' "$f")
    [ -n "$uri" ] && break
  done
  if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
    uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }' /etc/apt/sources.list)
  fi
  echo "${uri:-http://deb.debian.org/debian}"
}

prepare() {
  local apt=$DIR/apt
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$DIR/debs"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) $SUITE main" >"$apt/sources.list"
  local opts=(
    -o "Dir::Etc::SourceList=$apt/sources.list"
    -o "Dir::Etc::SourceParts=-"
    -o "Dir::State::Lists=$apt/lists"
    -o "Dir::Cache=$apt/cache"
    -o "Dir::State::status=/dev/null"
    -o "APT::Architecture=$(dpkg --print-architecture)"
  )
  apt-get "${opts[@]}" -q update >"$apt/update.log" 2>&1 || {
    cat "$apt/update.log" >&2
    die "apt-get update of $SUITE failed"
  }

  # nix-bin and the lib* packages it needs, to a fixed point (one apt-cache call a level).
  local level=(nix-bin) seen=" " next dep
  while [ ${#level[@]} -gt 0 ]; do
    for dep in "${level[@]}"; do seen="$seen$dep "; done
    next=()
    while read -r dep; do
      case $seen in *" $dep "*) ;; *) next+=("$dep") ;; esac
    done < <(apt-cache "${opts[@]}" depends --important "${level[@]}" |
      awk '$1 ~ /Depends:$/ && $2 ~ /^lib/ {print $2}' | sort -u)
    level=("${next[@]}")
  done

  # shellcheck disable=SC2086
  (cd "$DIR/debs" && apt-get "${opts[@]}" -q download $seen >"$apt/download.log" 2>&1) || {
    cat "$apt/download.log" >&2
    die "apt-get download from $SUITE failed"
  }
  rm -rf "$ROOT.new"
  mkdir -p "$ROOT.new"
  for deb in "$DIR"/debs/*.deb; do dpkg -x "$deb" "$ROOT.new"; done
  dpkg-deb --field "$DIR"/debs/nix-bin_*.deb Version | sed 's/+.*//' >"$DIR/version"
  rm -rf "$ROOT"
  mv "$ROOT.new" "$ROOT"
}

loader() {
  local ld
  for ld in "$ROOT"/usr/lib/*/ld-linux*.so.* "$ROOT"/lib/*/ld-linux*.so.*; do
    if [ -e "$ld" ]; then
      echo "$ld"
      return
    fi
  done
  die "no dynamic loader unpacked under $ROOT"
}

run_nix() {
  local ld triplet version hook="" program=nix
  if [ "${1:-}" = --program ]; then
    program=${2:?--program needs a name, e.g. nix-instantiate}
    shift 2
  fi
  ld=$(loader)
  triplet=$(basename "$(dirname "$ld")")
  version=$(cat "$DIR/version")
  # Started through the loader, `nix` cannot start itself again as the default build
  # hook (`nix __build-remote`, through /proc/self/exe), which 2.26 runs for every build
  # unless the setting is empty; 2.8 runs no hook without remote builders, but would try
  # to execute an empty one.
  if dpkg --compare-versions "$version" ge 2.10; then hook="build-hook ="; fi
  # Builds as the calling user; with a private store (not at /nix/store) in a mount
  # namespace that sees the sandbox paths: the host's, for builders like /bin/sh.
  export NIX_CONFIG="experimental-features = nix-command flakes
substituters =
sandbox = false
build-users-group =
sandbox-paths = /bin /usr /lib /lib64 /etc /tmp
$hook
store = ${STORE:-local}${NIX_CONFIG:+
$NIX_CONFIG}"
  # One binary, which acts as the program its argv[0] names.
  exec "$ld" --argv0 "$program" --library-path "$ROOT/usr/lib/$triplet:$ROOT/lib/$triplet" \
    "$ROOT/usr/bin/nix" "$@"
}

if [ "${1:-}" = --store-root ]; then
  echo "$STORE"
  exit 0
fi
if [ ! -x "$ROOT/usr/bin/nix" ] || [ ! -s "$DIR/version" ]; then
  prepare
fi
if [ "${1:-}" = --prepare ]; then
  run_nix --version
fi
run_nix "$@"
