"""``python -m triton_toolchain``: the same command as ``triton-toolchain``."""

import sys

from ._cli import main

sys.exit(main())
