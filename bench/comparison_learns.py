"""What the coordinator learns in each way bench/comparison.py runs, in the words of docs/comparison.md's last
column (one phrase per variant)."""

#: By variant, as bench/comparison.py names them.
LEARNS = {
    "none": "every party's normalised values",
    "drbt k=1": "a 1-D random projection of each party's block (known records fit the projection)",
    "drbt k=3": "a 3-D random projection of each party's 4 columns (known records fit it; k_j >= d_j would give it away)",
    "osbr": "all pairwise distances within each party's block (n + 1 known records locate every record)",
    "secure aggregation": "every record's distance to every centre in every round, the labels and sizes; "
                          "never a party's values or centre block",
    "labels only": "every round's labels (opened to every party) and the size and timing of the sealed frames it "
                   "relays; no share, no distance (honest majority, as the MPC's)",
    "mpc": "the labels at the end and the size and timing of the sealed frames it relays; no share in a frame, no "
           "distance; but its helper, the third share-holder of two parties, holds a share of every value: with "
           "either party, all of the other's data (honest majority: it colludes with neither)",
}
LEARNS["mpc spu"] = LEARNS["mpc"]
