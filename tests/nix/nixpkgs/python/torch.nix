# Stand-in for nixpkgs' torch (pkgs/development/python-modules/torch/source/default.nix):
# Triton comes in through `_tritonEffective`, `triton-cuda.override { inherit
# cudaPackages; }` with CUDA, else `triton`; torch-bin (torch/bin/default.nix, given
# `triton = triton-bin` in python-packages.nix) depends on that Triton as it is, here
# through `_tritonEffective`. Only the Triton dependency is modelled.
{
  lib,
  config,
  buildPythonPackage,
  python,
  cudaPackages,
  triton,
  triton-cuda,
  cudaSupport ? config.cudaSupport or false,
  _tritonEffective ? if cudaSupport then triton-cuda.override { inherit cudaPackages; } else triton,
}:
buildPythonPackage {
  pname = "torch";
  version = "2.11.0";
  installPhase = ''mkdir -p "$out/${python.sitePackages}/torch"'';
  dependencies = [ _tritonEffective ];
  passthru.triton = _tritonEffective;
  meta.license = lib.licenses.mit;
}
