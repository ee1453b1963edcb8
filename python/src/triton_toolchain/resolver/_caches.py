"""Triton's and Inductor's cache directories, judged like the toolchain: where each
library writes what it compiled and loads back (``_catalog.CACHES``), resolved with its
provenance and judged: trusted (``runtime._trust``'s rule: nobody else can plant a
``.so`` there), writable by this user, its file system (``/proc/self/mountinfo``) local
or not, ``flock`` working or not.

The choice, per cache (``resolve_caches``):

1. the library's variable, set by the user: used as it is; one others can change, or
   this user cannot write, is an ``error`` (the library's first use of it stops with it:
   ``runtime._caches``); one on a network file system, or where ``flock`` fails, a
   ``warning``;
2. the manifest's pin (``caches`` in a manifest, ``$USER``/``${USER}``, ``$UID``
   expanded for this user), judged the same;
3. the library's default (for Triton, under ``TRITON_HOME`` where the user set it: then
   judged as their setting), used where it is safe, writable and local with a working
   ``flock``;
4. else a private directory of this user's: ``$XDG_CACHE_HOME/<subdir>`` (an absolute
   ``XDG_CACHE_HOME`` only), else ``<tempdir>/triton-toolchain-<uid>/<subdir>``, made
   0700 (``_observe.make_private_dir``); the shim sets the library's variable to it
   (``apply``) and says so once (``said``). None usable is an ``error``.

What a record keeps: every variable read, and each directory's trust and links (facts
of ``_observe``: a directory made, another owner or mode, a new link is a miss); not its
status, whose times change with every kernel cached. The file system, writability and
``flock`` are judged on a miss only.
"""

from __future__ import annotations

import contextlib
import fcntl
import getpass
import os
import pwd
import re
import tempfile
from collections.abc import Mapping

from ..runtime import CacheDir, _trust
from ._catalog import CACHES, NETWORK_FILESYSTEMS, Cache
from ._discovery import _fs
from ._discovery._host import Host
from ._manifest import load_for
from ._observe import make_private_dir

MOUNTINFO = "/proc/self/mountinfo"


def _mounts() -> list[tuple[str, str]]:
    """``(mount point, file system type)`` of each mount of this process, in order."""
    try:
        with open(MOUNTINFO, encoding="utf-8", errors="surrogateescape") as file:
            lines = file.read(1 << 22).splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        fields, _, rest = line.partition(" - ")
        parts, kinds = fields.split(), rest.split()
        if len(parts) >= 5 and kinds:
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), parts[4])
            found.append((point, kinds[0]))
    return found


def filesystem(path: str) -> str | None:
    """The type of the file system holding ``path`` (its links resolved): the mount
    whose point is the longest prefix of it, the last such one (it hides the others)."""
    real = os.path.realpath(path)
    best: tuple[int, str] | None = None
    for point, kind in _mounts():
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= best[0]):
            best = (len(point), kind)
    return best[1] if best else None


def is_local(kind: str | None) -> bool:
    """Whether a file system of type ``kind`` is on this machine (``NETWORK_FILESYSTEMS``)."""
    return kind is not None and kind not in NETWORK_FILESYSTEMS and not kind.startswith("fuse.")


def flock_works(directory: str) -> bool:
    """Whether ``flock`` works on a file made in ``directory`` (removed again): Triton's
    and Inductor's locks (``filelock``) take it."""
    try:
        fd, name = tempfile.mkstemp(prefix=".triton-toolchain-flock-", dir=directory)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
    except OSError:
        return False
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name)
    return True


def _existing(path: str) -> str:
    """``path``, or its nearest ancestor that exists."""
    while not os.path.lexists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


