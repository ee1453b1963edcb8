# Stand-in for nixpkgs' lib.licenses (lib/licenses/default.nix: licenses.nix //
# operators.nix // helpers.nix), with nixpkgs' shapes and semantics:
# - a licence is `mkLicense name { … }` (licenses.nix): licenseType "simple", shortName
#   its attribute name unless given, free unless `free = false`, redistributable as
#   free unless given, deprecated false, and spdxId (with its url), url, fullName where
#   given; only the licences the project and its tests name;
# - AND, OR (licenseType "compound", `operator`, `licenses`), WITH (licenseType
#   "exception", `license`, `exception`) and PLUS (licenseType "plus", `license`)
#   (operators.nix): no `free` of their own;
# - evaluateProperty, isFree, isRedistributable (helpers.nix): a licence expression
#   read with a predicate on its simple licences; OR needs one, AND every one.
{ lib }:
let
  mkLicense =
    lname:
    {
      shortName ? lname,
      free ? true,
      deprecated ? false,
      spdxId ? null,
      url ? null,
      fullName ? null,
      redistributable ? free,
    }@attrs:
    {
      inherit
        shortName
        free
        deprecated
        redistributable
        ;
      licenseType = "simple";
    }
    // lib.optionalAttrs (attrs ? spdxId) {
      inherit spdxId;
      url = "https://spdx.org/licenses/${spdxId}.html";
    }
    // lib.optionalAttrs (attrs ? url) { inherit url; }
    // lib.optionalAttrs (attrs ? fullName) { inherit fullName; };

  licenses = builtins.mapAttrs mkLicense {
    mit = {
      spdxId = "MIT";
      fullName = "MIT License";
    };
    unfree = {
      fullName = "Unfree";
      free = false;
    };
    unfreeRedistributable = {
      fullName = "Unfree redistributable";
      free = false;
      redistributable = true;
    };
    nvidiaCuda = {
      shortName = "CUDA EULA";
      fullName = "CUDA Toolkit End User License Agreement (EULA)";
      free = false;
    };
    nvidiaCudaRedist = {
      shortName = "CUDA EULA";
      fullName = "CUDA Toolkit End User License Agreement (EULA)";
      free = false;
      redistributable = true;
    };
  };

  operators = {
    OR = licenses: {
      licenseType = "compound";
      operator = "OR";
      inherit licenses;
    };
    AND = licenses: {
      licenseType = "compound";
      operator = "AND";
      inherit licenses;
    };
    WITH = license: exception: {
      licenseType = "exception";
      operator = "WITH";
      inherit license exception;
    };
    PLUS = license: {
      licenseType = "plus";
      operator = "+";
      inherit license;
    };
  };

  helpers = rec {
    evaluateProperty =
      predicate: permissive: license:
      let
        OR = if permissive then lib.any else lib.all;
        AND = if permissive then lib.all else lib.any;
      in
      if license.licenseType == "simple" then
        predicate license
      else if license.licenseType == "compound" then
        if license.operator == "OR" then
          OR (evaluateProperty predicate permissive) license.licenses
        else if license.operator == "AND" then
          AND (evaluateProperty predicate permissive) license.licenses
        else
          throw "Unknown license operator"
      else if license.licenseType == "exception" then
        AND (evaluateProperty predicate permissive) [
          license.license
          license.exception
        ]
      else if license.licenseType == "plus" then
        evaluateProperty predicate permissive license.license
      else
        throw "Unknown license type or legacy license";
    isFree = evaluateProperty (x: x.free) true;
    isRedistributable = evaluateProperty (x: x.redistributable) true;
  };
in
licenses // operators // helpers
