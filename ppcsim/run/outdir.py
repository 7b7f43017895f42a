"""Output folders: one run at a time in each, never mixed with an older run's files.

Two commands given the same ``--out`` at once would interleave their logs and
overwrite each other's files, and a folder reused for a smaller run would
keep files of the older one (a five-party ``sent/`` beside a two-party run's
report). So a command takes the folder for itself before anything starts:
it refuses a folder another command is writing into (busy), refuses one that
already holds files, and with ``replace`` empties a folder that holds an
earlier run's outputs first.

The claim is a lock on ``<out>/.ppc-lock`` (``fcntl.flock``, released by the
operating system if the process dies); the file is removed when the command
ends. Where ``fcntl`` does not exist (Windows), the lock file is created
exclusively instead, and a stale one left by a killed process must be removed
by hand.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import ModuleType

LOCK = ".ppc-lock"
#: Files that show a folder holds ppc outputs, so that ``replace`` may empty it.
MARKERS = ("report.json", "sweep.csv", "labels.csv", "logs", "points")

fcntl: ModuleType | None
try:
    import fcntl as _fcntl

    fcntl = _fcntl
except ImportError:  # Windows
    fcntl = None


class OutputError(Exception):
    """The output folder cannot be used; the message says why and what to do."""


class OutputFolder:
    """A claimed output folder; release it (or use ``with``) when the command ends."""

    def __init__(self, path: Path, fd: int, created: bool = False):
        self.path, self.created = path, created
        self._fd: int | None = fd

    def discard(self) -> None:
        """Release the folder and, if this command created it, remove it with what it holds (nothing
        useful: call it when the command failed before producing anything)."""
        self.release()
        if self.created:
            shutil.rmtree(self.path, ignore_errors=True)

    def release(self) -> None:
        if self._fd is None:
            return
        if fcntl is None:  # Windows removes no open file
            os.close(self._fd)
        try:
            os.unlink(self.path / LOCK)  # with fcntl, while still holding the lock: see _lock()
        except FileNotFoundError:
            pass
        if fcntl is not None:
            os.close(self._fd)
        self._fd = None

    def __enter__(self) -> OutputFolder:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _lock(path: Path) -> int:
    """Open and lock ``path/.ppc-lock``; OutputError when another process holds it."""
    lock = path / LOCK
    while True:
        if fcntl is None:
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                raise OutputError(_busy(path, lock)) from None
        else:
            fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise OutputError(_busy(path, lock)) from None
            # the holder unlinks the file before unlocking it: if ours is no longer the file at that
            # path, we locked a file being removed, and try again on the new one
            try:
                same = os.stat(lock).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return fd


def _busy(path: Path, lock: Path) -> str:
    try:
        pid = lock.read_text().strip()
    except OSError:
        pid = ""
    who = f" (process {pid})" if pid else ""
    return (f"{path}: another ppc command{who} is writing into this folder; wait for it to end, or give "
            f"another --out" + ("" if fcntl else f" (if no command is running, delete {lock})"))


def claim(path: Path, *, replace: bool = False) -> OutputFolder:
    """Take ``path`` for one command's outputs, creating it if needed.

    Parameters
    ----------
    path : Path
        The output folder.
    replace : bool
        Empty the folder first when it holds an earlier run's outputs. A folder
        holding anything else is never emptied.

    Returns
    -------
    OutputFolder
        Holds the folder until released.

    Raises
    ------
    OutputError
        The folder is busy (another command holds it), is not a folder, or
        holds files (without ``replace``, or files that are not ppc outputs).
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputError(f"{path}: exists and is not a folder; give another --out")
    created = not path.exists()
    path.mkdir(parents=True, exist_ok=True)
    fd = _lock(path)
    try:
        held = sorted(p.name for p in path.iterdir() if p.name != LOCK)
        if held and not replace:
            shown = ", ".join(held[:5]) + (f" and {len(held) - 5} more" if len(held) > 5 else "")
            raise OutputError(f"{path}: already holds files ({shown}); give an empty or new folder with --out, "
                              "or --replace to delete an earlier run's outputs there first")
        if held:
            if not any(name in MARKERS for name in held):
                raise OutputError(f"{path}: holds files that are not a ppc run's outputs (no report.json, "
                                  "sweep.csv or logs/); --replace deletes only earlier outputs: give another --out")
            for name in held:
                target = path / name
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target)
                else:
                    target.unlink()
    except BaseException:
        OutputFolder(path, fd).release()
        raise
    return OutputFolder(path, fd, created)
