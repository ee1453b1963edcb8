{
  description = "triton-toolchain: tells Triton where its run-time toolchain is";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  # A Nix older than nixpkgs' minimum gets an error naming it (nix/minimum-nix.nix).
  outputs =
    {
      self,
      nixpkgs,
    }:
    let
      systems = [
        "x86_64-linux"
        "aarch64-linux"
      ];
      forAllSystems = f: nixpkgs.lib.genAttrs systems (system: f (self.legacyPackages.${system}));
      perSystem = forAllSystems (
        pkgs:
        import ./nix/outputs.nix {
          inherit pkgs;
          toolchainLib = self.lib;
        }
      );
    in
    (import ./nix/minimum-nix.nix).check {
      lib = import ./nix/lib.nix { inherit (nixpkgs) lib; };

      # `default` rebuilds nothing; `rebuild-triton` rebuilds Triton, torch and all on top.
      overlays = import ./nix/overlay.nix { toolchainLib = self.lib; };

      # The flake's own package set: CUDA on, CUDA's licences accepted, overlays.default.
      legacyPackages = nixpkgs.lib.genAttrs systems (
        system:
        import ./nix/nixpkgs.nix {
          inherit nixpkgs system;
          overlays = [ self.overlays.default ];
        }
      );

      packages = nixpkgs.lib.mapAttrs (_: o: o.packages) perSystem;
      apps = nixpkgs.lib.mapAttrs (_: o: o.apps) perSystem;
      devShells = nixpkgs.lib.mapAttrs (_: o: o.devShells) perSystem;
      checks = nixpkgs.lib.mapAttrs (_: o: o.checks) perSystem;
      formatter = nixpkgs.lib.mapAttrs (_: o: o.formatter) perSystem;
    };
}
