"""A party's terms as its own scenario file gives them (parties.protocols.terms): the consortium, the protocol, the helper,
the clustering terms and the MPC engine, each the file's value or, where the file is silent, its documented default."""

from __future__ import annotations

from parties.protocols.terms import Terms
from ppcsim.scenario.load import Scenario


def party_terms(scenario: Scenario) -> Terms:
    """The terms a party of ``scenario`` (read with ``role="party"``) holds the coordinator to."""
    c = scenario.clustering
    return Terms(source=str(scenario.path), parties=scenario.consortium, protocol=c.protocol, helper=c.helper,
                 n_clusters=c.n_clusters, max_iter=c.max_iter, scale_bits=c.scale_bits,
                 reveal_centres=c.reveal_centres, mpc_bits=c.mpc_bits, mpc_frac=c.mpc_frac,
                 min_cluster_size=c.min_cluster_size, engine=c.engine)
