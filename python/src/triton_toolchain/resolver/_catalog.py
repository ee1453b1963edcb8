"""What the toolchain is, as data: one row per component, one per machine architecture,
one per Triton release, and the CUDA releases able to assemble each GPU architecture.

Every other module reads these tables; none repeats them (``tests/test_catalog.py``
checks every row, and ``variables.json``, the Nix wrapper's copy of the variables,
against ``wrapper_variables()``).
"""

import re
from typing import Any, Literal, NamedTuple

from ..runtime import BACKENDS, Part, UsedBy

Kind = Literal["tool", "file", "dir", "driver"]
Stage = Literal["compile", "launch"]
# The step that uses a component: Triton's compile, Triton's launcher build,
# TorchInductor's C++ builds, torch.utils.cpp_extension's builds.
# Where CUDA's layouts keep a piece (``_discovery._layouts``): programs, ``cuda.h``'s
# directory, ``crt/``'s directory, ``libdevice.10.bc``'s directory.
Area = Literal["bin", "include", "crt", "libdevice"]
# Which targets Triton hands a ptxas-family tool: those below the release's switch to
# ptxas-blackwell, or those from it on (``TritonRelease.blackwell_from``).
Serves = Literal["below-switch", "from-switch"]
# How a Triton release's NVIDIA ``compiler.py`` finds ptxas (``TritonRelease``).
PtxasLookup = Literal["_path_to_binary", "get_ptxas()", "get_ptxas(arch)"]
# When a plan first needs a component (``Component.parts``; ``Part``, in
# ``runtime`` since a plan carries it): ``import`` at the import;
# ``torch`` when torch is imported (TorchInductor's C++ builds, ``cpp_extension``);
# ``launcher`` at the shim's first launcher build (the C compiler, a process to ask, and
# ``Python.h``, ``sysconfig``'s paths); ``target`` when Triton is about to take
# ptxas-blackwell for a target from its release's switch on (``ptxas_for``: the arch is
# known only at compile time); ``sass`` at Triton's first SASS dump
# (``triton.tools.disasm.get_sass``, behind ``kernel.asm["sass"]``, runs cuobjdump; no
# Python code of Triton's runs nvdisasm). No component's search reads one of a later
# part (tests/test_cold.py resolves with and without each), so a part left pending
# cannot change another's choice.
# Later parts resolved at the import all the same where a variable names one of their
# components: a user's wrong setting is warned of at once (the variable's read is a
# fact of the record). Not torch's: `import triton` judges no C++ compiler.
AT_IMPORT_IF_NAMED: frozenset[Part] = frozenset({"launcher", "target", "sass"})
# Later parts resolved at the import all the same where the manifest names their
# components: a packager's tools are judged at once with their recorded versions (no
# process runs), and Triton's knobs hold them from the import on.
AT_IMPORT_IF_IN_MANIFEST: frozenset[Part] = frozenset({"target", "sass"})
# The NVIDIA driver library's SONAME (``runtime.BACKENDS``): the name Triton, torch and the
# launcher load it by, the file discovery and a manifest's ``driver_dirs`` name.
DRIVER_SONAME = BACKENDS["nvidia"].driver_soname


class Component(NamedTuple):
    """One piece of the toolchain.

    - ``variable``: Triton's own variable for it, an explicit setting (``None``: none);
      ``also_read``: variables the tools read after it for the same thing (torch reads
      ``CUDA_PATH`` where ``CUDA_HOME`` is unset), explicit settings as well;
      ``variable_names_dir``: the variable names the file's directory (``libcuda``).
    - ``knob``: the ``triton.knobs`` attribute (3.4+) that takes the same value.
    - ``exported``: ``env``/``run`` and the Nix wrapper export ``variable=path``.
    - ``in_manifest``: a manifest may name it (the run-time driver belongs to the host:
      manifests list ``driver_dirs`` instead).
    - ``stage``: which step needs it (``None``: optional).
    - ``area``/``names``/``bundled``: where CUDA layouts keep it, the file names looked
      for (``""``: the directory itself) and its names in Triton's package.
    - ``serves``/``always_assembles``: the targets a ptxas-family tool must assemble.
    - ``used_by``: the step that uses it (Triton's ``"compile"``, its launcher
      ``"build"``, TorchInductor's C++ builds, ``torch.utils.cpp_extension``): where a
      wrong explicit setting stops with the shim's error.
    - ``schema``: the first manifest schema that has it.
    - ``backend``: the GPU backend it belongs to (``runtime.BACKENDS``; ``None``: any
      backend's, the host compilers and ``Python.h``).
    - ``parts``: the parts of a plan it belongs to (``Part``: when it is first needed;
      ``Python.h`` is torch's and the launcher's).
    - ``link``: for a driver, the component that is its link directory.
    """

    name: str
    what: str
    kind: Kind
    stage: Stage | None
    used_by: UsedBy
    fix: str
    variable: str | None = None
    also_read: tuple[str, ...] = ()
    variable_names_dir: bool = False
    knob: str | None = None
    exported: bool = False
    in_manifest: bool = True
    area: Area | None = None
    names: tuple[str, ...] = ()
    bundled: tuple[str, ...] = ()
    serves: Serves | None = None
    always_assembles: tuple[int, ...] = ()
    schema: int = 1
    backend: str | None = None
    parts: tuple[Part, ...] = ("import",)
    link: str | None = None


