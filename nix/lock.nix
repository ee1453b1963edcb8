# Reading flake.lock without flakes (default.nix).
{
  /**
    Where `fetchTarball` finds a `github` node of a flake lock, and the NAR hash it must have.

    # Type

    ```
    lockedTarball :: AttrSet -> String -> { url :: String; sha256 :: String; }
    ```

    # Example

    ```nix
    lockedTarball (builtins.fromJSON (builtins.readFile ./flake.lock)) "nixpkgs"
    => { url = "https://github.com/NixOS/nixpkgs/archive/6201e203d09599479a3b3450ed24fa81537ebc4e.tar.gz"; sha256 = "sha256-ZojAnPuCdy657PbTq5V0Y+AHKhZAIwSIT2cb8UgAz/U="; }
    ```
  */
  lockedTarball =
    lock: name:
    let
      locked = lock.nodes.${name}.locked;
    in
    assert locked.type == "github";
    {
      url = "https://github.com/${locked.owner}/${locked.repo}/archive/${locked.rev}.tar.gz";
      sha256 = locked.narHash;
    };
}
