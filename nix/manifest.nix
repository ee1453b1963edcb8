# The toolchain manifest, schema 2 (docs/manifest.md): the store paths Triton runs
# (ptxas & co., the C compiler), those torch.compile and C++/CUDA extensions build with
# (the C++ compiler, its omp.h, the CUDA toolkit root), includes and links, and where
# the driver is (NVIDIA's libcuda.so.1, AMD's HIP runtime libamdhip64.so).
{ lib }:
rec {
  /**
    How to find the `omp.h` that a compiler family's `-fopenmp` uses, given the
    wrapped compiler `cc` (a cc-wrapper, e.g. `stdenv.cc`), the platform it builds for
    and LLVM's OpenMP package; `null` where there is none to give.

    - gcc: its own. libgomp installs `omp.h` in GCC's private include directory,
      `lib/gcc/<target>/<version>/include` of the unwrapped compiler `cc.cc` (the
      `out` output: gcc's builder moves only `lib*.so*` to `lib`), which the compiler
      searches without being told.
    - clang: none of its own. nixpkgs builds LLVM's OpenMP apart, `llvmPackages.openmp`,
      whose headers are in its `dev` output (nixpkgs' torch points Inductor's
      `#include <omp.h>` there for a clang stdenv).
  */
  openmpIncludes = {
    gcc = a: "${a.cc.cc}/lib/gcc/${a.platform.config}/${a.cc.cc.version}/include";
    clang = a: if a.llvmOpenmp == null then null else "${lib.getInclude a.llvmOpenmp}/include";
  };

  /**
    The compiler family of a cc-wrapper (`isClang`, `isGNU`, as wrapCCWith passes
    them through from the unwrapped compiler): a name in `openmpIncludes`, or `null`.
  */
  compilerFamily =
    cc:
    if cc.isClang or false then
      "clang"
    else if cc.isGNU or false then
      "gcc"
    else
      null;

  /**
    The directory holding the `omp.h` that `cc` compiles OpenMP code with, or `null`
    (a compiler family `openmpIncludes` does not know, or clang without
    `llvmOpenmp`). Pure.

    # Type

    ```
    openmpInclude :: {
      cc :: Derivation;
      platform :: AttrSet;  # the platform cc builds for: its `config` names GCC's directory
      llvmOpenmp :: Derivation | Null ? null;
    } -> String | Null
    ```

    # Example

    ```nix
    openmpInclude { cc = pkgs.stdenv.cc; platform = pkgs.stdenv.hostPlatform; }
    => "/nix/store/...-gcc-14.3.0/lib/gcc/x86_64-unknown-linux-gnu/14.3.0/include"
    ```
  */
  openmpInclude =
    {
      cc,
      platform,
      llvmOpenmp ? null,
    }:
    let
      family = compilerFamily cc;
    in
    if family == null then
      null
    else
      openmpIncludes.${family} {
        inherit cc platform llvmOpenmp;
      };

  /**
    The manifest for a set of CUDA packages, a C/C++ compiler and a Python, as an
    attribute set. Pure: it only reads attributes. Versions are recorded so that the
    shim runs no process to learn them. Without CUDA (`cudaPackages = null`) it has
    the host's components only (`cc`, `cxx`, `openmp`, `python-headers`) and the
    driver's directory: CUDA's packages are then not touched.

    With a ROCm package set (`rocmPackages`, `null` for none), the directory of its HIP
    runtime, `libamdhip64.so` in `rocmPackages.clr`'s `lib/`, comes first in
    `driver_dirs`, before the host's `driverLink/lib` (on NixOS the ROCm runtime an
    administrator put into `hardware.graphics.extraPackages`): a manifest's driver
    directories serve the AMD backend too (the shim looks in each for
    `libamdhip64.so`, the NVIDIA backend for `libcuda.so.1`). The store's copy first,
    because it is the one nixpkgs' ROCm torch is built against (its RUNPATH), and a
    second HIP runtime beside one already loaded is refused. Triton's AMD backend (3.6
    and newer, every release nixpkgs builds) needs nothing else from ROCm: its package
    holds the HIP headers and device libraries and it links code objects in process
    (no `ld.lld`), so the manifest has no other ROCm entry.

    `cc` is a cc-wrapper: `cc` and `cxx` are its `cc` and `c++` (both names exist for
    gcc and clang). `openmp` is the directory holding omp.h (`openmpInclude`), left out
    when `null`; `cudaHome` a CUDA toolkit root of the same release as `cudaPackages`
    (`bin/nvcc`, `include/cuda.h`, `lib/libcudart.so`), left out when `null`.

    # Type

    ```
    manifestFromPackages :: {
      cudaPackages :: AttrSet | Null;
      rocmPackages :: AttrSet | Null ? null;
      python :: Derivation;
      cc :: Derivation;
      driverLink :: String;
      openmp :: String | Null ? null;
      cudaHome :: Derivation | Null ? null;
      strict :: Bool ? false;
    } -> AttrSet
    ```

    # Example

    ```nix
    manifestFromPackages {
      inherit (pkgs) cudaPackages;
      python = pkgs.python3;
      cc = pkgs.stdenv.cc;
      inherit (pkgs.addDriverRunpath) driverLink;
      cudaHome = pkgs.cudaPackages.cudatoolkit;
    }
    => {
      schema = 2;
      generator = "triton-toolchain flake (nix)";
      strict = false;
      driver_dirs = [ "/run/opengl-driver/lib" ];
      components.ptxas = { path = "/nix/store/...-cuda_nvcc-12.9.86/bin/ptxas"; version = "12.9"; };
      # ...
    }
    ```
  */
  manifestFromPackages =
    {
      cudaPackages,
      rocmPackages ? null,
      python,
      cc,
      driverLink,
      openmp ? null,
      cudaHome ? null,
      strict ? false,
    }:
    let
      fromCuda = cudaPackages != null;
      # The HIP runtime's directory (clr installs lib/libamdhip64.so), where ROCm is on.
      hipDirs = lib.optional (rocmPackages != null) "${lib.getLib rocmPackages.clr}/lib";
      # The set's release, else its nvcc's major.minor.
      nvccRelease = lib.versions.majorMinor cudaPackages.cuda_nvcc.version;
      release = cudaPackages.cudaMajorMinorVersion or nvccRelease;
      tool = package: name: {
        path = lib.getExe' package name;
        version = release;
      };
      path = p: { path = p; };
      # The cc-wrapper's names carry a prefix only when it builds for another platform.
      prefix = cc.targetPrefix or "";
      # CUDA 13 moved crt/host_config.h & co. from cuda_nvcc to cuda_crt. Every
      # cudaPackages set has the attribute; only 13.0 and newer have the package.
      crt =
        if cudaPackages ? cuda_crt && lib.versionAtLeast release "13.0" then
          cudaPackages.cuda_crt
        else
          cudaPackages.cuda_nvcc;
      # One line per component. Those of the host (no CUDA needed):
      hostComponents = {
        cc = path (lib.getExe' cc "${prefix}cc");
        cxx = path (lib.getExe' cc "${prefix}c++");
        python-headers = path "${python}/include/python${python.pythonVersion}";
      }
      // lib.optionalAttrs (openmp != null) { openmp = path openmp; };
      # Those of the CUDA package set:
      cudaComponents =
        let
          inherit (cudaPackages)
            cuda_nvcc
            cuda_cudart
            cuda_cuobjdump
            cuda_nvdisasm
            ;
        in
        {
          ptxas = tool cuda_nvcc "ptxas";
          # One CUDA release serves both; Triton 3.9 runs this one for sm_90 and newer.
          ptxas-blackwell = tool cuda_nvcc "ptxas";
          cuobjdump = tool cuda_cuobjdump "cuobjdump";
          nvdisasm = tool cuda_nvdisasm "nvdisasm";
          cuda-headers = path "${lib.getInclude cuda_cudart}/include";
          cuda-crt-headers = path "${lib.getInclude crt}/include";
          libdevice = path "${lib.getBin cuda_nvcc}/nvvm/libdevice/libdevice.10.bc";
          # A stub to link against; the driver itself is found at run time in driver_dirs.
          libcuda-link = path "${lib.getOutput "stubs" cuda_cudart}/lib/stubs";
        }
        // lib.optionalAttrs (cudaHome != null) {
          cuda-home = {
            path = "${cudaHome}";
            version = release;
          };
        };
    in
    {
      schema = 2;
      generator = "triton-toolchain flake (nix)";
      inherit strict;
      driver_dirs = hipDirs ++ [ "${driverLink}/lib" ];
      components = hostComponents // lib.optionalAttrs fromCuda cudaComponents;
    };

  /**
    Write a manifest attribute set into the store as JSON.

    # Type

    ```
    writeManifest :: AttrSet -> AttrSet -> Derivation
    ```

    # Example

    ```nix
    writeManifest pkgs (manifestFromPackages { ... })
    => «derivation /nix/store/...-triton-toolchain-manifest.json.drv»
    ```
  */
  writeManifest =
    pkgs: manifest: pkgs.writeText "triton-toolchain-manifest.json" (builtins.toJSON manifest);

  /**
    The manifest of a package set, as an attribute set, from (unless given): its
    `cudaPackages` (none where `config.cudaSupport` is off), its `rocmPackages` (none
    where `config.rocmSupport` is off), `python3`, the compiler that runs where Triton
    and torch run and builds for that machine
    (`pkgsHostHost.targetPackages.stdenv.cc`, the one nixpkgs' torch makes Inductor's
    default: `stdenv.cc` unless cross-compiling), the `omp.h` that compiler uses
    (`openmpInclude`; `llvmPackages.openmp`'s for clang), that CUDA set's merged
    toolkit `cudatoolkit` as the CUDA home, and `addDriverRunpath.driverLink`.

    # Type

    ```
    manifestFor :: AttrSet -> {
      cudaPackages :: AttrSet | Null ? (if pkgs.config.cudaSupport then pkgs.cudaPackages else null);
      rocmPackages :: AttrSet | Null ? (if pkgs.config.rocmSupport then pkgs.rocmPackages else null);
      python :: Derivation ? pkgs.python3;
      cc :: Derivation ? pkgs.pkgsHostHost.targetPackages.stdenv.cc;
      openmp :: String | Null ? openmpInclude { ... };
      cudaHome :: Derivation | Null ? cudaPackages.cudatoolkit;  # null: none
      strict :: Bool ? false;
    } -> AttrSet
    ```

    # Example

    ```nix
    (manifestFor pkgs { cudaPackages = pkgs.cudaPackages_13_0; }).components.ptxas.version
    => "13.0"
    ```
  */
  manifestFor =
    pkgs:
    {
      cudaPackages ? if pkgs.config.cudaSupport or false then pkgs.cudaPackages else null,
      rocmPackages ? if pkgs.config.rocmSupport or false then pkgs.rocmPackages else null,
      python ? pkgs.python3,
      cc ? pkgs.pkgsHostHost.targetPackages.stdenv.cc,
      openmp ? openmpInclude {
        inherit cc;
        platform = pkgs.stdenv.hostPlatform;
        # Read only for a clang `cc`.
        llvmOpenmp = pkgs.llvmPackages.openmp;
      },
      cudaHome ? if cudaPackages == null then null else cudaPackages.cudatoolkit,
      strict ? false,
    }:
    manifestFromPackages {
      inherit
        cudaPackages
        rocmPackages
        python
        cc
        openmp
        cudaHome
        strict
        ;
      inherit (pkgs.addDriverRunpath) driverLink;
    };

  /**
    `manifestFor`, written into the store.

    # Type

    ```
    mkManifest :: AttrSet -> AttrSet -> Derivation
    ```

    # Example

    ```nix
    mkManifest pkgs { strict = true; }
    => «derivation /nix/store/...-triton-toolchain-manifest.json.drv»
    ```
  */
  mkManifest = pkgs: args: writeManifest pkgs (manifestFor pkgs args);
}
