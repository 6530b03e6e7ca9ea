"""Files only the service's own user may read (the embedded SQLite database holds sessions)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def ensure_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 if it is missing (before SQLite does, with the
    umask's 0644), and take group and other access away from an existing one of ours.
    SQLite gives its journal and WAL files the database file's mode."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        return
    except FileExistsError:
        pass
    except OSError:
        return  # a read-only or foreign directory: SQLite will say what is wrong
    info = path.stat()
    if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & 0o077:
        path.chmod(stat.S_IMODE(info.st_mode) & 0o700)
