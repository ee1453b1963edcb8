# nixpkgs configuration: build with CUDA, accept exactly the CUDA EULA licences.
{ lib }:
let
  # Both are "CUDA Toolkit End User License Agreement (EULA)", shortName "CUDA EULA"
  # (lib/licenses.nix); nixpkgs' CUDA redistributables carry one of them.
  cudaLicences = [
    lib.licenses.nvidiaCuda
    lib.licenses.nvidiaCudaRedist
  ];
  isCudaLicence = licence: builtins.any (c: (licence.shortName or null) == c.shortName) cudaLicences;
in
{
  cudaSupport = true;

  /**
    Accept a package whose every licence is free or a CUDA EULA.

    # Type

    ```
    allowUnfreePredicate :: AttrSet -> Bool
    ```

    # Example

    ```nix
    allowUnfreePredicate { meta.license = lib.licenses.nvidiaCudaRedist; }
    => true
    ```
  */
  allowUnfreePredicate =
    pkg: builtins.all (l: (l.free or true) || isCudaLicence l) (lib.toList (pkg.meta.license or [ ]));
}
