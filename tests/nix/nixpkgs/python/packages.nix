# The stand-in Python package set: the helpers nixpkgs' python-packages-base.nix
# provides (with the same staleness of requiredPythonModules under overrideAttrs),
# and the packages the project touches. Modules that the host Python already has
# (pytest, pyelftools, hatchling, nox) are empty stand-ins here.
{
  lib,
  python,
  sitePackages,
  host,
  mkDerivation,
}:
self:
let
  hasPythonModule = drv: drv ? pythonModule && drv.pythonModule == python;
  requiredPythonModules =
    drvs:
    let
      modules = builtins.filter hasPythonModule drvs;
    in
    lib.unique ([ python ] ++ modules ++ builtins.concatLists (builtins.catAttrs "requiredPythonModules" modules));
  toPythonModule =
    drv:
    drv.overrideAttrs (old: {
      passthru = (old.passthru or { }) // {
        pythonModule = python;
        requiredPythonModules = requiredPythonModules drv.propagatedBuildInputs;
      };
    });
  buildPythonPackage =
    attrs:
    toPythonModule (
      mkDerivation (
        removeAttrs attrs [
          "dependencies"
          "build-system"
          "pyproject"
          "pythonImportsCheck"
        ]
        // {
          name = "python${python.pythonVersion}-${attrs.pname}-${attrs.version}";
          propagatedBuildInputs = (attrs.propagatedBuildInputs or [ ]) ++ (attrs.dependencies or [ ]);
          nativeBuildInputs = [ python ] ++ attrs.build-system or [ ];
          installPhase =
            attrs.installPhase or ''
              cp -r "$src" src && chmod -R u+w src
              ${host.python} -m pip install --quiet --no-deps --no-build-isolation --no-index --no-compile --ignore-installed --prefix "$out" ./src
            '';
          installCheck = lib.optionalString (attrs ? pythonImportsCheck) ''
            PYTHONPATH="$out/${sitePackages}" ${host.python} -c 'import ${builtins.concatStringsSep ", " attrs.pythonImportsCheck}'
          '';
        }
      )
    );
  emptyModule =
    pname:
    buildPythonPackage {
      inherit pname;
      version = "0";
      installPhase = ''mkdir -p "$out/${sitePackages}"'';
    };
  # Triton's package shape: its __init__.py exists, so the overlay can extend it.
  triton =
    {
      config,
      cudaPackages,
      cudaSupport ? config.cudaSupport or false,
    }:
    buildPythonPackage {
      pname = "triton";
      version = "3.6.0";
      installPhase = ''
        mkdir -p "$out/${sitePackages}/triton"
        echo '__version__ = "3.6.0"  # stand-in' > "$out/${sitePackages}/triton/__init__.py"
      '';
      dependencies = [ ];
      passthru = { inherit cudaSupport cudaPackages; };
    };
in
{
  inherit
    python
    buildPythonPackage
    toPythonModule
    hasPythonModule
    requiredPythonModules
    ;
  hatchling = emptyModule "hatchling";
  pyelftools = emptyModule "pyelftools";
  pytest = emptyModule "pytest";
  nox = emptyModule "nox";

  triton = self.callPackage triton { };
  triton-cuda = self.triton.override { cudaSupport = true; };
  triton-no-cuda = self.triton.override { cudaSupport = false; };
  triton-bin = self.callPackage triton { };

  # torch takes Triton through `_tritonEffective`, as nixpkgs' torch does.
  torch = self.callPackage (
    {
      config,
      cudaPackages,
      triton,
      triton-cuda,
      cudaSupport ? config.cudaSupport or false,
      _tritonEffective ? if cudaSupport then triton-cuda.override { inherit cudaPackages; } else triton,
    }:
    buildPythonPackage {
      pname = "torch";
      version = "2.11.0";
      installPhase = ''mkdir -p "$out/${sitePackages}/torch"'';
      dependencies = [ _tritonEffective ];
      passthru.triton = _tritonEffective;
    }
  ) { };
}
