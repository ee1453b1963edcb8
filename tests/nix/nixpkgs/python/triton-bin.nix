# Stand-in for nixpkgs' triton-bin (pkgs/development/python-modules/triton/bin.nix): the
# PyPI wheel (here ./make-wheel.py's, with a bundled ptxas), `format = "wheel"`, the
# same arguments, the licence `[ unfreeRedistributable mit ]` (it bundles NVIDIA's
# ptxas), and bin.nix's postFixup, which links cuda_nvcc's ptxas into
# triton/third_party/cuda/bin whether or not CUDA is enabled.
{ host }:
{
  lib,
  stdenv,
  cudaPackages,
  buildPythonPackage,
  python,
}:
let
  tag = "cp${builtins.replaceStrings [ "." ] [ "" ] python.pythonVersion}";
in
buildPythonPackage (finalAttrs: {
  pname = "triton";
  version = "3.6.0";
  format = "wheel";

  # fetchurl of the wheel, here made offline.
  src = stdenv.mkDerivation {
    name = "triton-${finalAttrs.version}-${tag}-wheel";
    buildCommand = ''
      ${host.python} ${./make-wheel.py} ${finalAttrs.version} ${tag} "$out"
    '';
  };

  postFixup = ''
    mkdir -p $out/${python.sitePackages}/triton/third_party/cuda/bin/
    ln -s ${cudaPackages.cuda_nvcc}/bin/ptxas $out/${python.sitePackages}/triton/third_party/cuda/bin/
  '';

  meta = {
    description = "Language and compiler for custom Deep Learning operations";
    license = with lib.licenses; [
      unfreeRedistributable
      mit
    ];
  };
})
