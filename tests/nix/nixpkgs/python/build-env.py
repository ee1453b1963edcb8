"""Stand-in for buildEnv's collision rule (pkgs/build-support/buildenv/builder.pl), which
python.withPackages meets: where two packages of the environment have a file at the same
relative path (nix-support aside), the one whose meta.priority is the lower number
wins; with equal priorities, different contents are a collision, and the build fails.

    build-env.py PRIORITY:PATH...
"""

import filecmp
import os
import sys

winners: dict[str, tuple[int, str]] = {}
for arg in sys.argv[1:]:
    priority_text, root = arg.split(":", 1)
    priority = int(priority_text)
    for directory, dirs, files in os.walk(root, followlinks=True):
        dirs[:] = [d for d in dirs if not (directory == root and d == "nix-support")]
        for name in files:
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)
            seen = winners.get(relative)
            if seen is None or priority < seen[0]:
                winners[relative] = (priority, path)
            elif priority == seen[0] and not filecmp.cmp(seen[1], path, shallow=False):
                sys.exit(f"collision between `{seen[1]}' and `{path}'")
