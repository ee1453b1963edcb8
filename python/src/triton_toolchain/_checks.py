"""Small checks shared by every locator: safe search-path entries, files that may be
run, and running a trusted tool's ``--version`` with a timeout.

Guarantees: nothing here runs a binary that sits in (or resolves into) a directory
writable by everyone without the sticky bit, or that is itself writable by everyone;
relative and empty search-path entries are never used.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from ._fs import real_path
from ._outputs import recall, remember

VERSION_TIMEOUT_S = 10.0
_RELEASE = re.compile(r"release (\d+\.\d+)")


def split_search_path(value: str) -> tuple[list[Path], list[tuple[str, str]]]:
    """Split a ``PATH``-style value into absolute directories and refused entries.

    >>> kept, refused = split_search_path("/usr/bin::bin")
    >>> kept, [entry for entry, _ in refused]
    ([PosixPath('/usr/bin')], ['', 'bin'])
    """
    kept: list[Path] = []
    refused: list[tuple[str, str]] = []
    for entry in value.split(os.pathsep):
        if not entry:
            refused.append((entry, "empty entry (means the current directory), ignored"))
        elif not os.path.isabs(entry):
            refused.append((entry, "relative entry, ignored"))
        else:
            kept.append(Path(entry))
    return kept, refused


def insecure_reason(path: Path) -> str | None:
    """Why running or loading ``path`` would be unsafe, or ``None``.

    Checks the file and its directory, both as given and after resolving symlinks:
    a directory writable by everyone without the sticky bit, or a file writable by
    everyone, lets any user replace what runs.
    """
    try:
        real = real_path(path)
    except (OSError, RuntimeError):  # a symlink loop: file_problem reports it
        real = path
    for p in dict.fromkeys((path, real)):
        for target, what in ((p.parent, "directory"), (p, "file")):
            try:
                mode = os.stat(target).st_mode
            except OSError:
                continue
            if mode & stat.S_IWOTH and not (what == "directory" and mode & stat.S_ISVTX):
                where = "in a world-writable directory" if what == "directory" else "world-writable"
                return f"{where} ({target}), refused for safety"
    return None


def file_problem(path: Path, *, executable: bool = False, directory: bool = False) -> str | None:
    """What is wrong with ``path`` as a file (or directory) of the toolchain, or ``None``."""
    if not path.is_absolute():
        return "not an absolute path"
    try:
        st = path.stat()
    except FileNotFoundError:
        return "does not exist" if not path.is_symlink() else "is a dangling symlink"
    except OSError as exc:  # e.g. a symlink loop
        return f"cannot be read: {exc.strerror or exc}"
    if directory:
        return None if stat.S_ISDIR(st.st_mode) else "is not a directory"
    if stat.S_ISDIR(st.st_mode):
        return "is a directory, a file was expected"
    if executable and not os.access(path, os.X_OK):
        return "is not executable"
    return None


def run_output(
    path: Path,
    args: tuple[str, ...] = ("--version",),
    *,
    env: Mapping[str, str] | None = None,
    cache: Path | None = None,
) -> tuple[str | None, str | None]:
    """Run a trusted tool and return ``(output, None)`` or ``(None, problem)``.

    Refuses insecure locations (see ``insecure_reason``) and stops after
    ``VERSION_TIMEOUT_S`` seconds. With ``cache`` (a directory, see ``_outputs``), an
    answer the same file gave before is reused instead of running it again.
    """
    unsafe = insecure_reason(path)
    if unsafe:
        return None, unsafe
    remembered = recall(cache, path, args)
    if remembered is not None:
        return remembered, None
    import subprocess  # only here: resolving from a manifest never needs it

    try:
        done = subprocess.run(
            [str(path), *args],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=VERSION_TIMEOUT_S,
            check=False,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return None, f"`{path} {' '.join(args)}` did not answer within {VERSION_TIMEOUT_S:g} s"
    except OSError as exc:
        return None, f"cannot be run: {exc.strerror or exc}"
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
        return None, f"`{path.name} {' '.join(args)}` exited with {done.returncode}: {tail[0]}"
    remember(cache, path, args, done.stdout + done.stderr)
    return done.stdout + done.stderr, None


def tool_release(path: Path, *, cache: Path | None = None) -> tuple[str | None, str | None]:
    """The CUDA release a ptxas-family tool reports (``"12.8"``), or ``(None, problem)``."""
    output, problem = run_output(path, cache=cache)
    if output is None:
        return None, problem
    match = _RELEASE.search(output)
    if match is None:
        return None, "`--version` printed no CUDA release (not an NVIDIA CUDA tool?)"
    return match.group(1), None
