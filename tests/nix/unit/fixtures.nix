# What the unit tests build manifests from: derivations reduced to their paths (`fake`),
# a CUDA package set, a ROCm one, cc-wrappers around gcc and clang, a Python, a package set as
# manifestFor reads it.
{ lib }:
rec {
  fake =
    name: outputs:
    {
      type = "derivation";
      outPath = "/nix/store/${name}";
    }
    // builtins.mapAttrs (o: _: {
      outPath = "/nix/store/${name}-${o}";
      type = "derivation";
    }) outputs;
  cudaPackages = {
    cudaMajorMinorVersion = "12.8";
    cuda_nvcc = fake "nvcc" { };
    cuda_cudart = fake "cudart" {
      include = 1;
      stubs = 1;
    };
    cuda_cuobjdump = fake "cuobjdump" { };
    cuda_nvdisasm = fake "nvdisasm" { };
    cuda_crt = fake "crt" { };
    cudatoolkit = fake "cuda-merged" { };
  };
  # A ROCm package set: clr (outputs out and icd) holds lib/libamdhip64.so.
  rocmPackages.clr = fake "clr" { icd = 1; };
  # A cc-wrapper around gcc (passthru isGNU, cc, targetPrefix), and one around clang.
  gcc = fake "gcc" { } // {
    version = "14.3.0";
  };
  cc = fake "cc" { } // {
    isGNU = true;
    cc = gcc;
    targetPrefix = "";
  };
  clang = fake "clang-wrapper" { } // {
    isClang = true;
  };
  llvmOpenmp = fake "openmp" { dev = 1; };
  platform.config = "x86_64-unknown-linux-gnu";
  ompDir = "/nix/store/gcc/lib/gcc/x86_64-unknown-linux-gnu/14.3.0/include";
  args = {
    inherit cudaPackages cc;
    python = fake "python" { } // {
      pythonVersion = "3.12";
    };
    driverLink = "/run/opengl-driver";
    openmp = ompDir;
    cudaHome = cudaPackages.cudatoolkit;
  };
  # A package set as manifestFor reads it (native: the compiler that runs where the
  # programs run is its stdenv.cc).
  pkgs = cudaSupport: rec {
    config = { inherit cudaSupport; };
    inherit cudaPackages rocmPackages;
    python3 = args.python;
    stdenv = {
      inherit cc;
      hostPlatform = platform;
    };
    pkgsHostHost.targetPackages.stdenv = stdenv;
    llvmPackages.openmp = llvmOpenmp;
    addDriverRunpath.driverLink = "/run/opengl-driver";
  };
  hostNames = [
    "cc"
    "cxx"
    "openmp"
    "python-headers"
  ];
  tool = path: version: { inherit path version; };
}
