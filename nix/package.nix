# The shim, as a Python package. With a manifest it carries it as
# triton_toolchain/manifest.json, the first place the shim looks after
# TRITON_TOOLCHAIN_MANIFEST (docs/manifest.md), so no wrapper is needed. `setupHook`
# (./overlay.nix writes it) acts in the shells and builds that have the shim as an input.
{
  lib,
  buildPythonPackage,
  hatchling,
  pyelftools,
  python,
  manifest ? null,
  setupHook ? null,
}:
let
  # The version is written once, as `__version__` in the package (pyproject.toml reads it
  # from there too).
  version = builtins.head (
    builtins.match ".*\n__version__ = \"([^\"]+)\".*" (
      builtins.readFile ../python/src/triton_toolchain/__init__.py
    )
  );
  inherit (lib.fileset)
    difference
    fileFilter
    maybeMissing
    toSource
    unions
    ;
  # What git does not track there (.gitignore): bytecode (__pycache__), build trees,
  # virtual environments.
  untracked = unions [
    (fileFilter (file: file.hasExt "pyc") ../python)
    (maybeMissing ../python/build)
    (maybeMissing ../python/dist)
    (maybeMissing ../python/.venv)
  ];
in
buildPythonPackage (
  {
    pname = "triton-toolchain";
    inherit version;
    pyproject = true;

    src = toSource {
      root = ../python;
      fileset = difference ../python untracked;
    };

    build-system = [ hatchling ];
    dependencies = [ pyelftools ];

    # The manifest, and its triton-toolchain.pc (`triton-toolchain pkg-config`) in
    # lib/pkgconfig for CMake, Meson and pkg-config; exit status 1 there only says that
    # the driver is missing, which the host that runs the program provides.
    postInstall = lib.optionalString (manifest != null) ''
      install -Dm644 ${manifest} "$out/${python.sitePackages}/triton_toolchain/manifest.json"
      HOME="$TMPDIR" PYTHONPATH="$out/${python.sitePackages}''${PYTHONPATH:+:$PYTHONPATH}" \
        ${python}/bin/${python.executable} -m triton_toolchain pkg-config -o "$out/lib/pkgconfig" \
        || [ $? -eq 1 ]
      test -s "$out/lib/pkgconfig/triton-toolchain.pc"
    '';

    pythonImportsCheck = [ "triton_toolchain" ];

    passthru = { inherit manifest; };

    meta = {
      description = "Tells Triton where its run-time toolchain is";
      license = lib.licenses.mit;
      mainProgram = "triton-toolchain";
    };
  }
  // lib.optionalAttrs (setupHook != null) { inherit setupHook; }
)
