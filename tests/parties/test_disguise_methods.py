"""Disguise methods (parties.methods) and their exact combination at the coordinator.

Test vectors: 004 Table 1 and eq. 11 (z-score with ddof=1, then Euclidean
distance), hand-computed eq. 5 values, and scipy's pdist as the oracle.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

from coordinator.combine import Contribution, combine, reorder_condensed
from coordinator.join import join_ids
from coordinator.ledger import predicted_payload
from parties.data import codes
from parties.methods import DRBT, METHODS, OSBR, Plain, method_class
from parties.normalize import normalize
from ppcsim.reproduce import paper004
from ppcsim.reproduce.paper004 import TABLE1, TABLE1_COLUMNS
from protos.serde import Layout

# 004 Table 1 (cardiac arrhythmia), with its record ids as text (as a CSV party reads them).
TABLE1_IDS = np.array([str(i) for i in paper004.TABLE1_IDS])

# 004 eq. 11, lower triangle by rows as printed: d(2,1); d(3,1) d(3,2); d(4,1) ...; d(5,1) ... d(5,4).
EQ11_LOWER = [
    [2.2436],
    [3.3489, 2.4776],
    [3.6903, 3.8844, 3.1767],
    [3.0203, 4.0828, 4.1303, 3.9955],
]


def eq11_square() -> np.ndarray:
    D = np.zeros((5, 5))
    for i, row in enumerate(EQ11_LOWER, start=1):
        for j, value in enumerate(row):
            D[i, j] = D[j, i] = value
    return D


def sent_dict(method, X, columns) -> dict[str, np.ndarray]:
    return {s.name: s.array for s in method.disguise(X, columns)}


def osbr_contribution(party, X, columns, ids, normalize_how="zscore", **params) -> Contribution:
    """What party ``party`` uploads: disguise its (normalised) block, public params after disguise."""
    method = OSBR(**params)
    Z = normalize(X, normalize_how) if method.normalizes else np.asarray(X, dtype=np.float64)
    arrays = sent_dict(method, Z, columns)
    return Contribution(party, "osbr", method.public_params(), np.asarray(ids), arrays, True)


def combine_all(contributions):
    join = join_ids({c.party: c.ids for c in contributions})
    return combine(contributions, join), join


# --------------------------------------------------------------------------------------------
# registry


def test_method_class_registry():
    assert method_class("drbt") is DRBT
    assert method_class("osbr") is OSBR
    assert method_class("none") is Plain
    assert set(METHODS) == {"drbt", "osbr", "none", "nmds", "rotation", "geometric", "noise", "pca", "svd", "dct",
                            "cnmf", "scnmf", "comnmf", "osbr-nmds"}
    with pytest.raises(ValueError, match=r"unknown method 'rotate' \(known: drbt, osbr, none, nmds, rotation, "):
        method_class("rotate")


def test_plain_sends_its_normalised_block_unchanged():
    Z = normalize(TABLE1, "zscore")
    sent = Plain(random_state=3).disguise(Z, TABLE1_COLUMNS)
    assert [s.name for s in sent] == ["data"]
    assert sent[0].layout == Layout.ROWS
    np.testing.assert_array_equal(sent[0].array, Z)


# --------------------------------------------------------------------------------------------
# OSBR euclidean: eq. 11 and exact vertical combination


def test_osbr_euclidean_reproduces_eq11():
    method = OSBR()
    assert method.normalizes
    sent = method.disguise(normalize(TABLE1, "zscore"), TABLE1_COLUMNS)
    assert [s.name for s in sent] == ["sqdist"]
    assert sent[0].layout == Layout.CONDENSED
    assert sent[0].array.shape == (10,)
    D = squareform(np.sqrt(sent[0].array))
    np.testing.assert_allclose(D, eq11_square(), rtol=0, atol=5e-5)
    # and the condensed (scipy) order, written out once
    np.testing.assert_allclose(
        np.sqrt(sent[0].array),
        [2.2436, 3.3489, 3.6903, 3.0203, 2.4776, 3.8844, 4.0828, 3.1767, 4.1303, 3.9955],
        rtol=0,
        atol=5e-5,
    )
    assert method.public_params() == {"metric": "euclidean"}


@pytest.mark.parametrize("layout", ["C", "F", "in place", "one column at a time"])
def test_osbr_eq11_needs_sample_std(layout):
    """004 eq. 11 pins the sample std (ddof=1): the party's zscore, on every path normalize takes, gives each
    column a sample std of 1, and OSBR over it reproduces eq. 11; the population std would scale every
    distance by sqrt(5/4) on Table 1's 5 records, off eq. 11 by more than its rounding."""
    X = np.array(TABLE1, dtype=np.float64, order="F" if layout == "F" else "C")
    if layout == "in place":
        Z = normalize(X, "zscore", out=X)
        assert Z is X
    elif layout == "one column at a time":
        Z = np.hstack([normalize(X[:, [j]], "zscore") for j in range(X.shape[1])])
    else:
        Z = normalize(X, "zscore")
    np.testing.assert_allclose(Z.std(axis=0, ddof=1), 1.0, rtol=1e-13)
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-13)
    D = squareform(np.sqrt(sent_dict(OSBR(), Z, TABLE1_COLUMNS)["sqdist"]))
    np.testing.assert_allclose(D, eq11_square(), rtol=0, atol=5e-5)
    # the vector tells the two apart: the population std's distances miss it by far more than its rounding
    assert np.abs(D * np.sqrt(5 / 4) - eq11_square()).max() > 0.1


