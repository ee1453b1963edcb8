# The flake's `lib`: make a toolchain manifest and wrap programs with it.
# Pure functions take plain attribute sets; the others take a package set `pkgs`.
{ lib }:
let
  manifest = import ./manifest.nix { inherit lib; };
  wrap = import ./wrap.nix {
    inherit lib;
    manifestLib = manifest;
  };
in
{
  inherit (manifest)
    manifestFromPackages
    manifestFor
    mkManifest
    openmpInclude
    writeManifest
    ;
  inherit (wrap)
    exportUnlessSet
    manifestEnv
    tritonVariables
    wrapperFlags
    wrapWithToolchain
    ;
  inherit (import ./lock.nix) lockedTarball;
}
