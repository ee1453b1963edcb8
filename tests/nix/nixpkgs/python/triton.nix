# Stand-in for nixpkgs' source-built Triton (pkgs/development/python-modules/triton/
# default.nix, 3.6.0 to 3.7.1): the same arguments (`cudaSupport ? config.cudaSupport`,
# `cudaPackages`), `buildPythonPackage (finalAttrs: ...)`, licence and the changes that
# nixpkgs makes and the shim meets, on a copy of the host's installed Triton (host.json)
# instead of a build from source:
# - patches 0001 (launcher rpath to addDriverRunpath.driverLink/lib), 0002 (the
#   cuda_cudart stubs before ldconfig) and, with CUDA, 0003 (cuda_cudart's include
#   directory first), with the values nixpkgs substitutes (./triton-patches.py);
# - 3.7.1's postInstall: with CUDA, backends/nvidia/bin/{ptxas,ptxas-blackwell,
#   cuobjdump,nvdisasm} link to cudaPackages' tools; and its build.py default of CC,
#   stdenv.cc's cc.
# Like nixpkgs' (at 3.6.0 and 3.7.1), it does not pass `cudaPackages` through.
{ host }:
{
  lib,
  stdenv,
  config,
  buildPythonPackage,
  addDriverRunpath,
  cudaPackages,
  filelock,
  setuptools,
  python,
  writableTmpDirAsHomeHook,
  cudaSupport ? config.cudaSupport or false,
}:
buildPythonPackage (finalAttrs: {
  pname = "triton";
  version = host.triton_version;
  pyproject = true;

  src = host.triton;

  # The values nixpkgs' replaceVars puts into patches 0001-0003, and 3.7.1's CC default.
  patchValues = builtins.toJSON {
    ccCmdExtraFlags = "-Wl,-rpath,${addDriverRunpath.driverLink}/lib";
    libcudaStubsDir =
      if cudaSupport then "${lib.getOutput "stubs" cudaPackages.cuda_cudart}/lib/stubs" else null;
    cudaToolkitIncludeDirs =
      if cudaSupport then "${lib.getInclude cudaPackages.cuda_cudart}/include" else null;
    ccDefault = lib.getExe' stdenv.cc "cc";
  };

  # Importing Triton (pythonImportsCheck) writes its cache under HOME.
  nativeBuildInputs = [ writableTmpDirAsHomeHook ];

  installPhase = ''
    site="$out/${python.sitePackages}"
    mkdir -p "$site"
    ${host.python} ${./copy-tree.py} "$src" "$site/triton"
    for info in "$src"/../triton-*.dist-info; do cp -r "$info" "$site/"; done
    ${host.python} ${./triton-patches.py} "$site/triton" "$patchValues"
  '';

  postInstall = lib.optionalString cudaSupport ''
    bin="$out/${python.sitePackages}/triton/backends/nvidia/bin"
    mkdir -p "$bin"
    ln -sf ${lib.getExe' cudaPackages.cuda_nvcc "ptxas"} "$bin/ptxas"
    ln -sf ${lib.getExe' cudaPackages.cuda_nvcc "ptxas"} "$bin/ptxas-blackwell"
    ln -sf ${lib.getExe' cudaPackages.cuda_cuobjdump "cuobjdump"} "$bin/cuobjdump"
    ln -sf ${lib.getExe' cudaPackages.cuda_nvdisasm "nvdisasm"} "$bin/nvdisasm"
  '';

  dependencies = [
    filelock
    setuptools
  ];

  pythonImportsCheck = [ "triton" ];

  meta = {
    description = "Language and compiler for writing highly efficient custom Deep-Learning primitives";
    license = lib.licenses.mit;
  };
})
