# The nixpkgs instance the flake and default.nix build with: CUDA on, exactly
# CUDA's licences accepted, the caller's overlays applied.
{
  nixpkgs,
  system,
  overlays ? [ ],
}:
import nixpkgs {
  inherit system overlays;
  config = import ./config.nix { lib = import (nixpkgs.outPath or nixpkgs + "/lib"); };
}
