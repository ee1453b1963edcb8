"""The ground every module of ``runtime/`` stands on; it imports none of the package's
(``tests/test_architecture.py``). ``runtime/`` is what a warm process pays: the import
hook, the activation and the record (``_activate``, ``_record``, ``_trust``), and the
plan applied to Triton and torch (``_triton``, ``_legacy``, ``_torch``, ``_caches``);
standard library only. Here, once each (in the package's own module, which Python runs
before any of them anyway: each further module costs a warm ``import triton`` about
0.1 ms):

- **The plan's shape**, the one thing that crosses from ``resolver/`` into this package:
  the ``TypedDict``s an activation plan is made of (``resolver._plan`` makes one, the
  adapters read one, the activation record keeps one), and ``valid``, which checks a
  decoded JSON value against them (the record believes a plan only if it is valid).

  Each shape is a ``TypedDict`` to the type checker and a plain class at run time
  (``Shape``: making a ``TypedDict`` costs 70 µs, the eight of them half a millisecond
  of every ``import triton``). The annotations are real (no ``from __future__ import
  annotations`` here), so ``valid`` reads them as they are (the class's
  ``__annotations__``, each one's ``__origin__`` and ``__args__``): ``str``, ``int``,
  ``bool`` (a ``bool`` is no ``int`` here), ``None``, ``list[X]``, ``dict[str, X]``,
  ``X | None``, ``Literal[...]`` and nested shapes of exactly their keys.
  (``typing.get_type_hints`` would take a process's first check from 0.06 to 0.3 ms,
  resolving names that are no strings here.)

- **This process**: Triton's GPU backends (``BACKENDS``), what the shim did to it
  (``SHIM``, under ``LOCK``), the user's own environment (``user_environ``:
  ``os.environ`` without the values the shim wrote), the GPU drivers mapped into it
  (``loaded_drivers``) and loading one by its absolute path (``preload_driver``), the
  replacements made in it (``Patches``, each replacement carrying the original as
  ``ORIGINAL``), and what one application did (``Report``).
"""

import os
import threading
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from typing import TypedDict as Shape
else:

    class Shape:
        """A shape at run time: its annotations are what ``valid`` checks."""


# ------------------------------------------------------------------------ the plan's shape

UsedBy = Literal["compile", "build", "inductor", "extension"]
# When a component is first needed (``_catalog.Component.parts``): at the import, torch's
# part at `import torch`, the launcher's at Triton's first launcher build, the compile
# target's at the first compile that runs ptxas-blackwell, the SASS tools' at the first
# SASS dump. A plan's ``pending`` lists the later parts it does not hold yet.
Part = Literal["import", "torch", "launcher", "target", "sass"]


class Rejection(Shape):
    """A candidate looked at and refused, and why (``_model.Rejection``)."""

    path: str
    reason: str
    source: str


class ChoiceData(Shape):
    """One component as resolved (``_model.Choice.to_dict``)."""

    path: str | None
    version: str | None
    source: str | None
    rejected: list[Rejection]
    searched: list[str]
    notes: list[str]
    error: str | None


class ToolchainData(Shape):
    """Every component resolved (``_model.Toolchain.to_dict``)."""

    arch: int | None
    manifest: str | None
    strict: bool
    notes: list[str]
    components: dict[str, ChoiceData]


class Setting(Shape):
    """What Triton is told of one component: its knob (3.4+) and variable, the value
    (``None``: none found), whether the variable holds the user's own setting, the
    setting's error and the step of Triton's it stops (``used_by``)."""

    component: str
    knob: str | None
    variable: str | None
    value: str | None
    user: bool
    error: str | None
    used_by: UsedBy


class TorchPart(Shape):
    """What ``_torch`` sets: the C++ compiler, the directories for ``CPATH`` and
    ``cpp_extension``'s CUDA home."""

    CXX: str | None
    CPATH: list[str]
    CUDA_HOME: str | None


class Driver(Shape):
    """One backend's driver: the library loaded at run time, the directory the launcher
    links against, and whether the user's variable names it (``None``: not found)."""

    library: str | None
    link: str | None
    user: bool


