"""Secret files: written so that only their owner can read them, never through a symbolic link.

Keys, tokens and a party's summary (which holds its master seed) are
secrets. ``write_private`` writes one into a fresh temporary file created
with ``O_CREAT | O_EXCL | O_NOFOLLOW`` and mode 0600 next to its target, then
moves it over the target with ``os.replace``: an existing file with a wider
mode is so replaced by a 0600 one, and a target that is a symbolic link is
refused (its target is never written).
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from parties.errors import PartyError

#: How a secret file is created: owner read and write only.
PRIVATE = 0o600


def write_private(path: Path, data: bytes) -> None:
    """``data`` into ``path`` as a 0600 file; PartyError if ``path`` is a symbolic link or cannot be written."""
    path = Path(path)
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise PartyError(f"{path} is a symbolic link; a secret is never written through one (remove it)")
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise PartyError(f"cannot write {path}: {exc.strerror}") from None
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(temp, flags, PRIVATE)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(temp, path)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise PartyError(f"cannot write {path}: {exc.strerror}") from None


def private_folder(path: Path) -> Path:
    """``path`` made (with its parents) as a folder only its owner can enter, if it does not exist; an existing
    folder is left as it is (its files are what ``write_private`` protects)."""
    path = Path(path)
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise PartyError(f"cannot make folder {path}: {exc.strerror}") from None
    return path