COMPONENTS: tuple[Component, ...] = (
    Component(
        name="ptxas",
        backend="nvidia",
        what="PTX assembler Triton runs below its switch to ptxas-blackwell",
        kind="tool",
        stage="compile",
        used_by="compile",
        variable="TRITON_PTXAS_PATH",
        knob="nvidia.ptxas",
        exported=True,
        area="bin",
        names=("ptxas",),
        bundled=("ptxas",),
        serves="below-switch",
        fix="install a CUDA toolkit (or `pip install nvidia-cuda-nvcc`) or set "
        "TRITON_PTXAS_PATH to an absolute ptxas path",
    ),
    Component(
        name="ptxas-blackwell",
        backend="nvidia",
        parts=("target",),
        what="PTX assembler Triton runs from its switch on (3.9: sm_90; 3.6-3.8: sm_100)",
        kind="tool",
        stage="compile",
        used_by="compile",
        variable="TRITON_PTXAS_BLACKWELL_PATH",
        knob="nvidia.ptxas_blackwell",
        exported=True,
        area="bin",
        names=("ptxas",),
        # Triton 3.4 and 3.5 bundle only `ptxas` (12.8 there).
        bundled=("ptxas-blackwell", "ptxas"),
        serves="from-switch",
        always_assembles=(100,),
        fix="install CUDA 12.8 or newer or set TRITON_PTXAS_BLACKWELL_PATH to an absolute "
        "ptxas path",
    ),
    Component(
        name="cuobjdump",
        backend="nvidia",
        parts=("sass",),
        what="cubin inspection tool (optional)",
        kind="tool",
        stage=None,
        used_by="compile",
        variable="TRITON_CUOBJDUMP_PATH",
        knob="nvidia.cuobjdump",
        exported=True,
        area="bin",
        names=("cuobjdump",),
        bundled=("cuobjdump",),
        fix="install the CUDA toolkit's cuobjdump or set TRITON_CUOBJDUMP_PATH",
    ),
    Component(
        name="nvdisasm",
        backend="nvidia",
        parts=("sass",),
        what="SASS disassembler (optional)",
        kind="tool",
        stage=None,
        used_by="compile",
        variable="TRITON_NVDISASM_PATH",
        knob="nvidia.nvdisasm",
        exported=True,
        area="bin",
        names=("nvdisasm",),
        bundled=("nvdisasm",),
        fix="install the CUDA toolkit's nvdisasm or set TRITON_NVDISASM_PATH",
    ),
    Component(
        name="cc",
        parts=("launcher",),
        what="C compiler that builds Triton's launcher",
        kind="tool",
        stage="launch",
        used_by="build",
        variable="CC",
        exported=True,
        fix="install gcc or clang (Debian/Ubuntu: `apt install gcc`; conda: "
        "`conda install -c conda-forge c-compiler`) or set CC to an absolute compiler path",
    ),
    Component(
        name="python-headers",
        parts=("torch", "launcher"),
        what="directory holding Python.h for this interpreter",
        kind="dir",
        stage="launch",
        used_by="build",
        fix="install this Python's development headers",
    ),
    Component(
        name="cuda-headers",
        backend="nvidia",
        what="directory holding cuda.h",
        kind="dir",
        stage="launch",
        used_by="build",
        variable="TRITON_CUDART_PATH",
        exported=True,
        area="include",
        names=("",),
        bundled=("",),
        fix="install Triton's wheel (it bundles cuda.h), a CUDA toolkit, or set "
        "TRITON_CUDART_PATH to the directory holding cuda.h",
    ),
    Component(
        name="cuda-crt-headers",
        backend="nvidia",
        what="directory holding crt/host_config.h (optional)",
        kind="dir",
        stage=None,
        used_by="build",
        variable="TRITON_CUDACRT_PATH",
        exported=True,
        area="crt",
        names=("",),
        bundled=("",),
        fix="set TRITON_CUDACRT_PATH to the CUDA include directory holding crt/",
    ),
    Component(
        name="libdevice",
        backend="nvidia",
        what="libdevice.10.bc, CUDA's math library in LLVM bitcode",
        kind="file",
        stage="compile",
        used_by="compile",
        variable="TRITON_LIBDEVICE_PATH",
        knob="nvidia.libdevice_path",
        exported=True,
        area="libdevice",
        names=("libdevice.10.bc",),
        bundled=("libdevice.10.bc",),
        fix="install Triton's wheel (it bundles libdevice), a CUDA toolkit, or set "
        "TRITON_LIBDEVICE_PATH to an absolute libdevice.10.bc path",
    ),
    Component(
        name="cxx",
        parts=("torch",),
        what="C++ compiler for TorchInductor's CPU kernels and C++ extensions",
        kind="tool",
        stage=None,
        used_by="inductor",
        variable="CXX",
        exported=True,
        schema=2,
        fix="install g++ or clang++ (Debian/Ubuntu: `apt install g++`; conda: "
        "`conda install -c conda-forge cxx-compiler`) or set CXX to an absolute compiler path",
    ),
    Component(
        name="openmp",
        parts=("torch",),
        what="directory holding omp.h, for TorchInductor's OpenMP (-fopenmp -lgomp)",
        kind="dir",
        stage=None,
        used_by="inductor",
        schema=2,
        fix="install the compiler's OpenMP support (Debian/Ubuntu: `apt install libgomp1` "
        "with g++, `apt install libomp-dev` with clang++; conda: `conda install -c "
        "conda-forge llvm-openmp`)",
    ),
    Component(
        name="cuda-home",
        backend="nvidia",
        parts=("torch",),
        what="CUDA toolkit root (bin/nvcc, headers, libraries of one release) for "
        "torch.utils.cpp_extension",
        kind="dir",
        stage=None,
        used_by="extension",
        variable="CUDA_HOME",
        also_read=("CUDA_PATH",),
        exported=True,
        schema=2,
        fix="install a CUDA toolkit with nvcc (NVIDIA's, conda's cuda-toolkit, or "
        "`pip install nvidia-cuda-nvcc`) or set CUDA_HOME to its root",
    ),
    # The driver before its link directory: the link directory follows the driver.
    Component(
        name="libcuda",
        backend="nvidia",
        link="libcuda-link",
        what="the NVIDIA driver library libcuda.so.1 loaded at run time",
        kind="driver",
        stage="launch",
        used_by="build",
        variable="TRITON_LIBCUDA_PATH",
        variable_names_dir=True,
        knob="nvidia.libcuda_path",
        in_manifest=False,
        fix="install the NVIDIA driver (on NixOS: hardware.nvidia / hardware.graphics; in a "
        "container: run it with the NVIDIA container toolkit) or set TRITON_LIBCUDA_PATH to "
        f"the directory holding the driver's {DRIVER_SONAME}",
    ),
    Component(
        name="libcuda-link",
        backend="nvidia",
        what="directory to link the launcher against (driver or toolkit stub)",
        kind="dir",
        stage="launch",
        used_by="build",
        variable="TRITON_LIBCUDA_PATH",
        fix="install the NVIDIA driver, or a CUDA toolkit's stubs for building without a GPU, "
        f"or set TRITON_LIBCUDA_PATH to the directory holding {DRIVER_SONAME}",
    ),
)

# The AMD backend's rows (``backend="amd"``). Triton 3.9's AMD backend needs only the HIP
# runtime from the machine: its wheel bundles the HIP headers its launcher compiles
# against (``backends/amd/include/hip``), the device libraries (``backends/amd/lib/
# ocml.bc``, ``ockl.bc``) and links the code object in process (``amd.link_hsaco`` in
# ``backends/amd/compiler.py``: no ``ld.lld``). Resolved where the AMD backend is asked
# for (``resolve_all(backend="amd")``: ``doctor --arch gfx942``), never at an import.
AMD_COMPONENTS: tuple[Component, ...] = (
    Component(
        name="libamdhip64",
        backend="amd",
        what="the HIP runtime library libamdhip64 that Triton's AMD launcher loads",
        kind="driver",
        stage="launch",
        used_by="build",
        variable="TRITON_LIBHIP_PATH",
        knob="amd.libhip_path",
        in_manifest=False,
        fix="install ROCm 6 or newer (AMD's packages in /opt/rocm; NixOS: rocmPackages.clr; "
        "PyTorch's ROCm wheel has it in torch/lib) or set TRITON_LIBHIP_PATH to the "
        "absolute path of its libamdhip64.so",
    ),
)
# Every row of every backend; ``COMPONENTS`` are those resolved by default (NVIDIA's and
# every backend's: the host compilers, ``Python.h``), ``backend_components`` a backend's.
CATALOG: tuple[Component, ...] = (*COMPONENTS, *AMD_COMPONENTS)
COMPONENT: dict[str, Component] = {c.name: c for c in CATALOG}


