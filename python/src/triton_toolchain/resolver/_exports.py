"""The environment that hands a resolution to another process: Triton's own variables,
``CC``, ``TRITON_TOOLCHAIN_MANIFEST``, and ``TRITON_TOOLCHAIN_EXPORTS``, which says what
was exported and where it came from. One place for which component goes where, and
for the format of ``TRITON_TOOLCHAIN_EXPORTS``, written (``toolchain_env``) and read back
(``read_exports``, for the resolver above) here; the command that runs a program with
them (``triton-toolchain run``) is ``_cli``'s.

``TRITON_TOOLCHAIN_EXPORTS`` (JSON: variable -> ``[value, source]``) lets the child's
resolution tell the values a parent's ``env``/``run`` exported from the user's own
settings: a variable whose value is still the exported one is taken as coming from
that source (``discovered:cuda-toolkit``, ``manifest:/etc/...``), checked like a
manifest entry (a value that no longer passes is rejected and discovery goes on), not
as an explicit setting. Whatever the user sets afterwards is theirs.

``shell_script`` writes the variables for a shell to evaluate (``triton-toolchain env``):
every value comes back in the shell byte for byte, whatever bytes its path holds, or
the value is refused by name (JSON holds only text: a path that is not UTF-8).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping

from ..runtime._errors import ToolchainError
from ._catalog import CATALOG
from ._manifest import MANIFEST_VARIABLE
from ._model import Toolchain

EXPORTS_VARIABLE = "TRITON_TOOLCHAIN_EXPORTS"
MAX_EXPORTS_BYTES = 1 << 16
# Variables whose entries a program looks things up in: a child never gets an empty or
# relative entry (one means the current directory).
SEARCH_PATHS = ("PATH", "LD_LIBRARY_PATH")


def toolchain_env(tc: Toolchain) -> dict[str, str]:
    """Variables for every found component, e.g. ``{"TRITON_PTXAS_PATH": "/usr/...", ...}``,
    the manifest, and ``TRITON_TOOLCHAIN_EXPORTS``.

    ``TRITON_LIBCUDA_PATH`` is the run-time driver's directory when a driver was found,
    else the link directory (a toolkit stub: enough to build, not to launch).
    """
    env: dict[str, str] = {}
    sources: dict[str, list[str]] = {}
    for spec in CATALOG:  # the rows of the backend resolved (``resolve_all(backend=...)``)
        choice = tc.choices.get(spec.name)
        if spec.variable is None or choice is None or choice.path is None or spec.variable in env:
            continue
        value = os.path.dirname(choice.path) if spec.variable_names_dir else choice.path
        env[spec.variable] = value
        sources[spec.variable] = [value, str(choice.source)]
    if tc.manifest:
        env[MANIFEST_VARIABLE] = tc.manifest
    if sources:
        env[EXPORTS_VARIABLE] = json.dumps(sources, separators=(",", ":"))
    return env


def read_exports(value: str | None) -> dict[str, tuple[str, str]]:
    """``TRITON_TOOLCHAIN_EXPORTS`` read back: variable -> ``(value, source)``; a value
    that is not what ``toolchain_env`` writes counts as none."""
    if not value or len(value) > MAX_EXPORTS_BYTES:
        return {}
    try:
        doc = json.loads(value)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(doc, dict):
        return {}
    return {
        k: (v[0], v[1])
        for k, v in doc.items()
        if isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)
    }


def clean_search_path(value: str) -> str:
    """``value`` without its empty and relative entries (``"::/usr/bin:bin"`` ->
    ``"/usr/bin"``)."""
    return os.pathsep.join(e for e in value.split(os.pathsep) if os.path.isabs(e))


def merged_env(tc: Toolchain, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` with the toolchain's variables added where ``base`` does not set them
    (what the user set always wins), and ``PATH``/``LD_LIBRARY_PATH`` without empty or
    relative entries."""
    merged = dict(base)
    exported = toolchain_env(tc)
    # A variable the user set, or one the same tools read in its place (CUDA_PATH for
    # CUDA_HOME), keeps the export out.
    shadows = {c.variable: (c.variable, *c.also_read) for c in CATALOG if c.variable}
    kept = {k for k in exported if any(merged.get(v) for v in shadows.get(k, (k,)))}
    for key, value in exported.items():
        if key not in kept:
            merged[key] = value
    if EXPORTS_VARIABLE not in kept and EXPORTS_VARIABLE in exported:
        # Only what was really exported: the user's own values stay the user's.
        record = read_exports(exported[EXPORTS_VARIABLE])
        mine = {k: list(v) for k, v in record.items() if k not in kept}
        if mine:
            merged[EXPORTS_VARIABLE] = json.dumps(mine, separators=(",", ":"))
        else:
            merged.pop(EXPORTS_VARIABLE, None)
    for key in SEARCH_PATHS:
        if key in merged:
            merged[key] = clean_search_path(merged[key])
            if not merged[key] and key == "LD_LIBRARY_PATH":
                del merged[key]
    return merged


# A value every shell reads as it is, unquoted: an absolute path of these characters.
_PLAIN = r"/[A-Za-z0-9_@+=:,./-]*"


def _posix_quoted(value: str) -> str:
    """``value`` for sh, bash, dash and zsh: as it is where it is plain (``_PLAIN``),
    else in single quotes, where every byte but the quote itself is literal: ``a'b``
    -> ``'a'\\''b'``."""
    if re.fullmatch(_PLAIN, value):
        return value
    return "'" + value.replace("'", "'\\''") + "'"


def _fish_quoted(value: str) -> str:
    """``value`` for fish: as it is where it is plain, else in fish's single quotes,
    where a backslash escapes a backslash or a quote: ``a\\`` -> ``'a\\\\'`` (POSIX
    quoting would leave fish's quote open)."""
    if re.fullmatch(_PLAIN, value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


# Each shell's line for one variable, and its quoting.
SHELLS = {
    "sh": ("export {name}={value}", _posix_quoted),
    "fish": ("set -gx {name} {value};", _fish_quoted),
}
FORMATS = (*SHELLS, "json")


def shell_script(env: Mapping[str, str], fmt: str) -> bytes:
    """``env`` as ``fmt`` (``"sh"``, ``"fish"``, ``"json"``) gives it to a shell or a JSON
    reader: the bytes to print. Values are written as the bytes of their paths
    (``os.fsencode``), never re-encoded; JSON refuses a value that is not UTF-8."""
    if fmt == "json":
        not_text = [
            f"{name}={os.fsencode(value)!r}"
            for name, value in env.items()
            if os.fsencode(value).decode("utf-8", "replace") != value
        ]
        if not_text:
            raise ToolchainError(
                f"env --format json: {', '.join(not_text)}: not UTF-8 text, which JSON "
                "cannot hold byte for byte; use --format sh or --format fish, or give "
                "the files UTF-8 paths"
            )
        return (json.dumps(env, indent=2) + "\n").encode("ascii")
    line, quoted = SHELLS[fmt]
    text = "".join(line.format(name=k, value=quoted(v)) + "\n" for k, v in env.items())
    return os.fsencode(text)
