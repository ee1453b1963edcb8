# Stand-in cudaPackages (CUDA 12.8 layout: crt/ headers inside cuda_nvcc). ptxas
# answers --version like the real 12.8 one, appends its arguments to the file
# named by $TT_RECORD, and otherwise runs the host's real ptxas (host.json: a CUDA
# toolkit's, or the one in Triton's wheel).
{
  lib,
  mkDerivation,
  host,
}:
let
  meta.license = lib.licenses.nvidiaCudaRedist;
  banner = ''
    echo "ptxas: NVIDIA (R) Ptx optimizing assembler"
    echo "Cuda compilation tools, release 12.8, V12.8.93"
  '';
in
{
  cudaMajorMinorVersion = "12.8";

  cuda_nvcc = mkDerivation {
    pname = "cuda_nvcc";
    version = "12.8.93";
    meta = meta // {
      mainProgram = "nvcc";
    };
    buildCommand = ''
      mkdir -p "$out/bin" "$out/nvvm/libdevice" "$out/include/crt"
      cat > "$out/bin/ptxas" <<'SCRIPT'
      #!/bin/sh
      if [ -n "''${TT_RECORD:-}" ]; then echo "ptxas $*" >> "$TT_RECORD"; fi
      for a in "$@"; do
        if [ "$a" = --version ]; then
          ${banner}
          exit 0
        fi
      done
      exec ${host.ptxas} "$@"
      SCRIPT
      chmod +x "$out/bin/ptxas"
      cp ${host.libdevice} "$out/nvvm/libdevice/libdevice.10.bc"
      touch "$out/include/crt/host_config.h"
    '';
  };

  cuda_cudart = mkDerivation {
    pname = "cuda_cudart";
    version = "12.8.90";
    outputs = [
      "out"
      "include"
      "stubs"
    ];
    inherit meta;
    buildCommand = ''
      mkdir -p "$out" "$include/include" "$stubs/lib/stubs"
      cp ${host.cuda_include}/cuda.h "$include/include/"
      # A link stub, as the toolkit's (SONAME libcuda.so.1, with nixpkgs' libcuda.so.1
      # link): the launcher links against it and finds the real driver at run time.
      echo 'int cuDriverGetVersion(int *v) { return 1; }' > stub.c
      ${host.cc} -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$stubs/lib/stubs/libcuda.so" stub.c
      ln -s libcuda.so "$stubs/lib/stubs/libcuda.so.1"
    '';
  };

  cuda_crt = mkDerivation {
    pname = "cuda_crt";
    version = "12.8.93";
    inherit meta;
    buildCommand = ''mkdir -p "$out/include/crt"'';
  };
}
// lib.genAttrs [ "cuda_cuobjdump" "cuda_nvdisasm" ] (
  pname:
  let
    name = builtins.substring 5 (-1) pname;
  in
  mkDerivation {
    inherit pname;
    version = "12.8.90";
    meta = meta // {
      mainProgram = name;
    };
    # Only answers --version: the host has no ${name} to run.
    buildCommand = ''
      mkdir -p "$out/bin"
      cat > "$out/bin/${name}" <<'SCRIPT'
      #!/bin/sh
      [ "$1" = --version ] || exit 1
      echo "Cuda compilation tools, release 12.8, V12.8.93"
      SCRIPT
      chmod +x "$out/bin/${name}"
    '';
  }
)