def backend_components(backend: str) -> tuple[Component, ...]:
    """The rows resolved for Triton's ``backend``: its own and those of no backend.

    >>> [c.name for c in backend_components("amd")][-1]
    'libamdhip64'
    """
    return tuple(c for c in CATALOG if c.backend in (None, backend))


class Cache(NamedTuple):
    """Where a library writes what it compiled and later loads back (Triton's cubins and
    its launcher ``cuda_utils*.so``, Inductor's generated C++ and ``.so`` files): judged
    like a component (``resolver._caches``), but found by the library's own rule, never
    by a search. ``variable``: the library's setting for it (the shim sets it only where
    the default is unusable); ``home``: a variable whose directory holds the default;
    ``subdir``: its name under a private directory the shim chooses; ``default``: the
    library's rule, with its source."""

    name: str
    what: str
    variable: str
    subdir: str
    default: str
    home: str | None = None


CACHES: tuple[Cache, ...] = (
    # triton/knobs.py (3.9): cache.dir = TRITON_CACHE_DIR, else
    # os.path.join(home_dir, ".triton", "cache"), home_dir = TRITON_HOME, else
    # os.path.expanduser("~/") read when knobs.py is imported.
    Cache(
        name="triton",
        what="Triton's cache (cubins, the launcher cuda_utils*.so it loads back)",
        variable="TRITON_CACHE_DIR",
        home="TRITON_HOME",
        subdir="triton",
        default="$TRITON_HOME/.triton/cache, else ~/.triton/cache",
    ),
    # torch/_inductor/runtime/cache_dir_utils.py (2.13): TORCHINDUCTOR_CACHE_DIR, else
    # tempfile.gettempdir()/torchinductor_<getpass.getuser()>; Triton's kernels of
    # Inductor go to <it>/triton/<device> unless TRITON_CACHE_DIR is set.
    Cache(
        name="inductor",
        what="TorchInductor's cache (generated C++, the .so files it loads back)",
        variable="TORCHINDUCTOR_CACHE_DIR",
        subdir="torchinductor",
        default="$TMPDIR/torchinductor_<user>",
    ),
)
CACHE: dict[str, Cache] = {c.name: c for c in CACHES}
# File systems (``/proc/self/mountinfo``'s type) where a cache shared by several processes
# breaks: renames over NFS give "Stale file handle" (pytorch/pytorch#173679,
# triton-lang/triton#11869), and flock may be refused. A ``fuse.*`` type is FUSE.
NETWORK_FILESYSTEMS: frozenset[str] = frozenset(
    {
        "nfs",
        "nfs4",
        "lustre",
        "gpfs",
        "ceph",
        "cifs",
        "smb3",
        "9p",
        "fuse",
        "fuseblk",
        "glusterfs",
        "beegfs",
        "afs",
    }
)
# The ptxas family: the assemblers that must serve some targets (``Component.serves``).
PTXAS_FAMILY: tuple[str, ...] = tuple(c.name for c in COMPONENTS if c.serves is not None)
# NVIDIA's nvcc wheel on PyPI (it holds bin/ptxas) per CUDA major release: the plain
# `nvidia-cuda-nvcc` is the newest CUDA (13.x), which cannot assemble what CUDA 13 dropped.
NVCC_WHEEL: dict[int, str] = {12: "nvidia-cuda-nvcc-cu12", 13: "nvidia-cuda-nvcc"}
# The packages of the compilers a setting may name: (Debian/Ubuntu, conda-forge).
COMPILER_PACKAGES: dict[str, tuple[str, str]] = {
    "gcc": ("gcc", "gcc"),
    "cc": ("gcc", "c-compiler"),
    "clang": ("clang", "clang"),
    "g++": ("g++", "gxx"),
    "c++": ("g++", "cxx-compiler"),
    "clang++": ("clang", "clangxx"),
}


def install_program(program: str) -> str:
    """How to install the program a setting names (``CC=clang``: clang, not gcc).

    >>> install_program("clang").split(";")[0]
    'install clang (Debian/Ubuntu: `apt install clang`'
    """
    packages = COMPILER_PACKAGES.get(program)
    if packages is None:
        return f"install {program}"
    apt, conda = packages
    return (
        f"install {program} (Debian/Ubuntu: `apt install {apt}`; conda: "
        f"`conda install -c conda-forge {conda}`)"
    )


def component_fix(name: str, arch: int | None = None, triton: "TritonRelease | None" = None) -> str:
    """The fix for a missing or wrong component ``name`` when Triton release ``triton``
    compiles for ``sm_<arch>``: the catalog's, but for a ptxas Triton runs for an
    architecture a later CUDA dropped, a ptxas of the last CUDA that has it.

    >>> component_fix("ptxas", 70, triton_release((3, 9))).split(" or ")[0]
    'install a CUDA 12 ptxas (`pip install nvidia-cuda-nvcc-cu12`; CUDA 13 dropped sm_70)'
    """
    spec = COMPONENT[name]
    limits = ARCH_RELEASES.get(arch) if arch is not None else None
    if arch is None or limits is None or limits[1] is None or spec.serves is None:
        return spec.fix
    if ptxas_for(arch, triton) != name or limits[1][0] not in NVCC_WHEEL:
        return spec.fix
    major = limits[1][0]
    return (
        f"install a CUDA {major} ptxas (`pip install {NVCC_WHEEL[major]}`; CUDA {major + 1} "
        f"dropped {arch_name(arch)}) or set {spec.variable} to an absolute CUDA {major}.x "
        "ptxas path"
    )


# The parts of a plan, in order (``Part``).
PARTS: tuple[Part, ...] = ("import", "torch", "launcher", "target", "sass")


def part_components(part: Part) -> frozenset[str]:
    """The components of ``part`` (``Component.parts``).

    >>> sorted(part_components("launcher"))
    ['cc', 'python-headers']
    """
    return frozenset(c.name for c in COMPONENTS if part in c.parts)


class GoalStep(NamedTuple):
    """One step of a goal: ``can`` says what it lets the user do ("launch kernels"),
    ``components`` what it needs, ``torch_cuda`` that it needs a torch built with CUDA.
    A goal's steps are cumulative: a step is reached only when every earlier one is."""

    name: str
    can: str
    components: tuple[str, ...]
    torch_cuda: bool = False
    torch_hip: bool = False  # needs a torch built with ROCm (``torch.version.hip``)


