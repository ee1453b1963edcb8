# Unit tests of the pure Nix functions. Evaluates to the list of failures:
#   nix-instantiate --eval --strict --json tests/nix/unit.nix   => []
let
  lib = import ./nixpkgs/lib;
  tt = import ../../nix/lib.nix { inherit lib; };
  config = import ../../nix/config.nix { inherit lib; };
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
  manifest = tt.manifestFromPackages args;
  cuda13 = tt.manifestFromPackages (
    args
    // {
      cudaPackages = cudaPackages // {
        cudaMajorMinorVersion = "13.0";
      };
    }
  );
  # A package set as manifestFor reads it (native: the compiler that runs where the
  # programs run is its stdenv.cc).
  pkgs = cudaSupport: rec {
    config = { inherit cudaSupport; };
    inherit cudaPackages;
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
  env = tt.manifestEnv "/nix/store/m.json" manifest;
  tool = path: version: { inherit path version; };
  tests = {
    manifestShape = {
      expr = {
        inherit (manifest)
          schema
          strict
          driver_dirs
          generator
          ;
      };
      expected = {
        schema = 2;
        strict = false;
        driver_dirs = [ "/run/opengl-driver/lib" ];
        generator = "triton-toolchain flake (nix)";
      };
    };
    manifestPaths = {
      expr = manifest.components;
      expected = {
        ptxas = tool "/nix/store/nvcc/bin/ptxas" "12.8";
        ptxas-blackwell = tool "/nix/store/nvcc/bin/ptxas" "12.8";
        cuobjdump = tool "/nix/store/cuobjdump/bin/cuobjdump" "12.8";
        nvdisasm = tool "/nix/store/nvdisasm/bin/nvdisasm" "12.8";
        cc.path = "/nix/store/cc/bin/cc";
        cxx.path = "/nix/store/cc/bin/c++";
        openmp.path = ompDir;
        python-headers.path = "/nix/store/python/include/python3.12";
        cuda-headers.path = "/nix/store/cudart-include/include";
        cuda-crt-headers.path = "/nix/store/nvcc/include";
        libdevice.path = "/nix/store/nvcc/nvvm/libdevice/libdevice.10.bc";
        libcuda-link.path = "/nix/store/cudart-stubs/lib/stubs";
        cuda-home = tool "/nix/store/cuda-merged" "12.8";
      };
    };
    # The cc-wrapper's names carry its target prefix when it has one.
    compilersOfAPrefixedWrapper = {
      expr =
        let
          c =
            (tt.manifestFromPackages (
              args
              // {
                cc = cc // {
                  targetPrefix = "aarch64-unknown-linux-gnu-";
                };
              }
            )).components;
        in
        [
          c.cc.path
          c.cxx.path
        ];
      expected = [
        "/nix/store/cc/bin/aarch64-unknown-linux-gnu-cc"
        "/nix/store/cc/bin/aarch64-unknown-linux-gnu-c++"
      ];
    };
    # omp.h: gcc's own directory, LLVM's OpenMP for clang, none for another compiler.
    openmpOfEachCompiler = {
      expr =
        let
          omp =
            c:
            tt.openmpInclude {
              cc = c;
              inherit platform llvmOpenmp;
            };
        in
        map omp [
          cc
          clang
          (fake "tcc" { })
        ];
      expected = [
        ompDir
        "/nix/store/openmp-dev/include"
        null
      ];
    };
    openmpOfClangWithoutLlvmOpenmp = {
      expr = tt.openmpInclude {
        cc = clang;
        inherit platform;
      };
      expected = null;
    };
    withoutOpenmpOrCudaHome = {
      expr = builtins.attrNames (
        tt.manifestFromPackages (
          removeAttrs args [
            "openmp"
            "cudaHome"
          ]
        )
      ).components;
      expected = builtins.filter (n: n != "openmp" && n != "cuda-home") (
        builtins.attrNames manifest.components
      );
    };
    crtFromCudaCrtSince13 = {
      expr = cuda13.components.cuda-crt-headers.path;
      expected = "/nix/store/crt/include";
    };
    versionFromPackageWithoutMajorMinor = {
      expr =
        (tt.manifestFromPackages (
          args
          // {
            cudaPackages = removeAttrs cudaPackages [ "cudaMajorMinorVersion" ] // {
              cuda_nvcc = fake "nvcc" { } // {
                version = "12.6.85";
              };
            };
          }
        )).components.ptxas.version;
      expected = "12.6";
    };
    # Without CUDA, CUDA's packages are never read (here: a set that throws).
    withoutCudaOnlyHostComponents = {
      expr = builtins.attrNames (tt.manifestFromPackages (args // { cudaPackages = null; })).components;
      expected = hostNames;
    };
    manifestForFollowsCudaSupport = {
      expr = map (on: builtins.attrNames (tt.manifestFor (pkgs on) { }).components) [
        true
        false
      ];
      expected = [
        (builtins.attrNames manifest.components)
        hostNames
      ];
    };
    # manifestFor reads the run-time compiler, its omp.h, the set's cudatoolkit.
    manifestForIsManifestFromPackages = {
      expr = tt.manifestFor (pkgs true) { };
      expected = manifest;
    };
    manifestForTakesAnotherCudaSet = {
      expr =
        let
          c =
            (tt.manifestFor (pkgs true) {
              cudaPackages = cudaPackages // {
                cudaMajorMinorVersion = "13.0";
                cudatoolkit = fake "cuda-merged-13.0" { };
              };
            }).components;
        in
        [
          c.ptxas.version
          c.cuda-home
        ];
      expected = [
        "13.0"
        (tool "/nix/store/cuda-merged-13.0" "13.0")
      ];
    };
    manifestForWithoutCudaHome = {
      expr = (tt.manifestFor (pkgs true) { cudaHome = null; }).components ? cuda-home;
      expected = false;
    };
    strictPassedThrough = {
      expr = (tt.manifestFromPackages (args // { strict = true; })).strict;
      expected = true;
    };
    envVariables = {
      expr = env;
      expected = {
        TRITON_TOOLCHAIN_MANIFEST = "/nix/store/m.json";
        TRITON_PTXAS_PATH = "/nix/store/nvcc/bin/ptxas";
        TRITON_PTXAS_BLACKWELL_PATH = "/nix/store/nvcc/bin/ptxas";
        TRITON_CUOBJDUMP_PATH = "/nix/store/cuobjdump/bin/cuobjdump";
        TRITON_NVDISASM_PATH = "/nix/store/nvdisasm/bin/nvdisasm";
        TRITON_LIBDEVICE_PATH = "/nix/store/nvcc/nvvm/libdevice/libdevice.10.bc";
        TRITON_CUDART_PATH = "/nix/store/cudart-include/include";
        TRITON_CUDACRT_PATH = "/nix/store/nvcc/include";
        CC = "/nix/store/cc/bin/cc";
        CXX = "/nix/store/cc/bin/c++";
        CUDA_HOME = "/nix/store/cuda-merged";
      };
    };
    envOnlyGivenComponents = {
      expr = tt.manifestEnv "/m.json" { components.cc.path = "/cc"; };
      expected = {
        TRITON_TOOLCHAIN_MANIFEST = "/m.json";
        CC = "/cc";
      };
    };
    wrapperFlagsSetDefault = {
      expr = tt.wrapperFlags {
        CC = "/cc";
        TRITON_PTXAS_PATH = "/p";
      };
      expected = [
        "--set-default"
        "CC"
        "/cc"
        "--set-default"
        "TRITON_PTXAS_PATH"
        "/p"
      ];
    };
    # CUDA_HOME only where neither it nor CUDA_PATH (torch's other name) is set.
    wrapperFlagsCudaHome = {
      expr = tt.wrapperFlags { CUDA_HOME = "/nix/store/cuda-merged"; };
      expected = [
        "--run"
        ''if [ -z "''${CUDA_HOME+set}" ] && [ -z "''${CUDA_PATH+set}" ]; then export CUDA_HOME=/nix/store/cuda-merged; fi''
      ];
    };
    lockedTarball = {
      expr = tt.lockedTarball (builtins.fromJSON (builtins.readFile ../../flake.lock)) "nixpkgs";
      expected = {
        url = "https://github.com/NixOS/nixpkgs/archive/6201e203d09599479a3b3450ed24fa81537ebc4e.tar.gz";
        sha256 = "sha256-ZojAnPuCdy657PbTq5V0Y+AHKhZAIwSIT2cb8UgAz/U=";
      };
    };
    unfreeAccepted = {
      expr = map config.allowUnfreePredicate [
        { meta.license = lib.licenses.nvidiaCudaRedist; }
        {
          meta.license = [
            lib.licenses.nvidiaCuda
            lib.licenses.mit
          ];
        }
        { meta.license = lib.licenses.cudnnStandIn; }
        {
          meta.license = [
            lib.licenses.nvidiaCuda
            lib.licenses.cudnnStandIn
          ];
        }
        # triton-bin: accepted; another package under the same licence: refused.
        {
          pname = "triton";
          meta.license = [
            lib.licenses.unfreeRedistributable
            lib.licenses.mit
          ];
        }
        {
          pname = "some-wheel";
          meta.license = lib.licenses.unfreeRedistributable;
        }
      ];
      expected = [
        true
        true
        false
        false
        true
        false
      ];
    };
    cudaOn = {
      expr = config.cudaSupport;
      expected = true;
    };
  };
in
builtins.filter (t: t != null) (
  map (
    name:
    let
      t = tests.${name};
    in
    if t.expr == t.expected then
      null
    else
      {
        inherit name;
        inherit (t) expr expected;
      }
  ) (builtins.attrNames tests)
)
