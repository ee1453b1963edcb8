# overlays.default: every Python package set gets `triton-toolchain`, and, in a
# package set with CUDA (`config.cudaSupport`), every Triton depends on a shim that
# carries the manifest of the CUDA package set that Triton is built with, and consults
# it when imported. Without CUDA, Triton, triton-no-cuda and the torch built on them
# are left exactly as they were (CUDA's packages are unfree and marked broken there),
# and `triton-toolchain` carries a manifest without CUDA components.
{ toolchainLib }:
final: prev:
let
  inherit (final) lib;

  # The shim, carrying the manifest of `cudaPackages` and this set's Python. Without a
  # CUDA home: `cudatoolkit` (every library of the release, gigabytes) would enter the
  # closure of every Triton, which needs none of it; wrappers and `lib.mkManifest` add
  # it where C++/CUDA extensions are built.
  shimFor =
    pyFinal: cudaPackages:
    pyFinal.triton-toolchain.override {
      manifest = toolchainLib.mkManifest final {
        inherit cudaPackages;
        inherit (pyFinal) python;
        cudaHome = null;
      };
    };

  # Triton depends on the shim, so the shim is importable wherever Triton is, and
  # activates it when imported (see ./triton-activate.py for why both). `dependencies`
  # is in passthru: mk-python-derivation.nix propagates the final
  # `passthru.dependencies`. toPythonModule computed `requiredPythonModules`, which
  # python.withPackages reads, before this override: it is recomputed.
  consultToolchain =
    pyFinal: shim: triton:
    triton.overrideAttrs (
      finalAttrs: prevAttrs: {
        postInstall = (prevAttrs.postInstall or "") + ''
          cat ${./triton-activate.py} >> "$out/${pyFinal.python.sitePackages}/triton/__init__.py"
        '';
        passthru = prevAttrs.passthru // {
          dependencies = (prevAttrs.passthru.dependencies or [ ]) ++ [ shim ];
          requiredPythonModules = pyFinal.requiredPythonModules finalAttrs.propagatedBuildInputs;
        };
      }
    );

  # A Triton of nixpkgs, re-exposed as a function of its arguments, so that
  # `.override` (triton-cuda and triton-no-cuda are `triton.override { cudaSupport =
  # ...; }`, torch's Triton is `triton-cuda.override { inherit cudaPackages; }`) still
  # works and tells which CUDA package set it is built with: nixpkgs' Triton does not
  # pass `cudaPackages` through. The arguments go on to Triton's own function, those it
  # declares (`lib.functionArgs triton.override`). `cudaSupport` defaults as in
  # triton/default.nix; triton-bin (bin.nix) has no such argument and needs CUDA
  # whenever it is built. A Triton that cannot be overridden is taken as it is, with
  # the set's `cudaPackages`.
  withToolchain =
    pyFinal: triton:
    pyFinal.callPackage (
      {
        config,
        cudaPackages,
        cudaSupport ? config.cudaSupport or false,
        ...
      }@args:
      let
        override = triton.override or (_: triton);
        built = override (builtins.intersectAttrs (lib.functionArgs override) args);
      in
      if cudaSupport then consultToolchain pyFinal (shimFor pyFinal cudaPackages) built else built
    ) { };
in
{
  pythonPackagesExtensions = prev.pythonPackagesExtensions ++ [
    (pyFinal: pyPrev: {
      triton-toolchain = pyFinal.callPackage ./package.nix {
        manifest = toolchainLib.mkManifest final { inherit (pyFinal) python; };
      };
      triton = withToolchain pyFinal pyPrev.triton;
      triton-bin = withToolchain pyFinal pyPrev.triton-bin;
    })
  ];
}