class Goal(NamedTuple):
    """What a user wants to run (``doctor`` answers one line per goal): the Python
    packages it runs (``"triton"``, ``"torch"``) and its steps, in order."""

    name: str
    title: str
    packages: tuple[str, ...]
    steps: tuple[GoalStep, ...]

    @property
    def components(self) -> tuple[str, ...]:
        """Every component some step needs, in the order of ``COMPONENTS``."""
        needed = {c for step in self.steps for c in step.components}
        return tuple(c.name for c in COMPONENTS if c.name in needed)


_TRITON_COMPILE = (*PTXAS_FAMILY, "libdevice")
# The driver before its link directory: without a driver, "install the NVIDIA driver"
# is the one thing to do, and the link directory follows it.
_TRITON_LAUNCH = ("cc", "python-headers", "cuda-headers", "libcuda", "libcuda-link")

GOALS: dict[str, Goal] = {
    goal.name: goal
    for goal in (
        Goal(
            name="triton",
            title="Triton kernels",
            packages=("triton",),
            steps=(
                GoalStep(name="compile", can="compile kernels", components=_TRITON_COMPILE),
                GoalStep(name="launch", can="launch kernels", components=_TRITON_LAUNCH),
            ),
        ),
        # Inductor's GPU code is Triton kernels, compiled and launched on the GPU it runs
        # on: nothing is reached without both (no partial answer).
        Goal(
            name="torch-gpu",
            title="torch.compile on GPU",
            packages=("torch", "triton"),
            steps=(
                GoalStep(
                    name="run",
                    can="compile and run on the GPU",
                    components=(*_TRITON_COMPILE, *_TRITON_LAUNCH),
                    torch_cuda=True,
                ),
            ),
        ),
        Goal(
            name="torch-cpu",
            title="torch.compile on CPU",
            packages=("torch",),
            steps=(
                GoalStep(
                    name="build",
                    can="build C++ kernels",
                    components=("cxx", "openmp", "python-headers"),
                ),
            ),
        ),
        Goal(
            name="extensions",
            title="C++/CUDA extensions",
            packages=("torch",),
            steps=(
                GoalStep(
                    name="c++",
                    can="build C++ extensions",
                    components=("cxx", "python-headers"),
                ),
                GoalStep(
                    name="cuda",
                    can="build CUDA extensions",
                    components=("cuda-home",),
                    torch_cuda=True,
                ),
            ),
        ),
    )
}
# The AMD backend's goals (``doctor --arch gfx942``). Triton 3.9 compiles for AMD with
# nothing from the machine (see ``AMD_COMPONENTS``); its launcher needs the HIP runtime.
AMD_GOALS: dict[str, Goal] = {
    goal.name: goal
    for goal in (
        Goal(
            name="triton",
            title="Triton kernels (AMD)",
            packages=("triton",),
            steps=(
                GoalStep(name="compile", can="compile kernels", components=()),
                GoalStep(
                    name="launch",
                    can="launch kernels",
                    components=("cc", "python-headers", "libamdhip64"),
                ),
            ),
        ),
        # Inductor's GPU code is Triton kernels on the GPU torch runs (ROCm's torch
        # calls it "cuda"): a torch built with ROCm and Triton's AMD launch.
        Goal(
            name="torch-gpu",
            title="torch.compile (AMD)",
            packages=("torch", "triton"),
            steps=(
                GoalStep(
                    name="run",
                    can="compile and run on the GPU",
                    components=("cc", "python-headers", "libamdhip64"),
                    torch_hip=True,
                ),
            ),
        ),
    )
}
# Each backend's goals.
BACKEND_GOALS: dict[str, dict[str, Goal]] = {"nvidia": GOALS, "amd": AMD_GOALS}
COMPONENT_NAMES: tuple[str, ...] = tuple(c.name for c in COMPONENTS)
MANIFEST_COMPONENTS: tuple[str, ...] = tuple(c.name for c in COMPONENTS if c.in_manifest)


def exported_variables() -> dict[str, str]:
    """Component -> the variable that ``env``, ``run`` and the Nix wrapper export with
    the component's path as its value, e.g. ``{"ptxas": "TRITON_PTXAS_PATH", ...,
    "cc": "CC"}``. (``TRITON_LIBCUDA_PATH`` names a directory and is exported apart.)"""
    return {c.name: c.variable for c in COMPONENTS if c.exported and c.variable}


def wrapper_variables() -> dict[str, dict[str, Any]]:
    """What the Nix wrapper exports, as the package's ``variables.json`` holds it
    for ``nix/wrap.nix`` (generated from here, kept equal by ``tests/test_catalog.py``):
    ``exported``, ``exported_variables()``; ``also_read``, each exported variable ->
    the other names of the same setting, which keep the wrapper from exporting it
    (``{"CUDA_HOME": ["CUDA_PATH"]}``)."""
    exported = exported_variables()
    also_read = {
        exported[c.name]: list(c.also_read)
        for c in COMPONENTS
        if c.name in exported and c.also_read
    }
    return {"exported": exported, "also_read": also_read}


# --------------------------------------------------------------- machine architectures


class Machine(NamedTuple):
    """What one interpreter architecture (``Host.machine``) means to each reader:
    its ELF ``e_machine`` (pyelftools' name) and class, the flags ``ld.so`` accepts in
    the linker cache, Debian's multiarch directory, the ``targets/<dir>`` of CUDA
    toolkits (most likely first: ``sbsa-linux`` is server ARM, ``aarch64-linux``
    Jetson), the first components of target triples that build for it, and the
    directories where NVIDIA's own packages for it put the driver outside the loader's
    default path (found even where no ``ld.so.conf.d`` entry names them)."""

    elf_machine: str
    elf_class: int
    ld_cache_flags: int
    multiarch: str
    cuda_targets: tuple[str, ...]
    triples: tuple[str, ...]
    driver_dirs: tuple[str, ...] = ()