SPLITS = {
    "two": [[0, 1, 2], [3, 4, 5]],
    "three": [[0, 5], [1, 3], [2, 4]],
}


@pytest.mark.parametrize("split", sorted(SPLITS))
@pytest.mark.parametrize("shuffle", [False, True])
def test_osbr_euclidean_split_equals_single_party(split, shuffle):
    single = sent_dict(OSBR(), normalize(TABLE1, "zscore"), TABLE1_COLUMNS)["sqdist"]
    expected = squareform(np.sqrt(single))
    rng = np.random.default_rng(42)
    contributions = []
    for p, cols in enumerate(SPLITS[split]):
        # party 0 keeps Table 1's order; the others may receive rows in another order
        rows = rng.permutation(5) if shuffle and p > 0 else np.arange(5)
        contributions.append(
            osbr_contribution(f"p{p}", TABLE1[rows][:, cols], [TABLE1_COLUMNS[c] for c in cols], TABLE1_IDS[rows])
        )
    if shuffle:
        assert any(not np.array_equal(c.ids, TABLE1_IDS) for c in contributions[1:])
    combined, join = combine_all(contributions)
    assert combined.features is None
    np.testing.assert_array_equal(join.ids, TABLE1_IDS)
    np.testing.assert_allclose(squareform(combined.dissimilarity), expected, rtol=1e-12)
    np.testing.assert_allclose(squareform(combined.dissimilarity), eq11_square(), rtol=0, atol=5e-5)


def test_osbr_euclidean_with_extra_ids_covers_common_ids_in_first_party_order():
    rng = np.random.default_rng(7)
    # party a: columns 0-2 of Table 1 in a shuffled order; party b: columns 3-5, Table 1 order
    # plus two extra records that a does not have.
    order_a = rng.permutation(5)
    Xa, ids_a = TABLE1[order_a][:, :3], TABLE1_IDS[order_a]
    extra = np.array([[30.0, 150.0, 300.0], [41.0, 99.0, 140.0]])
    Xb = np.vstack([TABLE1[:, 3:], extra])
    ids_b = np.concatenate([TABLE1_IDS, ["900", "901"]])
    # shuffle b too, so the extra ids sit in the middle
    order_b = rng.permutation(7)
    Xb, ids_b = Xb[order_b], ids_b[order_b]

    ca = osbr_contribution("a", Xa, TABLE1_COLUMNS[:3], ids_a)
    cb = osbr_contribution("b", Xb, TABLE1_COLUMNS[3:], ids_b)
    combined, join = combine_all([ca, cb])

    np.testing.assert_array_equal(join.ids, ids_a)
    assert join.dropped == {"a": 0, "b": 2}
    assert combined.dissimilarity.shape == (10,)
    # oracle: each party's own normalised block (b normalises over its 7 rows), rows aligned on id
    Za = normalize(Xa, "zscore")
    Zb = normalize(Xb, "zscore")
    pos_b = [list(ids_b).index(i) for i in ids_a]
    expected = squareform(pdist(np.hstack([Za, Zb[pos_b]])))
    np.testing.assert_allclose(squareform(combined.dissimilarity), expected, rtol=1e-12)


