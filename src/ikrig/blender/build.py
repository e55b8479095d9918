"""The installable Blender extension: ``python -m ikrig.blender build -o DIR``.

Blender 4.2+ installs an extension from a zip holding ``blender_manifest.toml``, the
add-on's ``__init__.py`` and the Python wheels it needs (``wheels/``, listed in the
manifest), each unpacked into the extension's own site-packages. This one bundles:

- ``ikrig`` itself, as a pure-Python wheel made from the installed package's files;
- its dependencies for Linux x86_64 and Python 3.11 (Blender's): ``numba`` and ``llvmlite``
  (compiled), ``click`` and ``tqdm``, fetched with ``pip download`` (or taken from a folder
  of wheels, ``--wheels``); NumPy is Blender's own and is not bundled.

The add-on's ``__init__.py`` only forwards ``register`` and ``unregister`` to
:mod:`ikrig.blender`.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from .._version import __version__
from ..errors import InputError

__all__ = ["DEPENDENCIES", "build_extension", "ikrig_wheel", "manifest"]

DEPENDENCIES = ("numba>=0.59", "click>=8.1", "tqdm>=4.60")
"""What the bundle installs beside ikrig (llvmlite comes with numba; NumPy is Blender's)."""
PLATFORM = ("manylinux_2_28_x86_64", "manylinux2014_x86_64")
PYTHON = "3.11"
SKIP = ("numpy",)
"""Wheels pip brings as dependencies that Blender has already."""

ADDON_INIT = '''"""ikrig for Blender: foot placement, pins and look-at on an armature's action."""


def register():
    from ikrig.blender import register as _register

    _register()


def unregister():
    from ikrig.blender import unregister as _unregister

    _unregister()
'''


def manifest(wheels: list[str]) -> str:
    """The text of ``blender_manifest.toml`` listing ``wheels`` (paths in the zip).

    Example:
        >>> print(manifest(["./wheels/a.whl"]).splitlines()[1])
        id = "ikrig"
    """
    listed = ",\n".join(f'  "{w}"' for w in wheels)
    return f"""schema_version = "1.0.0"
id = "ikrig"
version = "{__version__}"
name = "ikrig"
tagline = "Inverse kinematics: foot placement on meshes, pins and look-at"
maintainer = "ikrig authors"
type = "add-on"
blender_version_min = "4.2.0"
license = ["SPDX:MIT"]
platforms = ["linux-x64"]
wheels = [
{listed}
]

[permissions]
files = "Reads nothing outside Blender's data; numba caches compiled kernels on disk"
"""


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def ikrig_wheel(folder: Path) -> Path:
    """Write ``ikrig-<version>-py3-none-any.whl`` of the installed package's own files
    (sources and data, no caches) into ``folder``; its path."""
    import ikrig

    root = Path(ikrig.__file__).resolve().parent
    info = f"ikrig-{__version__}.dist-info"
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            files[f"ikrig/{path.relative_to(root).as_posix()}"] = path.read_bytes()
    requires = "".join(f"Requires-Dist: {d}\n" for d in ("numpy>=1.24", *DEPENDENCIES))
    files[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: ikrig\nVersion: {__version__}\n{requires}"
    ).encode()
    files[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: ikrig.blender.build\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n"
    )
    record = [f"{name},{_record_hash(data)},{len(data)}" for name, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    out = folder / f"ikrig-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return out


def _download(folder: Path) -> None:
    """``pip download`` the dependencies' wheels for Blender's platform into ``folder``."""
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
           "--python-version", PYTHON, "--implementation", "cp", "-d", str(folder)]  # fmt: skip
    for tag in PLATFORM:
        cmd += ["--platform", tag]
    done = subprocess.run([*cmd, *DEPENDENCIES], capture_output=True, text=True)
    if done.returncode:
        raise InputError(f"pip download failed: {done.stderr.strip()[-500:]}")


def build_extension(out_dir: str | Path, wheels: str | Path | None = None) -> Path:
    """Write the extension zip ``ikrig-<version>.zip`` into ``out_dir`` (made if needed);
    its path.

    Args:
        out_dir: the folder for the zip.
        wheels: a folder of the dependencies' wheels to bundle instead of downloading
            them (every ``.whl`` in it but NumPy's and ikrig's).

    Raises:
        InputError: the download failed, or no numba wheel was found.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ikrig-ext-") as tmp:
        folder = Path(tmp) / "wheels"
        folder.mkdir()
        if wheels is None:
            _download(folder)
            found = sorted(folder.glob("*.whl"))
        else:
            found = sorted(Path(wheels).glob("*.whl"))
        keep = [w for w in found if not w.name.lower().startswith((*SKIP, "ikrig-"))]
        if not any(w.name.lower().startswith("numba-") for w in keep):
            raise InputError(f"no numba wheel among {[w.name for w in found]}")
        own = ikrig_wheel(Path(tmp))
        bundled = [own, *keep]
        zip_path = out / f"ikrig-{__version__}.zip"
        with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("blender_manifest.toml", manifest([f"./wheels/{w.name}" for w in bundled]))
            z.writestr("__init__.py", ADDON_INIT)
            for w in bundled:
                z.write(w, f"wheels/{w.name}")
    return zip_path