MACHINES: dict[str, Machine] = {
    "x86_64": Machine(
        elf_machine="EM_X86_64",
        elf_class=64,
        ld_cache_flags=0x0303,
        multiarch="x86_64-linux-gnu",
        cuda_targets=("x86_64-linux",),
        triples=("x86_64", "amd64"),
    ),
    "i686": Machine(
        elf_machine="EM_386",
        elf_class=32,
        ld_cache_flags=0x0003,
        multiarch="i386-linux-gnu",
        cuda_targets=(),
        triples=("i386", "i486", "i586", "i686"),
    ),
    "aarch64": Machine(
        elf_machine="EM_AARCH64",
        elf_class=64,
        ld_cache_flags=0x0A03,
        multiarch="aarch64-linux-gnu",
        cuda_targets=("sbsa-linux", "aarch64-linux"),
        triples=("aarch64", "arm64"),
        # Jetson: L4T r36 and later (JetPack 6 on Orin, JetPack 7 on Thor) install
        # libcuda.so.1 -> libcuda.so.1.1 in .../nvidia (apptainer/apptainer#3646); L4T r32
        # to r35 (JetPack 4 and 5) in .../tegra (blakeblackshear/frigate#6458); JetPack
        # 7.2 (L4T r39, Thor) containers get it in /opt/nvidia/l4t-gpu-libs/openrm through
        # CDI (NVIDIA-AI-Blueprints/video-search-and-summarization#1478).
        driver_dirs=(
            "/usr/lib/aarch64-linux-gnu/nvidia",
            "/usr/lib/aarch64-linux-gnu/tegra",
            "/opt/nvidia/l4t-gpu-libs/openrm",
        ),
    ),
    "ppc64le": Machine(
        elf_machine="EM_PPC64",
        elf_class=64,
        ld_cache_flags=0x0503,
        multiarch="powerpc64le-linux-gnu",
        cuda_targets=("ppc64le-linux",),
        triples=("powerpc64le", "ppc64le"),
    ),
}


def triple_machine(triple: str) -> str:
    """The interpreter architecture a target triple builds for; an x32 triple is
    ``"x32"``, an unknown one its first component.

    >>> triple_machine("x86_64-conda-linux-gnu"), triple_machine("x86_64-linux-gnux32")
    ('x86_64', 'x32')
    """
    parts = triple.split("-")
    if parts[-1] == "gnux32":
        return "x32"
    for machine, facts in MACHINES.items():
        if parts[0] in facts.triples:
            return machine
    return parts[0]


# --------------------------------------------------------------- GPU architectures

# CUDA releases able to assemble each architecture (Triton targets sm_XXa from 90 on):
# arch -> (first release, last release or None). CUDA 13.0 dropped sm_50..sm_72 and
# renamed sm_101 to sm_110. Checked by assembling a PTX file for every target with the
# ptxas of each release from 11.7 to 13.5 (PyPI's nvidia-cuda-nvcc wheels, the CUDA
# 13.0 toolkit, Triton's bundled binaries); earlier first releases from NVIDIA's
# release notes. Nothing past sm_121 is assembled by CUDA 13.5.
ARCH_RELEASES: dict[int, tuple[tuple[int, int], tuple[int, int] | None]] = {
    50: ((6, 0), (12, 9)),
    52: ((7, 0), (12, 9)),
    53: ((7, 0), (12, 9)),
    60: ((8, 0), (12, 9)),
    61: ((8, 0), (12, 9)),
    62: ((8, 0), (12, 9)),
    70: ((9, 0), (12, 9)),
    72: ((10, 0), (12, 9)),
    75: ((10, 0), None),
    80: ((11, 0), None),
    86: ((11, 1), None),
    87: ((11, 4), None),
    88: ((13, 0), None),
    89: ((11, 8), None),
    90: ((12, 0), None),  # sm_90a
    100: ((12, 8), None),
    101: ((12, 8), (12, 9)),
    103: ((12, 9), None),
    107: ((13, 4), None),
    110: ((13, 0), None),
    120: ((12, 8), None),
    121: ((12, 9), None),
}


def parse_release(text: str) -> tuple[int, int] | None:
    """``"12.8"`` -> ``(12, 8)``; anything else -> ``None``."""
    major, _, minor = text.partition(".")
    minor = minor.split(".")[0]
    if re.fullmatch("[0-9]{1,3}", major) and re.fullmatch("[0-9]{1,3}", minor):
        return int(major), int(minor)
    return None


def arch_name(arch: int) -> str:
    """The name Triton assembles for: ``sm_80``, ``sm_90a`` (arch-specific from 90 on)."""
    return f"sm_{arch}a" if arch >= 90 else f"sm_{arch}"


def arch_problem(arch: int, release: str | None) -> str | None:
    """Why a ptxas of ``release`` cannot assemble ``sm_<arch>``, or ``None`` if it can.

    >>> arch_problem(90, "11.4")
    'release 11.4 cannot assemble sm_90a, needs 12.0 or newer'
    """
    limits = ARCH_RELEASES.get(arch)
    version = parse_release(release) if release else None
    if limits is None or version is None:
        return None
    first, last = limits
    if version < first:
        return (
            f"release {release} cannot assemble {arch_name(arch)}, needs "
            f"{first[0]}.{first[1]} or newer"
        )
    if last is not None and version > last:
        dropped = f"{last[0]}.{last[1]}"
        return (
            f"release {release} cannot assemble {arch_name(arch)}, which CUDA dropped after "
            f"{dropped}"
        )
    return None


# --------------------------------------------------------------- Triton releases


class TritonRelease(NamedTuple):
    """How one range of Triton releases consults its toolchain (read from each
    release's ``knobs.py``, ``backends/nvidia/{compiler,driver}.py`` and
    ``runtime/build.py``); a row holds from ``first`` until the next row's ``first``.

    - ``knobs``: ``triton.knobs`` with ``build.impl`` exists (else: environment variables
      and module globals);
    - ``blackwell_from``: the architecture from which ``get_ptxas`` returns
      ``ptxas-blackwell`` (``None``: the release has no ptxas-blackwell);
    - ``blackwell_variable``: the variable it reads for ptxas-blackwell;
    - ``ptxas_lookup``: how its NVIDIA ``compiler.py`` finds the ptxas it runs:
      ``"_path_to_binary"`` (3.0-3.2: no ``get_ptxas``), ``"get_ptxas()"`` (3.4, 3.5:
      one ptxas for every target) or ``"get_ptxas(arch)"`` (3.3, 3.6 and newer); the
      adapter wraps ``get_ptxas`` with the signature it has;
    - ``torch_free_launch``: its launcher needs no torch.

    ``tests/test_catalog.py`` checks the row of the installed release against its code,
    and the ``triton-3.X`` nox sessions install every minor release from 3.0 on.
    """

    first: tuple[int, int]
    knobs: bool
    blackwell_from: int | None
    blackwell_variable: str | None
    ptxas_lookup: PtxasLookup
    torch_free_launch: bool
    # The oldest HIP runtime major release its AMD launcher accepts (``backends/amd/
    # driver.c``, ``TRITON_HIP_DRIVER_REQ_MAJOR_VERSION``); ``None``: not read for the
    # release, not judged.
    hip_major_min: int | None = None
    # ``TRITON_LIBHIP_PATH`` may name ``libamdhip64.so.N`` (3.9: a file name starting
    # ``libamdhip64.so``); before, only a path ending in ``libamdhip64.so`` (3.6-3.8).
    libhip_versioned: bool = False
    # Its AMD backend takes TheRock's HIP runtime (``rocm_sdk.find_libraries``) before
    # any other (3.9).
    therock_first: bool = False

    def uses(self, component: str) -> bool:
        """Whether this release runs ``component`` at all: no ``ptxas-blackwell`` where
        it has none (3.0-3.2, 3.4, 3.5), so nothing judges or needs one there.

        >>> triton_release((3, 5)).uses("ptxas-blackwell")
        False
        """
        return component != "ptxas-blackwell" or self.blackwell_from is not None


