"""The key relay: each party's X25519 public key, and the pseudonym key the leader seals to every other party.

The coordinator only relays: it checks each key's shape (and its signature
under mutual TLS), refuses a key another party joined with, and hands every
party the others' keys once all have joined; the leader's pseudonym key
travels sealed (docs/protocol.md, "Pseudonyms"), so the coordinator never
holds it. Its state is its own, under its own lock; what it waits for (every
party joined, the sealed keys posted) it waits for through the session
(``Session.wait_for``), whose lock may be held while this one is taken, never
the other way round.
"""

from __future__ import annotations

import threading

from coordinator.errors import InvalidArgument, PermissionDenied, SessionError
from coordinator.keycheck import check_signature
from coordinator.messages import PeerKey, SealedKey
from coordinator.text import shown

#: Bytes of an X25519 public key.
PUBLIC_KEY_BYTES = 32


class KeyRelay:
    """The keys of one session's parties (``parties``, the first the key leader) under ``ids`` ("plain" or
    "pseudonymous")."""

    def __init__(self, name: str, parties: tuple[str, ...], ids: str, rounds: str = ""):
        """``rounds``: the session's protocol when its parties compute together (secure aggregation, MPC), whose
        pair keys need every party's public key whatever the ids; "" otherwise."""
        self.name, self.parties, self.ids, self.rounds = name, parties, ids, rounds
        self._lock = threading.Lock()
        self._keys: dict[str, PeerKey] = {}  # per party: its key-agreement public key, fixed at its first Join
        self._sealed: dict[str, SealedKey] | None = None  # the leader's sealed pseudonym keys, by party

    @property
    def leader(self) -> str:
        return self.parties[0]

    @property
    def keys(self) -> dict[str, PeerKey]:
        """Each party's key as it joined with it (a copy)."""
        with self._lock:
            return dict(self._keys)

    def check(self, party: str, public_key: bytes, signature: bytes, certificate: bytes) -> None:
        """InvalidArgument unless ``public_key`` may be ``party``'s: its size, its signature (mutual TLS)."""
        if public_key and len(public_key) != PUBLIC_KEY_BYTES:
            raise InvalidArgument(f"party '{party}': public_key has {len(public_key)} bytes; an X25519 public "
                                  f"key has {PUBLIC_KEY_BYTES}")
        if self.ids == "pseudonymous" and not public_key:
            raise InvalidArgument(f"party '{party}': session '{self.name}' uses pseudonymous ids; Join "
                                  "must carry the party's X25519 public_key")
        if self.rounds and not public_key:
            raise InvalidArgument(f"party '{party}': session '{self.name}' clusters by {self.rounds}, whose pair "
                                  "keys need every party's key; Join must carry the party's X25519 public_key")

    def keep(self, party: str, public_key: bytes, signature: bytes, certificate: bytes) -> None:
        """Keep ``party``'s key (its first; under pseudonymous ids a later Join must give the same one)."""
        if public_key and certificate:
            check_signature(certificate, signature, self.name, party, public_key)
        with self._lock:
            owner = next((p for p, k in self._keys.items() if p != party and public_key
                          and k.public_key == public_key), None)
            if owner is not None:
                raise InvalidArgument(f"party '{party}': its public_key is the one party '{owner}' joined with; every "
                                      "party makes a key pair of its own (parties given the same seed draw the same "
                                      "key: give each its own)")
            known = self._keys.get(party)
            if self.ids == "pseudonymous" and known is not None and known.public_key != public_key:
                raise SessionError(f"party '{party}' joined session '{self.name}' before with another public "
                                   "key; under pseudonymous ids a party keeps its first key for the whole session "
                                   "(a party process started again joins with the same key when given the same "
                                   "seed)")
            self._keys[party] = PeerKey(public_key, signature, certificate)

    def all_keys(self) -> list[tuple[str, PeerKey]]:
        with self._lock:
            return [(p, self._keys[p]) for p in self.parties]

    def post(self, party: str, keys: list[SealedKey] | tuple[SealedKey, ...]) -> bool:
        """The key leader's pseudonym key, sealed to every other party; the first post stands (a leader started
        again posts again, and the others may have opened the first already). Whether this post was kept."""
        if self.ids != "pseudonymous":
            raise SessionError(f"session '{self.name}' uses plain ids: there is no pseudonym key to post")
        if party != self.leader:
            raise PermissionDenied(f"party '{party}' is not the key leader of session '{self.name}' "
                                   f"('{self.leader}' is)")
        others = [p for p in self.parties if p != party]
        to = [k.to for k in keys]
        if sorted(to) != sorted(others):
            raise InvalidArgument(f"party '{party}': sealed keys go to {', '.join(map(shown, to)) or 'nobody'}; "
                                  f"one each is needed for {', '.join(others) or 'nobody'}")
        for k in keys:
            if len(k.nonce) != 12 or len(k.ciphertext) != 48:
                raise InvalidArgument(f"party '{party}': the key sealed to '{k.to}' must have a 12-byte nonce and "
                                      f"48 bytes of ciphertext, not {len(k.nonce)} and {len(k.ciphertext)}")
        with self._lock:
            if self._sealed is not None:  # the leader again, after a restart: the first post stands
                return False
            self._sealed = {k.to: SealedKey(k.to, k.nonce, k.ciphertext, sender=party) for k in keys}
            return True

    def posted(self) -> bool:
        with self._lock:
            return self._sealed is not None

    def sealed_to(self, party: str) -> SealedKey:
        """The key sealed to ``party`` (once ``posted``)."""
        if party == self.leader:
            raise SessionError(f"party '{party}' is the key leader: it draws the key and has none sealed to it")
        with self._lock:
            assert self._sealed is not None
            return self._sealed[party]
