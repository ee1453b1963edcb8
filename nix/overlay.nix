# overlays.default: every Python package set gets `triton-toolchain` (carrying
# the manifest of this package set), and Triton consults it.
{ toolchainLib }:
final: prev:
let
  # Triton depends on the shim, so the shim is importable wherever Triton is,
  # and activates it when imported (see ./triton-activate.py for why both).
  # triton-cuda and triton-no-cuda are `triton.override { ... }` in nixpkgs and
  # torch takes `triton-cuda` (or `triton`) as an argument: they follow, because
  # `.override` re-applies `overrideAttrs`.
  consultToolchain =
    pyFinal: triton:
    triton.overrideAttrs (old: {
      propagatedBuildInputs = (old.propagatedBuildInputs or [ ]) ++ [ pyFinal.triton-toolchain ];
      postInstall = (old.postInstall or "") + ''
        cat ${./triton-activate.py} >> "$out/${pyFinal.python.sitePackages}/triton/__init__.py"
      '';
      # toPythonModule computed this from the inputs before this override, and
      # python.withPackages reads it: recompute it so the shim comes along.
      passthru = (old.passthru or { }) // {
        requiredPythonModules = pyFinal.requiredPythonModules (
          (old.propagatedBuildInputs or [ ]) ++ [ pyFinal.triton-toolchain ]
        );
      };
    });
in
{
  pythonPackagesExtensions = prev.pythonPackagesExtensions ++ [
    (pyFinal: pyPrev: {
      triton-toolchain = pyFinal.callPackage ./package.nix {
        manifest = toolchainLib.mkManifest final { inherit (pyFinal) python; };
      };
      triton = consultToolchain pyFinal pyPrev.triton;
      triton-bin = consultToolchain pyFinal pyPrev.triton-bin;
    })
  ];
}
