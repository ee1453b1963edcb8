# Stand-in stdenv.mkDerivation (pkgs/stdenv/generic/make-derivation.nix and
# check-meta.nix, as strict as they are where the project meets them):
#
# - `mkDerivation (finalAttrs: { ... })` or an attribute set; `overrideAttrs` takes
#   `prev: { ... }` or `final: prev: { ... }`, and `finalAttrs` sees every override;
# - `passthru` and `meta` are attributes of the result, not of the derivation; `env`
#   becomes environment variables;
# - an unfree licence (as `isUnfree` reads it: a compound one through
#   lib.licenses.isFree) is refused unless `config.allowUnfree` or
#   `config.allowUnfreePredicate attrs` accepts it, and `meta.broken` is refused
#   unless `config.allowBroken`; as in nixpkgs, the refusal comes when a path of the
#   derivation is taken (drvPath, outPath, string interpolation), not when `pname`,
#   `meta` or `passthru` are read.
#
# Builds run /bin/sh ./builder.sh (the sandbox is off: host tools are used).
{
  lib,
  config,
  system,
}:
let
  # check-meta.nix's showLicense: each licence's shortName (a compound one has none).
  licenceNames =
    value: toString (map (v: v.shortName or v.fullName or "unknown") (lib.toList value));

  # check-meta.nix's isUnfree: a licence expression (licenseType) is unfree unless
  # lib.licenses.isFree; a licence without one unless `free`; a list when one of its
  # licences does not say it is free.
  isUnfree =
    licenses:
    if licenses ? licenseType then
      !(lib.licenses.isFree licenses)
    else if builtins.isAttrs licenses then
      !(licenses.free or true)
    else if builtins.isString licenses then
      false
    else
      lib.any (l: !l.free or false) licenses;

  # check-meta.nix: the verdict on a derivation's arguments, `true` or a throw.
  validity =
    name: attrs:
    let
      unfree = attrs ? meta.license && isUnfree attrs.meta.license;
      unfreeAllowed =
        config.allowUnfree or false || (config.allowUnfreePredicate or (_: false)) attrs;
    in
    if unfree && !unfreeAllowed then
      throw "Package ‘${name}’ has an unfree license (‘${licenceNames attrs.meta.license}’), refusing to evaluate (stand-in nixpkgs: set config.allowUnfree or config.allowUnfreePredicate)."
    else if attrs.meta.broken or false && !(config.allowBroken or false) then
      throw "Package ‘${name}’ is marked as broken, refusing to evaluate (stand-in nixpkgs: ${attrs.meta.brokenReason or "meta.broken"})."
    else
      true;

  mkDerivationSimple =
    overrideAttrs: attrs:
    let
      name = attrs.name or "${attrs.pname}-${attrs.version}";
      passthru = attrs.passthru or { };
      meta = attrs.meta or { };
      drv = derivation (
        removeAttrs attrs [
          "passthru"
          "meta"
          "env"
          "finalPackage"
          "overrideAttrs"
        ]
        // attrs.env or { }
        // {
          inherit name system;
          builder = "/bin/sh";
          args = [ ./builder.sh ];
        }
      );
    in
    lib.extendDerivation (validity name attrs) (
      {
        inherit overrideAttrs meta passthru;
      }
      // passthru
    ) drv;

  # make-derivation.nix's makeDerivationExtensible.
  makeExtensible =
    rattrs:
    let
      args = rattrs (args // { inherit finalPackage overrideAttrs; });
      finalPackage = mkDerivationSimple overrideAttrs args;
      overrideAttrs =
        f0:
        let
          f =
            final: prev:
            let
              x = f0 prev;
            in
            if builtins.isFunction x then f0 final prev else x;
        in
        makeExtensible (
          final:
          let
            prev = rattrs final;
          in
          prev // f final prev
        );
    in
    finalPackage;
in
{
  mkDerivation = fnOrAttrs: makeExtensible (lib.toFunction fnOrAttrs);
}