TRITON_RELEASES: tuple[TritonRelease, ...] = (
    # 3.0-3.2: `_path_to_binary("ptxas")` (TRITON_PTXAS_PATH, else the bundled one).
    TritonRelease(
        first=(3, 0),
        knobs=False,
        blackwell_from=None,
        blackwell_variable=None,
        ptxas_lookup="_path_to_binary",
        torch_free_launch=False,
    ),
    # 3.3's `_path_to_binary` upper-cases the binary's name, hyphen included.
    TritonRelease(
        first=(3, 3),
        knobs=False,
        blackwell_from=100,
        blackwell_variable="TRITON_PTXAS-BLACKWELL_PATH",
        ptxas_lookup="get_ptxas(arch)",
        torch_free_launch=False,
    ),
    # 3.4 and 3.5 have knobs but no ptxas-blackwell: `get_ptxas()` returns one ptxas
    # (12.8 bundled) for every target.
    TritonRelease(
        first=(3, 4),
        knobs=True,
        blackwell_from=None,
        blackwell_variable=None,
        ptxas_lookup="get_ptxas()",
        torch_free_launch=False,
    ),
    # 3.6 to 3.9: the AMD launcher refuses a HIP runtime older than 6 (read from 3.6.0's,
    # 3.8.0's and 3.9.0's backends/amd/driver.c); their wheels bundle the HIP headers
    # and link the code object in process (``amd.link_hsaco``).
    TritonRelease(
        first=(3, 6),
        knobs=True,
        blackwell_from=100,
        blackwell_variable="TRITON_PTXAS_BLACKWELL_PATH",
        ptxas_lookup="get_ptxas(arch)",
        torch_free_launch=False,
        hip_major_min=6,
    ),
    TritonRelease(
        first=(3, 9),
        knobs=True,
        blackwell_from=90,
        blackwell_variable="TRITON_PTXAS_BLACKWELL_PATH",
        ptxas_lookup="get_ptxas(arch)",
        torch_free_launch=True,
        hip_major_min=6,
        libhip_versioned=True,
        therock_first=True,
    ),
)


# A module's ``__version__ = '3.9.0'`` or ``__version__: str = "3.9.0"``.
_VERSION_ASSIGNED = r"""(?m)^__version__\s*(?::[^=\n]*)?=\s*['"]([^'"\n]+)['"]"""
_MAJOR_MINOR = r"([0-9]{1,9})\.([0-9]{1,9})(?![0-9])"


def assigned_version(source: str) -> str | None:
    """The version a module's source assigns to ``__version__`` (``"3.9.0"`` of
    ``__version__ = '3.9.0'`` or of ``__version__: str = "3.9.0"``), or ``None``: how
    Triton's and torch's versions are read from their files, without importing them."""
    found = re.search(_VERSION_ASSIGNED, source)
    return found.group(1) if found else None


def major_minor(version: str) -> tuple[int, int] | None:
    """``(3, 9)`` of a Triton version (``"3.9.0"``, ``"3.9"``, ``"3.9.0+git1a2b"``);
    ``None`` for one that does not start with two numbers. The one reading of Triton's
    version: of its files (``_discovery._host.triton_version``) and of the imported
    module (``_triton._guards``)."""
    found = re.match(_MAJOR_MINOR, version)
    return (int(found.group(1)), int(found.group(2))) if found else None


def triton_release(version: tuple[int, int] | None) -> TritonRelease | None:
    """The row of ``TRITON_RELEASES`` for Triton ``(major, minor)``; ``None`` for no
    Triton or one older than 3.0."""
    if version is None:
        return None
    rows = [r for r in TRITON_RELEASES if r.first <= version]
    return rows[-1] if rows else None


def ptxas_for(arch: int, release: TritonRelease | None) -> str:
    """The component Triton runs to assemble ``sm_<arch>``: ``ptxas-blackwell`` from the
    release's switch on, ``ptxas`` below it."""
    switch = release.blackwell_from if release is not None else None
    return "ptxas-blackwell" if switch is not None and arch >= switch else "ptxas"


def must_assemble(
    component: Component, arch: int | None, release: TritonRelease | None
) -> tuple[int, ...]:
    """The architectures ``component`` must be able to assemble for target ``arch``.

    With a known Triton release, a target counts for the component that release runs for
    it (``ptxas_for``); without one, for both ptxas components wherever some release
    runs them (ptxas below sm_100, ptxas-blackwell from sm_90). ``always_assembles``
    counts whatever the target.
    """
    if component.serves is None:
        return ()
    targets = list(component.always_assembles)
    if arch is not None:
        if release is not None:
            serves = ptxas_for(arch, release) == component.name
        elif component.serves == "below-switch":
            serves = arch < max(r.blackwell_from or 0 for r in TRITON_RELEASES)
        else:
            serves = arch >= min(r.blackwell_from or 10**6 for r in TRITON_RELEASES)
        if serves and arch not in targets:
            targets.append(arch)
    return tuple(targets)


# --------------------------------------------------------------- fit: PTX, driver, advisories


class PtxRule(NamedTuple):
    """One line of a Triton release's ``ptx_get_version``: for Triton ``triton`` (first,
    last release; ``None``: every later one) and a ptxas of CUDA ``cuda`` with a minor
    release in ``minors`` (first, last; ``None``: any later), Triton writes PTX
    ``.version`` ``base + minor`` (as an integer: 86 is 8.6). A release no rule covers
    is one Triton refuses (it raises)."""

    triton: tuple[tuple[int, int], tuple[int, int] | None]
    cuda: int
    minors: tuple[int, int | None]
    base: int


