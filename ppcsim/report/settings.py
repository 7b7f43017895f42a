"""The ``[clustering]`` settings a run used, for the report's ``clustering`` section.

A scenario's ``[clustering]`` table knows every algorithm's and every
protocol's fields, each with its default; a run uses only some of them. The
report lists those alone, so that a reader never takes an unused default for
one that shaped the result:

* every run: ``algorithm``, ``protocol`` and ``seed`` (the coordinator's, drawn
  from the scenario's), and ``n_clusters`` unless the algorithm finds its own
  number (DBSCAN);
* ``protocol = "upload"``: the algorithm's own fields (k-means ``n_init``,
  agglomerative ``linkage``, DBSCAN ``eps`` and ``min_samples``, a registered
  algorithm's fields);
* ``protocol = "secure_aggregation"``: its rounds' fields (``max_iter``, ``tol``,
  ``init``, ``scale_bits``, ``reveal``, and ``min_cluster_size``, a party's
  term), and with ``reveal = "labels"`` the MPC argmin's ``mpc_bits``,
  ``mpc_frac``, ``helper`` and ``engine``;
* ``protocol = "mpc"``: ``max_iter``, ``init`` and the MPC's fields
  (``mpc_bits``, ``mpc_frac``, ``reveal_centres``, ``helper``, ``engine``).
"""

from __future__ import annotations

from typing import Any

from ppcsim.report.protocols import report_of
from protos.clustering import ClusteringSpec, fields

#: What every run uses, whatever its algorithm and protocol.
ALWAYS = ("algorithm", "n_clusters", "protocol", "seed")


def used(spec: ClusteringSpec) -> set[str]:
    """The names of the ``[clustering]`` fields ``spec``'s run uses (the module's list)."""
    algorithm = spec.method
    keep = set(ALWAYS)
    if algorithm is not None and not algorithm.n_clusters:
        keep.discard("n_clusters")
    return keep | report_of(spec.protocol).settings_used(spec)  # each protocol's own (ppcsim.report.protocols)


def applied(spec: ClusteringSpec) -> dict[str, Any]:
    """``spec``'s settings as the report lists them: the fields its run used, in the spec's order (a field no
    algorithm or protocol knows is kept: the scenario set it)."""
    known, keep = set(fields()) | {"seed"}, used(spec)
    return {k: v for k, v in vars(spec).items() if k in keep or k not in known}
