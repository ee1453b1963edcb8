"""Discovery: finding and judging each component on this machine.

The stages, bottom up: ``_host`` (the one seam to the machine) and ``_fs`` (every look
at the filesystem, recorded); ``_elf``, ``_ldcache`` (what files are); ``_run`` and
``_answers`` (asking tools, remembering what they said); ``_layouts`` (where CUDA's
pieces sit) and ``_search`` (the runner and the shape of a locator); the locators
``_tools``, ``_compiler``, ``_headers``, ``_openmp``, ``_cudahome``, ``_driver``.
``LOCATORS`` names the locator of every component in the catalog; a locator's module is
imported when a resolution first asks for one of its components, so `import triton`,
which resolves neither the compilers nor torch's part (``_catalog.Part``), does not
import ``_compiler``, ``_openmp`` or ``_cudahome``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ._search import Locator

# The module whose ``LOCATORS`` holds each component's locator (tests/test_catalog.py
# checks every module's table against this one).
MODULES: dict[str, str] = {
    "ptxas": "_tools",
    "ptxas-blackwell": "_tools",
    "cuobjdump": "_tools",
    "nvdisasm": "_tools",
    "cc": "_compiler",
    "python-headers": "_headers",
    "cuda-headers": "_headers",
    "cuda-crt-headers": "_headers",
    "libdevice": "_headers",
    "cxx": "_compiler",
    "openmp": "_openmp",
    "cuda-home": "_cudahome",
    "libcuda": "_driver",
    "libcuda-link": "_driver",
}


class _Locators(Mapping[str, Locator]):
    """Component -> its locator, each module imported when first asked for."""

    def __getitem__(self, name: str) -> Locator:
        # ``__import__``, as an import statement does (``importlib.import_module`` would
        # leave the module out of ``python -X importtime``).
        module = __import__(f"{__name__}.{MODULES[name]}", fromlist=["LOCATORS"])
        locator: Locator = module.LOCATORS[name]
        return locator

    def __iter__(self) -> Iterator[str]:
        return iter(MODULES)

    def __len__(self) -> int:
        return len(MODULES)


LOCATORS: Mapping[str, Locator] = _Locators()
