"""Copy an installed Python package tree for the stand-in's Triton (tests only): files
up to 1 MB are copied (so that patches and appends change the copy, never the host's
files), larger ones (libtriton.so, the bundled ptxas, ...) are symlinked; __pycache__ is
left out.

Usage: copy-tree.py SOURCE_DIR DEST_DIR
"""

import os
import shutil
import sys

LIMIT = 1 << 20


def main() -> None:
    source, dest = sys.argv[1], sys.argv[2]
    for top, dirs, files in os.walk(source):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        target = os.path.join(dest, os.path.relpath(top, source))
        os.makedirs(target, exist_ok=True)
        for name in files:
            path = os.path.join(top, name)
            if os.path.getsize(path) > LIMIT:
                os.symlink(os.path.realpath(path), os.path.join(target, name))
            else:
                shutil.copy2(path, os.path.join(target, name))


if __name__ == "__main__":
    main()
