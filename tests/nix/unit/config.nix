# config.nix: cudaSupport and allowUnfreePredicate, on simple and compound licences.
{ lib, ... }:
let
  config = import ../../../nix/config.nix { inherit lib; };
  l = lib.licenses;
  # lib/licenses/operators.nix's compound licences; the same sets where a lib predates it.
  AND =
    l.AND or (licenses: {
      licenseType = "compound";
      operator = "AND";
      inherit licenses;
    });
  OR =
    l.OR or (licenses: {
      licenseType = "compound";
      operator = "OR";
      inherit licenses;
    });
  WITH =
    l.WITH or (license: exception: {
      licenseType = "exception";
      operator = "WITH";
      inherit license exception;
    });
  PLUS =
    l.PLUS or (license: {
      licenseType = "plus";
      operator = "+";
      inherit license;
    });
  # The predicate's verdict on a package of this name under this licence expression.
  accepts =
    pname: license:
    config.allowUnfreePredicate {
      inherit pname;
      meta = { inherit license; };
    };
  verdicts = cases: map (c: accepts c.pname or "some-package" c.license) cases;
in
{
  cudaOn = {
    expr = config.cudaSupport;
    expected = true;
  };
  simpleLicences = {
    expr = verdicts [
      { license = l.nvidiaCudaRedist; }
      { license = l.nvidiaCuda; }
      { license = l.mit; }
      { license = l.unfree; }
      # A licence written by hand without `free` is not known to be free.
      { license.shortName = "some EULA"; }
    ];
    expected = [
      true
      true
      true
      false
      false
    ];
  };
  # A list: every licence applies.
  lists = {
    expr = verdicts [
      {
        license = [
          l.nvidiaCuda
          l.mit
        ];
      }
      {
        license = [
          l.nvidiaCuda
          l.unfree
        ];
      }
      { license = [ ]; }
    ];
    expected = [
      true
      false
      true
    ];
  };
  # AND: every licence; OR: one of them (lib.licenses.isFree's reading).
  compoundOfFreeAndUnfree = {
    expr = verdicts [
      {
        license = AND [
          l.unfree
          l.mit
        ];
      }
      {
        license = OR [
          l.unfree
          l.mit
        ];
      }
      {
        license = OR [
          l.unfree
          l.unfreeRedistributable
        ];
      }
      {
        license = AND [
          l.mit
          (OR [
            l.unfree
            l.mit
          ])
        ];
      }
    ];
    expected = [
      false
      true
      false
      true
    ];
  };
  compoundOfNvidiaLicences = {
    expr = verdicts [
      {
        license = AND [
          l.nvidiaCudaRedist
          l.mit
        ];
      }
      {
        license = AND [
          l.nvidiaCuda
          l.unfree
        ];
      }
      {
        license = OR [
          l.nvidiaCuda
          l.unfree
        ];
      }
      # A list holding a compound licence: its parts count.
      {
        license = [
          l.mit
          (AND [
            l.nvidiaCudaRedist
            l.unfree
          ])
        ];
      }
    ];
    expected = [
      true
      false
      true
      false
    ];
  };
  # WITH: the licence and its exception; PLUS: the licence.
  exceptionAndPlus = {
    expr = verdicts [
      { license = WITH l.nvidiaCuda l.mit; }
      { license = WITH l.mit l.unfree; }
      { license = PLUS l.nvidiaCudaRedist; }
      { license = PLUS l.unfree; }
      # An unknown kind of licence expression is refused.
      {
        license = {
          licenseType = "future";
          free = true;
        };
      }
    ];
    expected = [
      true
      false
      true
      false
      false
    ];
  };
  # triton-bin's `[ unfreeRedistributable mit ]` is accepted for Triton only, in any form.
  tritonWheel = {
    expr = verdicts [
      {
        pname = "triton";
        license = [
          l.unfreeRedistributable
          l.mit
        ];
      }
      {
        pname = "triton";
        license = AND [
          l.unfreeRedistributable
          l.mit
        ];
      }
      {
        pname = "triton";
        license = l.unfree;
      }
      {
        pname = "some-wheel";
        license = l.unfreeRedistributable;
      }
      {
        pname = "some-wheel";
        license = AND [
          l.unfreeRedistributable
          l.mit
        ];
      }
    ];
    expected = [
      true
      true
      false
      false
      false
    ];
  };
}
