# nixpkgs configuration: build with CUDA; accept CUDA's licences and, for Triton's
# PyPI wheel only, the licence nixpkgs gives it.
{ lib }:
let
  # Both are "CUDA Toolkit End User License Agreement (EULA)", shortName "CUDA EULA"
  # (lib/licenses.nix); nixpkgs' CUDA redistributables carry one of them.
  cudaLicences = [
    lib.licenses.nvidiaCuda
    lib.licenses.nvidiaCudaRedist
  ];
  isCudaLicence = licence: builtins.any (c: (licence.shortName or null) == c.shortName) cudaLicences;
  # triton-bin (python-modules/triton/bin.nix) is `[ unfreeRedistributable mit ]`
  # because the wheel bundles NVIDIA's ptxas & co., the tools the CUDA EULA covers.
  isTritonWheelLicence =
    pkg: licence:
    (pkg ? pname || pkg ? name)
    && lib.getName pkg == "triton"
    && (licence.shortName or null) == lib.licenses.unfreeRedistributable.shortName;
in
{
  cudaSupport = true;

  /**
    Accept a package whose every licence is free or a CUDA EULA, and Triton's wheel
    (`triton-bin`).

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
    pkg:
    builtins.all (l: (l.free or true) || isCudaLicence l || isTritonWheelLicence pkg l) (
      lib.toList (pkg.meta.license or [ ])
    );
}
