# The toolchain manifest, schema 1 (docs/manifest.md): the store paths Triton
# runs (ptxas & co., the C compiler), includes and links, and where the driver is.
{ lib }:
rec {
  /**
    The manifest for a set of CUDA packages, a C compiler and a Python, as an
    attribute set. Pure: it only reads attributes. Versions are recorded so that
    the shim runs no process to learn them. Without CUDA (`cudaPackages = null`)
    it has the host's components only (`cc`, `python-headers`) and the driver's
    directory: CUDA's packages are then not touched.

    # Type

    ```
    manifestFromPackages :: {
      cudaPackages :: AttrSet | Null;
      python :: Derivation;
      cc :: Derivation;
      driverLink :: String;
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
    }
    => {
      schema = 1;
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
      python,
      cc,
      driverLink,
      strict ? false,
    }:
    let
      fromCuda = cudaPackages != null;
      release =
        cudaPackages.cudaMajorMinorVersion or (lib.versions.majorMinor cudaPackages.cuda_nvcc.version);
      tool = package: name: {
        path = lib.getExe' package name;
        version = release;
      };
      path = p: { path = p; };
      # CUDA 13 moved crt/host_config.h & co. from cuda_nvcc to cuda_crt. Every
      # cudaPackages set has the attribute; only 13.0 and newer have the package.
      crt =
        if cudaPackages ? cuda_crt && lib.versionAtLeast release "13.0" then
          cudaPackages.cuda_crt
        else
          cudaPackages.cuda_nvcc;
      # One line per component. Those of the host (no CUDA needed):
      hostComponents = {
        cc = path (lib.getExe' cc "cc");
        python-headers = path "${python}/include/python${python.pythonVersion}";
      };
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
        };
    in
    {
      schema = 1;
      generator = "triton-toolchain flake (nix)";
      inherit strict;
      driver_dirs = [ "${driverLink}/lib" ];
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
    The manifest of a package set, as an attribute set: its `cudaPackages` (none
    where `config.cudaSupport` is off), `python3`, `stdenv.cc` and
    `addDriverRunpath.driverLink` unless given.

    # Type

    ```
    manifestFor :: AttrSet -> {
      cudaPackages :: AttrSet | Null ? (if pkgs.config.cudaSupport then pkgs.cudaPackages else null);
      python :: Derivation ? pkgs.python3;
      cc :: Derivation ? pkgs.stdenv.cc;
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
      python ? pkgs.python3,
      cc ? pkgs.stdenv.cc,
      strict ? false,
    }:
    manifestFromPackages {
      inherit
        cudaPackages
        python
        cc
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
