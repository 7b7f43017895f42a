"""ppcsim.simulate, the Python API: every attribute of a Run against values computed apart, and an in-process run
against a run of real party processes (same labels, same payload).

Test vectors: 004 Table 1 split by column over three parties; eq. 11 (its dissimilarity matrix).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import pdist

import ppcsim
from ppcsim.api import Run, from_dict, from_file, from_toml, load
from ppcsim.reproduce.paper004 import EQ11, TABLE1, TABLE1_COLUMNS, TABLE1_IDS
from ppcsim.scenario.load import ScenarioError


@pytest.fixture(scope="module")
def table1(tmp_path_factory):
    folder = tmp_path_factory.mktemp("table1")
    rows = [",".join(["id", *TABLE1_COLUMNS])]
    rows += [",".join([str(i), *(f"{v:g}" for v in r)]) for i, r in zip(TABLE1_IDS, TABLE1)]
    (folder / "table1.csv").write_text("\n".join(rows) + "\n")
    return folder


def scenario(method: str, **params) -> dict:
    """004 Table 1 split by column: two columns a party; relative data path (resolved against ``base``)."""
    parties = [{"name": name, "columns": TABLE1_COLUMNS[2 * i: 2 * i + 2], "method": method, **params}
               for i, name in enumerate(("clinic", "lab", "insurer"))]
    return {"name": f"table1-{method}", "seed": 3, "data": {"source": "table1.csv", "id_column": "id"},
            "parties": parties, "clustering": {"algorithm": "agglomerative" if method == "osbr" else "kmeans",
                                               "n_clusters": 2}}


def test_osbr_run_gives_eq11_and_no_clustered_matrix(table1):
    run = ppcsim.simulate(scenario("osbr"), base=table1, attacks=False)
    assert isinstance(run, Run) and run.out is None
    assert run.scenario.name == "table1-osbr" and [p.name for p in run.scenario.parties] == ["clinic", "lab", "insurer"]
    assert run.report["observer"]["seed"] == 3
    assert run.clustered is None  # dissimilarities are clustered as they are
    assert sorted(run.sent) == ["clinic", "insurer", "lab"]
    # each party's squared distances over its own columns: their sum is the whole table's, whose root is eq. 11
    total = sum(run.sent[p]["sqdist"] for p in run.sent)
    assert np.sqrt(total) == pytest.approx(EQ11, abs=5e-5)
    # what the coordinator saw: 16-byte pseudonyms in hexadecimal, never the ids; the ids stay with the observer
    assert all(len(i) == 32 for i in run.coordinator_ids)
    assert not set(map(str, TABLE1_IDS)) & set(run.coordinator_ids.tolist())
    assert sorted(run.ids.astype(int).tolist()) == sorted(TABLE1_IDS)
    assert run.labels.shape == (5,) and set(run.labels.tolist()) == {0, 1}
    assert run.report["join"]["rows_joined"] == 5
    assert run.report["privacy"] == {"skipped": "--no-attacks"}
    assert run.columns == {"clinic": ["age", "weight"], "lab": ["h_rate", "int_def"], "insurer": ["QRS", "PR_int"]}
    # each party's block z-scored with ddof = 1 (004 §4), in its own row order (the file's)
    z = (TABLE1 - TABLE1.mean(0)) / TABLE1.std(0, ddof=1)
    assert np.allclose(np.hstack([run.original[p] for p in ("clinic", "lab", "insurer")]), z)
    assert np.allclose(pdist(run.original["lab"]) ** 2, run.sent["lab"]["sqdist"])
    # the observer's reference: the joined original columns in the join's order, clustered alike
    order = [TABLE1_IDS.index(int(i)) for i in run.ids]
    assert np.allclose(run.joined, z[order])
    assert run.plain_labels.shape == (5,)
    assert run.report["utility"]["vs_original"]["ari"] == pytest.approx(1.0)  # distances kept exactly


def test_feature_run_gives_what_was_clustered_and_the_attacks(table1):
    run = ppcsim.simulate(scenario("none"), base=table1)
    order = [TABLE1_IDS.index(int(i)) for i in run.ids]
    z = (TABLE1 - TABLE1.mean(0)) / TABLE1.std(0, ddof=1)
    for p in ("clinic", "lab", "insurer"):  # 'none' sends the normalised block itself
        assert np.array_equal(run.sent[p]["data"], run.original[p])
    # the coordinator clustered the joined blocks, in the join's order
    assert np.allclose(run.clustered, z[order])
    assert run.labels.tolist() == run.plain_labels.tolist()
    # an attacker who knows 3 of the 5 records in both forms recovers the others exactly from plain columns
    known = run.attacks["lab"]["known_io"]
    assert known["columns"] == ["h_rate", "int_def"]
    assert known["estimate"].shape == known["original"].shape == (2, 2)
    assert np.allclose(known["estimate"], known["original"], atol=1e-8)
    assert run.report["privacy"]["lab"]["attacks"]["known_io"]["min"] == pytest.approx(0.0, abs=1e-8)
    assert set(run.attacks["lab"]) == {"known_io", "ica", "multilateration", "pca_known_sample", "naive"}
    assert np.array_equal(run.attacks["lab"]["naive"]["estimate"], run.attacks["lab"]["naive"]["original"])
    assert run.payload_bytes == 3 * 5 * 2 * 8  # m * d_j * 8 bytes a party
    assert "5 records" in repr(run)


def test_toml_text_dict_and_path_load_the_same_scenario(table1, tmp_path):
    import tomli_w

    spec = scenario("drbt", k=1, projection="sparse-unit", normalize="none")
    spec["data"]["source"] = str(table1 / "table1.csv")
    (tmp_path / "s.toml").write_text(tomli_w.dumps(spec))
    loaded = [from_dict(spec), from_toml(tomli_w.dumps(spec)), from_file(tmp_path / "s.toml"),
              load(str(tmp_path / "s.toml")), load(spec)]
    assert {(s.name, s.seed, tuple(p.seed for p in s.parties)) for s in loaded} == {
        ("table1-drbt", 3, tuple(p.seed for p in loaded[0].parties))}
    runs = [ppcsim.simulate(s, attacks=False) for s in (spec, loaded[2])]
    assert np.array_equal(runs[0].clustered, runs[1].clustered)


def test_a_string_is_a_path_never_guessed_to_be_text(tmp_path):
    text = 'name = "x"\n[data]\nsource = "sklearn:iris"\n'
    with pytest.raises(ScenarioError, match=r"^<TOML text>: .*holds a newline.*ppcsim.api.from_toml\(text\)"):
        load(text)
    with pytest.raises(ScenarioError, match=r"from_toml"):
        ppcsim.simulate(text)
    # a file whose name holds '=' is a file, as any other string is
    path = tmp_path / "k=3.toml"
    with pytest.raises(ScenarioError, match=r"k=3\.toml"):
        load(str(path))
    with pytest.raises(ScenarioError, match=r"^<TOML text>: not valid TOML"):
        from_toml("name = ")
    with pytest.raises(TypeError, match="not int"):
        load(3)
    with pytest.raises(TypeError, match="from_toml takes a scenario file's text"):
        from_toml(tmp_path)


def test_a_bad_scenario_is_refused_naming_the_field_or_the_column(table1):

    spec = scenario("drbt", k=1)
    spec["parties"][1]["method"] = "drbtt"
    with pytest.raises(ScenarioError, match="^<scenario dict>: .*'lab'.*drbtt"):
        ppcsim.simulate(spec, base=table1)
    with pytest.raises(ValueError, match=r"known_fraction must be in \(0, 1\], got 1.5"):
        ppcsim.simulate(spec, base=table1, known_fraction=1.5)
    spec = scenario("drbt", k=1)
    spec["parties"][1]["columns"] = ["h_rate", "heart"]
    with pytest.raises(ScenarioError, match="'lab': no column 'heart' in .*table1.csv \\(known: id, age"):
        ppcsim.simulate(spec, base=table1)  # refused with the scenario, before any party loads its data


def test_in_process_and_processes_give_the_same_labels_and_payload(table1, tmp_path):
    spec = scenario("drbt", k=1, projection="sparse-unit")
    here = ppcsim.simulate(spec, base=table1)
    there = ppcsim.simulate(spec, processes=True, base=table1, out=tmp_path / "run")
    assert there.out == tmp_path / "run" and (there.out / "report.json").is_file()
    assert np.array_equal(here.labels, there.labels)
    assert here.ids.tolist() == there.ids.tolist()
    assert here.coordinator_ids.tolist() == there.coordinator_ids.tolist()
    for p in here.sent:
        assert sorted(here.sent[p]) == sorted(there.sent[p]) == ["data", "ids"]
        for name in here.sent[p]:
            assert np.array_equal(here.sent[p][name], there.sent[p][name])
    assert np.array_equal(here.clustered, there.clustered)
    for a, b in zip(here.report["parties"], there.report["parties"]):
        assert a["bytes"]["payload"] == b["bytes"]["payload"] == 5 * 1 * 8
        assert a["bytes"]["serialized"] == b["bytes"]["serialized"]
        assert a["bytes"].get("wire") is None and b["bytes"]["wire"] > b["bytes"]["serialized"]
    assert np.allclose(here.attacks["lab"]["ica"]["estimate"], there.attacks["lab"]["ica"]["estimate"])


def test_the_docstring_examples_run():
    import doctest

    import ppcsim.api

    assert doctest.testmod(ppcsim.api).failed == 0


def test_secure_aggregation_run_sends_distances_round_by_round_and_no_features():
    m = 300
    scenario = {"name": "sa", "seed": 7, "data": {"source": "synthetic:blobs", "rows": m, "columns": 2, "clusters": 3},
                "parties": [{"name": "a", "columns": ["x0"]}, {"name": "b", "columns": ["x1"]}],
                "clustering": {"algorithm": "kmeans", "protocol": "secure_aggregation", "n_clusters": 3,
                               "reveal": "distances"}}
    run = ppcsim.simulate(scenario, attacks=False)
    secure = run.report["secure_aggregation"]
    assert run.sent == {} and run.clustered is None and run.joined is None and run.attacks == {}
    assert run.labels.shape == (m,) and sorted(run.ids.astype(int).tolist()) == list(range(m))
    # each round every party posts its masked partial distance of every record to each of the k centres
    assert run.payload_bytes == 2 * m * 3 * (secure["rounds"] + secure["seeding_steps"]) * 8
    # the same labels as scikit-learn's k-means from the same initial records
    assert run.report["utility"]["labels_equal_same_init"] is True
    # the default opens the labels only, an MPC argmin of party processes: not simulated in this process
    labels_only = {**scenario, "clustering": {**scenario["clustering"], "reveal": "labels", "helper": True}}
    with pytest.raises(ValueError, match='reveal = "labels" \\(an MPC argmin\\) runs each MPC party as its own OS'):
        ppcsim.simulate(labels_only, attacks=False)
    assert np.allclose(run.original["a"].ravel(), (lambda x: (x - x.mean()) / x.std(ddof=1))(run.original["a"]).ravel())