def judge(path: str, spec: Cache, source: str, default: str) -> CacheDir:
    """The verdict on ``path`` as ``spec``'s directory, from ``source`` (its fields
    ``apply``, ``error``, ``warning``, ``said`` left empty): a directory that exists is
    judged itself; one that does not, by the directory it would be made in (trusted as
    a container: a sticky ``/tmp`` is)."""
    verdict: CacheDir = {
        "variable": spec.variable,
        "path": path,
        "source": source,
        "default": default,
        "apply": False,
        "fstype": None,
        "local": False,
        "flock": False,
        "untrusted": None,
        "writable": False,
        "error": None,
        "warning": None,
        "said": None,
    }
    if not path.startswith("/"):
        verdict["untrusted"] = f"{path} is not an absolute path"
        return verdict
    # A missing directory is made now (0700, never below one others can change): what a
    # record keeps of it then holds after the library's first write (the same facts as
    # the library would make it with, but private), and the next process hits.
    if not os.path.lexists(path):
        make_private_dir(path)
    # The file system and flock first: the test's file changes the directory's times.
    place = path if os.path.lexists(path) else _existing(path)
    verdict["writable"] = os.access(place, os.W_OK | os.X_OK)
    if os.path.isdir(place):
        verdict["fstype"] = filesystem(place)
        verdict["local"] = is_local(verdict["fstype"])
        verdict["flock"] = verdict["writable"] and flock_works(place)
    # The facts a record keeps: the path's trust (owners, modes, existence) and links;
    # not its status, whose times change with every kernel cached.
    _fs.real_path(path)
    reason = _fs.untrusted(path)
    if place == path:
        verdict["untrusted"] = reason
        if reason is None and not os.path.isdir(path):
            verdict["untrusted"] = f"{path} is not a directory"
    else:
        verdict["untrusted"] = _trust.untrusted(place, container=True)
    return verdict


def _problem(verdict: CacheDir) -> str | None:
    """Why nothing should be built into the judged directory: others can change it, or
    this user cannot write it."""
    if verdict["untrusted"]:
        return verdict["untrusted"]
    if not verdict["writable"]:
        place = verdict["path"] or ""
        where = place if os.path.lexists(place) else _existing(place)
        return f"{where} is not writable by this user (a read-only file system or its mode)"
    return None


def _slow(verdict: CacheDir) -> str | None:
    """Why several processes sharing the judged directory break or wait: a network file
    system, or no ``flock``."""
    if not verdict["local"]:
        return f"{verdict['path']} is on a {verdict['fstype'] or 'unknown'} file system"
    if not verdict["flock"]:
        return f"flock does not work in {verdict['path']}"
    return None


def _home(environ: Mapping[str, str]) -> str:
    """``os.path.expanduser("~/")`` for ``environ``: ``$HOME``, else this user's
    ``passwd`` entry, else ``~/`` unchanged (a relative path)."""
    home = environ.get("HOME")
    if home is None:
        try:
            home = pwd.getpwuid(os.getuid()).pw_dir
        except KeyError:
            return "~/"
    return home.rstrip("/") + "/"


def _user(environ: Mapping[str, str]) -> str:
    """``getpass.getuser()`` for ``environ``, as Inductor names its default."""
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        value = environ.get(name)
        if value:
            return value
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid_{os.getuid()}"


def _tempdir(environ: Mapping[str, str]) -> str:
    """``tempfile.gettempdir()``, its variables recorded (this process's answer)."""
    for name in ("TMPDIR", "TEMP", "TMP"):
        environ.get(name)
    return tempfile.gettempdir()


def default_of(spec: Cache, environ: Mapping[str, str]) -> tuple[str, str | None]:
    """The library's own directory and the variable of the user's that placed it
    (``TRITON_HOME``), else ``None``."""
    if spec.home is not None and environ.get(spec.home) is not None:
        return os.path.join(environ[spec.home], ".triton", "cache"), spec.home
    if spec.name == "triton":
        return os.path.join(_home(environ), ".triton", "cache"), None
    user = re.sub(r'[\\/:*?"<>|]', "_", _user(environ))
    return os.path.join(_tempdir(environ), f"torchinductor_{user}"), None


def expand_pin(value: str, environ: Mapping[str, str]) -> str:
    """A manifest's pinned directory for this user: ``$USER``/``${USER}`` (the user's
    name from ``passwd``, else ``uid_<uid>``) and ``$UID`` replaced.

    >>> expand_pin("/local/scratch/${UID}/triton", {})[:15]
    '/local/scratch/'
    """
    try:
        name = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        name = f"uid_{os.getuid()}"
    values = {"USER": name, "UID": str(os.getuid())}
    return re.sub(
        r"\$(?:\{(USER|UID)\}|(USER|UID)\b)", lambda m: values[m.group(1) or m.group(2)], value
    )


def _private(spec: Cache, environ: Mapping[str, str], default: str) -> CacheDir | None:
    """The first private, local directory that works for ``spec``, made 0700, its
    ``source`` the variable that placed it."""
    xdg = environ.get("XDG_CACHE_HOME") or ""
    places = [(os.path.join(xdg, spec.subdir), "XDG_CACHE_HOME")] if xdg.startswith("/") else []
    top = os.path.join(_tempdir(environ), f"triton-toolchain-{os.geteuid()}")
    places.append((os.path.join(top, spec.subdir), "TMPDIR"))
    for place, source in places:
        parent = os.path.dirname(place)
        if make_private_dir(parent) is None or make_private_dir(place) is None:
            continue
        verdict = judge(place, spec, source, default)
        if _problem(verdict) is None and _slow(verdict) is None:
            return verdict
    return None


