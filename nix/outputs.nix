# The flake's per-system outputs, from its own package set `pkgs` (overlay applied).
{
  pkgs,
  toolchainLib,
}:
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
  # Test files of ../tests that run in the build sandbox (see checks.shim-tests).
  sandboxTests = [
    "test_manifest.py"
    "test_headers.py"
    "test_tools.py"
  ];
  # Sources taken into the store: the files git tracks, never an untracked .nox
  # virtual environment or __pycache__ (lib.fileset).
  inherit (lib.fileset)
    difference
    fileFilter
    toSource
    unions
    ;
  isNix = file: file.hasExt "nix";
  # ../tests' Python files, without the Nix and GPU tests.
  notShimTests = unions [
    ../tests/nix
    ../tests/gpu
  ];
  shimTestSources = toSource {
    root = ../tests;
    fileset = difference (fileFilter (file: file.hasExt "py") ../tests) notShimTests;
  };
  nixSources = toSource {
    root = ../.;
    fileset = unions [
      ../flake.nix
      ../default.nix
      (fileFilter isNix ../nix)
      (fileFilter isNix ../tests/nix)
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
    # The part of the shim's test suite that needs only Python, pyelftools and /bin/sh,
    # run against the installed shim in the sandbox: no network, no GPU, no Triton, no
    # compiler, no /sbin/ldconfig. The other tests (and the `real_machine` ones of these
    # files) need this machine's tools and run under nox.
    shim-tests =
      pkgs.runCommand "triton-toolchain-tests"
        {
          nativeBuildInputs = [
            (python.withPackages (ps: [
              # Without the flake's manifest: the tests expect a shim that carries none.
              (ps.triton-toolchain.override {
                manifest = null;
                setupHook = null;
              })
              ps.pytest
            ]))
          ];
        }
        ''
          cp -r ${shimTestSources} tests
          chmod -R u+w tests
          HOME="$TMPDIR" python3 -m pytest -q -p no:cacheprovider -k "not real_machine" \
            ${builtins.concatStringsSep " " (map (f: "tests/${f}") sandboxTests)}
          touch "$out"
        '';

    # The manifest, validated by the shim itself, every entry judged as resolution
    # would judge it (exit 1: an entry is rejected, 2: the manifest is malformed).
    manifest =
      pkgs.runCommand "triton-toolchain-manifest-check"
        {
          nativeBuildInputs = [ (python.withPackages (ps: [ ps.triton-toolchain ])) ];
        }
        ''
          if ! HOME="$TMPDIR" triton-toolchain check-manifest ${manifest} > report; then
            cat report >&2
            exit 1
          fi
          mv report "$out"
        '';

    # tests/nix/unit.nix, the unit tests of the pure functions (one file per topic), on
    # this package set's lib: evaluated with the check, which fails naming what failed.
    unit =
      pkgs.runCommand "triton-toolchain-unit"
        {
          failures = builtins.toJSON (import ../tests/nix/unit.nix { inherit lib; });
        }
        ''
          if [ "$failures" != "[]" ]; then
            echo "tests/nix/unit.nix: $failures" >&2
            exit 1
          fi
          touch "$out"
        '';

    formatting =
      pkgs.runCommand "triton-toolchain-nixfmt"
        {
          nativeBuildInputs = [ pkgs.nixfmt ];
          src = nixSources;
        }
        ''
          find "$src" -name '*.nix' -exec nixfmt --check {} +
          touch "$out"
        '';
  };

  formatter = pkgs.nixfmt;
}