# --------------------------------------------------------------------------------------------
# OSBR gower (eq. 5)

# Four records. Party A: interval "age" (range 30) and nominal "color" (text -> codes).
# Party B: asymmetric binary "smoker" and interval "weight" (range 40).
GOWER_IDS = np.array(["r0", "r1", "r2", "r3"])
AGE = np.array([20.0, 30.0, 50.0, 40.0])
COLOR = ["red", "blue", "red", "green"]
SMOKER = np.array([0.0, 1.0, 0.0, 1.0])
WEIGHT = np.array([60.0, 80.0, 70.0, 100.0])

# eq. 5 by hand, d(i, j) = sum_f delta d^f / sum_f delta:
#  (r0, r2): age 30/30 = 1, color red-red 0, smoker 0-0 -> delta 0, weight 10/40 -> (1 + 0 + .25) / 3
#  (r0, r1): age 10/30, color 1, smoker 0-1 -> 1, weight 20/40       -> (1/3 + 1 + 1 + .5) / 4
#  (r1, r3): age 10/30, color 1, smoker 1-1 -> 0 (delta 1), weight 20/40 -> (1/3 + 1 + 0 + .5) / 4
#  (r2, r3): age 10/30, color 1, smoker 0-1 -> 1, weight 30/40       -> (1/3 + 1 + 1 + .75) / 4
GOWER_EXPECTED = {
    ("r0", "r2"): 1.25 / 3,
    ("r0", "r1"): (1 / 3 + 2.5) / 4,
    ("r1", "r3"): (1 / 3 + 1.5) / 4,
    ("r2", "r3"): (1 / 3 + 2.75) / 4,
}


def test_gower_party_without_binary_sends_numerator_and_attribute_count():
    method = OSBR(metric="gower", categorical=["color"])
    assert not method.normalizes
    XA = np.column_stack([AGE, codes(COLOR)])
    sent = method.disguise(XA, ["age", "color"])
    assert [s.name for s in sent] == ["numerator"]
    assert method.public_params() == {"metric": "gower", "attributes": "2"}
    # numerator of (r0, r1) = 10/30 + 1; (r0, r2) = 1 + 0
    N = squareform(sent[0].array)
    assert N[0, 1] == pytest.approx(1 / 3 + 1, abs=1e-12)
    assert N[0, 2] == pytest.approx(1.0, abs=1e-12)


def test_gower_party_with_binary_sends_denominator():
    method = OSBR(metric="gower", binary=["smoker"])
    sent = sent_dict(method, np.column_stack([SMOKER, WEIGHT]), ["smoker", "weight"])
    assert set(sent) == {"numerator", "denominator"}
    assert method.public_params() == {"metric": "gower"}
    den = squareform(sent["denominator"])
    assert den[0, 2] == 1.0  # 0-0 on smoker does not count: weight only
    assert den[1, 3] == 2.0  # 1-1 counts
    assert den[0, 1] == 2.0


@pytest.mark.parametrize("shuffle_b", [False, True])
def test_gower_combined_over_two_parties_matches_eq5(shuffle_b):
    ca = osbr_contribution(
        "a", np.column_stack([AGE, codes(COLOR)]), ["age", "color"], GOWER_IDS, metric="gower", categorical=["color"]
    )
    rows = np.array([2, 0, 3, 1]) if shuffle_b else np.arange(4)
    cb = osbr_contribution(
        "b",
        np.column_stack([SMOKER, WEIGHT])[rows],
        ["smoker", "weight"],
        GOWER_IDS[rows],
        metric="gower",
        binary=["smoker"],
    )
    assert set(ca.arrays) == {"numerator"} and ca.params["attributes"] == "2"
    combined, join = combine_all([ca, cb])
    np.testing.assert_array_equal(join.ids, GOWER_IDS)
    D = squareform(combined.dissimilarity)
    pos = {i: n for n, i in enumerate(GOWER_IDS)}
    for (i, j), value in GOWER_EXPECTED.items():
        assert D[pos[i], pos[j]] == pytest.approx(value, abs=1e-12), (i, j)


