# The flake's overlays. Both give every Python package set `triton-toolchain` (the shim,
# carrying the manifest of that set) and, in a package set with CUDA
# (`config.cudaSupport`) or ROCm (`config.rocmSupport`), give every Triton (`triton`,
# `triton-cuda`, `triton-bin`, torch's) the shim carrying the manifest of the CUDA
# package set that Triton is built with, and of the set's `rocmPackages` (nixpkgs'
# Triton is one derivation for both: its AMD backend finds the HIP runtime at run
# time). Without either, every Triton and the torch built on it are left exactly as
# they were (CUDA's packages are unfree and marked broken there).
#
# - `default`: no derivation changes. The shim goes into Triton's
#   `passthru.requiredPythonModules`, which `python.withPackages` reads and the
#   derivation does not: Triton, torch and everything on top keep their drvPath, so a
#   binary cache still serves them, and every `withPackages` environment holding
#   Triton holds the shim, whose `.pth` hook activates it.
# - `rebuild-triton`: Triton depends on the shim (`propagatedBuildInputs`) and has
#   ./triton-activate.py appended to `triton/__init__.py`, so Triton activates the shim
#   in every environment, `PYTHONPATH` alone included. Cost: Triton is built from
#   source, and so are torch and everything on top of it (no binary cache has them).
{ toolchainLib }:
let
  # The shim carrying `manifest` (an attribute set, as `lib.manifestFor` gives it): the
  # file inside its package, and a setup hook for the shells and builds that have the
  # shim as an input (`nix-shell -p`), where Python finds packages through `PYTHONPATH`
  # and reads no `.pth` file there. The hook exports the manifest and its variables
  # (each unless set), which Triton reads itself, and puts the shim's site-packages on
  # `NIX_PYTHONPATH`, which nixpkgs' Python (its sitecustomize.py) hands to
  # `site.addsitedir`, running the `.pth` hook, and removes from the environment of its
  # child processes. `nix-support` is not linked into `withPackages` environments
  # (buildEnv skips it): the hook acts only where the shim itself is an input.
  shimWith =
    pkgs: pyFinal: manifest:
    let
      file = toolchainLib.writeManifest pkgs manifest;
    in
    pyFinal.callPackage ./package.nix {
      manifest = file;
      setupHook = pkgs.writeText "triton-toolchain-setup-hook.sh" (
        toolchainLib.exportUnlessSet (toolchainLib.manifestEnv file manifest)
        + ''
          export NIX_PYTHONPATH="@out@/${pyFinal.python.sitePackages}''${NIX_PYTHONPATH:+:$NIX_PYTHONPATH}"
        ''
      );
    };

  # The shim for a Triton built with `cudaPackages` (`null`: no CUDA) in a set whose
  # ROCm is `rocmPackages` (`null`: none). Without a CUDA home: `cudatoolkit`
  # (every library of the release, gigabytes) would enter the closure of every
  # environment holding Triton, which needs none of it; wrappers and `lib.mkManifest`
  # add it where C++/CUDA extensions are built. Its meta.priority is one above the
  # default (5): in an environment that also holds `ps.triton-toolchain` (another
  # manifest, the same files), buildEnv takes that one's files instead of failing on
  # the collision. Like `passthru`, `meta` is no input of the derivation.
  shimFor =
    pkgs: pyFinal: cudaPackages: rocmPackages:
    let
      shim = shimWith pkgs pyFinal (
        toolchainLib.manifestFor pkgs {
          inherit cudaPackages rocmPackages;
          inherit (pyFinal) python;
          cudaHome = null;
        }
      );
    in
    shim.overrideAttrs (prevAttrs: {
      meta = prevAttrs.meta // {
        priority = 6;
      };
    });

  # How a Triton gets the shim, by overlay. Both recompute `requiredPythonModules`
  # (what python.withPackages reads): toPythonModule computed it before any override,
  # from the inputs of the time.
  attachments = {
    # passthru only: not part of the derivation, so the drvPath stays.
    default =
      pyFinal: shim: triton:
      triton.overrideAttrs (prevAttrs: {
        passthru = prevAttrs.passthru // {
          requiredPythonModules = pyFinal.requiredPythonModules (
            triton.propagatedBuildInputs ++ [ shim ]
          );
        };
      });

    # A dependency, and the activation appended to Triton's __init__ (see
    # ./triton-activate.py for why both). `dependencies` is in passthru:
    # mk-python-derivation.nix propagates the final `passthru.dependencies`.
    rebuild-triton =
      pyFinal: shim: triton:
      triton.overrideAttrs (
        finalAttrs: prevAttrs: {
          postInstall = (prevAttrs.postInstall or "") + ''
            cat ${./triton-activate.py} >> "$out/${pyFinal.python.sitePackages}/triton/__init__.py"
          '';
          passthru = prevAttrs.passthru // {
            dependencies = (prevAttrs.passthru.dependencies or [ ]) ++ [ shim ];
            requiredPythonModules = pyFinal.requiredPythonModules finalAttrs.propagatedBuildInputs;
          };
        }
      );
  };

  overlayWith =
    attach: final: prev:
    let
      inherit (final) lib;

      # A Triton of nixpkgs, re-exposed as a function of its arguments, so that
      # `.override` (triton-cuda and triton-no-cuda are `triton.override { cudaSupport =
      # ...; }`, torch's Triton is `triton-cuda.override { inherit cudaPackages; }`)
      # still works and tells which CUDA package set it is built with: nixpkgs' Triton
      # does not pass `cudaPackages` through. The arguments go on to Triton's own
      # function, those it declares (`lib.functionArgs triton.override`): the same
      # arguments, so the same derivation. `cudaSupport` defaults as in
      # triton/default.nix; triton-bin (bin.nix) has no such argument and needs CUDA
      # whenever it is built. A Triton that cannot be overridden is taken as it is,
      # with the set's `cudaPackages`. nixpkgs' Triton has no `rocmSupport` (it "always
      # supports ROCm": the same derivation with and without it); the one here defaults
      # to `config.rocmSupport`, as torch's does, and says whether the manifest names
      # the HIP runtime of the set's `rocmPackages`.
      withToolchain =
        pyFinal: triton:
        pyFinal.callPackage (
          {
            config,
            cudaPackages,
            rocmPackages,
            cudaSupport ? config.cudaSupport or false,
            rocmSupport ? config.rocmSupport or false,
            ...
          }@args:
          let
            override = triton.override or (_: triton);
            built = override (builtins.intersectAttrs (lib.functionArgs override) args);
            shim = shimFor final pyFinal (if cudaSupport then cudaPackages else null) (
              if rocmSupport then rocmPackages else null
            );
          in
          if cudaSupport || rocmSupport then attach pyFinal shim built else built
        ) { };
    in
    {
      pythonPackagesExtensions = prev.pythonPackagesExtensions ++ [
        (pyFinal: pyPrev: {
          triton-toolchain = shimWith final pyFinal (
            toolchainLib.manifestFor final { inherit (pyFinal) python; }
          );
          triton = withToolchain pyFinal pyPrev.triton;
          triton-bin = withToolchain pyFinal pyPrev.triton-bin;
        })
      ];
    };
in
builtins.mapAttrs (_: overlayWith) attachments
