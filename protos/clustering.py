"""The ``[clustering]`` table of a scenario: its fields, their checks and the spec they make.

Both sides read it: the coordinator clusters by a ``ClusteringSpec`` and a
party holds the session's terms to its own scenario's. It needs no numpy,
scipy or scikit-learn, and no coordinator module, so that a party process
reading its scenario loads none of them.

The algorithms themselves (the functions that cluster) are the
coordinator's (coordinator.clustering); this module knows each
algorithm's name and fields (``AlgorithmFields``), the built-in ones
declared here, so that the schema is whole without the coordinator. An
algorithm registered in ``ALGORITHMS`` (the same dictionary as
coordinator.clustering.ALGORITHMS) adds its fields to the schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import InitVar, dataclass, replace
from dataclasses import fields as dataclass_fields
from typing import Any

from protos.schema import Param, check_table
from protos.vocabulary import BUILT_IN, DISTANCES, ENGINES, LABELS, MPC, MPYC, REVEALS, SECURE, SPU, UPLOAD

__all__ = ["ALGORITHMS", "COMMON", "DISTANCES", "ENGINES", "INITS", "LABELS", "LINKAGES", "MPC", "MPC_DEFAULT_ITER",
           "MPC_FIELDS", "MPC_MAX_ITER", "MPYC", "PROTOCOLS", "REVEALS", "ROUNDS", "SECURE", "SECURE_FIELDS", "SPU",
           "UPLOAD", "AlgorithmFields", "ClusteringSpec", "ProtocolTerms", "fields", "protocol_names", "protocol_terms",
           "register_protocol"]

#: How a session clusters: one upload of disguised data, k-means by rounds of secure aggregation, or k-means as a
#: secure multiparty computation (protos.vocabulary); a registered protocol plug-in adds its name
#: (``[clustering] protocol`` accepts ``protocol_names()``).
PROTOCOLS = BUILT_IN
#: Protocols in which parties keep their columns at home, upload their ids only and run rounds (GetAlignment).
ROUNDS = (SECURE, MPC)
#: Most Lloyd rounds an MPC session may ask for: it runs exactly max_iter of them (no early stop, which would
#: open whether labels changed), each costing tens of message latencies and megabytes per party.
MPC_MAX_ITER = 100
#: The Lloyd rounds of an MPC session whose ``[clustering]`` table does not say (``max_iter``'s default of 300 is
#: the other protocols', and more than an MPC session may ask for).
MPC_DEFAULT_ITER = 10
#: Initial centres of k-means by rounds.
INITS = ("random", "k-means++")
LINKAGES = ("single", "average", "complete", "ward")


@dataclass(frozen=True)
class AlgorithmFields:
    """What the ``[clustering]`` schema knows of one clustering algorithm: its name and its own fields.

    ``params`` is its own fields' table (the ``[clustering]`` schema is the
    union of every registered algorithm's, plus ``COMMON``); ``n_clusters``
    whether it uses the common ``n_clusters``; ``least`` the fewest joined
    records it needs. The coordinator's algorithm (coordinator.clustering.Algorithm)
    is one of these with the functions that cluster; registered in ``ALGORITHMS``
    it replaces the declaration of its name here.
    """

    name: str
    params: dict[str, Param]
    n_clusters: bool = True
    #: Least joined records it needs.
    least: int = 1
    doc: str = ""


#: Fields of every ``[clustering]`` table, whatever the algorithm (``seed`` is the coordinator's own, drawn from
#: the scenario seed). ``algorithm``'s choices are the registered algorithms (``fields``).
COMMON = {
    "algorithm": Param(str, "kmeans"),
    "n_clusters": Param(int, 3, minimum=1, rule="a positive integer"),
    "protocol": Param(str, "upload", choices=BUILT_IN),
}
#: The fields of a secure-aggregation session (coordinator.protocols.secagg).
SECURE_FIELDS = {
    "max_iter": Param(int, 300, minimum=1, rule="a positive integer", doc="most centre updates"),
    "tol": Param(float, 0.0, minimum=0, below=1, rule="a number in [0, 1) (the fraction of labels that may still change)"),
    "init": Param(str, "random", choices=INITS, doc="how the initial centres are drawn"),
    "scale_bits": Param(int, 32, minimum=8, maximum=48, rule="an integer from 8 to 48", doc="fixed point: values * 2^scale_bits"),
    "reveal": Param(str, LABELS, choices=REVEALS,
                    doc="what each round opens: the labels only, or the summed distances to the arbiter"),
    "min_cluster_size": Param(int, 0, minimum=0, rule="a non-negative integer",
                              doc="a party's term: the smallest cluster it accepts in a round's labels (0: 2)"),
}
#: The fields of an MPC session (coordinator.protocols.mpc) beside max_iter and init.
MPC_FIELDS = {
    "mpc_bits": Param(int, 32, minimum=16, maximum=96, rule="an integer from 16 to 96",
                      doc="mpc: bit length l of the secure fixed-point type SecFxp(l, f)"),
    "mpc_frac": Param(int, 16, minimum=4, maximum=64, rule="an integer from 4 to 64",
                      doc="mpc: fractional bits f of SecFxp(l, f)"),
    "reveal_centres": Param(bool, False, doc="mpc: open the final centres too (the labels are always opened)"),
    "helper": Param(bool, False, doc="mpc: the coordinator runs a third share-holder with no data (two parties)"),
    "engine": Param(str, "mpyc", choices=ENGINES,
                    doc="mpc, and secure_aggregation with reveal = \"labels\": the MPC engine, MPyC or SPU (ABY3, "
                        "three share-holders); a party refuses a session on another engine than its file's"),
}


@dataclass(frozen=True)
class ClusteringSpec:
    """The ``[clustering]`` table: algorithm and its settings; ``seed`` seeds k-means.

    The fields of the built-in algorithms are the dataclass's; a registered
    algorithm's own fields are given as ``options`` (``ClusteringSpec.of``
    sorts a table into both) and read like the others, as attributes or with
    :meth:`value`; ``spec.options`` gives them back (and so
    ``dataclasses.replace`` keeps them). A spec of the built-in algorithms
    has exactly the dataclass's attributes, as the report records them.
    """

    algorithm: str = "kmeans"
    n_clusters: int = 3
    linkage: str = "average"
    eps: float = 0.5
    min_samples: int = 5
    n_init: int = 10
    seed: int = 0
    #: "upload" (the disguised data, once) or "secure_aggregation" (k-means rounds; coordinator.protocols.secagg).
    protocol: str = "upload"
    #: secure_aggregation: most centre updates, the fraction of labels that may still change at
    #: convergence, how the initial centres are drawn, and the fixed-point scale (values * 2^scale_bits).
    max_iter: int = 300
    tol: float = 0.0
    init: str = "random"
    scale_bits: int = 32
    #: secure_aggregation: the smallest cluster a party accepts in a round's labels (0: parties.protocols.terms' default, 2);
    #: a party's own term, which the coordinator does not use.
    min_cluster_size: int = 0
    #: mpc: the secure fixed-point type SecFxp(mpc_bits, mpc_frac), whether the centres are opened too, and
    #: whether the coordinator runs a third share-holder with no data (for two parties).
    mpc_bits: int = 32
    mpc_frac: int = 16
    reveal_centres: bool = False
    helper: bool = False
    #: secure_aggregation: what each round opens, "labels" (an MPC argmin; mpc_bits, mpc_frac and helper apply)
    #: or "distances" (the arbiter reads the summed distances).
    reveal: str = LABELS
    #: mpc: the engine the share-holders run ("mpyc" or "spu").
    engine: str = MPYC
    #: Fields of registered algorithms other than the dataclass's, set as attributes (absent when none).
    options: InitVar[Mapping[str, Any] | None] = None

    def __post_init__(self, options: Mapping[str, Any] | None) -> None:
        for key, value in (options or {}).items():
            if key in _FIELD_NAMES or hasattr(type(self), key):
                raise TypeError(f"option '{key}' is a field or method of ClusteringSpec, not an algorithm's own")
            object.__setattr__(self, key, value)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(self) == vars(other)

    @classmethod
    def of(cls, table: Mapping[str, Any], seed: int = 0) -> ClusteringSpec:
        """The spec of a ``[clustering]`` table (fields it leaves out take their defaults); ``seed`` the
        coordinator's. Fields no algorithm registers are left to :func:`fields`' check."""
        known = fields()
        mine = ALGORITHMS[table["algorithm"]].params if table.get("algorithm") in ALGORITHMS else {}
        options = {k: table.get(k, p.default) for k, p in mine.items() if k not in _FIELD_NAMES}
        options.update({k: v for k, v in table.items() if k in known and k not in _FIELD_NAMES})
        given = {k: v for k, v in table.items() if k in _FIELD_NAMES and k != "seed"}
        if given.get("protocol") == MPC:
            given.setdefault("max_iter", MPC_DEFAULT_ITER)
        return cls(**given, seed=seed, options=options)

    def value(self, name: str) -> Any:
        """A field's value: the spec's, or the default of the registered algorithm field ``name``."""
        if hasattr(self, name):
            return getattr(self, name)
        return fields()[name].default

    @property
    def method(self) -> AlgorithmFields | None:
        """The registered algorithm this spec names, None if none."""
        return ALGORITHMS.get(self.algorithm)

    def check(self) -> list[str]:
        """Every problem with the settings, as messages naming the field (``fields()``, and ``SECURE_FIELDS`` for
        secure aggregation)."""
        table = {k: p for k, p in fields(secure=False).items()}
        algorithm = self.method
        if algorithm is not None and not algorithm.n_clusters:
            del table["n_clusters"]
        errors = check_table({k: self.value(k) for k in table}, table)
        if self.protocol == SECURE:
            if self.algorithm != "kmeans":
                errors.append(f"protocol = \"{SECURE}\" runs k-means only; 'algorithm' must be \"kmeans\", "
                              f"got {self.algorithm!r}")
            errors += check_table({k: getattr(self, k) for k in SECURE_FIELDS}, SECURE_FIELDS)
        if self.labels_only:
            errors += self._check_labels()
        elif self.protocol == MPC:
            errors += self._check_mpc()
        elif self.helper or self.reveal_centres or self.engine != MPYC:
            errors.append("'helper', 'reveal_centres' and 'engine' apply to protocol = \"mpc\" (and 'helper' and "
                          "'engine' to protocol = \"secure_aggregation\" with reveal = \"labels\") only")
        if self.min_cluster_size and self.protocol != SECURE:
            errors.append(f"'min_cluster_size' applies to protocol = \"{SECURE}\" only (a party's bound on the "
                          "labels an arbiter answers)")
        return errors

    @property
    def labels_only(self) -> bool:
        """Secure aggregation that opens the labels only (an MPC argmin; coordinator.protocols.secagg_labels)."""
        return self.protocol == SECURE and self.reveal == LABELS

    @property
    def relayed(self) -> bool:
        """Whether the parties compute among themselves over the coordinator's Relay (an MPC, or labels only)."""
        return self.protocol == MPC or self.labels_only

    def _check_labels(self) -> list[str]:
        table = {k: MPC_FIELDS[k] for k in ("mpc_bits", "mpc_frac", "helper")}
        errors = check_table({k: getattr(self, k) for k in table}, table)
        if self.init != "random":
            errors.append(f"protocol = \"{SECURE}\" with reveal = \"{LABELS}\" draws its initial centres as k joined "
                          f"records with the scenario seed: k-means++ seeding (D^2 sampling) draws each centre from "
                          f"every record's distance to the centres so far, which this mode never opens; use init = "
                          f"\"random\", or reveal = \"{DISTANCES}\" (the arbiter then reads every summed "
                          f"distance), got init = {self.init!r}")
        if self.tol != 0:
            errors.append(f"protocol = \"{SECURE}\" with reveal = \"{LABELS}\" stops once no label changes (or at "
                          f"max_iter): the parties alone decide from the opened labels; remove 'tol' ({self.tol!r})")
        if self.reveal_centres:
            errors.append(f"'reveal_centres' applies to protocol = \"{MPC}\" only: with reveal = \"{LABELS}\" each "
                          "party holds its own block of the centres")
        if isinstance(self.mpc_bits, int) and isinstance(self.mpc_frac, int) and self.mpc_frac + 8 > self.mpc_bits:
            errors.append(f"'mpc_frac' ({self.mpc_frac}) must leave at least 8 integer bits in 'mpc_bits' "
                          f"({self.mpc_bits}) for the summed distances")
        return errors

    def _check_mpc(self) -> list[str]:
        table = {k: SECURE_FIELDS[k] for k in ("max_iter", "init")} | MPC_FIELDS
        errors = check_table({k: getattr(self, k) for k in table}, table)
        if self.algorithm != "kmeans":
            errors.append(f"protocol = \"{MPC}\" runs k-means only; 'algorithm' must be \"kmeans\", got {self.algorithm!r}")
        if self.init != "random":
            errors.append(f"protocol = \"{MPC}\" draws its initial centres as k joined records with the scenario seed; "
                          f"'init' must be \"random\", got {self.init!r}")
        if isinstance(self.max_iter, int) and self.max_iter > MPC_MAX_ITER:
            errors.append(f"protocol = \"{MPC}\" runs exactly 'max_iter' Lloyd rounds (no early stop) and each costs "
                          f"megabytes per party; 'max_iter' must be at most {MPC_MAX_ITER}, got {self.max_iter}")
        if self.tol != 0:
            errors.append(f"protocol = \"{MPC}\" runs exactly 'max_iter' rounds: stopping early would open whether "
                          f"labels changed; remove 'tol' ({self.tol!r})")
        if isinstance(self.mpc_bits, int) and isinstance(self.mpc_frac, int) and 2 * self.mpc_frac > self.mpc_bits:
            errors.append(f"'mpc_frac' ({self.mpc_frac}) must be at most half of 'mpc_bits' ({self.mpc_bits}): "
                          "products of two fixed-point values need 2 * mpc_frac bits")
        return errors


