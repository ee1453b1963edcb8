# wrap.nix: manifestEnv, wrapperFlags, exportUnlessSet.
{
  tt,
  fixtures,
  ...
}:
let
  env = tt.manifestEnv "/nix/store/m.json" (tt.manifestFromPackages fixtures.args);
in
{
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
  };  # The same exports as shell code, for the shim's setup hook: one line per variable.
  exportUnlessSetLines = {
    expr = tt.exportUnlessSet {
      CC = "/cc";
      CUDA_HOME = "/nix/store/cuda-merged";
    };
    expected = ''
      if [ -z "''${CC+set}" ]; then export CC=/cc; fi
      if [ -z "''${CUDA_HOME+set}" ] && [ -z "''${CUDA_PATH+set}" ]; then export CUDA_HOME=/nix/store/cuda-merged; fi
    '';
  };
  exportUnlessSetQuotes = {
    expr = tt.exportUnlessSet { TRITON_PTXAS_PATH = "/a b/ptxas"; };
    expected = "if [ -z \"\${TRITON_PTXAS_PATH+set}\" ]; then export TRITON_PTXAS_PATH='/a b/ptxas'; fi\n";
  };
}
