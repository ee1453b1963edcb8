"""Discovery: finding and judging each component on this machine.

The stages, bottom up: ``_host`` (the one seam to the machine) and ``_fs`` (every look
at the filesystem, recorded); ``_elf``, ``_ldcache`` (what files are); ``_run`` and
``_answers`` (asking tools, remembering what they said); ``_layouts`` (where CUDA's
pieces sit) and ``_search`` (the runner and the shape of a locator); the locators
``_tools``, ``_compiler``, ``_headers``, ``_openmp``, ``_cudahome``, ``_driver``, ``_hip``
(the AMD backend's HIP runtime), each
with a ``LOCATORS`` table of its components. ``LOCATORS`` here joins them: the locator
of every component in the catalog (tests/test_catalog.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from . import _compiler, _cudahome, _driver, _headers, _hip, _openmp, _tools
from ._search import Locator

LOCATORS: Mapping[str, Locator] = {
    name: locator
    for module in (_tools, _compiler, _headers, _openmp, _cudahome, _driver, _hip)
    for name, locator in module.LOCATORS.items()
}
