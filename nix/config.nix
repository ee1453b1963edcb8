# nixpkgs configuration: build with CUDA; accept CUDA's licences and, for Triton's
# PyPI wheel only, the licence nixpkgs gives it.
{ lib }:
let
  # Both are "CUDA Toolkit End User License Agreement (EULA)", shortName "CUDA EULA"
  # (lib/licenses/licenses.nix); nixpkgs' CUDA redistributables carry one of them.
  cudaLicences = [
    lib.licenses.nvidiaCuda
    lib.licenses.nvidiaCudaRedist
  ];
  isCudaLicence =
    licence: builtins.any (c: (licence.shortName or null) == c.shortName) cudaLicences;
  # triton-bin (python-modules/triton/bin.nix) is `[ unfreeRedistributable mit ]`
  # because the wheel bundles NVIDIA's ptxas & co., the tools the CUDA EULA covers.
  isTritonWheelLicence =
    pkg: licence:
    (pkg ? pname || pkg ? name)
    && lib.getName pkg == "triton"
    && (licence.shortName or null) == lib.licenses.unfreeRedistributable.shortName;

  # How a compound licence's parts combine (lib/licenses/helpers.nix's
  # evaluateProperty, permissive, as isFree uses it): OR needs one, AND every one.
  combinators = {
    OR = builtins.any;
    AND = builtins.all;
  };

  # Whether `pkg` may be used under the licence expression `licence`, read as nixpkgs
  # reads one in `lib.licenses.isFree` (lib/licenses/helpers.nix, `evaluateProperty`)
  # with "accepted" in place of "free":
  # - a list (`meta.license = [ … ]`): every licence applies (check-meta.nix's
  #   `isUnfree` calls a list unfree when one of them is);
  # - `licenseType = "simple"` (lib/licenses/licenses.nix's `mkLicense`), or no
  #   `licenseType` (a licence written by hand): free, a CUDA EULA, or the wheel's;
  #   one without `free` is not known to be free;
  # - "compound" (lib/licenses/operators.nix's `AND`, `OR`): by `combinators`;
  # - "exception" (`WITH`): the licence and the exception; "plus" (`PLUS`): the licence;
  # - anything else: refused (`evaluateProperty` throws "Unknown license type" there).
  acceptedBy =
    pkg:
    let
      accepted =
        licence:
        let
          byType = {
            simple =
              licence.free or false || isCudaLicence licence || isTritonWheelLicence pkg licence;
            compound = (combinators.${licence.operator} or (_: _: false)) accepted licence.licenses;
            exception = accepted licence.license && accepted licence.exception;
            plus = accepted licence.license;
          };
        in
        if builtins.isList licence then
          builtins.all accepted licence
        else
          builtins.isAttrs licence && byType.${licence.licenseType or "simple"} or false;
    in
    accepted;
in
{
  cudaSupport = true;

  /**
    Accept a package whose licence expression holds with every licence taken as
    accepted when it is free or a CUDA EULA (and, for Triton's wheel `triton-bin`,
    `unfreeRedistributable`): lists and `AND` need all of theirs, `OR` one.

    # Type

    ```
    allowUnfreePredicate :: AttrSet -> Bool
    ```

    # Example

    ```nix
    allowUnfreePredicate { meta.license = lib.licenses.nvidiaCudaRedist; }
    => true
    allowUnfreePredicate { meta.license = with lib.licenses; AND [ unfree mit ]; }
    => false
    ```
  */
  allowUnfreePredicate = pkg: acceptedBy pkg (pkg.meta.license or [ ]);
}
