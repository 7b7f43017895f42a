"""A party's state for one session, kept in a file of its own, so that a party process started again rejoins.

Everything a party holds secret for a session derives from its seed: its
X25519 key pair, its pseudonym key when it is the key leader, and its
disguise's randomness (parties.keys, parties.run). A party started without
``--seed`` draws one from this machine's entropy; with ``--state DIR`` it
writes that seed to ``DIR/<session>.<party>.state`` before it joins, and a
process started again with the same folder reads it back: it joins with the
same public key (the session refuses any other), and the key leader seals
the same pseudonym key. A party that is not the leader fetches its sealed
key again (GetSealedKey may be repeated).

The file is created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` and mode 0600; an
existing file that others may read, or a symbolic link, is refused.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from pathlib import Path

from parties.errors import PartyError

#: What the file holds: a version, the session, the party and the seed.
VERSION = 1


def state_path(folder: Path, session: str, party: str) -> Path:
    return Path(folder) / f"{session}.{party}.state"


def session_seed(folder: Path, session: str, party: str, given: int | None) -> int:
    """The party's seed for ``session``: read from its state file in ``folder``, else ``given`` or a fresh one
    from this machine's entropy, written there (0600) before it is used. PartyError naming the file if it
    cannot be used, or holds another seed than ``given``."""
    path = state_path(folder, session, party)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    if info is not None:
        seed = _read(path, info, session, party)
        if given is not None and given != seed:
            raise PartyError(f"{path}: holds another seed than --seed gives; remove the file to start afresh")
        return seed
    seed = given if given is not None else secrets.randbits(128)
    Path(folder).mkdir(parents=True, exist_ok=True, mode=0o700)
    text = json.dumps({"version": VERSION, "session": session, "party": party, "seed": seed}).encode()
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise PartyError(f"{path}: cannot create the party's state file: {exc.strerror}") from None
    with os.fdopen(fd, "wb") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    return seed


def _read(path: Path, info: os.stat_result, session: str, party: str) -> int:
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise PartyError(f"{path}: the party's state file is not a regular file (a symbolic link?); refused")
    if info.st_mode & 0o077:
        raise PartyError(f"{path}: the party's state file may be read by others (mode {stat.S_IMODE(info.st_mode):o}); "
                         "it holds the party's secrets: chmod 600 it, or remove it to start afresh")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            table = json.loads(fh.read())
        seed = int(table["seed"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PartyError(f"{path}: not a party state file ({exc})") from None
    if table.get("session") != session or table.get("party") != party:
        raise PartyError(f"{path}: is the state of party '{table.get('party')}' in session '{table.get('session')}', "
                         f"not of '{party}' in '{session}'")
    return seed