class CacheDir(Shape):
    """A library's cache directory as judged (``resolver._caches``): the directory it
    will use (``None``: none usable) and where that came from (``source``: the variable,
    ``"manifest"``, ``"default"`` or the variable of the private directory the shim
    chose); ``default``, the library's own default; ``apply``: the shim sets
    ``variable`` to ``path``; the verdict (``fstype``, ``local``, ``flock``,
    ``untrusted``: why not trusted, ``writable``); ``error``: what stops the library's
    first use of it (an explicit setting others can change, none usable); ``warning``: a
    slow one;
    ``said``: the one line said at the first use and by ``doctor``."""

    variable: str
    path: str | None
    source: str
    default: str | None
    apply: bool
    fstype: str | None
    local: bool
    flock: bool
    untrusted: str | None
    writable: bool
    error: str | None
    warning: str | None
    said: str | None


class Plan(Shape):
    """A plan (``_plan``'s docstring): ``drivers`` per backend (``runtime.BACKENDS``);
    ``pending``, the later parts it does not hold yet; ``torch``: ``None`` while torch's
    part is pending; ``caches``: Triton's and Inductor's cache directories (empty in a
    plan of a later part only)."""

    toolchain: ToolchainData
    history: bool
    settings: list[Setting]
    drivers: dict[str, Driver]
    pending: list[Part]
    torch: TorchPart | None
    caches: dict[str, CacheDir]


MAX_ITEMS = 1 << 12  # in one list or dictionary; a plan's longest holds a few dozen
Check = Callable[[object], bool]
_CHECKS: dict[Any, Check] = {}  # per type, its check, made once (``valid`` is on the fast path)


def valid(value: object, shape: Any) -> bool:
    """Whether the decoded JSON ``value`` has the type ``shape`` (see the module
    docstring): exact types, so no subclass is believed either; a string that cannot be
    a file name (a lone surrogate, which JSON's ``\\ud800`` makes) is refused."""
    return check(shape)(value)


def check(shape: Any) -> Check:
    """The test of ``valid`` for ``shape``, made from its annotations the first time."""
    found = _CHECKS.get(shape)
    if found is None:
        found = _CHECKS[shape] = _made(shape)
    return found


def _made(shape: Any) -> Check:
    leaves = _leaves(shape)
    if leaves is not None:
        return lambda v: type(v) in leaves and (type(v) is not str or _text(v))
    if is_shape(shape):
        # A field whose type alone decides is tested in place (no call: this runs on
        # every value of every plan read back).
        types_ = {k: _leaves(t) for k, t in shape.__annotations__.items()}
        simple = [(k, leaves) for k, leaves in types_.items() if leaves is not None]
        nested = [(k, check(shape.__annotations__[k])) for k, t in types_.items() if t is None]
        keys = types_.keys()

        def fits(v: object) -> bool:
            if type(v) is not dict or v.keys() != keys:
                return False
            for k, leaves in simple:
                x = v[k]
                if type(x) not in leaves or (type(x) is str and not _text(x)):
                    return False
            return all(f(v[k]) for k, f in nested)

        return fits
    origin = getattr(shape, "__origin__", None)
    args: tuple[Any, ...] = getattr(shape, "__args__", ())
    if _union(shape):
        either = [check(t) for t in args]
        return lambda v: any(c(v) for c in either)
    if origin is Literal:
        return lambda v: any(type(v) is type(a) and v == a for a in args)
    if origin is list:
        item = check(args[0])
        return lambda v: type(v) is list and len(v) <= MAX_ITEMS and all(map(item, v))
    if origin is dict:
        key, item = check(args[0]), check(args[1])
        return lambda v: (
            type(v) is dict
            and len(v) <= MAX_ITEMS
            and all(map(key, v))
            and all(map(item, v.values()))
        )
    raise TypeError(f"no check for {shape!r}")  # a mistake of the schema, not of data


_SCALARS = frozenset({str, int, bool, type(None)})


def _leaves(shape: Any) -> frozenset[type] | None:
    """The types a value of ``shape`` may have where its type alone decides (``str``,
    ``int``, ``bool``, ``None`` and their unions: ``str | None``), else ``None``."""
    found = frozenset(shape.__args__ if _union(shape) else (shape,))
    return found if found <= _SCALARS else None


