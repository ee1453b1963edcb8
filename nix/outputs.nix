# The flake's per-system outputs, from its own package set `pkgs` (overlay applied).
{ pkgs, toolchainLib }:
let
  inherit (pkgs) lib;
  python = pkgs.python3;
  env = python.withPackages (ps: [
    ps.triton
    ps.triton-toolchain
  ]);
  wrap = toolchainLib.wrapWithToolchain pkgs;
  manifest = toolchainLib.mkManifest pkgs { };

  pythonWrapped = wrap { program = lib.getExe' env "python3"; };
  doctor = wrap {
    program = lib.getExe' env "triton-toolchain";
    name = "triton-toolchain-doctor";
    extraFlags = [
      "--add-flags"
      "doctor"
    ];
  };
  vectorAdd = wrap {
    program = lib.getExe' env "python3";
    name = "triton-vector-add";
    extraFlags = [
      "--add-flags"
      "${./vector-add.py}"
    ];
  };
  app = drv: {
    type = "app";
    program = lib.getExe' drv drv.meta.mainProgram;
  };
in
{
  packages = {
    default = python.pkgs.triton-toolchain;
    inherit manifest;
    python = pythonWrapped;
  };

  apps = {
    default = app pythonWrapped;
    vector-add = app vectorAdd;
    doctor = app doctor;
  };

  devShells.default = pkgs.mkShell {
    packages = [
      (python.withPackages (ps: [
        ps.nox
        ps.pytest
        ps.pyelftools
      ]))
      pkgs.nixfmt
    ];
  };

  checks = {
    # The shim's own test suite, CPU only, in the sandbox (no network, no GPU).
    shim-tests =
      pkgs.runCommand "triton-toolchain-tests"
        {
          nativeBuildInputs = [
            (python.withPackages (ps: [
              ps.triton-toolchain
              ps.pytest
            ]))
          ];
        }
        ''
          cp -r ${../tests} tests
          chmod -R u+w tests
          rm -rf tests/nix
          HOME="$TMPDIR" python3 -m pytest -q -p no:cacheprovider -m "not gpu and not network" tests
          touch "$out"
        '';

    # The manifest, read and validated by the shim itself.
    manifest =
      pkgs.runCommand "triton-toolchain-manifest-check"
        {
          nativeBuildInputs = [ (python.withPackages (ps: [ ps.triton-toolchain ])) ];
        }
        ''
          HOME="$TMPDIR" TRITON_TOOLCHAIN_MANIFEST=${manifest} triton-toolchain doctor --json > "$out"
        '';

    formatting =
      pkgs.runCommand "triton-toolchain-nixfmt"
        {
          nativeBuildInputs = [ pkgs.nixfmt ];
          src = ../.;
        }
        ''
          find "$src" -name '*.nix' -exec nixfmt --check {} +
          touch "$out"
        '';
  };

  formatter = pkgs.nixfmt;
}
