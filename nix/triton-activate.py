

# --- added by the triton-toolchain Nix overlay rebuild-triton (nix/triton-activate.py) ---
# Triton still guesses its run-time toolchain (ldconfig, gcc on PATH, bundled
# ptxas). The overlay makes Triton depend on the triton-toolchain shim, whose
# package carries the manifest of the pinned toolchain, and appends this to
# triton/__init__.py so that importing Triton applies it. The shim's own .pth
# hook does the same, but only in site directories: not where Triton is found
# through PYTHONPATH alone (nix-shell, other packages' checks).
# This is the end of Triton's __init__: after_triton_import() runs what the .pth
# hook runs once `import triton` has finished. It is idempotent, never overrides
# what the user set explicitly, and never breaks `import triton`: an error becomes
# a RuntimeWarning and Triton keeps its defaults.
try:
    from triton_toolchain import after_triton_import as _triton_toolchain_after_import
except ImportError:  # the shim was left out of this environment on purpose
    pass
else:
    _triton_toolchain_after_import()
    del _triton_toolchain_after_import
