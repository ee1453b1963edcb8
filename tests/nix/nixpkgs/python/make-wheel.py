"""Stand-in for Triton's PyPI wheel (tests only): a small but real wheel (dist-info with
METADATA, WHEEL and a RECORD of sha256 hashes) holding triton/__init__.py and, like the
real wheel, a bundled backends/nvidia/bin/ptxas that answers --version with 12.8.

Usage: make-wheel.py VERSION PYTHON_TAG OUT_DIR
"""

import base64
import hashlib
import sys
import zipfile
from pathlib import Path

PTXAS = """#!/bin/sh
echo "ptxas: NVIDIA (R) Ptx optimizing assembler"
echo "Cuda compilation tools, release 12.8, V12.8.93 (bundled in the wheel stand-in)"
"""


def main() -> None:
    version, tag, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    info = f"triton-{version}.dist-info"
    files = {
        "triton/__init__.py": f'__version__ = "{version}"  # stand-in for the PyPI wheel\n',
        "triton/backends/nvidia/bin/ptxas": PTXAS,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: triton\nVersion: {version}\n",
        f"{info}/WHEEL": (
            f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}-{tag}-linux_x86_64\n"
        ),
    }
    record = []
    for name, text in files.items():
        digest = hashlib.sha256(text.encode()).digest()
        b64 = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        record.append(f"{name},sha256={b64},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"triton-{version}-{tag}-{tag}-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, text in files.items():
            entry = zipfile.ZipInfo(name)
            entry.external_attr = (0o755 if name.endswith("/ptxas") else 0o644) << 16
            zf.writestr(entry, text)
        zf.writestr(f"{info}/RECORD", "\n".join(record) + "\n")


if __name__ == "__main__":
    main()
