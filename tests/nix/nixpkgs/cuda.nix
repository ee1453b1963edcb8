# Stand-in CUDA package sets (pkgs/development/cuda-modules): cudaPackages_12_9 (the
# default, `cudaPackages`) and cudaPackages_13_0, with nixpkgs' output names and
# layouts, licences and strictness:
#
# - every package carries `lib.licenses.nvidiaCudaRedist` (unfree) and is
#   `meta.broken` unless `config.cudaSupport` (buildRedist's brokenAssertions:
#   "CUDA support is enabled by config.cudaSupport");
# - cuda_nvcc has one output, `out` (bin/ with nvcc and ptxas, include/,
#   nvvm/libdevice/); CUDA 12's CRT headers (include/crt/host_config.h) are in
#   cuda_nvcc, CUDA 13's in cuda_crt; CUDA 12.9 has no cuda_crt redistributable, so
#   its `cuda_crt` is unavailable;
# - cuda_cudart has outputs out dev include lib static stubs: cuda.h (defining the
#   set's CUDA_VERSION) in `include`, libcudart.so in `lib`, the link stub
#   lib/stubs/libcuda.so (SONAME libcuda.so.1) and its libcuda.so.1 link in `stubs`,
#   with links to both in the output's lib/ (cuda_cudart.nix's postInstall);
# - cudatoolkit (packages/cudatoolkit.nix): a symlinkJoin "cuda-merged-<release>" of
#   every output but `static` of the packages above (cuda_crt from 13.0 on).
#
# ptxas answers --version with the set's release, appends its arguments to the file
# named by $TT_RECORD, and otherwise runs the host's real ptxas (host.json: a CUDA
# toolkit's, or the one in Triton's wheel). nvcc, cuobjdump and nvdisasm only answer
# --version. cuda.h is the host's with the set's CUDA_VERSION (the header uses the
# macro nowhere else).
{
  lib,
  config,
  stdenv,
  symlinkJoin,
  host,
}:
let
  mkCudaPackages =
    {
      cudaMajorMinorVersion,
      versions,
    }:
    let
      broken = !(config.cudaSupport or false);
      redist =
        pname: attrs:
        stdenv.mkDerivation (
          {
            inherit pname;
            version = versions.${pname};
            name = "cuda${cudaMajorMinorVersion}-${pname}-${versions.${pname}}";
          }
          // attrs
          // {
            meta = {
              license = lib.licenses.nvidiaCudaRedist;
              inherit broken;
              brokenReason = "CUDA support is enabled by config.cudaSupport";
            }
            // attrs.meta or { };
          }
        );
      banner = "Cuda compilation tools, release ${cudaMajorMinorVersion}, V${versions.cuda_nvcc}";
      cudaAtLeast = lib.versionAtLeast cudaMajorMinorVersion;
      major = lib.versions.major cudaMajorMinorVersion;
      # cuda.h's CUDA_VERSION: 1000 * major + 10 * minor (12090 for 12.9).
      cudaVersionNumber = toString (
        builtins.fromJSON major * 1000
        + builtins.fromJSON (lib.versions.minor cudaMajorMinorVersion) * 10
      );
      # Every output but the static one (cudatoolkit.nix's getAllOutputs).
      allOutputsButStatic =
        p:
        builtins.concatMap (o: lib.optionals (o != "static") [ p.${o} ]) (p.outputs or [ "out" ]);
      crtHeaders = ''
        mkdir -p "$out/include/crt"
        echo '/* stand-in */' > "$out/include/crt/host_config.h"
      '';
      versionOnly = name: {
        meta.mainProgram = name;
        # Only answers --version: the host has no ${name} to run.
        buildCommand = ''
          mkdir -p "$out/bin"
          cat > "$out/bin/${name}" <<'SCRIPT'
          #!/bin/sh
          [ "$1" = --version ] || exit 1
          echo "${banner}"
          SCRIPT
          chmod +x "$out/bin/${name}"
        '';
      };
    in
    rec {
      inherit cudaMajorMinorVersion;
      cudaMajorVersion = lib.versions.major cudaMajorMinorVersion;
      inherit cudaAtLeast;
      cudaOlder = lib.versionOlder cudaMajorMinorVersion;
      backendStdenv = stdenv;

      cuda_nvcc = redist "cuda_nvcc" {
        meta.mainProgram = "nvcc";
        buildCommand = ''
          mkdir -p "$out/bin" "$out/nvvm/libdevice" "$out/include"
          cat > "$out/bin/ptxas" <<'SCRIPT'
          #!/bin/sh
          if [ -n "''${TT_RECORD:-}" ]; then echo "ptxas $*" >> "$TT_RECORD"; fi
          for a in "$@"; do
            if [ "$a" = --version ]; then
              echo "ptxas: NVIDIA (R) Ptx optimizing assembler"
              echo "${banner}"
              exit 0
            fi
          done
          exec ${host.ptxas} "$@"
          SCRIPT
          cat > "$out/bin/nvcc" <<'SCRIPT'
          #!/bin/sh
          if [ "$1" != --version ]; then echo "nvcc (stand-in): only --version" >&2; exit 1; fi
          echo "nvcc: NVIDIA (R) Cuda compiler driver"
          echo "${banner}"
          SCRIPT
          chmod +x "$out/bin/ptxas" "$out/bin/nvcc"
          cp ${host.libdevice} "$out/nvvm/libdevice/libdevice.10.bc"
        ''
        + lib.optionalString (!cudaAtLeast "13.0") crtHeaders;
      };

      cuda_cudart = redist "cuda_cudart" {
        outputs = [
          "out"
          "dev"
          "include"
          "lib"
          "static"
          "stubs"
        ];
        buildCommand = ''
          mkdir -p "$out" "$dev" "$lib/lib" "$static/lib" "$include/include" "$stubs/lib/stubs"
          sed 's/^#define CUDA_VERSION [0-9]*$/#define CUDA_VERSION ${cudaVersionNumber}/' \
            ${host.cuda_include}/cuda.h > "$include/include/cuda.h"
          grep -qx '#define CUDA_VERSION ${cudaVersionNumber}' "$include/include/cuda.h"
          # The runtime library (a stand-in: one function), SONAME libcudart.so.<major>.
          echo 'int cudaRuntimeGetVersion(int *v) { *v = ${cudaVersionNumber}; return 0; }' > cudart.c
          ${host.cc} -shared -fPIC -Wl,-soname,libcudart.so.${major} \
            -o "$lib/lib/libcudart.so.${versions.cuda_cudart}" cudart.c
          ln -s "libcudart.so.${versions.cuda_cudart}" "$lib/lib/libcudart.so.${major}"
          ln -s "libcudart.so.${major}" "$lib/lib/libcudart.so"
          # A link stub, as the toolkit's (SONAME libcuda.so.1, with nixpkgs' libcuda.so.1
          # link): the launcher links against it and finds the real driver at run time.
          echo 'int cuDriverGetVersion(int *v) { return 1; }' > stub.c
          ${host.cc} -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$stubs/lib/stubs/libcuda.so" stub.c
          ln -s libcuda.so "$stubs/lib/stubs/libcuda.so.1"
          ln -s stubs/libcuda.so stubs/libcuda.so.1 "$stubs/lib/"
        '';
      };

      cuda_crt =
        if cudaAtLeast "13.0" then
          redist "cuda_crt" { buildCommand = crtHeaders; }
        else
          # No redistributable: nixpkgs' buildRedist gives version "0-unsupported" and
          # a failed platform assertion, so the package cannot be used.
          redist "cuda_crt" {
            meta = {
              broken = true;
              brokenReason = "no cuda_crt redistributable for CUDA ${cudaMajorMinorVersion}";
            };
            buildCommand = "exit 1";
          };

      cuda_cuobjdump = redist "cuda_cuobjdump" (versionOnly "cuobjdump");
      cuda_nvdisasm = redist "cuda_nvdisasm" (versionOnly "nvdisasm");

      cudatoolkit = symlinkJoin {
        pname = "cuda-merged";
        version = cudaMajorMinorVersion;
        paths = builtins.concatMap allOutputsButStatic (
          [
            cuda_cuobjdump
            cuda_nvcc
            cuda_nvdisasm
            cuda_cudart
          ]
          ++ lib.optionals (cudaAtLeast "13") [ cuda_crt ]
        );
        meta.license = lib.licenses.nvidiaCudaRedist;
      };
    };
in
{
  cudaPackages_12_9 = mkCudaPackages {
    cudaMajorMinorVersion = "12.9";
    versions = {
      cuda_nvcc = "12.9.86";
      cuda_cudart = "12.9.79";
      cuda_crt = "0-unsupported";
      cuda_cuobjdump = "12.9.82";
      cuda_nvdisasm = "12.9.88";
    };
  };
  cudaPackages_13_0 = mkCudaPackages {
    cudaMajorMinorVersion = "13.0";
    versions = {
      cuda_nvcc = "13.0.88";
      cuda_cudart = "13.0.96";
      cuda_crt = "13.0.88";
      cuda_cuobjdump = "13.0.85";
      cuda_nvdisasm = "13.0.85";
    };
  };
}
