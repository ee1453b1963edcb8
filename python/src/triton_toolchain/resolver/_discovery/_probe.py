"""Asking the binaries themselves whether they fit: a ptxas assembles the PTX this Triton
would write for a target, a driver library says which CUDA release it supports.

- ``assemble(path, ptx, target)``: run the ptxas on a minimal PTX file with ``.version``
  ``ptx`` and ``.target`` ``target`` (``sm_90a``: the name the Triton release writes,
  ``_catalog.triton_target``), with ``--gpu-name`` of the same target, as Triton's
  ``make_cubin`` does. The file is
  written (mode 0600, ``O_EXCL | O_NOFOLLOW``) into a fresh private temporary directory
  (mode 0700) that is removed afterwards; the run is bounded like every tool's
  (``_run.collect``: no input, 10 s, 64 KiB of output, its process group killed). The
  answer is a problem (``None``: it assembled and wrote a cubin) built from the lines of
  its output that say ``fatal`` or ``error``, escaped (``printable``) and cleaned of the
  temporary path, at most 300 characters: the output is never trusted beyond that.
- ``gpu_arch(path)``: the first GPU's architecture, asked of a ``libcuda.so.1`` in a
  child Python (``cuInit``, then the compute capability), for ``doctor``;
- ``driver_cuda(path)``: ``cuDriverGetVersion`` of a ``libcuda.so.1``, asked in a child
  Python (the library is never loaded into this process; ``cuDriverGetVersion`` needs
  no ``cuInit`` and no GPU); its answer must be one line ``<status> <version>``.

Both answers are remembered per file version and question (``_answers``): the probe
runs once per ptxas file, PTX version and target, across processes. Nothing here runs
on the ``import triton`` path: callers are ``doctor``, ``resolve(arch=N)`` and Triton's
compile step (``_triton._guards``).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ...runtime._errors import printable
from .._observe import write_new
from . import _answers, _fs
from ._run import collect

PROBE_ENTRY = "triton_toolchain_probe"
MESSAGE_LIMIT = 300
_INTERESTING = r"(?i)fatal|error|not defined|unsupported"


_TARGET = r"sm_[0-9]{2,3}[af]?"


def probe_ptx(ptx: int, target: str) -> str:
    """The PTX the probe assembles: what Triton's ``make_ptx`` writes, reduced to an empty
    kernel (``.version 8.6`` / ``.target sm_90a`` / ``.address_size 64``)."""
    return (
        f".version {ptx // 10}.{ptx % 10}\n.target {target}\n.address_size 64\n\n"
        f".visible .entry {PROBE_ENTRY}()\n{{\n\tret;\n}}\n"
    )


def _summary(output: bytes, tmp: str) -> str:
    """What a failed run said, as one short, clean line."""
    text = printable(output.decode("utf-8", "replace")).replace("\t", " ")
    text = text.replace(tmp + os.sep, "") if tmp else text
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    said = [ln for ln in lines if re.search(_INTERESTING, ln)] or lines[-1:]
    summary = "; ".join(said[:2]) or "no message"
    return summary if len(summary) <= MESSAGE_LIMIT else summary[: MESSAGE_LIMIT - 3] + "..."


# Less free space than this where the probe ran: its failure may be the disk's.
MIN_FREE_BYTES = 1 << 20


def _short_of_space(directory: str) -> bool:
    try:
        st = os.statvfs(directory)
    except OSError:
        return True
    return st.f_bavail * st.f_frsize < MIN_FREE_BYTES or st.f_favail == 0


def _run_probe(
    path: Path, ptx: int, target: str, env: Mapping[str, str] | None
) -> tuple[str | None, bool]:
    """``(problem or None, whether it is the file's own answer)``: a failure of the
    environment (the temporary directory missing or full, a signal, the probe's
    timeout) is a problem of this run, not the file's answer."""
    try:
        tmp = tempfile.mkdtemp(prefix="triton-toolchain-probe-")  # mode 0700, a new name
    except OSError as exc:
        where = os.environ.get("TMPDIR") or tempfile.gettempdir()
        return f"the probe could not be prepared in {where}: {exc.strerror or exc}", False
    try:
        source = os.path.join(tmp, "probe.ptx")
        cubin = os.path.join(tmp, "probe.cubin")
        write_new(source, probe_ptx(ptx, target).encode())
        argv = [str(path), f"--gpu-name={target}", source, "-o", cubin]
        status, output, problem = collect(argv, env)
        if problem is not None:
            return f"the probe {problem}", False
        try:
            fd = os.open(cubin, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                magic = os.read(fd, 4)
            finally:
                os.close(fd)
        except OSError:
            magic = b""
        if status == 0 and magic == b"\x7fELF":
            return None, True
        said = (
            f"exited with {status}: {_summary(output, tmp)}"
            if status != 0
            else "exited with 0 but wrote no cubin (not an NVIDIA ptxas?)"
        )
        if _short_of_space(tmp):
            full = f"the file system of {os.path.dirname(tmp)} is full"
            return f"{said}; {full}: the probe is asked again next time", False
        return said, True
    except OSError as exc:
        return f"the probe could not be prepared in {tmp}: {exc.strerror or exc}", False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def assemble(
    path: Path,
    ptx: int,
    target: str,
    *,
    answers: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> str | None:
    """Why the ptxas at ``path`` cannot assemble PTX ``.version`` ``ptx`` (86: 8.6) for
    ``target`` (``"sm_90a"``), or ``None`` when it can (see the module docstring)."""
    if not (isinstance(ptx, int) and 10 <= ptx < 1000 and re.fullmatch(_TARGET, target)):
        raise ValueError(f"not a PTX version and target: {ptx!r}, {target!r}")
    problem = _fs.file_problem(path, executable=True) or _fs.untrusted(path)
    if problem:
        return problem
    question = ("probe-v1", f".version {ptx}", target)
    remembered = _answers.recall(answers, path, question)
    if remembered is not None:
        ok, text = remembered
        return None if ok else text
    problem, answered = _run_probe(path, ptx, target, env)
    if answered:  # what the file itself answered, never an accident of this run
        _answers.remember(answers, path, question, problem is None, problem or "")
    return problem


# The start of driver_cuda's answer when the query was cut short (a signal, the timeout):
# nothing is known, and a check that needs it fails closed.
NOT_ASKED = "cuDriverGetVersion could not be asked"
_DRIVER_VERSION = r"(-?[0-9]{1,9}) ([0-9]{1,9})"
# Run in a child ``python -I -S``: load the library, ask, print "<status> <version>".
_ASK_DRIVER = (
    "import ctypes, sys\n"
    "lib = ctypes.CDLL(sys.argv[1])\n"
    "v = ctypes.c_int(0)\n"
    "print(lib.cuDriverGetVersion(ctypes.byref(v)), v.value)\n"
)


# Run in a child ``python -I -S``: the first GPU's compute capability, which needs
# ``cuInit`` (a GPU context is never made). Prints "<status> <major> <minor>".
_ASK_ARCH = (
    "import ctypes, sys\n"
    "lib = ctypes.CDLL(sys.argv[1])\n"
    "d, major, minor = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0)\n"
    "status = lib.cuInit(0) or lib.cuDeviceGet(ctypes.byref(d), 0)\n"
    # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, _MINOR = 76 (cuda.h)
    "status = status or lib.cuDeviceGetAttribute(ctypes.byref(major), 75, d)\n"
    "status = status or lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, d)\n"
    "print(status, major.value, minor.value)\n"
)
_ARCH_ANSWER = r"(-?[0-9]{1,9}) ([0-9]{1,3}) ([0-9]{1,3})"


def gpu_arch(path: Path) -> tuple[int | None, str | None]:
    """``(arch, None)``: the architecture of the first GPU (90 for compute capability
    9.0), as the driver library at ``path`` reports it in a child process; or ``(None,
    why not)``: no GPU, a driver that fails, a library that cannot be trusted. Never
    remembered: a GPU can change under the same driver file. For ``doctor``, never on
    the import path."""
    problem = _fs.file_problem(path) or _fs.untrusted(path)
    if problem:
        return None, problem
    argv = [sys.executable, "-I", "-S", "-c", _ASK_ARCH, str(path)]
    status, output, problem = collect(argv, {"PATH": os.defpath})
    text = output.decode("ascii", "replace").strip()
    found = re.fullmatch(_ARCH_ANSWER, text)
    if problem is not None:
        return None, problem
    if status != 0 or found is None:
        return None, f"answered {_summary(output, '') if text else 'nothing'} (exit {status})"
    if found.group(1) != "0":
        return None, f"no GPU answered (CUresult {found.group(1)})"
    return int(found.group(2)) * 10 + int(found.group(3)), None


def driver_cuda(
    path: Path, *, answers: Path | None = None
) -> tuple[tuple[int, int] | None, str | None]:
    """``((major, minor), None)``: the CUDA release the driver library at ``path``
    supports (``cuDriverGetVersion``: 12080 is 12.8), or ``(None, problem)``."""
    problem = _fs.file_problem(path) or _fs.untrusted(path)
    if problem:
        return None, problem
    question = ("cuDriverGetVersion-v1",)
    remembered = _answers.recall(answers, path, question)
    if remembered is None:
        argv = [sys.executable, "-I", "-S", "-c", _ASK_DRIVER, str(path)]
        status, output, problem = collect(argv, {"PATH": os.defpath})
        text = output.decode("ascii", "replace").strip()
        found = re.fullmatch(_DRIVER_VERSION, text)
        if problem is not None:  # a signal, the timeout: not the library's answer
            return None, f"{NOT_ASKED}: the query {problem}"
        if status != 0 or found is None:
            problem = f"answered {_summary(output, '') if text else 'nothing'} (exit {status})"
        elif found.group(1) != "0":
            problem = f"cuDriverGetVersion returned CUresult {found.group(1)}"
        answer = found.group(2) if found and problem is None else None
        remembered = (answer is not None, answer or f"cuDriverGetVersion: {problem}")
        _answers.remember(answers, path, question, *remembered)
    ok, text = remembered
    if not ok:
        return None, text
    number = int(text) if re.fullmatch("[0-9]{1,9}", text) else 0
    if number < 1000:
        return None, f"cuDriverGetVersion reported {text!r}, not a CUDA version"
    return (number // 1000, number % 1000 // 10), None


# Run in a child ``python -I -S``: load the HIP runtime, ask the version Triton's AMD
# launcher checks (``hipDriverGetVersion``, ``backends/amd/driver.c`` of 3.9), print
# "<status> <version>". It needs no GPU (the Debian 5.2.3 library answers without one).
_ASK_HIP = (
    "import ctypes, sys\n"
    "lib = ctypes.CDLL(sys.argv[1])\n"
    "v = ctypes.c_int(0)\n"
    "print(lib.hipDriverGetVersion(ctypes.byref(v)), v.value)\n"
)


def hip_release(path: Path, *, answers: Path | None = None) -> tuple[str | None, str | None]:
    """``("6.4.43482", None)``: the HIP release of the ``libamdhip64`` at ``path`` as it
    reports it (``hipDriverGetVersion``: ``major * 10000000 + minor * 100000 + patch``,
    the format of ``hip_version.h`` that Triton's ``driver.c`` decodes), or ``(None,
    problem)``. Asked in a child process (the library is never loaded here), once per
    file version (``_answers``)."""
    problem = _fs.file_problem(path) or _fs.untrusted(path)
    if problem:
        return None, problem
    question = ("hipDriverGetVersion-v1",)
    remembered = _answers.recall(answers, path, question)
    if remembered is None:
        argv = [sys.executable, "-I", "-S", "-c", _ASK_HIP, str(path)]
        status, output, problem = collect(argv, {"PATH": os.defpath})
        text = output.decode("ascii", "replace").strip()
        found = re.fullmatch(_DRIVER_VERSION, text)
        if problem is not None:  # a signal, the timeout: not the library's answer
            return None, f"hipDriverGetVersion could not be asked: the query {problem}"
        if status != 0 or found is None:
            problem = f"answered {_summary(output, '') if text else 'nothing'} (exit {status})"
        elif found.group(1) != "0":
            problem = f"hipDriverGetVersion returned hipError_t {found.group(1)}"
        answer = found.group(2) if found and problem is None else None
        remembered = (answer is not None, answer or f"hipDriverGetVersion: {problem}")
        _answers.remember(answers, path, question, *remembered)
    ok, text = remembered
    if not ok:
        return None, text
    number = int(text) if re.fullmatch("[0-9]{1,9}", text) else 0
    if number < 10000000:
        return None, f"hipDriverGetVersion reported {text!r}, not a HIP version"
    return f"{number // 10000000}.{number % 10000000 // 100000}.{number % 100000}", None
