"""Write a file whole or not at all: a temporary file beside the target, renamed over it.

>>> import tempfile, os
>>> path = write_atomically(Path(tempfile.mkdtemp()) / "x.bin", b"data")
>>> path.read_bytes()
b'data'
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, data: bytes) -> Path:
    """Write `data` to `path` through a temporary file in the same folder and `os.replace`.

    An existing file keeps its permission bits; a new one gets the umask's. A failure
    (disk full, killed process) leaves `path` as it was and removes the temporary file.
    """
    folder = check_destination(path)
    mode = _mode_for(path)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    return path


def check_destination(path: Path) -> Path:
    """The folder `path` will be written in; FileNotFoundError / IsADirectoryError when it
    cannot be (checked before the work of converting, and again when writing)."""
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a folder; give a file name to write")
    if not folder.is_dir():
        raise FileNotFoundError(f"{path}: the folder {folder} does not exist")
    return folder


def _mode_for(path: Path) -> int:
    """The permission bits the written file gets: the existing file's, else 0o666 less the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