# Read from ``backends/nvidia/compiler.py`` ``ptx_get_version`` of each release (3.0.0,
# 3.1.0, 3.2.0, 3.3.1, 3.4.0, 3.5.1 ... 3.9.0); ``tests/test_fit.py`` checks the table
# against the installed Triton's own function. 3.2 knows 12.6 but nothing newer; 3.3
# and 3.4 know no CUDA 13; from 3.5 on CUDA 13.x writes 9.x (``90 + (major-13)*10``).
_OLD = ((3, 0), None)
PTX_RULES: tuple[PtxRule, ...] = (
    PtxRule(triton=_OLD, cuda=10, minors=(0, None), base=63),
    PtxRule(triton=_OLD, cuda=11, minors=(0, None), base=70),
    PtxRule(triton=((3, 0), (3, 1)), cuda=12, minors=(0, None), base=80),
    PtxRule(triton=((3, 2), None), cuda=12, minors=(0, 5), base=80),
    PtxRule(triton=((3, 2), (3, 2)), cuda=12, minors=(6, 6), base=79),
    PtxRule(triton=((3, 3), None), cuda=12, minors=(6, None), base=79),
    PtxRule(triton=((3, 5), None), cuda=13, minors=(0, None), base=90),
    PtxRule(triton=((3, 5), None), cuda=14, minors=(0, None), base=100),
)


def triton_ptx_version(triton: tuple[int, int], release: str) -> int | None:
    """The PTX ``.version`` (86 for 8.6) Triton ``triton`` writes when its ptxas is of
    CUDA ``release``; ``None`` where that Triton refuses the release.

    >>> triton_ptx_version((3, 0), "12.6"), triton_ptx_version((3, 3), "12.6")
    (86, 85)
    >>> triton_ptx_version((3, 4), "13.0") is None, triton_ptx_version((3, 9), "13.1")
    (True, 91)
    """
    version = parse_release(release)
    if version is None:
        return None
    major, minor = version
    for rule in PTX_RULES:
        first, last = rule.triton
        low, high = rule.minors
        if (
            first <= triton
            and (last is None or triton <= last)
            and rule.cuda == major
            and low <= minor
            and (high is None or minor <= high)
        ):
            return rule.base + minor
    return None


# The target name a release writes and assembles for: 3.3 on (``sm_arch_from_capability``)
# add "a" from sm_90 on; 3.0-3.2 (``make_ptx``/``make_cubin``) only for sm_90.
TARGET_SUFFIX_FROM_ALL = (3, 3)


def triton_target(triton: tuple[int, int] | None, arch: int) -> str:
    """The ``--gpu-name`` Triton ``triton`` runs ptxas with for ``sm_<arch>``.

    >>> triton_target((3, 0), 100), triton_target((3, 0), 90), triton_target((3, 9), 100)
    ('sm_100', 'sm_90a', 'sm_100a')
    """
    if triton is not None and triton < TARGET_SUFFIX_FROM_ALL:
        return "sm_90a" if arch == 90 else f"sm_{arch}"
    return arch_name(arch)


# The driver rule (NVIDIA, CUDA Compatibility guide, "Minor Version Compatibility",
# https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html,
# table 1): from CUDA 11 on, what a toolkit of one major release builds runs on any
# driver of that major release or newer (minimum drivers 450 for 11.x, 525 for 12.x,
# 580 for 13.x); before 11 the driver must be at least the toolkit's release. A cubin
# from a ptxas of a newer major release than the driver's CUDA does not load
# (CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the provided PTX was compiled with an
# unsupported toolchain"); the forward-compatibility package (cuda-compat) is the
# exception, which a driver read from its libcuda reports as its own newer release.
MINOR_COMPATIBILITY_FROM = 11
# The minimum driver release of each major CUDA release (the same table).
MIN_DRIVER: dict[int, str] = {11: "450", 12: "525", 13: "580"}


def driver_loads(ptxas_release: tuple[int, int], driver_cuda: tuple[int, int]) -> bool:
    """Whether a driver of CUDA ``driver_cuda`` loads the cubins of a ptxas of CUDA
    ``ptxas_release`` (the rule above).

    >>> driver_loads((12, 9), (12, 8)), driver_loads((13, 0), (12, 8))
    (True, False)
    >>> driver_loads((10, 2), (10, 1)), driver_loads((12, 4), (13, 0))
    (False, True)
    """
    if ptxas_release[0] >= MINOR_COMPATIBILITY_FROM:
        return driver_cuda[0] >= ptxas_release[0]
    return driver_cuda >= ptxas_release


# How sure an advisory is: "confirmed" (the vendor or the project's maintainers name the
# bug and its fix), "reported" (reproduced by reporters; the range is what they tested).
Certainty = Literal["confirmed", "reported"]


class Advisory(NamedTuple):
    """A known-bad ptxas build, as reported by ``reference`` (``owner/repo#number``).

    - ``archs``: the targets it concerns. The tool role it concerns is the one the
      installed Triton runs for them (``ptxas_for``; ``advised_archs``): sm_90 is
      ``ptxas`` up to 3.8 and ``ptxas-blackwell`` on 3.9, sm_100 is ``ptxas-blackwell``
      from 3.6 and ``ptxas`` on 3.4/3.5. A role that does not run for them is not flagged.
    - ``releases``: the CUDA releases of ptxas affected (first, last; inclusive, as the
      source tested them); ``fixed_in``: the first release the source gives as fixed
      (``None``: none known).
    - ``effect``: what goes wrong (one clause, after "ptxas 13.1 ..."); ``kernels``: the
      kernels affected and the Triton builds that bundle an affected ptxas.
    - ``certainty`` and ``basis``: how sure the row is, and on what it rests.

    Discovery for a matching target takes such a build only when nothing else fits; an
    explicit setting is honoured with a warning at the first compile that uses it;
    ``doctor`` shows one line per match. ``tests/test_advisories.py`` checks every field
    of every row, each row with a real ptxas of an affected and of a fixed release."""

    reference: str
    archs: tuple[int, ...]
    releases: tuple[tuple[int, int], tuple[int, int]]
    fixed_in: tuple[int, int] | None
    effect: str
    kernels: str
    certainty: Certainty
    basis: str


