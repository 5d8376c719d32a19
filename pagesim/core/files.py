"""Files written whole or not at all, with errors that say which file and what was being written."""

from __future__ import annotations

import os
from pathlib import Path


def write_atomic(files: dict, what: str) -> None:
    """Write every file of ``files`` ({path: text or bytes}) or none: each goes to a temporary file
    beside it (``.NAME.PID.tmp``, flushed to disk), and they replace their targets only once all are
    written, so a killed run or a full disk never leaves a half-written file, and the old files stay
    as they were. A write that fails raises an OSError of the same errno whose message names the
    file and ``what`` was being written ("cannot write the report to build/report.md: No space left
    on device"); the temporary files are removed."""
    tmps = {}
    try:
        for path, data in files.items():
            path = Path(path)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmps[path] = tmp
            try:
                with open(tmp, "wb") as f:
                    f.write(data.encode("utf-8") if isinstance(data, str) else data)
                    f.flush()
                    os.fsync(f.fileno())
            except OSError as e:
                raise OSError(e.errno, f"cannot write {what} to {path}: {e.strerror or e}") from e
        for path, tmp in tmps.items():
            try:
                os.replace(tmp, path)
            except OSError as e:
                raise OSError(e.errno, f"cannot write {what} to {path} (renaming {tmp.name} into place): {e.strerror or e}") from e
    finally:
        for tmp in tmps.values():
            tmp.unlink(missing_ok=True)


def new_file_mode() -> int:
    """The permissions a new file gets here (0o666 less the umask), for a file made with mkstemp
    (0o600) before it is put in place. The umask is read from /proc/self/status where there is
    one (reading it with os.umask sets it for a moment, which other threads would see)."""
    try:
        with open("/proc/self/status") as f:
            for ln in f:
                if ln.startswith("Umask:"):
                    return 0o666 & ~int(ln.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def probe_folder(folder) -> None:
    """Raise the OSError that writing a new file in ``folder`` gives (no permission, a read-only file
    system, /proc, a full disk), by writing a byte to one there and removing it: what a writer that
    runs something long first checks before it starts."""
    probe = Path(folder) / f".pagesim-probe.{os.getpid()}.tmp"
    try:
        with open(probe, "wb") as f:
            f.write(b"p")
            f.flush()
    finally:
        probe.unlink(missing_ok=True)
