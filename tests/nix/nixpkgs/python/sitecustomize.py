# Stand-in for nixpkgs' sitecustomize.py (pkgs/development/interpreters/python/
# sitecustomize.py, in the interpreter's own site-packages): each directory on
# NIX_PYTHONPATH becomes a site directory (site.addsitedir: its .pth files run), and the
# variable is removed, so that child processes do not inherit it.
import os
import site

_paths = os.environ.pop("NIX_PYTHONPATH", None)
if _paths:
    _known = site._init_pathinfo()
    for _p in _paths.split(":"):
        site.addsitedir(_p, _known)
