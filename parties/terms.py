"""A party's terms: what it consents to, read from the scenario file it holds, checked against what it is told.

A party takes no term of its session from the coordinator. Its own file
says who the consortium is (the names of its ``[[parties]]`` tables), the
protocol, whether a helper is expected, and the clustering terms that bound
what its rounds reveal: ``n_clusters``, ``max_iter``, ``reveal_centres``,
the fixed-point scale (``scale_bits``; ``mpc_bits`` and ``mpc_frac``) and
``min_cluster_size``. Where the file is silent the documented default holds,
and every default is the safe value (no helper, centres kept closed).

The checks run where the coordinator first says each thing, before the
party sends anything that depends on it:

- ``check_join``: the consortium, the protocol, and two parties at least to
  mask with in secure aggregation, three share-holders at least in an MPC
  (threshold t = (n - 1) // 2 >= 1). Right after Join, before any key, id or
  value leaves the party.
- ``check_alignment``: the alignment header's clustering terms and, in an
  MPC, its share-holders and helper. Before the first post of a partial
  distance or the first share of a value (the ids-only upload, which is the
  same whatever these terms, has gone by then).
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

from dataclasses import dataclass

import numpy as np

from parties.errors import PartyError

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

    @property
    def least_cluster(self) -> int:
        """The smallest cluster this party accepts in any round's labels."""
        return self.min_cluster_size or DEFAULT_MIN_CLUSTER_SIZE

    def _refuse(self, term: str, says, told, why: str = "") -> PartyError:
        return PartyError(f"refusing the session: its {term} is {told}, but this party's scenario file ({self.source}) "
                          f"says {says}{f' ({why})' if why else ''}; this party sends nothing more")

    def check_join(self, protocol: str, parties: list[str]) -> None:
        """PartyError unless Join's answer names this file's consortium and protocol, with enough parties to
        hide a party's values: two to mask with in secure aggregation, three share-holders in an MPC (two with
        the helper this file expects)."""
        if protocol != self.protocol:
            raise self._refuse("protocol", f'[clustering] protocol = "{self.protocol}"', f'"{protocol}"')
        if sorted(parties) != sorted(self.parties) or len(set(parties)) != len(parties):
            raise self._refuse("list of parties", f"the parties {list(self.parties)} (its [[parties]] tables)",
                               f"{list(parties)}")
        if protocol == "secure_aggregation" and len(parties) < 2:
            raise self._refuse("number of parties", "at least two", len(parties),
                               "a party alone masks with nobody: the arbiter would read its partial distances")

    def check_alignment(self, header) -> None:
        """PartyError unless the alignment header's terms are this file's: k, the rounds, the fixed-point scale,
        and in an MPC its share-holders (the file's parties, then the helper if and only if the file expects
        one; three at least, so that the threshold is at least 1) and whether the centres are opened."""
        said = [("[clustering] n_clusters", self.n_clusters, int(header.n_clusters)),
                ("[clustering] max_iter", self.max_iter, int(header.max_iter))]
        if self.protocol == "mpc":
            said += [("[clustering] mpc_bits", self.mpc_bits, int(header.mpc_bits)),
                     ("[clustering] mpc_frac", self.mpc_frac, int(header.mpc_frac))]
        else:
            said.append(("[clustering] scale_bits", self.scale_bits, int(header.scale_bits)))
        for term, says, told in said:
            if says != told:
                raise self._refuse(term, f"{term.split()[-1]} = {says}", told)
        if self.protocol != "mpc":
            return
        if bool(header.reveal_centres) and not self.reveal_centres:
            raise self._refuse("reveal_centres", "reveal_centres = false (the centres stay closed)", "true")
        helper = header.mpc_helper
        if helper and not self.helper:
            raise self._refuse("helper", "no helper (helper = false)", f"a helper '{helper}'",
                               "a share-holder this party was not told of")
        if self.helper and not helper:
            raise self._refuse("helper", "helper = true", "no helper")
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
