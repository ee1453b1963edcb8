# lock.nix: lockedTarball.
{ tt, ... }:
{
  lockedTarball = {
    expr = tt.lockedTarball (builtins.fromJSON (builtins.readFile ../../../flake.lock)) "nixpkgs";
    expected = {
      url = "https://github.com/NixOS/nixpkgs/archive/6201e203d09599479a3b3450ed24fa81537ebc4e.tar.gz";
      sha256 = "sha256-ZojAnPuCdy657PbTq5V0Y+AHKhZAIwSIT2cb8UgAz/U=";
    };
  };
}