_FIELD_NAMES = frozenset(f.name for f in dataclass_fields(ClusteringSpec))


def _options(spec: ClusteringSpec) -> dict[str, Any]:
    """The fields of registered algorithms a spec holds beside the dataclass's (what ``options`` gave)."""
    return {k: v for k, v in vars(spec).items() if k not in _FIELD_NAMES}


# read back as ``spec.options``, so that dataclasses.replace carries them over to the new spec
ClusteringSpec.options = property(_options)  # type: ignore[attr-defined]

#: The algorithms by the name ``[clustering]``'s ``algorithm`` gives: the built-in ones declared here, each
#: replaced by the coordinator's own (with its functions) when coordinator.clustering is imported.
ALGORITHMS: dict[str, AlgorithmFields] = {
    "kmeans": AlgorithmFields("kmeans", {"n_init": Param(int, 10, minimum=1, rule="a positive integer",
                                                         doc="kmeans restarts")}),
    "agglomerative": AlgorithmFields("agglomerative", {"linkage": Param(str, "average", choices=LINKAGES,
                                                                       doc="agglomerative")}, least=2),
    "dbscan": AlgorithmFields("dbscan", {"eps": Param(float, 0.5, above=0, rule="a positive number", doc="dbscan"),
                                         "min_samples": Param(int, 5, minimum=1, rule="a positive integer",
                                                              doc="dbscan")}, n_clusters=False),
}


