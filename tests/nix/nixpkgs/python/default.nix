# Stand-in python3: the host's Python behind a script, its headers, and a package
# set built from pythonPackagesExtensions like nixpkgs' (passthrufun.nix).
{
  lib,
  host,
  pkgs,
}:
let
  inherit (pkgs.stdenv) mkDerivation;
  pythonVersion = host.python_version;
  sitePackages = "lib/python${pythonVersion}/site-packages";

  python = mkDerivation {
    name = "python3-${pythonVersion}-stand-in";
    buildCommand = ''
      mkdir -p "$out/bin" "$out/include"
      printf '#!/bin/sh\nexec ${host.python} "$@"\n' > "$out/bin/python3"
      chmod +x "$out/bin/python3"
      ln -s python3 "$out/bin/python"
      ln -s ${host.python_include} "$out/include/python${pythonVersion}"
    '';
    passthru = {
      inherit pythonVersion sitePackages;
      executable = "python3";
      pkgs = pythonPackages;
      withPackages = f: buildEnv (f pythonPackages);
    };
  };

  # python.withPackages: the modules and everything they require, on PYTHONPATH.
  buildEnv =
    extraLibs:
    let
      modules = pythonPackages.requiredPythonModules extraLibs;
      path = builtins.concatStringsSep ":" (map (m: "${m}/${sitePackages}") modules);
    in
    mkDerivation {
      name = "python3-${pythonVersion}-env";
      inherit modules;
      buildCommand = ''
        mkdir -p "$out/bin"
        wrap() { printf '#!/bin/sh\nPYTHONPATH=${path}; export PYTHONPATH\nexec %s "$@"\n' "$1" > "$2"; chmod +x "$2"; }
        wrap ${python}/bin/python3 "$out/bin/python3"
        for m in $modules; do
          for b in "$m"/bin/*; do
            if [ -f "$b" ] && [ ! -e "$out/bin/''${b##*/}" ]; then wrap "$b" "$out/bin/''${b##*/}"; fi
          done
        done
      '';
      passthru = { inherit extraLibs; };
    };

  base = import ./packages.nix {
    inherit
      lib
      python
      sitePackages
      host
      ;
    inherit (pkgs) stdenv;
  };
  scope = self: base self // { callPackage = lib.callPackageWith (pkgs // self); };
  pythonPackages = lib.fix (
    lib.extends (lib.composeManyExtensions pkgs.pythonPackagesExtensions) scope
  );
in
python