def _fix(spec: Cache) -> str:
    return f"set {spec.variable} to a directory of your own on a local file system"


def resolve_cache(
    spec: Cache, environ: Mapping[str, str], pin: tuple[str, str] | None = None
) -> CacheDir:
    """One cache directory, chosen and judged (see the module docstring). ``pin``: the
    manifest's directory for it and the manifest's file."""
    default, home = default_of(spec, environ)
    explicit = environ.get(spec.variable)
    named: tuple[str, str] | None = None  # (what names it, its value)
    if explicit is not None:
        named = (spec.variable, explicit)
    elif pin is not None:
        named = (f"the manifest {pin[1]}'s caches.{spec.name}", expand_pin(pin[0], environ))
    elif home is not None:
        named = (home, default)
    if named is not None:
        who, value = named
        source = "manifest" if pin is not None and explicit is None else who
        verdict = judge(value, spec, source, default)
        problem, slow = _problem(verdict), _slow(verdict)
        verdict["apply"] = source == "manifest"
        shown = f"{who}={value!r}" if explicit is not None or home == who else f"{who} {value}"
        if problem:
            verdict["error"] = (
                f"{shown} cannot hold {spec.what}: {problem}; another user could plant the "
                f"files it loads back. Fix: {_fix(spec)}"
            )
        elif slow:
            verdict["warning"] = (
                f"{shown}: {slow}; several processes compiling at once may fail or wait "
                f"there. Fix: {_fix(spec)}, if it is shared"
            )
        return verdict
    verdict = judge(default, spec, "default", default)
    refused = _problem(verdict) or _slow(verdict)
    if refused is None:
        return verdict
    chosen = _private(spec, environ, default)
    if chosen is None and _problem(verdict) is None:  # slow only: kept, and said
        verdict["warning"] = (
            f"the default {default}: {refused}, and no private local directory could be "
            f"made under XDG_CACHE_HOME or {_tempdir(environ)}; several processes compiling "
            f"at once may fail or wait there. Fix: {_fix(spec)}"
        )
        return verdict
    if chosen is None:
        verdict["error"] = (
            f"no usable directory for {spec.what}: the default {default} is refused "
            f"({refused}), and no private directory could be made under XDG_CACHE_HOME or "
            f"{_tempdir(environ)}. Fix: {_fix(spec)}"
        )
        return verdict
    verdict = chosen
    verdict["apply"] = True
    verdict["said"] = (
        f"{spec.what.split(' (')[0]} is {verdict['path']}, set in {spec.variable}: the default "
        f"{default} is refused ({refused})"
    )
    return verdict


def resolve_caches(
    environ: Mapping[str, str], pins: Mapping[str, str] | None = None, manifest: str = ""
) -> dict[str, CacheDir]:
    """Every cache of ``_catalog.CACHES``, chosen and judged; ``pins``: a manifest's
    ``caches`` (name -> directory), ``manifest`` its file."""
    pins = pins or {}
    return {
        spec.name: resolve_cache(
            spec, environ, (pins[spec.name], manifest) if spec.name in pins else None
        )
        for spec in CACHES
    }


def caches_for(host: Host) -> dict[str, CacheDir]:
    """``resolve_caches`` for ``host``: its environment and its manifest's pins."""
    manifest = load_for(host)
    if manifest is None:
        return resolve_caches(host.environ)
    return resolve_caches(host.environ, manifest.caches, str(manifest.file))


def status(cache: CacheDir) -> str:
    """A word for ``doctor``: ``refused`` (an error), ``slow`` (a warning), ``chosen``
    (the shim's own directory), else ``ok``."""
    if cache["error"]:
        return "refused"
    if cache["warning"]:
        return "slow"
    return "chosen" if cache["source"] in ("XDG_CACHE_HOME", "TMPDIR") else "ok"


def verdict_text(cache: CacheDir) -> str:
    """The facts judged, in a few words: ``ext4, flock``."""
    kind = cache["fstype"] or "file system unknown"
    where = "" if cache["local"] else " (network)"
    return f"{kind}{where}, {'flock' if cache['flock'] else 'no flock'}"
