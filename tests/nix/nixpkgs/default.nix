# Stand-in for nixpkgs (tests only): the attribute names and argument shapes the
# project's Nix code uses, built offline with /bin/sh builders from host tools
# named in ./host.json (a real ptxas, libdevice.10.bc and cuda.h, gcc, and a Python
# that has pip, hatchling, pytest, pyelftools; tests/nix/test_flake.py rewrites it).
# `import ./. { system; config; overlays; }` as nixpkgs.
{
  system ? builtins.currentSystem,
  config ? { },
  overlays ? [ ],
}:
let
  lib = import ./lib;
  host = builtins.fromJSON (builtins.readFile ./host.json);

  # config.allowUnfree / allowUnfreePredicate, checked when the derivation is used.
  allowed =
    attrs:
    builtins.all (l: l.free or true) (lib.toList (attrs.meta.license or [ ]))
    || config.allowUnfree or false
    || (config.allowUnfreePredicate or (_: false)) attrs;

  mkDerivation =
    attrs:
    let
      name = attrs.name or "${attrs.pname}-${attrs.version}";
      drv = derivation (
        if allowed attrs then
          removeAttrs attrs [
            "passthru"
            "meta"
          ]
          // {
            inherit name system;
            builder = "/bin/sh";
            args = [ ./builder.sh ];
          }
        else
          throw "Package ‘${name}’ has an unfree license, refused (stand-in nixpkgs)."
      );
    in
    drv
    // (attrs.passthru or { })
    // {
      meta = attrs.meta or { };
      passthru = attrs.passthru or { };
      overrideAttrs = f: mkDerivation (attrs // f attrs);
    };

  # callPackage's overridability: `.override` re-applies earlier `.overrideAttrs`.
  makeOverridable =
    f: args:
    let
      result = f args;
    in
    if builtins.isAttrs result then
      result
      // {
        override =
          newArgs: makeOverridable f (args // (if builtins.isFunction newArgs then newArgs args else newArgs));
        overrideAttrs = g: makeOverridable (a: (f a).overrideAttrs g) args;
      }
    else
      result;
  callPackageWith =
    scope: fn: args:
    let
      f = if builtins.isFunction fn then fn else import fn;
    in
    makeOverridable f (builtins.intersectAttrs (builtins.functionArgs f) scope // args);

  tool =
    name: script:
    mkDerivation {
      inherit name script;
      buildCommand = ''
        mkdir -p "$out/bin"
        printf '%s\n' "$script" > "$out/bin/${builtins.head (builtins.split "-" name)}"
        chmod +x "$out/bin/"*
      '';
    };

  base = final: {
    inherit lib config system;
    callPackage = callPackageWith final;

    stdenv = {
      inherit mkDerivation;
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
    addDriverRunpath = mkDerivation {
      name = "add-driver-runpath";
      driverLink = "/run/opengl-driver";
      buildCommand = ''mkdir -p "$out"'';
    };
    mkShell =
      attrs:
      mkDerivation {
        name = "nix-shell";
        nativeBuildInputs = attrs.packages or [ ];
        buildCommand = "echo 'a shell, not a package' >&2; exit 1";
      };
    nixfmt = tool "nixfmt-stand-in" ''
      #!/bin/sh
      echo "stand-in nixfmt: the real formatter cannot be fetched offline" >&2
      exit 1
    '';

    cudaPackages = import ./cuda.nix { inherit lib mkDerivation host; } // {
      backendStdenv = final.stdenv;
    };

    pythonPackagesExtensions = [ ];
    python3 = import ./python {
      inherit
        lib
        mkDerivation
        callPackageWith
        host
        ;
      pkgs = final;
    };
  };
in
lib.fix (builtins.foldl' (f: overlay: lib.extends overlay f) base overlays)
