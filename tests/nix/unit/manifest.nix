# manifest.nix: manifestFromPackages, manifestFor, openmpInclude.
{
  tt,
  fixtures,
  ...
}:
let
  inherit (fixtures)
    fake
    cudaPackages
    rocmPackages
    cc
    clang
    llvmOpenmp
    platform
    ompDir
    args
    pkgs
    hostNames
    tool
    ;
  manifest = tt.manifestFromPackages args;
  cuda13 = tt.manifestFromPackages (
    args
    // {
      cudaPackages = cudaPackages // {
        cudaMajorMinorVersion = "13.0";
      };
    }
  );
in
{
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
    expr =
      let
        withoutCuda = tt.manifestFromPackages (args // { cudaPackages = null; });
      in
      builtins.attrNames withoutCuda.components;
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
  # ROCm: the HIP runtime's directory (clr's lib/, where libamdhip64.so is) comes
  # first in driver_dirs, the host's place after it; no component is added.
  rocmNamesTheHipRuntimeFirst = {
    expr =
      let
        m = tt.manifestFromPackages (
          args
          // {
            cudaPackages = null;
            inherit rocmPackages;
          }
        );
      in
      {
        inherit (m) driver_dirs;
        components = builtins.attrNames m.components;
      };
    expected = {
      driver_dirs = [
        "/nix/store/clr/lib"
        "/run/opengl-driver/lib"
      ];
      components = hostNames;
    };
  };
  # Both on: CUDA's components as without ROCm, the HIP runtime's directory first.
  rocmBesideCudaKeepsCudasComponents = {
    expr =
      let
        m = tt.manifestFromPackages (args // { inherit rocmPackages; });
      in
      [
        (m.components == manifest.components)
        m.driver_dirs
      ];
    expected = [
      true
      [
        "/nix/store/clr/lib"
        "/run/opengl-driver/lib"
      ]
    ];
  };
  # manifestFor follows config.rocmSupport; without it, rocmPackages is never read
  # (here: a set that throws).
  manifestForFollowsRocmSupport = {
    expr =
      map
        (
          on:
          (tt.manifestFor (
            pkgs false
            // {
              config.rocmSupport = on;
              rocmPackages = if on then rocmPackages else throw "rocmPackages read";
            }
          ) { }).driver_dirs
        )
        [
          true
          false
        ];
    expected = [
      [
        "/nix/store/clr/lib"
        "/run/opengl-driver/lib"
      ]
      [ "/run/opengl-driver/lib" ]
    ];
  };
}
