"""The torch adapter: TorchInductor's CPU toolchain (C++ compiler, ``Python.h``,
OpenMP) and ``torch.utils.cpp_extension``'s CUDA home, from the same plan as Triton's
(``_apply``, light, on the activation path)."""
