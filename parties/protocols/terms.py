"""A party's terms: what it consents to, read from the scenario file it holds, checked against what it is told.

A party takes no term of its session from the coordinator. Its own file
says who the consortium is (the names of its ``[[parties]]`` tables), the
protocol, whether a helper is expected, and the clustering terms that bound
what its rounds reveal: ``n_clusters``, ``max_iter``, ``reveal_centres``,
the fixed-point scale (``scale_bits``; ``mpc_bits`` and ``mpc_frac``),
``min_cluster_size`` and the MPC engine (``engine``: MPyC or SPU, for an MPC and
for the labels-only argmin of secure aggregation). Where the file is silent the documented default holds,
and every default is the safe value (no helper, centres kept closed).

The checks run where the coordinator first says each thing, before the
party sends anything that depends on it:

- ``check_join``: the consortium, the protocol, two parties at least to
  mask with in secure aggregation, and in a session with rounds the
  clustering terms Join announces (JoinReply.clustering: k, the rounds, the
  fixed-point scale, and in an MPC whether the centres are opened and
  whether a helper holds shares). Right after Join, before any key, id or
  value leaves the party.
- ``check_alignment``: the same terms again as the alignment header gives
  them (the header is what the rounds compute with), and in an MPC its
  share-holders: the file's parties, the helper last if and only if the
  file expects one, three at least (threshold t = (n - 1) // 2 >= 1); and
  wherever the session runs an MPC (an MPC, or secure aggregation opening
  the labels only), its engine.
  Before the first post of a partial distance or the first share.
- ``check_labels``: every round's labels: no more rounds than the file
  allows, and no cluster smaller than ``min_cluster_size`` unless every
  record in it is an initial centre (its centre then gives the arbiter no
  distance it did not see in round 0's sums). A smaller cluster is how an
  active arbiter reads every record's distance to one record (a singleton
  makes that record the next round's centre).

Every refusal is a PartyError naming the term, what the file says and what
the party was told (docs/protocol.md, "The terms a party holds").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from parties.errors import PartyError
from protos.vocabulary import MPYC, engine_from_wire

#: A cluster of fewer records than this is refused (``[clustering] min_cluster_size``; 0 there means this).
DEFAULT_MIN_CLUSTER_SIZE = 2


@dataclass(frozen=True)
class Terms:
    """What one party consents to, as its own scenario file says (defaults: the documented, safe values).

    ``parties``: the consortium, every ``[[parties]]`` table's name in the
    file; ``source``: the file, for messages. ``min_cluster_size`` 0 means
    ``DEFAULT_MIN_CLUSTER_SIZE``.
    """

    source: str
    parties: tuple[str, ...]
    protocol: str = "upload"
    helper: bool = False
    n_clusters: int = 3
    max_iter: int = 300
    scale_bits: int = 32
    reveal_centres: bool = False
    mpc_bits: int = 32
    mpc_frac: int = 16
    min_cluster_size: int = 0
    engine: str = MPYC

    @property
    def least_cluster(self) -> int:
        """The smallest cluster this party accepts in any round's labels."""
        return self.min_cluster_size or DEFAULT_MIN_CLUSTER_SIZE

    def _refuse(self, term: str, says, told, why: str = "") -> PartyError:
        return PartyError(f"refusing the session: its {term} is {told}, but this party's scenario file ({self.source}) "
                          f"says {says}{f' ({why})' if why else ''}; this party sends nothing more")

    def check_join(self, protocol: str, parties: list[str], clustering: Mapping[str, int | bool] | None = None
                   ) -> None:
        """PartyError unless Join's answer names this file's consortium and protocol, with enough parties to
        hide a party's values (two to mask with in secure aggregation), and, in a session with rounds, announces
        this file's clustering terms (``clustering``: JoinReply.clustering by name; empty or None: none
        announced, refused)."""
        if protocol != self.protocol:
            raise self._refuse("protocol", f'[clustering] protocol = "{self.protocol}"', f'"{protocol}"')
        if sorted(parties) != sorted(self.parties) or len(set(parties)) != len(parties):
            raise self._refuse("list of parties", f"the parties {list(self.parties)} (its [[parties]] tables)",
                               f"{list(parties)}")
        if protocol == "secure_aggregation" and len(parties) < 2:
            raise self._refuse("number of parties", "at least two", len(parties),
                               "a party alone masks with nobody: the arbiter would read its partial distances")
        if protocol in ("secure_aggregation", "mpc"):
            if not clustering:
                raise self._refuse("clustering terms", "the terms of its [clustering]", "nothing (Join announced none)")
            self._compare(clustering)

    def _compare(self, told: Mapping[str, int | bool]) -> None:
        """PartyError naming the first clustering term ``told`` gives otherwise than this file."""
        names = ["n_clusters", "max_iter"] + (["mpc_bits", "mpc_frac"] if self.protocol == "mpc" else ["scale_bits"])
        for name in names:
            if int(told[name]) != getattr(self, name):
                raise self._refuse(f"[clustering] {name}", f"{name} = {getattr(self, name)}", int(told[name]))
        if self.protocol != "mpc":
            return
        if bool(told["reveal_centres"]) and not self.reveal_centres:
            raise self._refuse("reveal_centres", "reveal_centres = false (the centres stay closed)", "true")
        if bool(told["helper"]) != self.helper:
            raise self._refuse("helper", "helper = true" if self.helper else "no helper (helper = false)",
                               "a helper" if told["helper"] else "no helper",
                               "" if self.helper else "a share-holder this party was not told of")

    def check_alignment(self, header) -> None:
        """PartyError unless the alignment header's terms are this file's: k, the rounds, the fixed-point scale,
        and in an MPC its share-holders (the file's parties, then the helper if and only if the file expects
        one; three at least, so that the threshold is at least 1), whether the centres are opened, and the engine
        of any MPC the session runs."""
        helper = header.mpc_helper
        self._compare({"n_clusters": header.n_clusters, "max_iter": header.max_iter, "scale_bits": header.scale_bits,
                       "mpc_bits": header.mpc_bits, "mpc_frac": header.mpc_frac,
                       "reveal_centres": header.reveal_centres, "helper": bool(helper)})
        if self.protocol == "mpc" or header.reveal == "labels":
            told = engine_from_wire(header.mpc_engine)
            if told != self.engine:
                raise self._refuse("MPC engine", f'[clustering] engine = "{self.engine}"', f'"{told}"',
                                   "the engine, its protocol and its build are the file's to choose")
        if self.protocol != "mpc":
            return
        holders = list(header.mpc_parties)
        data = [p for p in holders if p != helper]
        if sorted(data) != sorted(self.parties) or len(set(holders)) != len(holders) or (helper and
                                                                                        holders[-1:] != [helper]):
            raise self._refuse("list of MPC share-holders", f"the parties {list(self.parties)}"
                               + (" and a helper" if self.helper else ""), holders)
        if (len(holders) - 1) // 2 < 1:
            raise self._refuse("threshold", "at least three share-holders (threshold t >= 1)",
                               f"{len(holders)} share-holders, threshold t = {(len(holders) - 1) // 2}",
                               "with t = 0 each share is the value itself")

    def check_labels(self, labels: np.ndarray, round_: int, k: int, init: list[int], done: bool) -> None:
        """PartyError naming the round unless round ``round_``'s answer ends the rounds by round ``max_iter``
        (``done``: the answer ends them) and every cluster of its ``labels`` has at least ``least_cluster``
        records, or is empty, or holds initial centres alone (``init``: their join positions)."""
        if not done and round_ >= self.max_iter:
            raise self._refuse("number of rounds", f"max_iter = {self.max_iter}",
                               f"more than {self.max_iter} (round {round_} asks for another)")
        least = self.least_cluster
        if least <= 1 or not len(labels):
            return
        sizes = np.bincount(labels, minlength=k)
        small = np.flatnonzero((sizes > 0) & (sizes < least))
        if not len(small):
            return
        centres = np.zeros(len(labels), dtype=bool)
        centres[np.asarray(init, dtype=np.intp)] = True
        for cluster in small.tolist():
            if not centres[labels == cluster].all():
                raise PartyError(
                    f"round {round_}: the coordinator's labels put {int(sizes[cluster])} record"
                    f"{'' if sizes[cluster] == 1 else 's'} in cluster {cluster}, but this party's scenario file "
                    f"({self.source}) accepts no cluster under min_cluster_size = {least} (a smaller cluster "
                    "makes its records the next round's centres, so the arbiter would read every record's distance "
                    "to them); this party posts nothing more")