@dataclass(frozen=True)
class ProtocolTerms:
    """What both sides and the scenario know of a protocol by its name, before either runs it.

    ``columns_at_home``: the parties keep their columns and name no
    disguise (a party's ``[[parties]]`` table may leave ``method`` out, and
    its upload names the protocol as its method); ``ids_only``: that upload
    brings ids alone; ``pair_keys``: every party's Join carries its X25519
    key (the parties' pair keys need them, whatever the ids); ``terms``: the
    ``[clustering]`` fields the coordinator announces at Join
    (``JoinReply.clustering``) for a party to hold to its own file.
    Each side's own part is registered apart (coordinator.protocols,
    parties.protocols); docs/writing-a-protocol.md.
    """

    name: str
    columns_at_home: bool = False
    ids_only: bool = False
    pair_keys: bool = False
    terms: tuple[str, ...] = ()
    doc: str = ""


#: The [clustering] terms announced at Join by a session with rounds (JoinReply.clustering).
ROUND_TERMS = ("n_clusters", "max_iter", "scale_bits", "mpc_bits", "mpc_frac", "reveal_centres", "helper")
#: The protocols by the name ``[clustering] protocol`` gives: the built-in ones, then those a plug-in registers
#: (``register_protocol``).
PROTOCOL_TERMS: dict[str, ProtocolTerms] = {
    UPLOAD: ProtocolTerms(UPLOAD, doc="each party uploads its disguised data once; the coordinator clusters it"),
    SECURE: ProtocolTerms(SECURE, columns_at_home=True, ids_only=True, pair_keys=True, terms=ROUND_TERMS,
                          doc="k-means by rounds of secure aggregation"),
    MPC: ProtocolTerms(MPC, columns_at_home=True, ids_only=True, pair_keys=True, terms=ROUND_TERMS,
                       doc="k-means as a secure multiparty computation"),
}


