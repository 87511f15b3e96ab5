# SPDX-License-Identifier: MIT
"""A minimal PEP 517 build backend for the pure-Python jobscope package (standard library only), so that
`pip install ./python` works offline and without setuptools: it writes a wheel (and an sdist) of the
`jobscope` directory with the metadata of pyproject.toml. PEP 660 editable installs are a .pth file."""
import base64
import hashlib
import io
import os
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME, VERSION = "jobscope", "0.1.0"
DIST = f"{NAME}-{VERSION}"
TAG = "py3-none-any"


def _metadata():
    readme = (ROOT / "README.md").read_text(encoding="utf-8") if (ROOT / "README.md").exists() else ""
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
            "Summary: What a job uses (CPU, memory, I/O, energy), per phase: Tracker, marks, RunLog, recordings, "
            "Jupyter\nLicense: MIT\nRequires-Python: >=3.8\nProvides-Extra: read\n"
            "Requires-Dist: pandas; extra == \"read\"\nProvides-Extra: jupyter\n"
            "Requires-Dist: ipython; extra == \"jupyter\"\nRequires-Dist: matplotlib; extra == \"jupyter\"\n"
            "Requires-Dist: pandas; extra == \"jupyter\"\n"
            "Description-Content-Type: text/markdown\n\n" + readme)


def _files():
    for p in sorted((ROOT / NAME).rglob("*.py")):
        yield p.relative_to(ROOT).as_posix(), p.read_bytes()


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _wheel(wheel_directory, files):
    info = f"{DIST}.dist-info"
    entries = list(files)
    entries.append((f"{info}/METADATA", _metadata().encode()))
    entries.append((f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: jobscope-backend\nRoot-Is-Purelib: true\n"
                                     f"Tag: {TAG}\n".encode()))
    record = [_record_line(n, d) for n, d in entries] + [f"{info}/RECORD,,"]
    entries.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    name = f"{DIST}-{TAG}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in entries:
            zi = zipfile.ZipInfo(n, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            z.writestr(zi, d, zipfile.ZIP_DEFLATED)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, _files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, [(f"{NAME}.pth", (str(ROOT) + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    name = f"{DIST}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "README.md", "_build/backend.py"] + [n for n, _ in _files()]:
            data = (ROOT / rel).read_bytes()
            ti = tarfile.TarInfo(f"{DIST}/{rel}")
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 1577836800
            t.addfile(ti, io.BytesIO(data))
        pkg = f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n".encode()
        ti = tarfile.TarInfo(f"{DIST}/PKG-INFO")
        ti.size, ti.mode, ti.mtime = len(pkg), 0o644, 1577836800
        t.addfile(ti, io.BytesIO(pkg))
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []
