"""ppcsim.evaluate: clustering agreement, column privacy, VD, attacks (known I/O, ICA, multilateration), stress."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform
from sklearn.metrics import mutual_info_score

from parties.methods import method_class
from parties.normalize import normalize
from ppcsim.evaluate.agreement import agreement
from ppcsim.evaluate.attacks import ica_attack, known_io, known_rows, multilateration, multilateration_privacy
from ppcsim.evaluate.privacy import column_privacy, summary, vd
from ppcsim.evaluate.stress import stress

PERFECT = {"misclassification": 0.0, "ari": 1.0, "nmi": 1.0, "variation_of_information": 0.0, "f_measure": 1.0}


def disguise(name: str, X: np.ndarray, seed: int = 3, **params) -> np.ndarray:
    sent = method_class(name)(random_state=seed, **params).disguise(X, [f"c{i}" for i in range(X.shape[1])])
    return sent[0].array


# ---------------------------------------------------------------- agreement


@pytest.mark.parametrize(
    "reference, labels",
    [
        ([0, 0, 1, 1, 2, 2], [2, 2, 0, 0, 1, 1]),
        (["a", "a", "b", "b"], [7, 7, 3, 3]),
        ([0, 0, 0, 0], [5, 5, 5, 5]),  # one cluster each
        ([-1, -1, 0, 0, 1, 1], [5, 5, 3, 3, -1, -1]),  # DBSCAN noise as a label
    ],
)
def test_identical_up_to_renaming_is_exactly_perfect(reference, labels):
    assert agreement(reference, labels) == PERFECT


@pytest.mark.parametrize("seed", range(5))
def test_identical_large_random_labeling_is_exactly_perfect(seed):
    # unequal cluster sizes: for these seeds sklearn's NMI gives 1.0000000000000002 (seeds 1, 3)
    # and H + H' - 2 MI gives -2.7e-15 (seeds 0, 1), so exactness needs care
    rng = np.random.default_rng(seed)
    reference = rng.integers(0, 7, size=1003)
    renamed = rng.permutation(7)[reference] * 10 - 3
    result = agreement(reference, renamed)
    assert result == PERFECT
    assert all(type(v) is float for v in result.values())


def test_one_point_moved_hand_example():
    # point 2 moves from class 0 to the other cluster: contingency [[2, 1], [0, 3]]
    reference = [0, 0, 0, 1, 1, 1]
    labels = [0, 0, 1, 1, 1, 1]
    result = agreement(reference, labels)
    assert result["misclassification"] == 1 / 6  # best matching keeps 2 + 3 of 6
    # entropies in bits: H(C) = 1; H(C') = H(2/6, 4/6) = log2(3) - 2/3 = 0.918296;
    # H(C, C') over cells 2/6, 1/6, 3/6 = log2(3)/2 + 2/3 = 1.459148;
    # MI = H(C) + H(C') - H(C, C') = log2(3)/2 - 1/3 = 0.459148
    h_c, h_c2 = 1.0, math.log2(3) - 2 / 3
    h_joint = -(2 / 6 * math.log2(2 / 6) + 1 / 6 * math.log2(1 / 6) + 3 / 6 * math.log2(3 / 6))
    assert h_joint == pytest.approx(math.log2(3) / 2 + 2 / 3, abs=1e-15)
    mi = h_c + h_c2 - h_joint
    vi = h_c + h_c2 - 2 * mi  # 000 eq. 5.5; works out to exactly 1 bit here
    assert vi == pytest.approx(1.0, abs=1e-15)
    assert result["variation_of_information"] == pytest.approx(1.0, abs=1e-12)
    # the same in nats from sklearn, converted
    assert mutual_info_score(reference, labels) / math.log(2) == pytest.approx(mi, abs=1e-12)
    assert result["nmi"] == pytest.approx(mi / ((h_c + h_c2) / 2), abs=1e-12)  # 0.478704
    # pairs: sum C(n_ij, 2) = 4, rows 6, columns 7, 15 pairs -> (4 - 2.8) / (6.5 - 2.8) = 12/37
    assert result["ari"] == pytest.approx(12 / 37, abs=1e-12)
    # F: class 0 best with cluster 0, 2*2/(3+2) = 0.8; class 1 with cluster 1, 2*3/(3+4) = 6/7
    assert result["f_measure"] == pytest.approx(0.5 * 0.8 + 0.5 * 6 / 7, abs=1e-12)  # 29/35


def test_different_numbers_of_clusters():
    # reference has 3 clusters, labels 2: one reference cluster stays unmatched
    fewer = agreement([0, 0, 1, 1, 2, 2], [0, 0, 0, 0, 1, 1])
    assert fewer["misclassification"] == 2 / 6
    # labels split each reference cluster in two: only one half of each is matched
    more = agreement([0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 2, 2, 3, 3])
    assert more["misclassification"] == 4 / 8
    # H(C'|C) = 1 bit (each class split evenly), H(C|C') = 0
    assert more["variation_of_information"] == pytest.approx(1.0, abs=1e-12)
    assert more["f_measure"] == pytest.approx(2 * 2 / (4 + 2), abs=1e-12)  # 2/3 for both classes
    assert 0.0 < more["nmi"] < 1.0


def test_noise_label_is_one_more_cluster():
    # DBSCAN marks objects 0 and 5 as noise (-1): they form one cluster of their own
    result = agreement([0, 0, 0, 1, 1, 1], [-1, 0, 0, 1, 1, -1])
    assert result["misclassification"] == 2 / 6
    # treating -1 as an ordinary label gives the same as any other name for it
    renamed = agreement([0, 0, 0, 1, 1, 1], [9, 0, 0, 1, 1, 9])
    assert result == renamed


def test_agreement_rejects_bad_input():
    with pytest.raises(ValueError, match="reference and labels must label the same objects"):
        agreement([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="labels must be a 1-D array"):
        agreement([0, 1], [[0, 1]])
    with pytest.raises(ValueError, match="reference must not be empty"):
        agreement([], [])


# ---------------------------------------------------------------- column privacy, summary, VD


@pytest.fixture
def unit_block():
    rng = np.random.default_rng(7)
    return normalize(rng.normal(size=(20000, 3)) * [1.0, 5.0, 0.1], "minmax")


def test_column_privacy_of_the_original_itself_is_exactly_zero(unit_block):
    p = column_privacy(unit_block, unit_block.copy())
    assert p.shape == (3,)
    assert (p == 0.0).all()


def test_column_privacy_ignores_a_constant_offset(unit_block):
    # it is a std, not an RMSE: a copy shifted by c counts as disclosed (only round-off remains)
    p = column_privacy(unit_block, unit_block + 0.3)
    assert p.max() < 1e-15


def test_column_privacy_of_gaussian_noise_is_its_std(unit_block):
    rng = np.random.default_rng(8)
    for s in (0.05, 0.2):
        p = column_privacy(unit_block, unit_block + rng.normal(0.0, s, size=unit_block.shape))
        np.testing.assert_allclose(p, s, rtol=0.05)


def test_column_privacy_uses_the_original_columns_range():
    original = np.array([[0.0, 10.0], [2.0, 20.0], [4.0, 30.0]])  # ranges 4 and 20
    estimate = original + np.array([[2.0, 10.0], [-2.0, -10.0], [0.0, 0.0]])
    # errors / range: [-0.5, 0.5, 0] in both columns; population std sqrt(0.5 / 3)
    np.testing.assert_allclose(column_privacy(original, estimate), [np.sqrt(1 / 6)] * 2, rtol=1e-15)


def test_column_privacy_constant_column_is_finite():
    original = np.column_stack([np.full(5, 3.0), np.arange(5.0)])
    p = column_privacy(original, original + [[0.5], [-0.5], [0.5], [-0.5], [0.0]])
    assert np.isfinite(p).all()
    assert p[0] == pytest.approx(np.std([0.5, -0.5, 0.5, -0.5, 0.0]), abs=1e-15)


def test_column_privacy_rejects_bad_shapes():
    with pytest.raises(ValueError, match="estimate must have the shape of original"):
        column_privacy(np.zeros((4, 2)), np.zeros((4, 3)))
    with pytest.raises(ValueError, match="original must be a 2-D array"):
        column_privacy(np.zeros(4), np.zeros(4))
    with pytest.raises(ValueError, match="estimate must hold only finite values"):
        column_privacy(np.zeros((2, 1)), np.array([[0.0], [np.nan]]))


def test_summary_is_min_and_mean():
    assert summary(np.array([0.1, 0.4, 0.25])) == {"min": 0.1, "mean": pytest.approx(0.25)}
    with pytest.raises(ValueError, match="p must be a non-empty 1-D array"):
        summary(np.array([]))


def test_vd():
    A = np.array([[3.0, 0.0], [0.0, 4.0]])
    assert vd(A, A) == 0.0
    assert vd(A, 2 * A) == 1.0
    assert vd(A, A + [[0.0, 0.0], [0.0, 5.0]]) == 1.0  # ||diff|| = 5, ||A|| = 5
    assert vd(np.zeros((2, 2)), np.zeros((2, 2))) == 0.0
    assert vd(np.zeros((2, 2)), np.eye(2)) == float("inf")


# ---------------------------------------------------------------- known input-output attack


@pytest.fixture(scope="module")
def correlated():
    rng = np.random.default_rng(0)
    X = normalize(rng.normal(size=(1000, 8)) @ rng.normal(size=(8, 8)), "minmax")
    return X, known_rows(1000, 50, random_state=1)  # 5% known, as 002 §7


def test_known_rows_are_seeded_distinct_and_sorted():
    a, b = known_rows(100, 10, random_state=4), known_rows(100, 10, random_state=4)
    np.testing.assert_array_equal(a, b)
    assert np.unique(a).size == 10 and (np.diff(a) > 0).all()
    with pytest.raises(ValueError, match="count must be between 1 and m"):
        known_rows(5, 6, random_state=0)


def test_known_io_breaks_plain_exactly(correlated):
    X, known = correlated
    p = column_privacy(X, known_io(X, disguise("none", X), known))
    assert p.max() < 1e-8  # measured 3.4e-16


def test_known_io_breaks_square_random_projection(correlated):
    X, known = correlated
    Y = disguise("drbt", X, k=8)  # RP1, d x d Gaussian: invertible
    assert column_privacy(X, known_io(X, Y, known)).max() < 1e-6  # measured 3.4e-15


def test_known_io_only_partly_breaks_reducing_projection(correlated):
    X, known = correlated
    Y = disguise("drbt", X, k=3)
    attacked = summary(column_privacy(X, known_io(X, Y, known)))
    know_nothing = summary(column_privacy(X, np.tile(X.mean(axis=0), (X.shape[0], 1))))
    # measured: attacked mean 0.0957 (min 0.021), know-nothing mean 0.158
    assert attacked["mean"] > 0.05
    assert attacked["mean"] < know_nothing["mean"] - 0.03


def test_known_io_needs_rows_and_valid_indices(correlated):
    X, _ = correlated
    with pytest.raises(ValueError, match="disguised must have 1000 rows"):
        known_io(X, X[:10], [0, 1])
    with pytest.raises(ValueError, match="known holds indices outside"):
        known_io(X, X, [0, 1000])
    with pytest.raises(ValueError, match="known must not repeat a row"):
        known_io(X, X, [3, 3])


# ---------------------------------------------------------------- ICA attack


@pytest.fixture(scope="module")
def sources():
    """Three independent, strongly non-Gaussian columns on [0, 1]: uniform, exponential, 70/30 bimodal."""
    rng = np.random.default_rng(5)
    m = 5000
    bimodal = np.where(rng.uniform(size=m) < 0.7, rng.normal(0.0, 0.3, m), rng.normal(3.0, 0.3, m))
    S = normalize(np.column_stack([rng.uniform(size=m), rng.exponential(size=m), bimodal]), "minmax")
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return S, Q


def test_ica_attack_is_seeded_and_repeatable(sources):
    S, Q = sources
    a = ica_attack(S, S @ Q, random_state=7)
    b = ica_attack(S, S @ Q, random_state=7)
    np.testing.assert_array_equal(a, b)
    assert a.shape == S.shape


def test_ica_attack_recovers_rotated_independent_sources(sources):
    S, Q = sources
    p = column_privacy(S, ica_attack(S, S @ Q, random_state=0))
    # measured [0.0050, 0.0026, 0.0032]; the asymmetric exponential and bimodal columns
    # are matched with the right sign by their histograms whatever the seed
    assert p.min() < 0.05
    assert p[1] < 0.05 and p[2] < 0.05


def test_ica_attack_does_worse_when_drbt_reduces_dimension(sources):
    S, _ = sources
    square = summary(column_privacy(S, ica_attack(S, disguise("drbt", S, seed=4, k=3), random_state=0)))
    reduced = summary(column_privacy(S, ica_attack(S, disguise("drbt", S, seed=4, k=2), random_state=0)))
    # measured mean privacy: k = 3 -> 0.0036, k = 2 -> 0.158
    assert square["mean"] < 0.01
    assert reduced["mean"] > 0.1
    assert reduced["mean"] > 10 * square["mean"]


def test_ica_attack_rejects_bad_bins(sources):
    S, Q = sources
    with pytest.raises(ValueError, match="bins must be an integer >= 2"):
        ica_attack(S, S @ Q, random_state=0, bins=1)


# ---------------------------------------------------------------- multilateration


@pytest.fixture(scope="module")
def points():
    return np.random.default_rng(2).uniform(size=(200, 4))


def test_multilateration_exact_distances_recover_every_object(points):
    # noise-free: n + 1 = 5 references and exact Euclidean distances locate all to 1e-6
    references = np.arange(5)
    estimate = multilateration(pdist(points), references, points[references])
    assert np.abs(estimate - points).max() < 1e-6  # measured 1.6e-15
    np.testing.assert_array_equal(estimate[references], points[references])
    rho = multilateration_privacy(points, estimate, references)
    assert rho.shape == (195,) and rho.max() < 1e-6


def test_multilateration_on_osbr_distances_of_the_party(points):
    # osbr sends the party's squared distances: their root is exact, so it leaks everything
    sqdist = disguise("osbr", points)
    references = [10, 20, 30, 40, 50, 60]
    estimate = multilateration(squareform(np.sqrt(sqdist)), references, points[references])
    assert np.abs(estimate - points).max() < 1e-6


def test_multilateration_on_drbt_distances_is_far_off(points):
    references = np.arange(5)
    Y = disguise("drbt", points, seed=4, k=2)
    estimate = multilateration(pdist(Y), references, points[references])
    error = np.linalg.norm(estimate - points, axis=1)[5:]
    rho = multilateration_privacy(points, estimate, references)
    # measured: median error 0.52, mean rho 0.74
    assert np.median(error) > 1e-3
    assert np.mean(error) > 0.1
    assert rho.mean() > 0.1


def test_multilateration_thesis_example():
    # 000 §4.4.2.3: r = (1, 3), (2, -3), (-2, 3), distances 2, 4.12, 3.61 -> x near (1, 1)
    refs = np.array([[1.0, 3.0], [2.0, -3.0], [-2.0, 3.0]])
    D = np.zeros((4, 4))
    D[:3, :3] = squareform(pdist(refs))
    D[3, :3] = D[:3, 3] = [2.0, 4.12, 3.61]
    estimate = multilateration(D, [0, 1, 2], refs)
    np.testing.assert_allclose(estimate[3], [1.0, 1.0], atol=0.01)  # the thesis reports (0.9977, 0.9913)


def test_multilateration_privacy_hand_example():
    original = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    estimate = original.copy()
    estimate[3] = [1.0, 1.5]
    # object 3: error 0.5; distances to the three references all sqrt(2)
    rho = multilateration_privacy(original, estimate, [0, 1, 2])
    np.testing.assert_allclose(rho, [0.5 / np.sqrt(2)], rtol=1e-15)


def test_multilateration_rejects_bad_input(points):
    with pytest.raises(ValueError, match="at least n \\+ 1 = 5 objects"):
        multilateration(pdist(points), [0, 1, 2, 3], points[:4])
    with pytest.raises(ValueError, match="reference_points must have 5 rows"):
        multilateration(pdist(points), [0, 1, 2, 3, 4], points[:4])
    with pytest.raises(ValueError, match="condensed matrix must have m\\(m-1\\)/2 entries"):
        multilateration(np.ones(4), [0, 1], np.zeros((2, 1)))


# ---------------------------------------------------------------- stress (004 eq. 6)


def test_stress_equal_is_zero_and_doubled_is_one():
    d = pdist(np.random.default_rng(1).normal(size=(30, 3)))
    assert stress(d, d.copy()) == 0.0
    assert stress(d, 2 * d) == 1.0


def test_stress_hand_example():
    # sqrt(((1-1)^2 + (2-2)^2 + (3-2)^2) / (1 + 4 + 4)) = sqrt(1/9)
    assert stress(np.array([1.0, 2.0, 2.0]), np.array([1.0, 2.0, 3.0])) == pytest.approx(1 / 3, abs=1e-15)
    with pytest.raises(ValueError, match="d and dhat must have the same shape"):
        stress(np.ones(3), np.ones(2))
