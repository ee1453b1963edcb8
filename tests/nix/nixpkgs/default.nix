# Stand-in for nixpkgs (tests only): the attribute names, argument shapes, outputs and
# strictness the project's Nix code meets, built offline with /bin/sh builders from
# host tools named in ./host.json (a real ptxas, libdevice.10.bc and cuda.h, gcc and
# g++ with the directory of g++'s omp.h, a Python that has pip, hatchling, pytest,
# pyelftools and Triton; tests/nix/test_flake.py rewrites it).
# `import ./. { system; config; overlays; }` as nixpkgs.
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
  # lib.systems: the platform of a native package set (build = host = target), named
  # by its target triple.
  triples = {
    x86_64-linux = "x86_64-unknown-linux-gnu";
    aarch64-linux = "aarch64-unknown-linux-gnu";
  };
  platform = {
    inherit system;
    config = triples.${system};
  };

  # The unwrapped compiler, stdenv.cc.cc (pkgs/development/compilers/gcc): passthru
  # `version` and `isGNU`, and GCC's private include directory
  # lib/gcc/<target>/<version>/include, where libgomp puts omp.h. Here that directory
  # is the host g++'s own (a link to it), as in nixpkgs it is the compiler's own.
  gcc = mkDerivation {
    pname = "gcc";
    version = host.gcc_version;
    passthru.isGNU = true;
    buildCommand = ''
      mkdir -p "$out/lib/gcc/${platform.config}/${host.gcc_version}"
      ln -s ${host.omp_include} "$out/lib/gcc/${platform.config}/${host.gcc_version}/include"
    '';
  };

  base = final: {
    inherit lib config system;
    callPackage = lib.callPackageWith final;

    stdenv = stdenvBase // {
      hostPlatform = platform;
      buildPlatform = platform;
      targetPlatform = platform;
      # The cc-wrapper (pkgs/build-support/cc-wrapper): `cc` and `g++` with `c++` a link
      # to it, and passthru `cc`, `isGNU`, `isClang`, `targetPrefix` (empty: it builds
      # for its own platform). Like ptxas (./cuda.nix), each appends the name it was
      # called by and its arguments to $TT_RECORD, then runs the host's gcc or g++.
      cc = mkDerivation {
        name = "gcc-wrapper-stand-in";
        passthru = {
          cc = gcc;
          isGNU = true;
          isClang = false;
          targetPrefix = "";
        };
        buildCommand = ''
          mkdir -p "$out/bin"
          cat > "$out/bin/cc" <<'SCRIPT'
          #!/bin/sh
          if [ -n "''${TT_RECORD:-}" ]; then echo "cc $*" >> "$TT_RECORD"; fi
          exec ${host.cc} "$@"
          SCRIPT
          cat > "$out/bin/g++" <<'SCRIPT'
          #!/bin/sh
          if [ -n "''${TT_RECORD:-}" ]; then echo "''${0##*/} $*" >> "$TT_RECORD"; fi
          exec ${host.cxx} "$@"
          SCRIPT
          chmod +x "$out/bin/cc" "$out/bin/g++"
          ln -s g++ "$out/bin/c++"
        '';
      };
    };
    # A native package set: the set of each role is this one (the compiler that runs
    # where the programs run is stdenv.cc).
    pkgsHostHost = final;
    targetPackages = final;
    runCommand =
      name: env: buildCommand:
      mkDerivation ({ inherit name buildCommand; } // env);
    writeText =
      name: text:
      mkDerivation {
        inherit name text;
        buildCommand = ''printf '%s' "$text" > "$out"'';
      };
    # pkgs/build-support/trivial-builders: one tree of links to the files of every
    # path (lndir), the first path's where two have the same name; `name`, or `pname`
    # and `version`.
    symlinkJoin =
      args:
      mkDerivation {
        name = args.name or "${args.pname}-${args.version}";
        inherit (args) paths;
        passthru = args.passthru or { };
        meta = args.meta or { };
        buildCommand = ''
          mkdir -p "$out"
          for p in $paths; do
            (cd "$p" && find . -type d) | while read -r d; do mkdir -p "$out/$d"; done
            (cd "$p" && find . ! -type d) | while read -r f; do
              if [ ! -e "$out/$f" ] && [ ! -L "$out/$f" ]; then ln -s "$p/''${f#./}" "$out/$f"; fi
            done
          done
        '';
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
        inherit (final) stdenv symlinkJoin;
      })
      cudaPackages_12_9
      cudaPackages_13_0
      ;
    cudaPackages_12 = final.cudaPackages_12_9;
    cudaPackages_13 = final.cudaPackages_13_0;
    cudaPackages = final.cudaPackages_12;
    # pkgs/development/rocm-modules (all-packages.nix's `rocmPackages`).
    rocmPackages = import ./rocm.nix {
      inherit lib host;
      inherit (final) stdenv;
    };

    pythonPackagesExtensions = [ ];
    python3 = import ./python {
      inherit lib host;
      pkgs = final;
    };
  };
in
lib.fix (builtins.foldl' (f: overlay: lib.extends overlay f) base overlays)
