# Stand-in ROCm package set, `rocmPackages` (pkgs/development/rocm-modules/default.nix, a
# scope; all-packages.nix's `rocmPackages`): only what the project meets, `clr`
# (rocm-modules/clr/default.nix, "AMD Common Language Runtime for hipamd, opencl, and
# rocclr"), with nixpkgs' outputs, layout, setup hook and licence:
#
# - outputs `out` and `icd` (the OpenCL ICD file, etc/OpenCL/vendors/amdocl64.icd);
# - `out`'s lib/ has the HIP runtime as ROCm installs it: libamdhip64.so ->
#   libamdhip64.so.<major> -> libamdhip64.so.<version>, SONAME libamdhip64.so.<major>;
# - nix-support/setup-hook exports HIP_PATH=$out (with HIP_PLATFORM=amd), which is how
#   nixpkgs' Triton test (triton/default.nix, passthru.tests.rocm-libamdhip64-path)
#   lets Triton find the library: its search reads $HIP_PATH/lib;
# - licence mit (free: no config needed), platforms linux; no `rocmSupport` needed to
#   evaluate or build it, as in nixpkgs;
# - passthru `gpuTargets` (a few of nixpkgs' list).
#
# The library is a stand-in built with the host's gcc: hipDriverGetVersion (and
# hipRuntimeGetVersion) report the package's version in HIP's format (major * 10000000
# + minor * 100000 + patch), and hipGetProcAddress hands out, for every symbol, a
# function returning hipErrorNoDevice: Triton's AMD launcher loads it and checks its
# version; nothing runs on a GPU. A missing attribute of the set is an evaluation
# error, as in nixpkgs.
{
  lib,
  stdenv,
  host,
}:
let
  clrVersion = "7.0.2";
  numbers = map builtins.fromJSON (builtins.splitVersion clrVersion);
  major = toString (builtins.elemAt numbers 0);
  hipVersion = toString (
    builtins.elemAt numbers 0 * 10000000
    + builtins.elemAt numbers 1 * 100000
    + builtins.elemAt numbers 2
  );
in
{
  clr = stdenv.mkDerivation {
    pname = "clr";
    version = clrVersion;
    outputs = [
      "out"
      "icd"
    ];
    buildCommand = ''
      mkdir -p "$out/lib" "$out/nix-support" "$icd/etc/OpenCL/vendors"
      cat > hip.c <<'SOURCE'
      typedef int hipError_t;
      static hipError_t no_device(void) { return 100; }
      hipError_t hipDriverGetVersion(int *v) { *v = ${hipVersion}; return 0; }
      hipError_t hipRuntimeGetVersion(int *v) { *v = ${hipVersion}; return 0; }
      hipError_t hipGetProcAddress(const char *symbol, void **pfn, int version,
                                   unsigned long long flags, void *status) {
        *pfn = (void *)no_device;
        return 0;
      }
      SOURCE
      ${host.cc} -shared -fPIC -Wl,-soname,libamdhip64.so.${major} \
        -o "$out/lib/libamdhip64.so.${clrVersion}" hip.c
      ln -s "libamdhip64.so.${clrVersion}" "$out/lib/libamdhip64.so.${major}"
      ln -s "libamdhip64.so.${major}" "$out/lib/libamdhip64.so"
      printf 'export HIP_PATH="%s"\nexport HIP_PLATFORM=amd\n' "$out" > "$out/nix-support/setup-hook"
      echo "$out/lib/libamdocl64.so" > "$icd/etc/OpenCL/vendors/amdocl64.icd"
    '';
    passthru.gpuTargets = [
      "gfx90a"
      "gfx942"
      "gfx1100"
      "gfx1201"
    ];
    meta = {
      description = "AMD Common Language Runtime for hipamd, opencl, and rocclr";
      license = lib.licenses.mit;
      platforms = [
        "x86_64-linux"
        "aarch64-linux"
      ];
    };
  };
}