ADVISORIES: tuple[Advisory, ...] = (
    Advisory(
        reference="pytorch/pytorch#181248",
        archs=(100,),
        releases=((13, 0), (13, 1)),
        fixed_in=None,
        effect="gives nondeterministic results on B200 (run to run and across batch sizes)",
        kernels="vLLM's FP8 batch-invariant MoE Triton kernel with Triton 3.7, whose bundled "
        "ptxas-blackwell is 13.1.80; a 12.8 ptxas does not reproduce it",
        certainty="reported",
        basis="reproduced with ptxas 13.1.80 and 13.0.88 (triton-lang/triton#10469); Triton "
        "did not pin back (triton-lang/triton#10462 and #10469 were closed unmerged) and "
        "moved on to 13.3.33 (3.8) and 13.4.59 (3.9); no fixed ptxas is named",
    ),
    Advisory(
        reference="pytorch/pytorch#190973",
        archs=(100,),
        releases=((12, 8), (13, 3)),
        fixed_in=(13, 4),
        effect="drops the negated operand of a fused integer min/max (VIMNMX3), turning "
        "max(abs(x), y) into max(x, y): silently wrong results",
        kernels="integer abs feeding a max or min, assembled at -O1 or above (FlexAttention "
        "neighbourhood masks); the bundled ptxas-blackwell 13.3.33 of Triton 3.8",
        certainty="reported",
        basis="reproduced with ptxas 12.8, 13.0, 13.1 and 13.3, correct at -O0 (issue open, "
        "labelled silent correctness); 13.4 (Triton 3.9's ptxas-blackwell) given as fixed; "
        "Triton's workaround (triton-lang/triton#11032) was closed unmerged",
    ),
    Advisory(
        reference="triton-lang/triton#11781",
        archs=(90,),
        releases=((12, 0), (13, 2)),
        fixed_in=(13, 3),
        effect="can reuse input registers before a register-operand WGMMA has read them: "
        "wrong matmul results on Hopper",
        kernels="matmuls whose WGMMA reads an operand from registers; the bundled ptxas of "
        "every Triton up to 3.8 (12.8.93, 12.9.86), which runs for sm_90 there",
        certainty="confirmed",
        basis="reproduced with 12.9 (64 expected, 61 out; 13.4 gives 64); the fix is in CUDA "
        "13.3's release notes; Triton 3.9 runs its 13.4 ptxas-blackwell from sm_90 for it "
        "(triton-lang/triton#11854); releases before 12.9 counted as affected, the notes "
        "naming no first one",
    ),
)


def advised_archs(
    advisory: Advisory, component: str, arch: int | None, triton: TritonRelease | None
) -> tuple[int, ...]:
    """The architectures of ``advisory`` (only ``arch`` when given) for which Triton
    release ``triton`` runs ``component``.

    >>> row = ADVISORIES[2]  # triton-lang/triton#11781, sm_90
    >>> advised_archs(row, "ptxas", None, triton_release((3, 8)))
    (90,)
    >>> advised_archs(row, "ptxas", None, triton_release((3, 9)))
    ()
    """
    if triton is None or not triton.uses(component):
        return ()
    archs = advisory.archs if arch is None else tuple(a for a in advisory.archs if a == arch)
    return tuple(a for a in archs if ptxas_for(a, triton) == component)


def advisories_for(
    component: str, release: str | None, arch: int | None, triton: TritonRelease | None
) -> tuple[Advisory, ...]:
    """The advisories about ``component`` (``ptxas`` or ``ptxas-blackwell``) of CUDA
    ``release`` where Triton release ``triton`` runs it for ``sm_<arch>`` (``None``: for
    any architecture of the row).

    >>> r37 = triton_release((3, 7))
    >>> [a.reference for a in advisories_for("ptxas-blackwell", "13.1", 100, r37)]
    ['pytorch/pytorch#181248', 'pytorch/pytorch#190973']
    >>> advisories_for("ptxas", "13.1", 100, r37)  # 3.7 runs ptxas-blackwell there
    ()
    >>> advisories_for("ptxas-blackwell", "13.4", 100, r37)  # fixed
    ()
    """
    version = parse_release(release) if release else None
    if version is None:
        return ()
    return tuple(
        a
        for a in ADVISORIES
        if a.releases[0] <= version <= a.releases[1] and advised_archs(a, component, arch, triton)
    )


def advisory_text(advisory: Advisory, release: str) -> str:
    """``"ptxas 13.3 drops ...; fixed in 13.4 (reported; pytorch/pytorch#190973)"``: what
    ``doctor`` and the compile-time warning say of a match."""
    fixed = advisory.fixed_in
    fix = f"fixed in CUDA {fixed[0]}.{fixed[1]}" if fixed else "no fixed release known"
    return f"ptxas {release} {advisory.effect}; {fix} ({advisory.certainty}; {advisory.reference})"


# --------------------------------------------------------------- AMD GPU architectures

# ``gfx942``, ``gfx90a``, ``gfx1201``: the name Triton's ``GPUTarget("hip", ...)`` takes
# (features after a colon, ``gfx942:sramecc+:xnack-``, are dropped as Triton does).
_GFX = re.compile(r"gfx[0-9]{2,3}[0-9a-f]")


def gfx_name(text: str) -> str | None:
    """The architecture ``text`` names (``"gfx942"``), or ``None`` for no AMD name.

    >>> gfx_name("gfx942:sramecc+:xnack-"), gfx_name("sm_90")
    ('gfx942', None)
    """
    name = text.strip().lower().split(":")[0]
    return name if _GFX.fullmatch(name) else None


class GfxRule(NamedTuple):
    """The first ROCm (HIP runtime) release that runs an architecture family: every
    ``gfx`` name starting with ``prefix``; ``source`` says where the rule is read."""

    prefix: str
    first: tuple[int, int]
    source: str


GFX_RULES: tuple[GfxRule, ...] = (
    GfxRule(
        prefix="gfx12",
        first=(6, 4),
        source="ROCm's Linux system requirements list the Radeon RX 9000 series (gfx1200, "
        "gfx1201) from ROCm 6.4 on (rocm.docs.amd.com/projects/install-on-linux/en/"
        "docs-6.4.1/reference/system-requirements.html)",
    ),
    GfxRule(
        prefix="gfx950",
        first=(7, 0),
        source="ROCm 7.0.0 added gfx950 (Instinct MI350 series) support (ROCm 7.0.0 release notes)",
    ),
)


def rocm_problem(release: str, triton: TritonRelease | None, gfx: str | None) -> str | None:
    """Why a HIP runtime of ``release`` (``"5.2.21153"``) cannot serve Triton ``triton``
    on ``gfx``, or ``None``.

    >>> rocm_problem("5.2.21153", triton_release((3, 9)), "gfx942").split(" (")[0]
    'ROCm 5.2 is older than Triton 3.9 and later accept'
    >>> rocm_problem("6.3.42131", triton_release((3, 9)), "gfx1201").split(" (")[0]
    'ROCm 6.3 cannot run gfx1201, needs 6.4 or newer'
    """
    version = parse_release(release)
    if version is None:
        return f"{release!r} is not a ROCm release"
    shown = f"{version[0]}.{version[1]}"
    minimum = triton.hip_major_min if triton is not None else None
    if minimum is not None and version[0] < minimum:
        first = f"{triton.first[0]}.{triton.first[1]}" if triton else ""
        return (
            f"ROCm {shown} is older than Triton {first} and later accept ({minimum}.0 or newer: "
            "TRITON_HIP_DRIVER_REQ_MAJOR_VERSION in its backends/amd/driver.c)"
        )
    rule = next((r for r in GFX_RULES if gfx is not None and gfx.startswith(r.prefix)), None)
    if rule is not None and version < rule.first:
        return (
            f"ROCm {shown} cannot run {gfx}, needs {rule.first[0]}.{rule.first[1]} or newer "
            f"({rule.source})"
        )
    return None
