# The stand-in Python package set: the helpers of nixpkgs' python-packages-base.nix and
# mk-python-derivation.nix the project meets, and the packages it touches.
#
# buildPythonPackage, as nixpkgs' (pkgs/development/interpreters/python/
# mk-python-derivation.nix):
# - takes an attribute set or `finalAttrs: { ... }`;
# - keeps `dependencies` and `build-system` in `passthru`, and derives
#   propagatedBuildInputs from the *final* `passthru.dependencies` (so an
#   `overrideAttrs` that changes `passthru.dependencies` changes what is propagated);
# - has the outputs `out` and `dist` (the wheel);
# - wraps the programs in $out/bin as wrapPythonPrograms does;
# - goes through toPythonModule, whose `requiredPythonModules` is computed once, from
#   the inputs before any later `overrideAttrs` (python-packages-base.nix): stale
#   after an override, as in nixpkgs.
# Modules the host Python already has (pytest, pyelftools, hatchling, nox, filelock,
# setuptools) are empty stand-ins here.
{
  lib,
  python,
  sitePackages,
  host,
  stdenv,
}:
self:
let
  hasPythonModule = drv: drv ? pythonModule && drv.pythonModule == python;
  requiredPythonModules =
    drvs:
    let
      modules = builtins.filter hasPythonModule drvs;
    in
    lib.unique (
      [ python ]
      ++ modules
      ++ builtins.concatLists (builtins.catAttrs "requiredPythonModules" modules)
    );
  toPythonModule =
    drv:
    drv.overrideAttrs (old: {
      passthru = (old.passthru or { }) // {
        pythonModule = python;
        requiredPythonModules = requiredPythonModules drv.propagatedBuildInputs;
      };
    });

  # --ignore-installed: the host's Python may have the same distribution (Triton, the
  # shim), which pip would otherwise uninstall from it before installing into $out.
  pip = "${host.python} -m pip install --quiet --no-cache-dir --no-deps --no-build-isolation --no-index --no-compile --ignore-installed";
  # wrapPythonPrograms (wrap-python.nix, wrap.sh) with patchShebangs: each Python
  # program in $out/bin runs this package set's interpreter and starts by making the
  # site-packages of $out and of every package it propagates, followed through
  # nix-support/propagated-build-inputs (the derivations, not passthru), a site
  # directory: `site.addsitedir`, so their .pth files run.
  wrapPythonPrograms = ''
    dirs=""
    seen=""
    pythonClosure() {
      local d
      for d in "$@"; do
        case " $seen " in *" $d "*) continue ;; esac
        seen="$seen $d"
        if [ -d "$d/${sitePackages}" ]; then dirs="$dirs'$d/${sitePackages}', "; fi
        if [ -f "$d/nix-support/propagated-build-inputs" ]; then
          pythonClosure $(cat "$d/nix-support/propagated-build-inputs")
        fi
      done
    }
    pythonClosure "$out" $propagatedBuildInputs
    for f in "$out"/bin/*; do
      if [ -f "$f" ] && head -n1 "$f" | grep -q '^#!.*python'; then
        sed -i -e "1s|.*|#!${python}/bin/python3|" \
          -e "1a import sys, site, functools; functools.reduce(lambda k, p: site.addsitedir(p, k), [$dirs], site._init_pathinfo())" "$f"
      fi
    done
  '';

  mkPythonDerivation =
    fnOrAttrs:
    stdenv.mkDerivation (
      finalAttrs:
      let
        attrs = lib.toFunction fnOrAttrs finalAttrs;
        format = if attrs.pyproject or false then "pyproject" else attrs.format or "other";
      in
      removeAttrs attrs [
        "dependencies"
        "build-system"
        "optional-dependencies"
        "pyproject"
        "format"
        "pythonImportsCheck"
      ]
      // {
        name = "python${python.pythonVersion}-${attrs.pname}-${attrs.version}";
        outputs = (attrs.outputs or [ "out" ]) ++ [ "dist" ];
        propagatedBuildInputs =
          (attrs.propagatedBuildInputs or [ ]) ++ finalAttrs.passthru.dependencies ++ [ python ];
        nativeBuildInputs =
          [ python ] ++ attrs.nativeBuildInputs or [ ] ++ finalAttrs.passthru.build-system;
        installPhase =
          attrs.installPhase or {
            # pypaBuildHook (the wheel into dist/), then pypaInstallHook.
            pyproject = ''
              cp -r "$src" src && chmod -R u+w src
              ${host.python} -m pip wheel --quiet --no-cache-dir --no-deps --no-build-isolation --no-index --wheel-dir dist ./src
              ${pip} --prefix "$out" dist/*.whl
            '';
            # wheelUnpackHook and pypaInstallHook: src is the wheel (or a directory of one).
            wheel = ''
              mkdir -p dist && cp "$src"/*.whl dist/
              ${pip} --prefix "$out" dist/*.whl
            '';
          }.${format};
        # pythonOutputDistHook
        pythonOutputDist = ''
          mkdir -p "$dist"
          if [ -d dist ]; then cp dist/*.whl "$dist"/; fi
        '';
        postFixup = (attrs.postFixup or "") + wrapPythonPrograms;
        installCheck = lib.optionalString (attrs ? pythonImportsCheck) ''
          PYTHONPATH="$out/${sitePackages}" ${host.python} -c 'import ${builtins.concatStringsSep ", " attrs.pythonImportsCheck}'
        '';
        passthru = {
          dependencies = attrs.dependencies or [ ];
          build-system = attrs.build-system or [ ];
          optional-dependencies = attrs.optional-dependencies or { };
          pyproject = attrs.pyproject or null;
        }
        // attrs.passthru or { };
      }
    );
  buildPythonPackage = fnOrAttrs: toPythonModule (mkPythonDerivation fnOrAttrs);
  # An application provides no module (python-packages-base.nix).
  buildPythonApplication = mkPythonDerivation;
  emptyModule =
    pname:
    buildPythonPackage {
      inherit pname;
      version = "0";
      installPhase = ''mkdir -p "$out/${sitePackages}"'';
    };
in
{
  inherit
    python
    buildPythonPackage
    buildPythonApplication
    toPythonModule
    hasPythonModule
    requiredPythonModules
    ;
  hatchling = emptyModule "hatchling";
  pyelftools = emptyModule "pyelftools";
  pytest = emptyModule "pytest";
  nox = emptyModule "nox";
  filelock = emptyModule "filelock";
  setuptools = emptyModule "setuptools";

  # pkgs/top-level/python-packages.nix
  triton = self.callPackage (import ./triton.nix { inherit host; }) { };
  triton-cuda = self.triton.override { cudaSupport = true; };
  triton-no-cuda = self.triton.override { cudaSupport = false; };
  triton-bin = self.callPackage (import ./triton-bin.nix { inherit host; }) { };
  torch = self.callPackage ./torch.nix { };
  # torch/bin.nix takes its `triton` (triton-bin) as it is, with or without CUDA.
  torch-bin = self.callPackage ./torch.nix { _tritonEffective = self.triton-bin; };
  # A package on top of torch (pkgs/development/python-modules/torchvision).
  torchvision = buildPythonPackage {
    pname = "torchvision";
    version = "0.26.0";
    installPhase = ''mkdir -p "$out/${sitePackages}/torchvision"'';
    dependencies = [ self.torch ];
  };
}
