# For users without flakes: the flake's outputs for one system, with the nixpkgs
# that flake.lock pins (fetched by its NAR hash), through the same nix/ files.
#   nix-build -A python        nix-build -A manifest        nix-build -A default
# A Nix older than nixpkgs' minimum gets an error naming it (nix/minimum-nix.nix).
{
  system ? builtins.currentSystem,
  nixpkgs ? fetchTarball (
    (import ./nix/lock.nix).lockedTarball (builtins.fromJSON (builtins.readFile ./flake.lock))
      "nixpkgs"
  ),
}:
let
  toolchainLib = import ./nix/lib.nix { lib = import (nixpkgs.outPath or nixpkgs + "/lib"); };
  overlays = import ./nix/overlay.nix { inherit toolchainLib; };
  pkgs = import ./nix/nixpkgs.nix {
    inherit nixpkgs system;
    overlays = [ overlays.default ];
  };
  outputs = import ./nix/outputs.nix { inherit pkgs toolchainLib; };
in
(import ./nix/minimum-nix.nix).check (
  outputs.packages
  // {
    inherit (outputs) apps checks devShells;
    inherit overlays pkgs;
    overlay = overlays.default;
    lib = toolchainLib;
  }
)