def register_protocol(terms: ProtocolTerms) -> None:
    """Add a protocol's name and terms to the schema (``[clustering] protocol`` then accepts it)."""
    PROTOCOL_TERMS[terms.name] = terms


def protocol_terms(name: str) -> ProtocolTerms:
    """The terms of protocol ``name``; those of "upload" for a name nobody registered (the schema refuses it)."""
    return PROTOCOL_TERMS.get(name, PROTOCOL_TERMS[UPLOAD])


def protocol_names() -> tuple[str, ...]:
    """Every protocol ``[clustering] protocol`` may name: the built-in ones, then registered plug-ins."""
    return tuple(PROTOCOL_TERMS)


def fields(secure: bool = True) -> dict[str, Param]:
    """The ``[clustering]`` schema: the common fields and every registered algorithm's (and, with ``secure``,
    ``SECURE_FIELDS``), the spec's own fields in their order, then those of algorithms registered later."""
    table: dict[str, Param] = {"algorithm": replace(COMMON["algorithm"], choices=tuple(ALGORITHMS)),
                               "n_clusters": replace(COMMON["n_clusters"], doc=", ".join(
                                   a.name for a in ALGORITHMS.values() if a.n_clusters))}
    for algorithm in ALGORITHMS.values():
        table.update(algorithm.params)
    table["protocol"] = replace(COMMON["protocol"], choices=protocol_names())
    order = [f.name for f in dataclass_fields(ClusteringSpec) if f.name in table]
    table = {**{k: table[k] for k in order}, **{k: p for k, p in table.items() if k not in order}}
    return {**table, **SECURE_FIELDS, **MPC_FIELDS} if secure else table
