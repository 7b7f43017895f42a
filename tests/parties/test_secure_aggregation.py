"""Secure-aggregation k-means: fixed point, masks, rounds, accounting, the arbiter's view, whole sessions in one
process. (Real party processes: tests/ppcsim/run/test_secure_aggregation_runs.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from sklearn.cluster import KMeans

from conftest import WINE_SECURE_AGGREGATION as WINE
from conftest import (
    blobs,
    kmeans,
    scenario_toml,
    split_x,
    write_scenario,
)
from coordinator.protocols import secagg
from parties.errors import PartyError
from parties.keys import KeyPair
from parties.secagg import (
    apply_masks,
    counter_block,
    decode,
    distance_messages,
    encode,
    mask,
    pair_masks,
    partial_distances,
    update_centres,
)
from ppcsim.run.inprocess import simulate_secure
from ppcsim.run.observers.secure_aggregation import evaluate_secure
from ppcsim.scenario.load import ScenarioError, load_scenario

# -- fixed point and masks ------------------------------------------------------------------------

def test_fixed_point_sum_of_three_parties_within_three_half_units():
    rng = np.random.default_rng(0)
    parts = [rng.uniform(0, 50, size=10_000) for _ in range(3)]
    for bits in (16, 32):
        total = sum((encode(p, bits, 3) for p in parts), np.zeros(10_000, dtype=np.uint64))
        err = np.abs(decode(total, bits) - sum(parts)).max()
        assert err <= 3 * 2.0 ** -(bits + 1)
        assert err > 0  # the scale does cost precision; a coarser one costs more
    assert np.abs(decode(encode(np.array([-1.5]), 32), 32) - [-1.5]).max() == 0  # negatives wrap and come back


def test_fixed_point_overflow_is_refused_with_the_field_to_change():
    with pytest.raises(PartyError, match="scale_bits"):
        encode(np.array([2.0**30]), 32, parties=3)


def test_mask_is_aes_256_ctr_keystream_from_the_documented_counter_block():
    secret = bytes(range(32))
    got = mask(secret, 5, 6).view(np.uint8).tobytes()
    # independently: AES-256 of the counter blocks (round 5 big-endian, then a 64-bit block counter)
    ecb = Cipher(algorithms.AES(secret), modes.ECB()).encryptor()
    blocks = b"".join((5).to_bytes(8, "big") + i.to_bytes(8, "big") for i in range(3))
    assert got == ecb.update(blocks) + ecb.finalize()
    assert counter_block(5) == (5).to_bytes(8, "big") + bytes(8)
    assert not np.array_equal(mask(secret, 5, 6), mask(secret, 6, 6))  # a fresh keystream every round


def test_masks_of_three_parties_cancel_exactly_and_hide_each_post():
    names = ["a", "b", "c"]
    pairs = {n: KeyPair.generate() for n in names}
    public = {n: p.public for n, p in pairs.items()}
    rng = np.random.default_rng(1)
    values = {n: encode(rng.uniform(0, 4, size=(500, 4)), 32, 3).reshape(-1) for n in names}
    posts = {n: apply_masks(values[n].copy(), pair_masks(pairs[n], public, names, "s", n), 3) for n in names}
    total = sum(posts.values(), np.zeros(2000, dtype=np.uint64))
    assert np.array_equal(total, sum(values.values(), np.zeros(2000, dtype=np.uint64)))
    # one post alone: no visible relation to the values it carries
    post = posts["b"].astype(np.float64) / 2.0**64
    assert abs(np.corrcoef(post, values["b"].astype(np.float64))[0, 1]) < 0.1
    # the two ends of a pair derive the same secret; another session or pair another one
    ab = pair_masks(pairs["a"], public, names, "s", "a")[0]
    ba = pair_masks(pairs["b"], public, names, "s", "b")[0]
    assert ab.secret == ba.secret and ab.sign == 1 and ba.sign == -1
    assert pair_masks(pairs["a"], public, names, "t", "a")[0].secret != ab.secret


def test_partial_distances_and_centre_update_match_direct_computation():
    rng = np.random.default_rng(2)
    X, C = rng.normal(size=(50, 3)), rng.normal(size=(4, 3))
    assert np.allclose(partial_distances(X, C), ((X[:, None] - C[None]) ** 2).sum(axis=2))
    labels = np.array([0, 1] * 25)  # clusters 2 and 3 empty: they keep their centres
    new = update_centres(X, labels, C)
    assert np.allclose(new[0], X[labels == 0].mean(axis=0)) and np.array_equal(new[2:], C[2:])


# -- whole sessions in one process ----------------------------------------------------------------

@pytest.fixture(scope="module")
def wine(tmp_path_factory):
    path = write_scenario(tmp_path_factory.mktemp("secagg"), WINE)
    scenario = load_scenario(path)
    return scenario, *simulate_secure(scenario)


def test_labels_equal_scikit_learn_kmeans_from_the_same_records(wine):
    scenario, session, results, own = wine
    X = np.hstack([own[p.name].X for p in scenario.parties])  # every record joins, in the same order
    init = session.arbiter.init
    reference = KMeans(n_clusters=3, init=X[init], n_init=1, tol=0.0, algorithm="lloyd").fit(X)
    assert np.array_equal(session.outcome.labels, reference.labels_)
    assert all(np.array_equal(r.labels, reference.labels_) for r in results.values())
    # each party's final centre block is its part of scikit-learn's centres
    start = 0
    for p in scenario.parties:
        d = len(p.columns)
        assert np.allclose(results[p.name].centres, reference.cluster_centers_[:, start : start + d])
        start += d


def test_payload_equals_the_prediction_and_rounds_are_counted(wine):
    scenario, session, results, _ = wine
    acc = secagg.accounting(session)
    m, k, rounds = 178, 3, acc["rounds"]
    assert rounds == len(acc["per_round"]) == results["lab"].rounds > 2 and acc["converged"]
    for entry in acc["by_party"].values():
        assert entry["payload"]["up"] == rounds * m * k * 8 == entry["predicted"]["up"]
        assert entry["payload"]["down"] == (m + rounds * m + m) * 4 == entry["predicted"]["down"]
        assert entry["key_exchange_serialized"] > 3 * 32
    assert all(r["up_payload"] == 3 * m * k * 8 and r["down_payload"] == 3 * m * 4 for r in acc["per_round"])
    assert acc["per_round"][-1]["changed"] == 0


def test_observer_measures_equal_labels_fixed_point_error_and_masked_posts(wine):
    scenario, session, _, own = wine
    measured = evaluate_secure(scenario, session, None, own)
    u, p = measured["utility"], measured["privacy"]
    assert u["labels_equal_same_init"] and u["vs_same_init"]["ari"] == 1.0
    assert 0 < u["fixed_point"]["max_abs_error"] <= u["fixed_point"]["bound"] + 1e-12
    for entry in p["posts"]["by_party"].values():
        # 534 values a post: a correlation's spread is about 0.04
        assert abs(entry["correlation_with_partial_distances"]) < 0.25 and entry["uniformity_ks_pvalue"] > 1e-6
    assert "skipped" in p["multilateration"]  # 3 centres cannot locate records of 13 columns


def test_unmasked_control_gives_the_same_labels_and_is_refused_by_a_real_session(wine, tmp_path):
    scenario, session, _, _ = wine
    control, _, _ = simulate_secure(scenario, masked=False)
    assert np.array_equal(control.outcome.labels, session.outcome.labels)
    scenario2 = load_scenario(write_scenario(tmp_path, WINE.replace("wine-secure", "wine-secure-2")))
    with pytest.raises(Exception, match="unmasked"):
        _unmasked_post(scenario2)


def _unmasked_post(scenario):
    """A session that does not allow unmasked posts, given one."""
    from dataclasses import replace

    from coordinator import handlers
    from coordinator.session import Session
    from coordinator.wire.serde import upload_stream
    from parties.client import upload_messages
    from protos.ppcsim.v1 import session_pb2

    spec = replace(scenario.session_spec(), ids="plain")
    session = Session(spec)
    for p in scenario.parties:
        handlers.join(session, session_pb2.JoinRequest(session=spec.name, party=p.name,
                                                       public_key=KeyPair.generate().public))
    for p in scenario.parties:
        stream = upload_stream(upload_messages(spec.name, p.name, "secure_aggregation", {}, np.arange(178), [], 1,
                                                 1 << 20))
        handlers.upload(session, next(stream), stream)
    for p in scenario.parties:
        session.confirmations.keep(p.name, {})
    values = np.zeros(178 * 3, dtype=np.uint64)
    try:
        handlers.post_distances(session, distance_messages(spec.name, "lab", 0, values, (178, 3), False, 1 << 20))
    finally:
        session.fail("test over")


def test_multilateration_locates_every_record_when_k_exceeds_the_columns(tmp_path):
    text = scenario_toml("blobs-secure", split_x(1, 1), seed=3, data=blobs(300, 2, 5),
                         clustering=kmeans(5, "secure_aggregation", reveal="distances"))
    scenario = load_scenario(write_scenario(tmp_path, text))
    session, _, own = simulate_secure(scenario)
    attack = evaluate_secure(scenario, session, None, own)["privacy"]["multilateration"]
    assert attack["records"] == 295 and max(attack["columns"].values()) < 1e-4 and attack["vd"] < 1e-4  # round 0's distances give every record away


def test_a_party_naming_a_disguise_or_another_algorithm_is_refused(tmp_path):
    bad = WINE.replace('name = "winery"\n', 'name = "winery"\nmethod = "drbt"\n').replace(
        'algorithm = "kmeans"', 'algorithm = "dbscan"')
    with pytest.raises(ScenarioError) as err:
        load_scenario(write_scenario(tmp_path, bad))
    text = str(err.value)
    assert "[[parties]] 'winery'" in text and "remove 'method'" in text and "'algorithm' must be \"kmeans\"" in text
    with pytest.raises(ScenarioError, match="scale_bits"):
        load_scenario(write_scenario(tmp_path, WINE + "scale_bits = 60\n"))


def test_kmeans_plus_plus_seeding_through_secure_sums(tmp_path):
    text = scenario_toml("blobs-plusplus", split_x(2, 2), seed=4, data=blobs(400, 4, 4, cluster_std=0.3),
                         clustering=kmeans(4, "secure_aggregation", init="k-means++", reveal="distances"))
    scenario = load_scenario(write_scenario(tmp_path, text))
    session, results, own = simulate_secure(scenario)
    acc = secagg.accounting(session)
    init = np.array(acc["init"])
    assert acc["seeding_steps"] == 3 and len(set(init.tolist())) == 4 and len(acc["per_seeding_step"]) == 3
    X = np.hstack([own[p.name].X for p in scenario.parties])
    reference = KMeans(n_clusters=4, init=X[init], n_init=1, tol=0.0, algorithm="lloyd").fit(X)
    assert np.array_equal(session.outcome.labels, reference.labels_)
    # D^2 sampling put one initial centre in each of the four well separated blobs
    from parties.data import blob_labels
    truth = blob_labels(400, 4, scenario.parties[0].source_options["seed"])
    assert sorted(truth[init].tolist()) == [0, 1, 2, 3]
    m, rounds = 400, acc["rounds"]
    for entry in acc["by_party"].values():
        assert entry["exact"] and entry["payload"]["up"] == (rounds * 4 + 3) * m * 8


def test_max_iter_and_tol_stop_the_rounds_where_documented(wine, tmp_path):
    scenario, _, _, own = wine
    X = np.hstack([own[p.name].X for p in scenario.parties])
    short = load_scenario(write_scenario(tmp_path, WINE.replace("n_clusters = 3", "n_clusters = 3\nmax_iter = 2"),
                                         "short.toml"))
    session, _, _ = simulate_secure(short)
    acc = secagg.accounting(session)
    assert acc["rounds"] == 3 and not acc["converged"]  # rounds 0, 1, 2: centres after 2 updates
    reference = KMeans(n_clusters=3, init=X[session.arbiter.init], n_init=1, max_iter=2, tol=0.0,
                       algorithm="lloyd").fit(X)
    assert np.array_equal(session.outcome.labels, reference.labels_)
    loose = load_scenario(write_scenario(tmp_path, WINE.replace("n_clusters = 3", "n_clusters = 3\ntol = 0.1"),
                                         "loose.toml"))
    session, _, _ = simulate_secure(loose)
    changed = [r["changed"] for r in secagg.accounting(session)["per_round"]]
    assert changed[-1] <= 0.1 * 178 and all(c > 0.1 * 178 for c in changed[1:-1])


def test_an_in_process_sweep_runs_secure_aggregation(tmp_path):
    from ppcsim.evaluate.settings import Settings
    from ppcsim.run.sweep import sweep

    path = write_scenario(tmp_path, WINE + "[sweep]\nseed = [1, 2]\n")
    import io
    rows = sweep(path, tmp_path / "out", settings=Settings(attacks=False), in_process=True, log=io.StringIO())
    assert [r["param_seed"] for r in rows] == [1, 2]
    assert all(r["rounds"] > 2 and r["labels_equal_same_init"] for r in rows)
    assert all(r["bytes_payload"] == r["bytes_predicted"] == 3 * r["rounds"] * 178 * 3 * 8 for r in rows)


def test_masks_drawn_into_a_reused_buffer_equal_fresh_ones():
    names = ["a", "b", "c"]
    pairs = {n: KeyPair.generate() for n in names}
    masks = pair_masks(pairs["b"], {n: p.public for n, p in pairs.items()}, names, "s", "b")
    values = np.arange(40, dtype=np.uint64)
    fresh = values - mask(masks[0].secret, 7, 40) + mask(masks[1].secret, 7, 40)  # b: after a, before c
    scratch = np.full(100, 12345, dtype=np.uint64)
    assert np.array_equal(apply_masks(values.copy(), masks, 7, scratch), fresh)
    assert np.array_equal(apply_masks(values.copy(), masks, 7), fresh)
