"""Triton's GPU backends, as data: what the runtime needs of each before any resolution
(the driver's SONAME, to see it mapped into the process; Triton's backend package, to
find the modules to apply to). One row per backend; the catalog's components name their
backend (``_catalog.Component.backend``) and take the driver's SONAME from here.

A backend's name is also Triton's name for it: its knob group (``triton.knobs.nvidia``)
and its key in ``triton.backends.backends``.
"""

from __future__ import annotations


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
}
