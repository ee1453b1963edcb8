# Stand-in for NixOS/nixpkgs as a flake input (tests only): `lib` and `legacyPackages`.
{
  outputs =
    { self }:
    let
      lib = import ./lib;
    in
    {
      inherit lib;
      legacyPackages = lib.genAttrs [
        "x86_64-linux"
        "aarch64-linux"
      ] (system: import ./. { inherit system; });
    };
}