def _union(shape: Any) -> bool:
    """``X | Y`` or ``Optional[X]`` (``typing.get_origin`` answers the same, slower)."""
    return type(shape) is types.UnionType or getattr(shape, "__origin__", None) is typing.Union


def _text(value: str) -> bool:
    """Whether a string can be a file name: ``os.fsencode`` encodes it (a lone
    surrogate, which JSON's ``\\ud800`` makes, it does not)."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return False
    return True


def is_shape(value: object) -> bool:
    """Whether ``value`` is one of the shapes above (``Plan``, ``Setting``, ...)."""
    return Shape in getattr(value, "__bases__", ())


Namespace = dict[str, Any]  # a module's globals, as Triton's functions see them

# ------------------------------------------------------------------ Triton's GPU backends
# What the runtime needs of each backend before any resolution (the driver's SONAME, to
# see it mapped into the process; Triton's backend package, to find the modules to apply
# to), as data: one row per backend. The catalog's components name their backend
# (``_catalog.Component.backend``) and take the driver's SONAME from here. A backend's
# name is also Triton's: its knob group (``triton.knobs.nvidia``) and its key in
# ``triton.backends.backends``.


class Backend:
    """``driver_soname``: the name Triton, torch and the launcher load the driver by
    (``libcuda.so.1``); ``triton_package``: Triton's package of the backend, whose
    ``compiler`` and ``driver`` modules the adapter applies to. (A plain class: this is
    on every process's import path, where a ``NamedTuple`` costs a compile.)"""

    __slots__ = ("driver_soname", "triton_package")

    def __init__(self, *, driver_soname: str, triton_package: str) -> None:
        self.driver_soname = driver_soname
        self.triton_package = triton_package

    @property
    def driver_stem(self) -> str:
        """The driver's file name up to ``.so`` (``libcuda.so``), which every file of the
        driver's starts with (``libcuda.so.1``, ``libcuda.so.580.159.04``, a stub's
        ``libcuda.so``)."""
        return self.driver_soname.partition(".so")[0] + ".so"


BACKENDS: dict[str, Backend] = {
    "nvidia": Backend(driver_soname="libcuda.so.1", triton_package="triton.backends.nvidia"),
    # Triton's AMD backend loads the HIP runtime by the unversioned name in every place it
    # looks but ``ldconfig -p`` (3.9 ``backends/amd/driver.py``,
    # ``_get_path_to_hip_runtime_dylib``); the library's own SONAME is versioned
    # (``libamdhip64.so.6``), which ``TRITON_LIBHIP_PATH`` accepts.
    "amd": Backend(driver_soname="libamdhip64.so", triton_package="triton.backends.amd"),
}


# -------------------------------------------------------- what the shim did to the process


class Shim:
    """What the shim did to this process (one, ``SHIM``, under ``LOCK``): the
    environment variables it wrote (``env``: name -> value) and the driver it loaded,
    or found mapped already (``driver``)."""

    __slots__ = ("driver", "env")

    def __init__(self) -> None:
        self.env: dict[str, str] = {}
        self.driver: str | None = None


LOCK = threading.RLock()  # this process's activation (``_activate``) and ``SHIM``
SHIM = Shim()


def user_environ() -> dict[str, str]:
    """``os.environ`` without the values the shim wrote: what the user set."""
    with LOCK:
        return {k: v for k, v in os.environ.items() if SHIM.env.get(k) != v}


def loaded_by_shim() -> frozenset[str]:
    """The driver the shim loaded into the process (not someone else's), resolved."""
    with LOCK:
        return frozenset({os.path.realpath(SHIM.driver)} if SHIM.driver else ())


# ------------------------------------------------------------ the driver in this process

MAPS = "/proc/self/maps"
MAPS_LIMIT = 64 << 20
MAPS_CHUNK = 1 << 16  # a larger buffer costs more to allocate than the reads it saves


def loaded_drivers(maps: str = MAPS, stems: tuple[str, ...] | None = None) -> list[str]:
    """Paths of the drivers' files (``libcuda.so*``: ``drivers_in``) mapped into this
    process, in the order they
    appear in ``maps`` (``/proc/self/maps``; discovery reads it under its host's root,
    ``Host.mapped_drivers``); none where it cannot be read."""
    try:
        fd = os.open(maps, os.O_RDONLY | os.O_CLOEXEC)
    except (OSError, ValueError):
        return []
    chunks, size = [], 0
    try:
        while size < MAPS_LIMIT:
            chunk = os.read(fd, MAPS_CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return []
    finally:
        os.close(fd)
    return drivers_in(b"".join(chunks), stems or DRIVER_STEMS)


# What every file of the driver the activation loads is named from
# (``Backend.driver_stem``): NVIDIA's only. The HIP runtime is never loaded by the shim
# (Triton's AMD backend opens it itself, by the path the shim names), so a mapped
# ``libamdhip64`` says nothing about ``libcuda``; ``drivers_in(text, (AMD_STEM,))`` finds it.
DRIVER_STEMS = (BACKENDS["nvidia"].driver_stem,)
AMD_STEM = BACKENDS["amd"].driver_stem


def drivers_in(text: bytes, stems: tuple[str, ...] = DRIVER_STEMS) -> list[str]:
    """The paths of the drivers' files in the bytes of a ``/proc/PID/maps`` file (those
    whose name starts with one of ``stems``, each backend's: ``libcuda.so*``), in order,
    each once (any bytes: a path may hold any byte but NUL and newline)."""
    if not any(f"/{stem}".encode() in text for stem in stems):
        return []
    found: dict[str, None] = {}
    for line in text.decode("utf-8", "surrogateescape").splitlines():
        fields = line.split(None, 5)
        path = fields[5] if len(fields) == 6 else ""
        if os.path.basename(path).startswith(stems):
            found[path] = None
    return list(found)


def preload_driver(path: str, loaded: list[str] | None = None) -> str:
    """Load the driver ``path`` (absolute) with ``RTLD_GLOBAL`` unless a ``libcuda.so*``
    is already mapped into this process; return the path of the driver now loaded.

    Afterwards ``dlopen("libcuda.so.1")`` by bare name, from torch's CUDA runtime,
    Triton's ``ctypes`` probe or ``driver.c``, returns this library (the dynamic loader
    matches loaded objects by SONAME before it searches ``LD_LIBRARY_PATH``, whose empty
    entries mean the current directory). A driver already loaded is kept: two drivers
    in one process cannot work; the resolver reports that one as found in the process.
    ``loaded``: ``loaded_drivers()`` as the caller has just read it.
    """
    if loaded is None:
        loaded = loaded_drivers()
    if loaded:
        return loaded[0]
    if not os.path.isabs(path):
        raise ValueError(f"the driver must be loaded by its absolute path, not {path!r}")
    import ctypes  # noqa: PLC0415  only where a driver is loaded (ctypes: ~1 ms)

    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return path


# ---------------------------------------------------------------- patches and the report

ORIGINAL = "__triton_toolchain_original__"


class Report:
    """What one application did: settings made (``"knobs.nvidia.ptxas"``, ``"env:CC"``,
    ``"patch:...get_ptxas"`` -> value) and left alone (-> why)."""

    def __init__(self) -> None:
        self.applied: dict[str, str] = {}
        self.kept: dict[str, str] = {}
        self.notes: list[str] = []


class Patches:
    """The replacements made in this process: ``(namespace, name) -> (original, ours)``."""

    def __init__(self) -> None:
        self.made: dict[tuple[str, str], tuple[object, object]] = {}

    def patch(
        self, where: str, namespace: Namespace, attr: str, make: Callable[[Any], object]
    ) -> bool:
        """Replace ``namespace[attr]`` by ``make(original)`` unless it is absent or someone
        replaced ours since. True when ours is in place."""
        if attr not in namespace:
            return False
        key = (where, attr)
        present = namespace[attr]
        if key in self.made:
            original, ours = self.made[key]
            if present is ours:
                return True
            if present is not original:
                return False
        replacement = make(present)
        self.made[key] = (present, replacement)
        namespace[attr] = replacement
        return True

    def unpatch(self, where: str, namespace: Namespace, attr: str) -> None:
        """Put the original back, if ours is still in place."""
        key = (where, attr)
        if key in self.made:
            original, ours = self.made.pop(key)
            if namespace.get(attr) is ours:
                namespace[attr] = original
