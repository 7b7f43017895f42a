"""The scenario checks of the protocols whose parties compute among themselves over the coordinator's relay: an
MPC, and secure aggregation opening the labels only (an MPC argmin)."""

from __future__ import annotations

from protos.clustering import MPC, ClusteringSpec
from protos.extras import missing


def relayed_problems(clustering: ClusteringSpec, consortium: tuple[str, ...]) -> list[str]:
    """The share-holders (``mpc_parties``) and the MPC's install, when the parties compute among themselves."""
    if not clustering.relayed:
        return []
    errors = mpc_parties(len(consortium), clustering.helper, clustering.protocol, clustering.engine)
    why = None if clustering.protocol == MPC else 'secure aggregation opening the labels only (reveal = "labels")'
    if clustering.engine != "spu" and (problem := missing("mpc", why)) is not None:
        errors.append(f"[clustering]: {problem}")
    return errors


def mpc_parties(n: int, helper: bool, protocol: str = MPC, engine: str = "mpyc") -> list[str]:
    """What is wrong with ``n`` data parties (and ``helper``) for protocol = "mpc" (or secure aggregation with
    reveal = "labels", whose argmin is an MPC): Shamir secret sharing keeps a secret from t = (n - 1) // 2
    colluding share-holders only, so two need a third share-holder; SPU's ABY3 (``engine = "spu"``) runs on exactly
    three share-holders."""
    if engine == "spu" and n + helper != 3 and n >= 2 and not (helper and n != 2):
        return [f"[clustering]: engine = \"spu\" runs ABY3, which needs exactly three share-holders: three parties, "
                f"or two and 'helper = true'; this scenario has {n} parties{' and the helper' if helper else ''} "
                "(use engine = \"mpyc\" for other counts)"]
    what = (f'protocol = "{MPC}"' if protocol == MPC else
            'protocol = "secure_aggregation" with reveal = "labels" (an MPC argmin over the partial distances)')
    if helper and n != 2:
        return [f"[clustering]: 'helper = true' adds a third share-holder to two parties; this scenario has {n} "
                "(remove 'helper')"]
    if n == 2 and not helper:
        return [f"[clustering]: {what} with two parties has threshold t = 0: each party could open every "
                "share, so nothing would be secret; add 'helper = true' (the coordinator holds shares of no data, "
                "assumed not to collude with either party) or a third party"
                + ("" if protocol == MPC else ", or reveal = \"distances\" (the arbiter then reads every summed "
                   "distance)")]
    if n < 2:
        return [f"[clustering]: {what} needs at least two parties, this scenario has {n}"]
    return []


