# Stand-in python3: the host's Python behind a script, its headers, nixpkgs'
# sitecustomize.py, python.withPackages, and a package set built from
# pythonPackagesExtensions like nixpkgs' (passthrufun.nix).
{
  lib,
  host,
  pkgs,
}:
let
  inherit (pkgs.stdenv) mkDerivation;
  pythonVersion = host.python_version;
  sitePackages = "lib/python${pythonVersion}/site-packages";

  # The interpreter, with a sitecustomize.py that acts as nixpkgs' does
  # (./sitecustomize.py). Its site-packages goes on PYTHONPATH: in nixpkgs it is the
  # interpreter's own site directory; the host interpreter does not know it.
  python = mkDerivation {
    name = "python3-${pythonVersion}-stand-in";
    buildCommand = ''
      mkdir -p "$out/bin" "$out/include" "$out/${sitePackages}"
      cp ${./sitecustomize.py} "$out/${sitePackages}/sitecustomize.py"
      cat > "$out/bin/python3" <<SCRIPT
      #!/bin/sh
      PYTHONPATH="\''${PYTHONPATH:+\$PYTHONPATH:}$out/${sitePackages}"; export PYTHONPATH
      exec ${host.python} "\$@"
      SCRIPT
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

  # python.withPackages (wrapper.nix): the modules and everything they require
  # (`requiredPythonModules`, which reads passthru) in one buildEnv, which fails on a
  # file two of them have with different contents, unless their meta.priority differ
  # (./build-env.py). nixpkgs links them into one site-packages, which the wrapped
  # interpreter takes as its own (the other programs find it through NIX_PYTHONPATH);
  # here each module's site-packages is on NIX_PYTHONPATH, the winners of a collision
  # first, so that their files are the ones imported.
  buildEnv =
    extraLibs:
    let
      priority = m: m.meta.priority or 5;
      modules = builtins.sort (a: b: priority a < priority b) (
        pythonPackages.requiredPythonModules extraLibs
      );
      path = builtins.concatStringsSep ":" (map (m: "${m}/${sitePackages}") modules);
    in
    mkDerivation {
      name = "python3-${pythonVersion}-env";
      inherit modules;
      prioritised = map (m: "${toString (priority m)}:${m}") modules;
      buildCommand = ''
        ${host.python} ${./build-env.py} $prioritised
        mkdir -p "$out/bin"
        wrap() { printf '#!/bin/sh\nNIX_PYTHONPATH=${path}; export NIX_PYTHONPATH\nexec %s "$@"\n' "$1" > "$2"; chmod +x "$2"; }
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
