"""``python -m triton_toolchain``: the same command as ``triton-toolchain``."""

import sys

from .cli._main import main

sys.exit(main())
