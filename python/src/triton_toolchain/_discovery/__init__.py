"""Discovery: finding and judging each component on this machine.

The stages, bottom up: ``_host`` (the one seam to the machine) and ``_fs`` (every look
at the filesystem, recorded); ``_elf``, ``_ldcache`` (what files are); ``_run`` and
``_answers`` (asking tools, remembering what they said); ``_layouts`` (where CUDA's
pieces sit) and ``_search`` (the runner and the shape of a locator); the locators
``_tools``, ``_compiler``, ``_headers``, ``_openmp``, ``_cudahome``, ``_driver``.
``LOCATORS`` names the locator of every component in the catalog.
"""

from __future__ import annotations

from ._compiler import LOCATORS as _COMPILER
from ._cudahome import LOCATORS as _CUDA_HOME
from ._driver import LOCATORS as _DRIVER
from ._headers import LOCATORS as _HEADERS
from ._openmp import LOCATORS as _OPENMP
from ._search import Locator
from ._tools import LOCATORS as _TOOLS

LOCATORS: dict[str, Locator] = {
    **_TOOLS,
    **_COMPILER,
    **_HEADERS,
    **_OPENMP,
    **_CUDA_HOME,
    **_DRIVER,
}
