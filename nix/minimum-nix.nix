# The oldest Nix the flake and default.nix evaluate with: nixpkgs' own minimum
# (lib/minver.nix "2.18.0", lib/minfeatures.nix), below which its lib fails (e.g.
# lib.fileset through lib/filesystem.nix's `pathType = builtins.readFileType`, Nix 2.14).
let
  minimum = "2.18";
  running = builtins.nixVersion or "older than 1.8";
in
{
  inherit minimum;

  /**
    `value` where this Nix is `minimum` or newer (Lix reports 2.18); an error naming
    the minimum and this Nix otherwise.

    # Type

    ```
    check :: a -> a
    ```
  */
  check =
    value:
    if builtins ? nixVersion && builtins.compareVersions running minimum >= 0 then
      value
    else
      throw "triton-toolchain needs Nix ${minimum} or newer (the nixpkgs it builds with requires it: lib/minver.nix); this is Nix ${running}. Install a newer Nix: Debian 13's nix-bin is 2.26; see https://nixos.org/download.";
}