def test_gower_rejects_non_binary_binary_column():
    with pytest.raises(ValueError, match=r"'binary' columns must hold only 0 and 1: smoker"):
        OSBR(metric="gower", binary=["smoker"]).disguise(np.array([[0.0], [2.0]]), ["smoker"])


def test_gower_options_need_gower_metric():
    with pytest.raises(ValueError, match=r"'binary' applies to metric 'gower' only \(004 eq. 5\), not 'euclidean'"):
        OSBR(metric="euclidean", binary=["x"]).disguise(np.array([[0.0], [1.0]]), ["x"])


# --------------------------------------------------------------------------------------------
# OSBR jaccard (eq. 4)


def test_jaccard_combined_over_two_parties_equals_scipy():
    rng = np.random.default_rng(3)
    m = 12
    B = (rng.random((m, 9)) < 0.4).astype(np.float64)
    ids = np.array([f"id{i}" for i in range(m)])
    order = rng.permutation(m)
    ca = osbr_contribution("a", B[:, :4], [f"a{i}" for i in range(4)], ids, metric="jaccard")
    cb = osbr_contribution("b", B[order][:, 4:], [f"b{i}" for i in range(5)], ids[order], metric="jaccard")
    assert set(ca.arrays) == {"q", "rs"} and ca.params == {"metric": "jaccard"}
    combined, join = combine_all([ca, cb])
    np.testing.assert_array_equal(join.ids, ids)
    expected = pdist(B.astype(bool), "jaccard")
    assert expected.min() < expected.max()  # not a degenerate vector
    np.testing.assert_allclose(combined.dissimilarity, expected, rtol=1e-12, atol=0)


def test_jaccard_hand_example():
    # rows [1,1,0,0] and [1,0,1,0]: q = 1, r + s = 2 -> 2/3
    B = np.array([[1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0]])
    sent = sent_dict(OSBR(metric="jaccard"), B, list("abcd"))
    np.testing.assert_array_equal(sent["q"], [1.0])
    np.testing.assert_array_equal(sent["rs"], [2.0])


def test_jaccard_rejects_non_binary_input():
    with pytest.raises(ValueError, match=r"jaccard"):
        OSBR(metric="jaccard").disguise(np.array([[0.0, 1.0], [0.5, 1.0]]), ["a", "b"])


# --------------------------------------------------------------------------------------------
# DRBT


def random_block(seed, m=30, d=20):
    return np.random.default_rng(seed).normal(size=(m, d))


def test_drbt_rp1_unit_columns_and_scaled_projection():
    X = random_block(0, m=15, d=8)
    method = DRBT(k=3, projection="gaussian", random_state=9)
    sent = method.disguise(X, [f"c{i}" for i in range(8)])
    assert [s.name for s in sent] == ["data"]
    assert sent[0].layout == Layout.ROWS
    R = method.components_
    assert R.shape == (8, 3)
    np.testing.assert_allclose(np.linalg.norm(R, axis=0), np.ones(3), rtol=0, atol=1e-12)
    assert method.scale_ == pytest.approx(np.sqrt(8 / 3), rel=1e-15)
    np.testing.assert_allclose(sent[0].array, X @ R * np.sqrt(8 / 3), rtol=1e-12, atol=1e-12)
    assert method.public_params() == {}


def test_drbt_seed_determines_output():
    X = random_block(1, m=10, d=6)
    out = [DRBT(k=4, projection=p, random_state=s).disguise(X, [])[0].array for p in ("gaussian", "sparse") for s in (5, 5, 6)]
    for g in (0, 3):
        np.testing.assert_array_equal(out[g], out[g + 1])
        assert not np.allclose(out[g], out[g + 2])


def test_drbt_rp2_three_values_proportions_and_scale():
    method = DRBT(k=300, projection="sparse", random_state=2)
    method.disguise(np.zeros((2, 300)), [])
    R = method.components_
    s3 = np.sqrt(3.0)
    values = np.unique(R)
    np.testing.assert_array_equal(values, [-s3, 0.0, s3])
    n = R.size
    assert abs(np.count_nonzero(R == s3) / n - 1 / 6) < 0.02
    assert abs(np.count_nonzero(R == 0.0) / n - 2 / 3) < 0.02
    assert abs(np.count_nonzero(R == -s3) / n - 1 / 6) < 0.02
    assert method.scale_ == pytest.approx(1 / np.sqrt(300), rel=1e-15)


