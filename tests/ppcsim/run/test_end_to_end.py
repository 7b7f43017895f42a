"""Whole runs: real party processes over real gRPC, checked against scikit-learn and the cost model."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from scipy.spatial.distance import pdist
from sklearn.cluster import AgglomerativeClustering, KMeans
from sklearn.datasets import load_wine

from conftest import (
    ROOT,
    SHOP,
    WINE_LABELLED,
    assert_same_partition,
    blobs,
    kmeans,
    once_per_run,
    party_table,
    read_report,
    run_ppc,
    scenario_toml,
    write_scenario,
)
from conftest import WINE as WINE_COLUMNS
from ppcsim.scenario.load import party_seed

WINE = load_wine()
NAMES = list(WINE.feature_names)


def zscore(X):
    return (X - X.mean(0)) / X.std(0, ddof=1)


def labels_csv(out):
    with open(out / "labels.csv") as fh:
        rows = list(csv.DictReader(fh))
    return [r["id"] for r in rows], np.array([int(r["cluster"]) for r in rows])


@pytest.fixture(scope="session")
def wine_run(tmp_path_factory):
    """One run on wine: a drbt party (RP1), a drbt party (RP2), a plain party; made once per test run, even when
    the tests that read it run on several workers (``once_per_run``)."""
    def make(tmp):
        scenario = write_scenario(tmp, scenario_toml(
            "wine-e2e", [party_table("lab", WINE_COLUMNS[:5], "drbt", k=3),
                         party_table("winery", WINE_COLUMNS[5:9], "drbt", projection="sparse", k=2),
                         party_table("shop", SHOP)],
            seed=7, data=WINE_LABELLED, clustering=kmeans(3)))
        return run_ppc("run", scenario, "--out", tmp / "out")

    tmp, proc = once_per_run(tmp_path_factory, "wine-e2e", make)
    assert proc.returncode == 0, proc.stderr
    return tmp / "out", proc


def test_report_has_every_section(wine_run):
    out, _ = wine_run
    report = read_report(out)
    assert report["scenario"] == "wine-e2e" and report["seed"] == 7 and report["state"] == "done"
    assert [p["name"] for p in report["parties"]] == ["lab", "winery", "shop"]
    assert [p["output_dims"] for p in report["parties"]] == [3, 2, 3]
    assert [p["rows"] for p in report["parties"]] == [178, 178, 178]
    assert report["join"] == {"rows_joined": 178, "dropped": {"lab": 0, "winery": 0, "shop": 0}}
    assert report["clustering"]["algorithm"] == "kmeans" and sum(report["clustering"]["sizes"]) == 178
    assert set(report["timing"]) >= {"start", "total", "coordinator"}
    # the party seeds are the observer's, derived by name; the coordinator's part holds none
    seeds = report["observer"]["party_seeds"]
    assert list(seeds) == ["lab", "winery", "shop"] and len(set(seeds.values())) == 3
    assert seeds == {name: party_seed(7, name) for name in seeds}  # by name, so a run repeats from its report
    assert all("seed" not in p for p in report["parties"])
    assert report["security"]["ids"] == "pseudonymous"


def test_payload_equals_the_papers_prediction(wine_run):
    """DRBT: m * k_j * 8 bytes for float64 (004 §5.5); none: m * d_j * 8."""
    report = read_report(wine_run[0])
    expected = {"lab": 178 * 3 * 8, "winery": 178 * 2 * 8, "shop": 178 * 3 * 8}
    for p in report["parties"]:
        assert p["bytes"]["predicted"] == expected[p["name"]]
        assert p["bytes"]["payload"] == expected[p["name"]]
        assert p["bytes"]["serialized"] > p["bytes"]["payload"]


def test_ledger_counts_each_message_once(wine_run):
    report = read_report(wine_run[0])
    comm = report["communication"]
    ledger = comm["ledger"]
    for direction in ("up", "down"):
        mine = [e for e in ledger if e["direction"] == direction]
        assert comm["totals"][direction]["messages"] == len(mine)
        assert comm["totals"][direction]["serialized"] == sum(e["serialized"] for e in mine)
        assert comm["totals"][direction]["payload"] == sum(e["payload"] for e in mine)
    for p in report["parties"]:
        up = [e for e in ledger if e["party"] == p["name"] and e["direction"] == "up"]
        assert sum(e["payload"] for e in up) == p["bytes"]["payload"]
        assert sum(e["serialized"] for e in up) == p["bytes"]["serialized"]
        # Join, then Upload (header + ids + chunks), then GetResult's request
        assert [e["rpc"] for e in up][0] == "Join" and [e["rpc"] for e in up][-1] == "GetResult"
    # the downward payload is the labels: 178 int32 per party
    assert comm["totals"]["down"]["payload"] == 3 * 178 * 4


def test_sent_files_hold_exactly_what_was_sent(wine_run):
    out, _ = wine_run
    shop = np.load(out / "sent" / "shop.npz")
    assert sorted(shop.files) == ["data", "ids"]
    # the coordinator received 16-byte pseudonyms of the ids, never the ids themselves
    pseudonyms = shop["ids"].tolist()
    assert len(set(pseudonyms)) == 178 and all(len(i) == 32 and int(i, 16) >= 0 for i in pseudonyms)
    assert not set(pseudonyms) & {str(i) for i in range(178)}
    cols = [NAMES.index(c) for c in ("color_intensity", "hue", "proline")]
    np.testing.assert_allclose(shop["data"], zscore(WINE.data[:, cols]), rtol=1e-12)
    lab = np.load(out / "sent" / "lab.npz")
    assert lab["data"].shape == (178, 3)
    ids, labels = labels_csv(out)
    assert ids == [str(i) for i in range(178)] and labels.min() == 0 and labels.max() == 2


def test_summary_table_is_printed(wine_run):
    _, proc = wine_run
    assert "drbt/gaussian" in proc.stderr and "drbt/sparse" in proc.stderr
    assert "join: 178 records in common" in proc.stderr
    lines = proc.stderr.splitlines()
    uploads = [i for i, line in enumerate(lines) if " uploaded (" in line]
    clustering = lines.index("ppc: all uploads in; joining them and clustering (kmeans, 3 clusters)")
    assert len(uploads) == 3 and max(uploads) < clustering < lines.index("ppc: clustered 178 records; parties fetching results")
    assert "Traceback" not in proc.stderr


def test_none_clusters_exactly_like_sklearn_on_joined_data(tmp_path):
    scenario = write_scenario(tmp_path, scenario_toml(
        "plain", [party_table("a", ["alcohol", "malic_acid", "ash", "flavanoids"]),
                  party_table("b", ["hue", "proline", "color_intensity"], normalize="minmax")],
        seed=3, clustering=kmeans(4)))
    proc = run_ppc("run", scenario, "--out", tmp_path / "out", "--quiet")
    assert proc.returncode == 0, proc.stderr
    a = zscore(WINE.data[:, [NAMES.index(c) for c in ("alcohol", "malic_acid", "ash", "flavanoids")]])
    b = WINE.data[:, [NAMES.index(c) for c in ("hue", "proline", "color_intensity")]]
    b = (b - b.min(0)) / (b.max(0) - b.min(0))
    seed = read_report(tmp_path / "out")["clustering"]["seed"]  # the coordinator's, drawn from the scenario's
    expected = KMeans(n_clusters=4, n_init=10, random_state=seed).fit_predict(np.hstack([a, b]))
    _, labels = labels_csv(tmp_path / "out")
    np.testing.assert_array_equal(labels, expected)


def test_osbr_over_csv_parties_matches_centralised_clustering(tmp_path):
    """Two parties with shuffled ids send squared distances; the coordinator's
    combined matrix is the Euclidean distance of the joined normalised data,
    so agglomerative clustering equals sklearn's on the centralised data."""
    rng = np.random.default_rng(0)
    X = WINE.data[:60]
    ids = [f"w{i:03d}" for i in range(60)]
    for name, cols in (("a", [0, 1, 2, 3]), ("b", [9, 10, 12])):
        order = rng.permutation(60)
        with open(tmp_path / f"{name}.csv", "w") as fh:
            fh.write("key," + ",".join(f"c{c}" for c in cols) + "\n")
            for i in order:
                fh.write(ids[i] + "," + ",".join(repr(float(X[i, c])) for c in cols) + "\n")
    scenario = write_scenario(tmp_path, scenario_toml(
        "osbr-csv", [party_table("a", ["c0", "c1", "c2", "c3"], "osbr", data="a.csv", id_column="key"),
                     party_table("b", ["c9", "c10", "c12"], "osbr", data="b.csv", id_column="key")],
        seed=1, data=None, clustering={"algorithm": "agglomerative", "linkage": "average", "n_clusters": 3}))
    out = tmp_path / "out"
    proc = run_ppc("run", scenario, "--out", out, "--quiet")
    assert proc.returncode == 0, proc.stderr
    report = read_report(out)
    m = 60
    for p in report["parties"]:
        assert p["bytes"]["predicted"] == p["bytes"]["payload"] == m * (m - 1) // 2 * 8
        assert p["output_dims"] == m * (m - 1) // 2
    got_ids, labels = labels_csv(out)
    rows = [ids.index(i) for i in got_ids]  # the joined order is party a's file order
    joined = np.hstack([zscore(X[:, [0, 1, 2, 3]]), zscore(X[:, [9, 10, 12]])])[rows]
    expected = AgglomerativeClustering(n_clusters=3, linkage="average", metric="precomputed").fit_predict(
        np.sqrt(((joined[:, None] - joined[None]) ** 2).sum(-1))
    )
    assert_same_partition(labels, expected)
    sent = np.load(out / "sent" / "a.npz")
    assert sent["sqdist"].shape == (m * (m - 1) // 2,)
    with open(tmp_path / "a.csv") as fh:
        own = [ids.index(line.split(",")[0]) for line in fh.read().splitlines()[1:]]  # a's rows, as it sent them
    np.testing.assert_allclose(sent["sqdist"], pdist(zscore(X[own][:, [0, 1, 2, 3]]), "sqeuclidean"), rtol=1e-10)


@pytest.mark.slow
def test_50000_rows_four_parties_upload_in_chunks(tmp_path):
    """Each party sends 50,000 x 12 float64 = 4.8 MB, more than gRPC's 4 MiB
    default message limit, in chunks and without raising any limit."""
    parties = [party_table(f"p{j}", [f"x{c}" for c in range(16 * j, 16 * j + 16)], "drbt",
                           projection="gaussian" if j % 2 == 0 else "sparse", k=12) for j in range(4)]
    scenario = write_scenario(tmp_path, name="big", parties=parties, seed=11, data=blobs(50000, 64, 5),
                              clustering=kmeans(5, n_init=1))
    out = tmp_path / "out"
    proc = run_ppc("run", scenario, "--out", out, "--no-eval", timeout=400)  # the upload is the subject here
    assert proc.returncode == 0, proc.stderr
    report = read_report(out)
    for p in report["parties"]:
        assert p["bytes"]["predicted"] == p["bytes"]["payload"] == 50000 * 12 * 8
    ledger = report["communication"]["ledger"]
    assert max(e["serialized"] for e in ledger) < 4 * 1024 * 1024
    chunks = [e for e in ledger if e["rpc"] == "Upload" and e["payload"] > 0]
    assert len(chunks) >= 4 * 5
    assert report["join"]["rows_joined"] == 50000


def test_osbr_float32_transfer_halves_the_bytes_and_barely_moves_stress(tmp_path):
    text = (ROOT / "scenarios" / "wine-osbr.toml").read_text().replace('method = "osbr"', 'method = "osbr"\ndtype = "float32"')
    path = write_scenario(tmp_path, text)
    proc = run_ppc("run", str(path), "--out", str(tmp_path / "out"), "--no-attacks")
    assert proc.returncode == 0, proc.stderr
    report = read_report(tmp_path / "out")
    m = 178
    for p in report["parties"]:
        assert p["bytes"]["predicted"] == p["bytes"]["payload"] == m * (m - 1) // 2 * 4  # l = 4 bytes (004 §4.5)
    assert np.load(tmp_path / "out" / "sent" / "lab.npz")["sqdist"].dtype == np.float32
    assert 0 < report["utility"]["stress"] < 1e-6  # float32 keeps ~7 significant digits of each distance
    assert report["utility"]["vs_original"]["ari"] == 1.0
