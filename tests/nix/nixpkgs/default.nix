# Stand-in for nixpkgs (tests only): the attribute names, argument shapes, outputs and
# strictness the project's Nix code meets, built offline with /bin/sh builders from
# host tools named in ./host.json (a real ptxas, libdevice.10.bc and cuda.h, gcc, a
# Python that has pip, hatchling, pytest, pyelftools and Triton; tests/nix/test_flake.py
# rewrites it). `import ./. { system; config; overlays; }` as nixpkgs.
{
  system ? builtins.currentSystem,
  config ? { },
  overlays ? [ ],
}:
let
  lib = import ./lib;
  host = builtins.fromJSON (builtins.readFile ./host.json);
  stdenvBase = import ./stdenv.nix { inherit lib config system; };
  inherit (stdenvBase) mkDerivation;

  base = final: {
    inherit lib config system;
    callPackage = lib.callPackageWith final;

    stdenv = stdenvBase // {
      # Like ptxas (./cuda.nix): appends its arguments to $TT_RECORD, then runs the host's gcc.
      cc = mkDerivation {
        name = "gcc-wrapper-stand-in";
        buildCommand = ''
          mkdir -p "$out/bin"
          cat > "$out/bin/cc" <<'SCRIPT'
          #!/bin/sh
          if [ -n "''${TT_RECORD:-}" ]; then echo "cc $*" >> "$TT_RECORD"; fi
          exec ${host.cc} "$@"
          SCRIPT
          chmod +x "$out/bin/cc"
        '';
      };
    };
    runCommand =
      name: env: buildCommand:
      mkDerivation ({ inherit name buildCommand; } // env);
    writeText =
      name: text:
      mkDerivation {
        inherit name text;
        buildCommand = ''printf '%s' "$text" > "$out"'';
      };
    makeWrapper = mkDerivation {
      name = "make-wrapper-stand-in";
      buildCommand = ''
        mkdir -p "$out/nix-support"
        cp ${./make-wrapper.sh} "$out/nix-support/setup-hook"
      '';
    };
    # A setup hook: HOME is a fresh writable directory (not /homeless-shelter).
    writableTmpDirAsHomeHook = mkDerivation {
      name = "writable-tmpdir-as-home-hook";
      buildCommand = ''
        mkdir -p "$out/nix-support"
        echo 'HOME=$(mktemp -d); export HOME' > "$out/nix-support/setup-hook"
      '';
    };
    addDriverRunpath = mkDerivation {
      name = "add-driver-runpath";
      passthru.driverLink = "/run/opengl-driver";
      buildCommand = ''mkdir -p "$out"'';
    };
    mkShell =
      attrs:
      mkDerivation {
        name = "nix-shell";
        nativeBuildInputs = attrs.packages or [ ];
        buildCommand = "echo 'a shell, not a package' >&2; exit 1";
      };
    # Checks the layout rules of the standard Nix format that ./nixfmt.py knows; no
    # reformatting (the real nixfmt cannot be had offline).
    nixfmt = mkDerivation {
      name = "nixfmt-stand-in";
      buildCommand = ''
        mkdir -p "$out/bin"
        printf '#!/bin/sh\nexec ${host.python} ${./nixfmt.py} "$@"\n' > "$out/bin/nixfmt"
        chmod +x "$out/bin/nixfmt"
      '';
    };

    # pkgs/top-level/all-packages.nix: cudaPackages = cudaPackages_12 = cudaPackages_12_9.
    inherit
      (import ./cuda.nix {
        inherit lib config host;
        inherit (final) stdenv;
      })
      cudaPackages_12_9
      cudaPackages_13_0
      ;
    cudaPackages_12 = final.cudaPackages_12_9;
    cudaPackages_13 = final.cudaPackages_13_0;
    cudaPackages = final.cudaPackages_12;

    pythonPackagesExtensions = [ ];
    python3 = import ./python {
      inherit lib host;
      pkgs = final;
    };
  };
in
lib.fix (builtins.foldl' (f: overlay: lib.extends overlay f) base overlays)
