"""Add two vectors on the GPU with Triton and check the result: `nix run .#vector-add`.

The kernel, the launch and the check are the shim's self-test (`triton-toolchain doctor
--run` runs the same), so there is one copy of each: Triton compiles the kernel for the
GPU present with the toolchain's ptxas, builds and loads its launcher with the
toolchain's compiler, headers and driver, and launches it through Triton (3.9 and newer,
without torch), through torch where this Triton's launcher needs it and torch is
installed, or with the driver's cuLaunchKernel where it is not (the app's closure has no
torch). Exit status 0 when every step that could run here passed (the report names a
step skipped for want of a GPU), 1 otherwise.
"""

import sys

from triton_toolchain import self_test

if __name__ == "__main__":
    report = self_test()
    print(report.text)
    sys.exit(0 if report.ok else 1)
