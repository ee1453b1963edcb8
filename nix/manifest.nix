# The toolchain manifest, schema 1 (docs/manifest.md): the store paths Triton
# runs (ptxas & co., the C compiler), includes and links, and where the driver is.
{ lib }:
rec {
  /**
    The manifest for a set of CUDA packages, a C compiler and a Python, as an
    attribute set. Pure: it only reads attributes. Versions are recorded so that
    the shim runs no process to learn them.

    # Type

    ```
    manifestFromPackages :: {
      cudaPackages :: AttrSet;
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
      components.ptxas = { path = "/nix/store/...-cuda_nvcc-12.8.93/bin/ptxas"; version = "12.8"; };
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
      inherit (cudaPackages)
        cuda_nvcc
        cuda_cudart
        cuda_cuobjdump
        cuda_nvdisasm
        ;
      release = cudaPackages.cudaMajorMinorVersion or (lib.versions.majorMinor cuda_nvcc.version);
      # CUDA 13 moved crt/host_config.h & co. from cuda_nvcc to cuda_crt. Every
      # cudaPackages set has the attribute; only 13.0 and newer have the files.
      crt =
        if cudaPackages ? cuda_crt && lib.versionAtLeast release "13.0" then
          cudaPackages.cuda_crt
        else
          cuda_nvcc;
      tool = package: name: {
        path = lib.getExe' package name;
        version = release;
      };
      path = p: { path = p; };
    in
    {
      schema = 1;
      generator = "triton-toolchain flake (nix)";
      inherit strict;
      driver_dirs = [ "${driverLink}/lib" ];
      components = {
        ptxas = tool cuda_nvcc "ptxas";
        # One CUDA release serves both; Triton 3.9 runs this one for sm_90 and newer.
        ptxas-blackwell = tool cuda_nvcc "ptxas";
        cuobjdump = tool cuda_cuobjdump "cuobjdump";
        nvdisasm = tool cuda_nvdisasm "nvdisasm";
        cc = path (lib.getExe' cc "cc");
        python-headers = path "${python}/include/python${python.pythonVersion}";
        cuda-headers = path "${lib.getInclude cuda_cudart}/include";
        cuda-crt-headers = path "${lib.getInclude crt}/include";
        libdevice = path "${lib.getBin cuda_nvcc}/nvvm/libdevice/libdevice.10.bc";
        # A stub to link against; the driver itself is found at run time in driver_dirs.
        libcuda-link = path "${lib.getOutput "stubs" cuda_cudart}/lib/stubs";
      };
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
    The manifest of a package set, in the store: its `cudaPackages`, `python3`,
    `stdenv.cc` and `addDriverRunpath.driverLink` unless given.

    # Type

    ```
    mkManifest :: AttrSet -> {
      cudaPackages :: AttrSet ? pkgs.cudaPackages;
      python :: Derivation ? pkgs.python3;
      cc :: Derivation ? pkgs.stdenv.cc;
      strict :: Bool ? false;
    } -> Derivation
    ```

    # Example

    ```nix
    mkManifest pkgs { strict = true; }
    => «derivation /nix/store/...-triton-toolchain-manifest.json.drv»
    ```
  */
  mkManifest =
    pkgs:
    {
      cudaPackages ? pkgs.cudaPackages,
      python ? pkgs.python3,
      cc ? pkgs.stdenv.cc,
      strict ? false,
    }:
    writeManifest pkgs (manifestFromPackages {
      inherit
        cudaPackages
        python
        cc
        strict
        ;
      inherit (pkgs.addDriverRunpath) driverLink;
    });
}