def test_drbt_rp2_sent_data():
    X = random_block(4, m=9, d=7)
    method = DRBT(k=2, projection="sparse", random_state=8)
    sent = method.disguise(X, [])
    np.testing.assert_allclose(sent[0].array, X @ method.components_ / np.sqrt(2), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("projection", ["gaussian", "sparse", "sparse-unit", "orthonormal"])
def test_drbt_squared_distances_unbiased(projection):
    # Anisotropic data: for isotropic data RP1 would be unbiased even with a wrong scale convention.
    X = random_block(5) * np.linspace(0.2, 3.0, 20)
    base = pdist(X, "sqeuclidean").sum()
    ratios = [
        pdist(DRBT(k=5, projection=projection, random_state=seed).disguise(X, [])[0].array, "sqeuclidean").sum() / base
        for seed in range(200)
    ]
    assert abs(np.mean(ratios) - 1.0) < 0.05


# 004 Table 3, the RP2 block: Table 1 projected from 6 to 3 dims, printed to 2 decimals.
TABLE3_RP2 = np.array(
    [
        [91.0, -125.0, -97.58],
        [81.0, -98.50, -77.07],
        [77.0, -93.0, -77.78],
        [83.0, -101.0, -73.53],
        [109.0, -123.0, -79.19],
    ]
)


def _best_sign_column(target: np.ndarray, unit: bool) -> tuple[float, np.ndarray]:
    """The sign pattern s in {-1, 0, 1}^6 whose Table 1 projection is closest to ``target``."""
    import itertools

    best = (np.inf, None)
    for s in itertools.product((-1.0, 0.0, 1.0), repeat=6):
        s = np.array(s)
        if not s.any():
            continue
        r = s / np.linalg.norm(s) if unit else np.sqrt(3.0) * s / np.sqrt(3)  # "sparse": sqrt(3) s / sqrt(k)
        best = min(best, (float(np.abs(TABLE1 @ r - target).max()), s), key=lambda b: b[0])
    return best


def test_drbt_sparse_unit_reproduces_004_table3(monkeypatch):
    # Every column of Table 3's RP2 block is Table 1 times an eq. 9 column normalised to unit length,
    # with no eq. 8 scale: agreement to the printed digits (truncated) ...
    found = [_best_sign_column(TABLE3_RP2[:, j], unit=True) for j in range(3)]
    assert max(f[0] for f in found) < 0.01
    signs = np.column_stack([f[1] for f in found])
    np.testing.assert_array_equal(signs[:, 0], [0, 0, 0, 0, 1, 0])  # Att1 is the QRS column itself
    # ... which the Achlioptas scaling ("sparse", sqrt(3) {+-1, 0} / sqrt(k)) cannot give: its third column
    # is an integer combination of Table 1, never -97.58
    assert _best_sign_column(TABLE3_RP2[:, 2], unit=False)[0] > 0.4
    # drbt's "sparse-unit" builds exactly that matrix from those signs, and sends it scaled by sqrt(d/k)
    import parties.methods.drbt as drbt

    monkeypatch.setattr(drbt, "achlioptas_signs", lambda rng, d, k: signs.copy())
    method = DRBT(k=3, projection="sparse-unit", random_state=0)
    sent = method.disguise(TABLE1, [])[0].array
    assert method.scale_ == pytest.approx(np.sqrt(2.0), rel=1e-15)
    np.testing.assert_allclose(sent / method.scale_, TABLE3_RP2, rtol=0, atol=0.01)


def test_drbt_sparse_unit_columns():
    method = DRBT(k=40, projection="sparse-unit", random_state=3)
    X = random_block(6, m=12, d=50)
    sent = method.disguise(X, [])[0].array
    R = method.components_
    np.testing.assert_allclose(np.linalg.norm(R, axis=0), np.ones(40), rtol=0, atol=1e-12)  # no zero column
    for column in R.T:  # every non-zero entry is +-1/sqrt(nnz): eq. 9 normalised
        nz = column[column != 0]
        np.testing.assert_allclose(np.abs(nz), 1 / np.sqrt(nz.size), rtol=1e-12)
    np.testing.assert_allclose(sent, X @ R * np.sqrt(50 / 40), rtol=1e-12, atol=1e-12)
    # two columns: a column is all zero with probability 4/9, and is drawn again
    for seed in range(20):
        R = DRBT(k=2, projection="sparse-unit", random_state=seed).random_matrix(2)
        np.testing.assert_allclose(np.linalg.norm(R, axis=0), [1.0, 1.0], rtol=0, atol=1e-12)


def test_drbt_orthonormal_is_a_haar_frame():
    from parties.methods.rotation import haar_orthogonal

    X = random_block(7, m=10, d=6)
    method = DRBT(k=4, projection="orthonormal", random_state=11)
    sent = method.disguise(X, [])[0].array
    R = method.components_
    np.testing.assert_allclose(R.T @ R, np.eye(4), rtol=0, atol=1e-12)  # orthonormal columns (000 eq. 2.18)
    # by definition the first k columns of the Haar orthogonal matrix drawn from the same seed
    np.testing.assert_array_equal(R, haar_orthogonal(6, np.random.default_rng(11))[:, :4])
    np.testing.assert_allclose(sent, X @ R * np.sqrt(6 / 4), rtol=1e-12, atol=1e-12)
    # k = d is a rotation: every distance kept
    full = DRBT(k=6, projection="orthonormal", random_state=2).disguise(X, [])[0].array
    np.testing.assert_allclose(pdist(full), pdist(X), rtol=1e-12)
    # Haar: a column is uniform on the sphere, E r^2 = 1/d, E r^4 = 3/(d(d+2)), and each sign equally likely
    # (a QR without the sign fix gives Q[0, 0] of one sign only)
    first = np.array([DRBT(k=1, projection="orthonormal", random_state=s).random_matrix(4)[0, 0]
                      for s in range(3000)])
    assert abs(np.mean(first**2) - 1 / 4) < 0.01
    assert abs(np.mean(first**4) - 3 / 24) < 0.01
    assert abs(np.mean(first > 0) - 0.5) < 0.04


def test_drbt_k_larger_than_d_raises():
    with pytest.raises(ValueError, match=r"k = 5 is larger than the party's 3 columns"):
        DRBT(k=5, random_state=0).disguise(np.ones((4, 3)), ["a", "b", "c"])


def test_drbt_k_equal_d_allowed():
    sent = DRBT(k=3, random_state=0).disguise(random_block(2, m=4, d=3), [])
    assert sent[0].array.shape == (4, 3)


# --------------------------------------------------------------------------------------------
# parameter checks


def test_check_params_valid():
    assert DRBT.check_params({"k": 3}) == []
    assert DRBT.check_params({"k": 3, "projection": "sparse"}) == []
    assert OSBR.check_params({}) == []
    assert OSBR.check_params({"metric": "gower", "categorical": ["c"], "binary": ["b"]}) == []
    assert Plain.check_params({}) == []


def test_check_params_unknown_field():
    (msg,) = DRBT.check_params({"k": 3, "dims": 2})
    assert "unknown field 'dims'" in msg and "method 'drbt'" in msg and "k, projection" in msg
    (msg,) = Plain.check_params({"k": 3})
    assert "unknown field 'k'" in msg and "takes no parameters" in msg


def test_check_params_missing_required():
    (msg,) = DRBT.check_params({"projection": "gaussian"})
    assert "needs 'k'" in msg and "method 'drbt'" in msg


@pytest.mark.parametrize(
    "params, fragment",
    [
        ({"k": "3"}, "'k' must be an integer, got '3'"),
        ({"k": 2.0}, "'k' must be an integer, got 2.0"),
        ({"k": True}, "'k' must be an integer, got True"),
        ({"k": 0}, "'k' must be at least 1, got 0"),
        ({"k": 2, "projection": 1}, "'projection' must be a string, got 1"),
        ({"k": 2, "projection": "uniform"},
         "'projection' must be one of gaussian, sparse, sparse-unit, orthonormal, got 'uniform'"),
    ],
)
def test_check_params_bad_values_name_the_field(params, fragment):
    (msg,) = DRBT.check_params(params)
    assert fragment in msg
    assert "(method 'drbt')" in msg


@pytest.mark.parametrize(
    "params, fragment",
    [
        ({"metric": "cosine"}, "'metric' must be one of euclidean, gower, jaccard, got 'cosine'"),
        ({"metric": "gower", "categorical": "color"}, "'categorical' must be a list of column names"),
        ({"metric": "gower", "binary": [1, 2]}, "'binary' must be a list of column names"),
    ],
)
def test_check_params_osbr(params, fragment):
    (msg,) = OSBR.check_params(params)
    assert fragment in msg


def test_check_params_reports_every_problem():
    errors = DRBT.check_params({"projection": "x", "extra": 1})
    assert len(errors) == 3
    joined = "\n".join(errors)
    assert "'extra'" in joined and "'projection'" in joined and "'k'" in joined


# --------------------------------------------------------------------------------------------
# coordinator helpers


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reorder_condensed_matches_squareform(seed):
    rng = np.random.default_rng(seed)
    m = 11
    c = pdist(rng.normal(size=(m, 3)))
    index = rng.permutation(m)[:7]
    expected = squareform(squareform(c)[np.ix_(index, index)])
    np.testing.assert_array_equal(reorder_condensed(c, m, index), expected)


def test_reorder_condensed_full_permutation_and_identity():
    rng = np.random.default_rng(5)
    m = 6
    c = rng.random(m * (m - 1) // 2)
    perm = rng.permutation(m)
    np.testing.assert_array_equal(reorder_condensed(c, m, perm), squareform(squareform(c)[np.ix_(perm, perm)]))
    np.testing.assert_array_equal(reorder_condensed(c, m, np.arange(m)), c)


def test_combine_features_concatenates_in_join_order():
    rng = np.random.default_rng(6)
    ids = np.array(["a", "b", "c", "d"])
    Xa, Xb = rng.normal(size=(4, 2)), rng.normal(size=(5, 3))
    ids_b = np.array(["d", "x", "b", "a", "c"])
    ca = Contribution("pa", "none", {}, ids, {"data": Xa})
    cb = Contribution("pb", "drbt", {}, ids_b, {"data": Xb})
    combined, _ = combine_all([ca, cb])
    assert combined.dissimilarity is None
    np.testing.assert_array_equal(combined.features, np.hstack([Xa, Xb[[3, 2, 4, 0]]]))


def test_mixed_consortium_combines_exactly_as_squared_distances():
    """Features beside Euclidean dissimilarities: both become squared distances, which add (004 eq. 3 is a sum over columns)."""
    rng = np.random.default_rng(5)
    A, B = rng.normal(size=(30, 3)), rng.normal(size=(30, 4))
    ids = np.array([f"r{i}" for i in range(30)])
    order = rng.permutation(30)
    ca = Contribution("pa", "none", {}, ids, {"data": A})
    cb = Contribution("pb", "osbr", {"metric": "euclidean"}, ids[order], {"sqdist": pdist(B[order], "sqeuclidean")}, True)
    combined, _ = combine_all([ca, cb])
    assert combined.features is None
    np.testing.assert_allclose(combined.dissimilarity, pdist(np.hstack([A, B])), rtol=1e-12)
    assert "features of pa turned into squared distances" in combined.description


def test_features_do_not_mix_with_gower_or_jaccard():
    from coordinator.errors import SessionError

    ids = np.array(["a", "b"])
    ca = Contribution("pa", "none", {}, ids, {"data": np.zeros((2, 1))})
    cb = Contribution("pb", "osbr", {"metric": "jaccard"}, ids, {"q": np.zeros(1), "rs": np.zeros(1)}, True)
    with pytest.raises(SessionError, match=r"parties pa send features, which combine exactly only with Euclidean"):
        combine_all([ca, cb])


def test_predicted_payload():
    m = 1000
    assert predicted_payload(m, [(m, 5)], 8) == m * 5 * 8
    assert predicted_payload(m, [(m * (m - 1) // 2,)] * 2, 8) == 2 * (m * (m - 1) // 2) * 8
    assert predicted_payload(m, [(m * (m - 1) // 2,)], 8) == 499_500 * 8
    assert predicted_payload(m, [(m, 13)], 8) == m * 13 * 8
    # 004 §8 table: m = 1e4, k = 5, float64 -> 400 KB for drbt, ~400 MB for osbr
    assert predicted_payload(10_000, [(10_000, 5)], 8) == 400_000
    assert predicted_payload(10_000, [(49_995_000,)], 8) == 399_960_000
