# Running a program with the toolchain: the manifest and its components' variables
# (Triton's, torch's CXX and CUDA_HOME) exported, each only where the user has not set
# it (makeWrapper --set-default; CUDA_HOME not where CUDA_PATH is set either).
{
  lib,
  manifestLib,
}:
let
  # The shim's table (python/src/triton_toolchain/variables.json, generated from
  # _catalog.wrapper_variables() and kept equal to it by tests/test_catalog.py).
  shim = builtins.fromJSON (builtins.readFile ../python/src/triton_toolchain/variables.json);
in
rec {
  # Component → the variable the wrapper exports with the component's path: those
  # Triton reads, and torch's CXX (TorchInductor's C++ builds, cpp_extension) and
  # CUDA_HOME (cpp_extension); the shim's _catalog.exported_variables(). No
  # TRITON_LIBCUDA_PATH: the manifest's libcuda-link is a link stub, and the shim picks
  # the run-time driver itself. (openmp has none: torch reads no variable for omp.h;
  # the shim, not the wrapper, appends its directory to CPATH.)
  tritonVariables = shim.exported;

  # Variables whose setting the user may have made under another name, which then
  # wins as well: torch takes CUDA_HOME, else CUDA_PATH (cpp_extension's
  # _find_cuda_home), so CUDA_HOME is exported only where neither is set
  # (_catalog's also_read).
  sameSettingAs = shim.also_read;

  /**
    The environment a wrapper exports for a manifest written at `manifestFile`.

    # Type

    ```
    manifestEnv :: String -> AttrSet -> AttrSet
    ```

    # Example

    ```nix
    manifestEnv "/nix/store/...-triton-toolchain-manifest.json" {
      components.ptxas.path = "/nix/store/...-cuda_nvcc/bin/ptxas";
    }
    => {
      TRITON_TOOLCHAIN_MANIFEST = "/nix/store/...-triton-toolchain-manifest.json";
      TRITON_PTXAS_PATH = "/nix/store/...-cuda_nvcc/bin/ptxas";
    }
    ```
  */
  manifestEnv =
    manifestFile: manifest:
    let
      given = builtins.filter (c: manifest.components ? ${c}) (builtins.attrNames tritonVariables);
    in
    builtins.listToAttrs (
      map (c: {
        name = tritonVariables.${c};
        value = manifest.components.${c}.path;
      }) given
    )
    // {
      TRITON_TOOLCHAIN_MANIFEST = "${manifestFile}";
    };

  /**
    The shell test that none of a variable's names is set: `name` and, for a variable
    of `sameSettingAs`, its other names.

    # Type

    ```
    noneSet :: String -> String
    ```

    # Example

    ```nix
    noneSet "CUDA_HOME"
    => "[ -z \"\${CUDA_HOME+set}\" ] && [ -z \"\${CUDA_PATH+set}\" ]"
    ```
  */
  noneSet =
    name:
    lib.concatMapStringsSep " && " (n: ''[ -z "''${${n}+set}" ]'') (
      [ name ] ++ sameSettingAs.${name} or [ ]
    );

  /**
    makeWrapper flags that export each variable unless it is already set (or, for a
    variable of `sameSettingAs`, unless one of its other names is).

    # Type

    ```
    wrapperFlags :: AttrSet -> [ String ]
    ```

    # Example

    ```nix
    wrapperFlags { CC = "/nix/store/...-gcc-wrapper/bin/cc"; }
    => [ "--set-default" "CC" "/nix/store/...-gcc-wrapper/bin/cc" ]
    wrapperFlags { CUDA_HOME = "/nix/store/...-cuda-merged-12.9"; }
    => [ "--run" "if [ -z \"\${CUDA_HOME+set}\" ] && [ -z \"\${CUDA_PATH+set}\" ]; then export CUDA_HOME=/nix/store/...-cuda-merged-12.9; fi" ]
    ```
  */
  wrapperFlags =
    env:
    let
      flags =
        name:
        if sameSettingAs ? ${name} then
          [
            "--run"
            (exportLine env name)
          ]
        else
          [
            "--set-default"
            name
            env.${name}
          ];
    in
    builtins.concatMap flags (builtins.attrNames env);

  # One variable of `env`, exported where none of its names is set.
  exportLine =
    env: name: "if ${noneSet name}; then export ${name}=${lib.escapeShellArg env.${name}}; fi";

  /**
    Shell code that exports each variable unless it is already set (or, for a variable
    of `sameSettingAs`, unless one of its other names is), as `wrapperFlags` does: for a
    setup hook. One line per variable.

    # Type

    ```
    exportUnlessSet :: AttrSet -> String
    ```

    # Example

    ```nix
    exportUnlessSet { CC = "/nix/store/...-gcc-wrapper/bin/cc"; }
    => "if [ -z \"\${CC+set}\" ]; then export CC=/nix/store/...-gcc-wrapper/bin/cc; fi\n"
    ```
  */
  exportUnlessSet =
    env: builtins.concatStringsSep "" (map (n: exportLine env n + "\n") (builtins.attrNames env));

  /**
    Wrap a program so that it runs with the toolchain of `pkgs` (or of the
    manifest given): `$out/bin/<name>`.

    # Type

    ```
    wrapWithToolchain :: AttrSet -> {
      program :: String;
      name :: String ? baseNameOf program;  # without its store context
      manifest :: AttrSet ? manifestFor pkgs { };
      extraFlags :: [ String ] ? [ ];
    } -> Derivation
    ```

    # Example

    ```nix
    wrapWithToolchain pkgs { program = lib.getExe' env "python3"; }
    => «derivation /nix/store/...-python3-with-triton-toolchain.drv»
    ```
  */
  wrapWithToolchain =
    pkgs:
    {
      program,
      name ? builtins.unsafeDiscardStringContext (baseNameOf program),
      manifest ? null,
      extraFlags ? [ ],
    }:
    let
      attrs = if manifest != null then manifest else manifestLib.manifestFor pkgs { };
      manifestFile = manifestLib.writeManifest pkgs attrs;
      flags = wrapperFlags (manifestEnv manifestFile attrs) ++ extraFlags;
    in
    pkgs.runCommand "${name}-with-triton-toolchain"
      {
        nativeBuildInputs = [ pkgs.makeWrapper ];
        passthru = {
          manifest = attrs;
          inherit manifestFile;
        };
        meta.mainProgram = name;
      }
      ''
        makeWrapper ${lib.escapeShellArg program} "$out/bin/${name}" ${lib.escapeShellArgs flags}
      '';
}
