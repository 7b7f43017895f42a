"""The numbers printed in Oliveira & Zaïane (004) that ``ppc reproduce`` checks, and their first-order estimates.

Shared by the computation (``ppcsim.reproduce.reproduction``) and the write-up
(``ppcsim.reproduce.markdown``), so that neither imports the other's internals.
The paper is *Privacy-Preserving Clustering by Object Similarity-Based
Representation and Dimensionality Reduction Transformation*.
"""

from __future__ import annotations

import numpy as np

#: Table 1: age, weight, h_rate, int_def, QRS, PR_int of patients 123, 342, 254, 446, 286.
TABLE1 = np.array(
    [
        [75, 80, 63, 32, 91, 193],
        [56, 64, 53, 24, 81, 174],
        [40, 52, 70, 24, 77, 129],
        [28, 58, 76, 40, 83, 251],
        [44, 90, 68, 44, 109, 128],
    ],
    dtype=np.float64,
)
TABLE1_COLUMNS = ["age", "weight", "h_rate", "int_def", "QRS", "PR_int"]
TABLE1_IDS = [123, 342, 254, 446, 286]
#: Eq. 11 as a condensed array: pairs (0,1), (0,2), ..., (3,4), scipy's pdist order.
EQ11 = np.array([2.2436, 3.3489, 3.6903, 3.0203, 2.4776, 3.8844, 4.0828, 3.1767, 4.1303, 3.9955])
#: Table 2: one random draw per cell in the paper.
TABLE2_K = (6, 5, 4, 3)
TABLE2_PAPER = {
    "gaussian": {6: 0.0000, 5: 0.0223, 4: 0.0490, 3: 0.2454},
    "sparse": {6: 0.0000, 5: 0.0281, 4: 0.0375, 3: 0.1120},
}
#: Table 3, the RP2 block: Table 1 projected from 6 to 3 dimensions, to the printed decimals.
TABLE3_RP2 = np.array(
    [
        [91.0, -125.0, -97.58],
        [81.0, -98.50, -77.07],
        [77.0, -93.0, -77.78],
        [83.0, -101.0, -73.53],
        [109.0, -123.0, -79.19],
    ]
)
PROJECTIONS = {"gaussian": "RP1", "sparse": "RP2"}
#: RP2 as the paper built it (Table 3): eq. 9 with unit-length columns (``drbt`` ``projection = "sparse-unit"``).
SPARSE_UNIT = "sparse-unit"
#: Not the paper's method: R with orthonormal columns (a Haar k-frame, ``drbt`` ``projection = "orthonormal"``).
ORTHONORMAL = "orthonormal"
#: The paper's Table 2 row each of our projections is compared with.
PAPER_ROW = {"gaussian": "gaussian", "sparse": "sparse", SPARSE_UNIT: "sparse"}
NORMALIZATIONS = {"none": "raw", "zscore": "z-score"}

#: The UCI files: whether the CSV has a header row.
HEADER = {"mushroom": True, "chess": False}
#: Mushroom's columns in UCI's order (its attribute information), for the header row the command expects.
MUSHROOM_COLUMNS = (
    "edibility,cap-shape,cap-surface,cap-color,bruises,odor,gill-attachment,gill-spacing,gill-size,gill-color,"
    "stalk-shape,stalk-root,stalk-surface-above-ring,stalk-surface-below-ring,stalk-color-above-ring,"
    "stalk-color-below-ring,veil-type,veil-color,ring-number,ring-type,spore-print-color,population,habitat"
).split(",")
#: Where the UCI files come from (UCI Machine Learning Repository), and what the command expects of them.
UCI_SOURCES = {
    "mushroom": ("https://archive.ics.uci.edu/dataset/73/mushroom",
                 "agaricus-lepiota.data, 8124 rows, the class (e/p) first and 22 single-letter attributes; the "
                 "command expects a header row naming the 23 columns"),
    "chess": ("https://archive.ics.uci.edu/dataset/22/chess+king+rook+vs+king+pawn",
              "kr-vs-kp.data, 3196 rows, 36 attributes and the class (won/nowin) last, no header"),
}
#: Fig. 1: "from 23 to 15, taking 3 dimensions at a time" cannot land on 15 from 23; we read it as
#: 21, 18, 15. Chess "from 37 to 17, 4 at a time": 33, ..., 17. k = d comes first, as a reference.
FIG1_K = {"mushroom": (23, 21, 18, 15), "chess": (37, 33, 29, 25, 21, 17)}
FIG1_BOUND = {"mushroom": 0.14, "chess": 0.11}
FIG2_K = {"mushroom": 12, "chess": 18}
FIG2_BOUND = {"mushroom": 0.13, "chess": 0.12}
FIG2_PARTIES = (1, 2, 3, 4)
#: Two scores closer than this (relative) are reported as a tie.
TIE = 0.10


def is_tie(a: float, b: float) -> bool:
    """Whether two scores are within ``TIE`` (relative to the larger) of each other."""
    return abs(a - b) <= TIE * max(a, b)


def stress_estimate(projection: str, d: int, k: int) -> float:
    """First-order estimate of the stress of an unbiased random projection from d to k dims.

    A projected squared distance (eq. 8 scaling) is the mean of k independent
    terms whose relative variance is 2 for RP2 (its entries have the Gaussian
    fourth moment, E r^4 = 3) and 2(d-1)/(d+2) for RP1 (a unit-length column is
    uniform on the sphere: Beta(1/2, (d-1)/2)). A distance's relative error is
    half its square's, so stress ~ 1/sqrt(2k) for RP2 and sqrt((d-1)/(d+2)) times
    that for RP1. It ignores the data's shape: a guide to the magnitude only.
    """
    factor = np.sqrt((d - 1) / (d + 2)) if projection == "gaussian" else 1.0
    return float(factor / np.sqrt(2 * k))
