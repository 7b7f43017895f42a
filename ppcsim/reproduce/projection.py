"""Each party's block projected with ``drbt`` and the stress of the joined projection (004 eq. 6): the
computation behind Table 2 and Figs 1-2, run on local processes or on a Dask cluster's workers."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import pdist

from parties.methods.drbt import DRBT
from ppcsim.evaluate.stress import stress
from ppcsim.scenario.load import party_seeds


def project_blocks(X: np.ndarray, sizes: list[int], ks: list[int], projection: str, seed: int) -> np.ndarray:
    """Each party projects its own block with ``drbt``; the central party concatenates the blocks.

    Party j's seed is ``party_seeds(seed, p)[j]``, as ``ppc run`` derives it from a
    scenario seed, so the first party draws the same matrix whatever p is. Each
    block carries its own scale (sqrt(d_j/k_j) for RP1, 1/sqrt(k_j) for RP2).
    """
    bounds = np.cumsum([0, *sizes])
    blocks = []
    for j, (seed_j, k_j) in enumerate(zip(party_seeds(seed, len(sizes)), ks)):
        block = X[:, bounds[j] : bounds[j + 1]]
        method = DRBT(random_state=seed_j, k=k_j, projection=projection)
        blocks.append(method.disguise(block, [f"c{i}" for i in range(block.shape[1])])[0].array)
    return np.hstack(blocks)


def projection_stress(X: np.ndarray, d: np.ndarray, sizes: list[int], ks: list[int], projection: str,
                      seed: int, *, out: np.ndarray | None = None) -> float:
    """Stress (eq. 6) of the joined projection against the original distances ``d`` (condensed).

    ``out``, an array shaped like ``d``, receives the projected distances (saves an allocation).
    """
    return stress(d, pdist(project_blocks(X, sizes, ks, projection, seed), out=out))
