"""Extension points by registration alone: a combination form, disguises that send it or reuse one, a
clustering algorithm, an embedding and a kind of data source, each defined here and registered with one line (``monkeypatch.setitem``, so that no
other test sees it). Nothing else in the project names them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform
from sklearn.cluster import AgglomerativeClustering, Birch
from sklearn.datasets import make_moons
from sklearn.metrics import adjusted_rand_score

from conftest import IRIS, NO_TLS, ROOT, party_table, scenario_toml, write_scenario
from coordinator.clustering import ALGORITHMS, Algorithm, ClusteringSpec, cluster, fields
from coordinator.errors import InvalidArgument, SessionError
from coordinator.forms import FORMS, Form, Parts
from coordinator.pipeline import pipeline
from coordinator.types import Combined, Contribution
from parties.data import PartyData
from parties.methods import METHODS, Disguise, Param
from parties.methods.base import EUCLIDEAN, condensed
from parties.sources import SOURCES, Source
from ppcsim.run.conformance import ConformanceError, check_method
from ppcsim.run.inprocess import simulate
from ppcsim.run.observer import reference_combined, utility
from ppcsim.scenario.load import ScenarioError, load_scenario

# -- a new combination form and the disguise that sends it ------------------------------------------------


def summed_manhattan(parts: Parts) -> Combined:
    """Manhattan distances add across column blocks as they are: sum_f |x_if - x_jf| over every party's f."""
    return Combined(dissimilarity=parts.total("l1"), description=f"summed Manhattan distances of {parts.parties}")


CITYBLOCK = Form("cityblock", summed_manhattan, frozenset({"l1"}), doc="Manhattan distances, summed")


class Manhattan(Disguise):
    """Sends the party's pairwise Manhattan distances, to be combined in the form 'cityblock'."""

    name = "manhattan"
    summary = "Manhattan distances"

    def form(self):
        return "cityblock"

    def disguise(self, X, columns):
        return [condensed("l1", pdist(X, "cityblock"))]


def same_partition(a, b) -> bool:
    """Equal clusterings, whatever their labels' numbering."""
    a, b = np.asarray(a), np.asarray(b)
    return len(set(zip(a.tolist(), b.tolist()))) == len(set(a.tolist())) == len(set(b.tolist()))


def blobs(seed: int = 4, m: int = 40, d: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, d)) + np.repeat(rng.uniform(-5, 5, (3, d)), [14, 13, 13], axis=0)


def sklearn_average(distances: np.ndarray, k: int) -> np.ndarray:
    return AgglomerativeClustering(n_clusters=k, metric="precomputed", linkage="average").fit_predict(
        squareform(distances))


def test_a_new_form_and_its_disguise_run_through_the_pipeline(monkeypatch):
    monkeypatch.setitem(FORMS, "cityblock", CITYBLOCK)
    X = blobs()
    ids = np.arange(len(X))
    order = np.random.default_rng(1).permutation(len(X))  # party b holds its rows in another order
    blocks = {"a": (ids, X[:, :2]), "b": (ids[order], X[order, 2:])}
    contributions = []
    for party, (own_ids, block) in blocks.items():
        method = Manhattan()
        sent = {s.name: s.array for s in method.disguise(block, [])}
        contributions.append(Contribution(party, method.name, method.public_params(), own_ids, sent,
                                          is_dissimilarity=True))
    assert contributions[0].params == {"metric": "cityblock"}
    outcome = pipeline(contributions, ClusteringSpec(algorithm="agglomerative", n_clusters=3))
    joined = X[outcome.join.ids.astype(int)]
    np.testing.assert_allclose(outcome.combined.dissimilarity, pdist(joined, "cityblock"), rtol=1e-12)
    assert outcome.combined.description == "summed Manhattan distances of a, b"
    assert same_partition(outcome.labels, sklearn_average(pdist(joined, "cityblock"), 3))


def test_a_form_that_takes_no_features_refuses_a_feature_party(monkeypatch):
    monkeypatch.setitem(FORMS, "cityblock", CITYBLOCK)
    X = blobs()
    ids = np.arange(len(X))
    near = Contribution("a", "manhattan", {"metric": "cityblock"}, ids, {"l1": pdist(X[:, :2], "cityblock")},
                        is_dissimilarity=True)
    rows = Contribution("b", "none", {}, ids, {"data": X[:, 2:]})
    with pytest.raises(SessionError, match="parties b send features, which combine exactly only with Euclidean "
                                           r"dissimilarities, not 'cityblock' \(a\)"):
        pipeline([near, rows], ClusteringSpec(algorithm="agglomerative", n_clusters=3))


def plugin_scenario(a: str, b: str, **clustering) -> str:
    """Iris's sepals with party a, disguised by method ``a``, its petals with b by ``b``; ``clustering``: the table."""
    return scenario_toml("plugin", [party_table("a", IRIS[:2], a), party_table("b", IRIS[2:], b)], seed=3,
                         data={"source": "sklearn:iris", "label_column": "target"}, security=NO_TLS,
                         clustering=clustering)


def test_a_new_form_and_its_disguise_run_through_a_session(tmp_path, monkeypatch):
    """Scenario file, party code, upload messages, the coordinator's handlers and the observer's reference."""
    monkeypatch.setitem(FORMS, "cityblock", CITYBLOCK)
    monkeypatch.setitem(METHODS, "manhattan", Manhattan)
    scenario = load_scenario(write_scenario(tmp_path, plugin_scenario("manhattan", "manhattan", algorithm="agglomerative",
                                                                      n_clusters=3)))
    session, own = simulate(scenario)
    outcome = session.outcome
    assert outcome is not None, session.error
    index = outcome.join.index
    joined = np.hstack([own[p].X[index[p]] for p in ("a", "b")])  # each party z-scores its own columns
    expected = pdist(joined, "cityblock")
    np.testing.assert_allclose(outcome.combined.dissimilarity, expected, rtol=1e-12)
    assert same_partition(outcome.labels, sklearn_average(expected, 3))
    # the observer: the undisguised reference is the same form on every joined column, so nothing is lost
    reference = reference_combined(scenario, outcome, own)
    np.testing.assert_allclose(reference.dissimilarity, expected, rtol=1e-12)
    measured = utility(scenario, outcome, own)
    assert measured["stress"] < 1e-12 and measured["vs_original"]["ari"] == 1.0


def test_an_unregistered_form_is_refused_at_upload_naming_the_known_ones(tmp_path, monkeypatch):
    monkeypatch.setitem(METHODS, "manhattan", Manhattan)  # the method alone: the coordinator knows no 'cityblock'
    scenario = load_scenario(write_scenario(tmp_path, plugin_scenario("manhattan", "manhattan", algorithm="agglomerative",
                                                                      n_clusters=3)))
    with pytest.raises(InvalidArgument, match="party 'a': osbr metric 'cityblock' is not one of euclidean, "
                                              "gower, jaccard"):
        simulate(scenario)


def test_the_new_disguise_passes_the_conformance_check(monkeypatch):
    monkeypatch.setitem(FORMS, "cityblock", CITYBLOCK)
    monkeypatch.setitem(METHODS, "manhattan", Manhattan)
    assert [name for name, _ in check_method("manhattan").arrays] == ["l1"]


class Misdeclared(Manhattan):
    """Says it sends squared Euclidean distances, sends Manhattan ones under its own name."""

    name = "misdeclared"

    def form(self):
        return EUCLIDEAN


class Unformed(Manhattan):
    """Sends dissimilarities and names no form (Disguise's default: rows of features)."""

    name = "unformed"

    def form(self):
        return None


class Unknown(Manhattan):
    name = "unknown-form"


class Unembedded(Manhattan):
    """Asks for an embedding the coordinator does not compute."""

    name = "unembedded"

    def form(self):
        return EUCLIDEAN

    def embedding(self):
        return "isomap"

    def disguise(self, X, columns):
        return [condensed("sqdist", pdist(X, "sqeuclidean"))]


@pytest.mark.parametrize("plugin, why", [
    (Misdeclared, "what it sends does not match its declared form: osbr/euclidean sends arrays ['sqdist'], "
                  "got ['l1']"),
    (Unformed, "it sends condensed dissimilarities but declares no combination form"),
    (Unknown, "it declares the combination form 'cityblock', which the coordinator does not know "
              "(registered: euclidean, gower, jaccard)"),
    (Unembedded, "it asks for the embedding 'isomap', which the coordinator does not compute (registered: nmds)"),
])
def test_a_disguise_whose_declared_form_does_not_match_what_it_sends_fails_conformance(monkeypatch, plugin, why):
    monkeypatch.setitem(METHODS, plugin.name, plugin)
    with pytest.raises(ConformanceError) as err:
        check_method(plugin.name)
    assert why in str(err.value)


# -- a new disguise in an existing form: only the methods registry line ------------------------------------


class RotatedDistances(Disguise):
    """Squared Euclidean distances of the party's columns after a private random rotation: the form
    'euclidean', the same distances as osbr's (a rotation keeps them), computed another way."""

    name = "rotated-distances"
    randomised = True

    def form(self):
        return EUCLIDEAN

    def disguise(self, X, columns):
        q, r = np.linalg.qr(np.random.default_rng(self.random_state).standard_normal((X.shape[1], X.shape[1])))
        return [condensed("sqdist", pdist(X @ (q * np.sign(np.diag(r))).T, "sqeuclidean"))]


def test_a_new_disguise_in_an_existing_form_needs_only_its_registry_line(tmp_path, monkeypatch):
    monkeypatch.setitem(METHODS, "rotated-distances", RotatedDistances)
    check_method("rotated-distances")
    # beside a feature party: the form 'euclidean' takes feature blocks, so the coordinator turns them into
    # squared distances and adds them, and the observer's reference is the joined columns themselves
    scenario = load_scenario(write_scenario(tmp_path, plugin_scenario("rotated-distances", "none",
                                                                      algorithm="agglomerative", n_clusters=3)))
    session, own = simulate(scenario)
    outcome = session.outcome
    assert outcome is not None, session.error
    index = outcome.join.index
    joined = np.hstack([own[p].X[index[p]] for p in ("a", "b")])
    np.testing.assert_allclose(outcome.combined.dissimilarity, pdist(joined), rtol=1e-9)
    assert "features of b turned into squared distances" in outcome.combined.description
    assert same_partition(outcome.labels, sklearn_average(pdist(joined), 3))
    np.testing.assert_array_equal(reference_combined(scenario, outcome, own).features, joined)
    assert own["a"].method.sends_euclidean_distances() and not own["b"].method.sends_dissimilarities()


def test_registered_methods_and_algorithms_are_listed_in_ppc_help(monkeypatch):
    from ppcsim.cli.parser import build_parser

    monkeypatch.setitem(METHODS, "manhattan", Manhattan)
    monkeypatch.setitem(ALGORITHMS, "birch", BIRCH)
    text = " ".join(build_parser().format_help().split())
    assert "manhattan: Manhattan distances" in text and "drbt: random projection" in text
    assert "(kmeans, agglomerative, dbscan, birch)" in text


# -- a new clustering algorithm ---------------------------------------------------------------------------


def birch(spec: ClusteringSpec, X: np.ndarray) -> np.ndarray:
    return Birch(n_clusters=spec.n_clusters, threshold=spec.value("threshold")).fit_predict(X)


BIRCH = Algorithm("birch", {"threshold": Param(float, 0.5, above=0, rule="a positive number", doc="birch")},
                  features=birch)


def test_a_new_algorithm_is_accepted_in_clustering_and_equals_sklearn(tmp_path, monkeypatch):
    monkeypatch.setitem(ALGORITHMS, "birch", BIRCH)
    scenario = load_scenario(write_scenario(tmp_path, plugin_scenario("none", "none", algorithm="birch", n_clusters=3,
                                                                      threshold=0.3)))
    spec = scenario.clustering
    assert (spec.algorithm, spec.n_clusters, spec.threshold) == ("birch", 3, 0.3)
    assert vars(spec)["threshold"] == 0.3  # recorded beside the built-in fields
    session, own = simulate(scenario)
    outcome = session.outcome
    assert outcome is not None, session.error
    joined = outcome.combined.features
    np.testing.assert_array_equal(outcome.labels, Birch(n_clusters=3, threshold=0.3).fit_predict(joined))
    assert len(set(outcome.labels.tolist())) == 3
    # its parameter's default when the table leaves it out; a copy with another field keeps it
    assert ClusteringSpec.of({"algorithm": "birch"}).value("threshold") == 0.5
    again = replace(spec, n_clusters=4)
    assert (again.threshold, again.n_clusters, again.options) == (0.3, 4, {"threshold": 0.3})
    assert again != spec and replace(again, n_clusters=3) == spec


def test_a_new_algorithm_s_parameter_is_checked_like_the_others(tmp_path, monkeypatch):
    monkeypatch.setitem(ALGORITHMS, "birch", BIRCH)
    bad = plugin_scenario("none", "none", algorithm="birch", threshold=-1, thresold=2)
    with pytest.raises(ScenarioError) as err:
        load_scenario(write_scenario(tmp_path, bad))
    assert "[clustering]: 'threshold' must be a positive number, got -1" in str(err.value)
    assert "unknown field 'thresold'" in str(err.value) and "did you mean 'threshold'?" in str(err.value)
    assert "threshold" in fields()


def test_without_its_registry_line_the_algorithm_and_its_field_are_unknown(tmp_path):
    bad = plugin_scenario("none", "none", algorithm="birch", threshold=0.3)
    with pytest.raises(ScenarioError) as err:
        load_scenario(write_scenario(tmp_path, bad))
    assert "threshold" not in fields()
    assert "[clustering]: unknown field 'threshold'" in str(err.value)
    assert "[clustering]: 'algorithm' must be one of kmeans, agglomerative, dbscan, got 'birch'" in str(err.value)


def test_a_features_only_algorithm_refuses_dissimilarities_clearly(monkeypatch):
    monkeypatch.setitem(ALGORITHMS, "birch", BIRCH)
    X = blobs()
    combined = Combined(dissimilarity=pdist(X))
    with pytest.raises(SessionError) as err:
        cluster(ClusteringSpec.of({"algorithm": "birch", "n_clusters": 3}), combined)
    assert str(err.value) == ('birch needs feature data, but the parties sent dissimilarities (osbr); '
                              'use algorithm = "agglomerative" or "dbscan"')
    # and on features, the same labels as scikit-learn's
    spec = ClusteringSpec.of({"algorithm": "birch", "n_clusters": 3, "threshold": 0.8})
    np.testing.assert_array_equal(cluster(spec, Combined(features=X)),
                                  Birch(n_clusters=3, threshold=0.8).fit_predict(X))


def test_a_dissimilarities_only_algorithm_refuses_features_naming_those_that_take_them(monkeypatch):
    def single_cut(spec, condensed, n, overwrite):
        from scipy.cluster.hierarchy import fcluster, linkage

        return fcluster(linkage(condensed, "single"), spec.n_clusters, "maxclust") - 1

    monkeypatch.setitem(ALGORITHMS, "single-cut", Algorithm("single-cut", {}, dissimilarities=single_cut))
    X = blobs()
    spec = ClusteringSpec.of({"algorithm": "single-cut", "n_clusters": 3})
    assert same_partition(cluster(spec, Combined(dissimilarity=pdist(X))),
                          AgglomerativeClustering(n_clusters=3, linkage="single").fit_predict(X))
    with pytest.raises(SessionError, match='single-cut needs dissimilarities, but the parties sent features; use '
                                           'algorithm = "kmeans" or "agglomerative" or "dbscan"'):
        cluster(spec, Combined(features=X))


# -- a new kind of data source ----------------------------------------------------------------------------


class Moons(Source):
    """Two interleaving half circles, scikit-learn's ``make_moons``: columns x0 and x1, the moon is the label."""

    name = "synthetic:moons"
    prefix = "synthetic:"
    family = "generated"
    seeded = True
    params = {"rows": Param(int, required=True, minimum=2, rule="an integer of at least 2"),
              "noise": Param(float, 0.0, minimum=0, rule="a non-negative number")}

    def generate(self, options):
        return make_moons(options["rows"], noise=options["noise"], random_state=options["seed"])

    def columns(self, source, options):
        return ["x0", "x1"]

    def load(self, cfg):
        wanted = list(cfg.columns)
        X = self.generate(cfg.source_options)[0][:, [self.columns(cfg.source, {}).index(c) for c in wanted]]
        return PartyData(ids=np.arange(len(X)), X=X, columns=wanted)

    def labels(self, source, options, ids, label_column, id_column):
        return self.generate(options)[1][ids.astype(int)]


MOONS_SCENARIO = """
    name = "moons"
    seed = 5
    [data]
    source = "synthetic:moons"
    rows = 200
    {noise}
    label_column = "target"
    [security]
    tls = false
    tokens = false
    [[parties]]
    name = "a"
    columns = ["x0"]
    method = "none"
    [[parties]]
    name = "b"
    columns = ["{b}"]
    method = "none"
    [clustering]
    algorithm = "kmeans"
    n_clusters = 2
"""


def test_a_new_source_kind_loads_runs_and_gives_the_observer_its_labels(tmp_path, monkeypatch):
    import ppcsim

    monkeypatch.setitem(SOURCES, "synthetic:moons", Moons())
    path = write_scenario(tmp_path, MOONS_SCENARIO.format(noise="noise = 0.2", b="x1"))
    scenario = load_scenario(path)
    assert [p.source_options for p in scenario.parties] == [{"seed": 5, "rows": 200, "noise": 0.2}] * 2
    run = ppcsim.simulate(path, attacks=False)
    X, y = make_moons(200, noise=0.2, random_state=5)
    # each party loaded its own column only (z-scored: sample standard deviation)
    for party, j in (("a", 0), ("b", 1)):
        assert run.original[party].shape == (200, 1)
        np.testing.assert_allclose(run.original[party][:, 0], (X[:, j] - X[:, j].mean()) / X[:, j].std(ddof=1))
    # the observer's truth is the generator's labels, aligned with the joined records
    ari = adjusted_rand_score(y[run.ids.astype(int)], run.labels)
    assert run.report["utility"]["vs_truth"]["ari"] == pytest.approx(ari, abs=1e-12)
    assert 0.1 < ari < 1  # k-means cuts the half circles wrongly: a figure that tells labels apart
    assert [p["source"] for p in run.report["parties"]] == ["synthetic:moons"] * 2


@pytest.mark.parametrize("noise, b, wanted", [
    ("noise = -1", "x1", "[data]: 'noise' must be a non-negative number, got -1"),
    ("nosie = 0.1", "x1", "[data]: unknown field 'nosie' (known: source, id_column, label_column, rows, columns, "
                          "clusters, cluster_std, noise, column_names, missing; did you mean 'noise'?)"),
    ("noise = 0.1", "x2", "[[parties]] 'b': no column 'x2' in synthetic:moons (known: x0, x1)"),
])
def test_a_new_source_kind_s_options_and_columns_are_checked(tmp_path, monkeypatch, noise, b, wanted):
    monkeypatch.setitem(SOURCES, "synthetic:moons", Moons())
    with pytest.raises(ScenarioError) as err:
        load_scenario(write_scenario(tmp_path, MOONS_SCENARIO.format(noise=noise, b=b)))
    assert wanted in err.value.errors


def test_without_its_registry_line_the_source_is_unknown(tmp_path):
    with pytest.raises(ScenarioError) as err:
        load_scenario(write_scenario(tmp_path, MOONS_SCENARIO.format(noise="", b="x1")))
    assert err.value.errors == ["[data]: unknown source 'synthetic:moons' (generated: synthetic:blobs)"]


class Delimited(Source):
    """A text file of values split by one ``delimiter`` character (a tab by default), selected by the suffix
    ``.tsv``: a file kind whose option a party's own table gives beside ``data``."""

    name = "delimited"
    file = True
    label = None
    params = {"delimiter": Param(str, "\t", pattern=".", rule="a single character")}

    def selects(self, source):
        return source.endswith(".tsv")

    def columns(self, source, options):
        with open(source, encoding="utf-8") as fh:
            return fh.readline().rstrip("\n").split(options["delimiter"])

    def load(self, cfg):
        with open(cfg.source, encoding="utf-8") as fh:
            header, *rows = [line.rstrip("\n").split(cfg.source_options["delimiter"]) for line in fh]
        X = np.array([[float(r[header.index(c)]) for c in cfg.columns] for r in rows])
        return PartyData(ids=np.array([r[header.index(cfg.id_column)] for r in rows]), X=X,
                         columns=list(cfg.columns))


DELIMITED_SCENARIO = """
    name = "delimited"
    seed = 2
    [security]
    tls = false
    tokens = false
    [[parties]]
    name = "a"
    data = "a.tsv"
    id_column = "id"
    {option}
    columns = ["u", "v"]
    method = "none"
    [[parties]]
    name = "b"
    data = "b.csv"
    id_column = "id"
    columns = ["w"]
    method = "none"
    [clustering]
    algorithm = "kmeans"
    n_clusters = 2
"""


def delimited_files(folder):
    X = blobs(m=40, d=3)
    ids = [f"r{i}" for i in range(40)]
    (folder / "a.tsv").write_text("id;u;v\n" + "".join(f"{i};{float(x[0])!r};{float(x[1])!r}\n" for i, x in zip(ids, X)))
    (folder / "b.csv").write_text("id,w\n" + "".join(f"{i},{float(x[2])!r}\n" for i, x in zip(ids[::-1], X[::-1])))
    return X


def test_a_new_file_kind_takes_its_option_from_the_party_s_own_table(tmp_path, monkeypatch):
    import ppcsim

    monkeypatch.setitem(SOURCES, "delimited", Delimited())
    X = delimited_files(tmp_path)
    path = write_scenario(tmp_path, DELIMITED_SCENARIO.format(option='delimiter = ";"'))
    scenario = load_scenario(path)
    assert [(p.source_options, p.params) for p in scenario.parties] == [({"delimiter": ";"}, {}), ({}, {})]
    run = ppcsim.simulate(path, attacks=False)
    z = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    np.testing.assert_allclose(run.original["a"], z[:, :2], rtol=1e-12)
    np.testing.assert_allclose(run.original["b"][:, 0], z[::-1, 2], rtol=1e-12)
    order = run.ids.astype(str)  # the joined records, by their own ids
    np.testing.assert_allclose(run.clustered, z[[int(i[1:]) for i in order]], rtol=1e-12)


@pytest.mark.parametrize("option, wanted", [
    ('delimiter = ";;"', "[[parties]] 'a': 'delimiter' must be a single character, got ';;'"),
    ('delimter = ";"', "did you mean 'delimiter'?"),
])
def test_a_file_kind_s_option_is_checked_in_the_party_s_table(tmp_path, monkeypatch, option, wanted):
    monkeypatch.setitem(SOURCES, "delimited", Delimited())
    delimited_files(tmp_path)
    with pytest.raises(ScenarioError) as err:
        load_scenario(write_scenario(tmp_path, DELIMITED_SCENARIO.format(option=option)))
    assert any(wanted in e for e in err.value.errors), err.value.errors


def test_no_file_of_the_project_names_the_plugins():
    """Each plug-in above is its definition here and its registry line: nothing else in the project knows it
    (``cityblock`` is also scipy's name for the Manhattan metric, which osbr's eq. 5 calls, so it is sought as
    a registered form's name)."""

    root = ROOT
    names = ("manhattan", "rotated-distances", "birch", '"cityblock":', 'form("cityblock"', "moons", "delimited", "delimiter")
    found = [f"{path.relative_to(root)}: {name}"
             for folder in ("coordinator", "parties", "ppcsim", "protos", "scenarios")
             for path in sorted((root / folder).rglob("*")) if path.suffix in (".py", ".toml", ".proto")
             for name in names if name in path.read_text(encoding="utf-8").lower()]
    assert found == []


# -- a new embedding at the coordinator -------------------------------------------------------------------


def classical_scaling(combined: Combined, ask: dict[str, str], seed: int) -> Combined:
    """Torgerson's classical scaling of the joined distances to ``dims`` coordinates (no iteration)."""
    dims = int(ask["dims"])
    D2 = squareform(combined.require_dissimilarity()) ** 2
    m = len(D2)
    J = np.eye(m) - 1.0 / m
    values, vectors = np.linalg.eigh(-0.5 * J @ D2 @ J)
    top = np.argsort(values)[::-1][:dims]
    Y = vectors[:, top] * np.sqrt(np.maximum(values[top], 0))
    return Combined(features=Y, description=f"classical scaling to {dims} dims",
                    embedding={"embedding": "classical", "dims": dims})


class Scaled(Disguise):
    """Sends squared Euclidean distances and asks the coordinator for their classical scaling."""

    name = "scaled"
    params = {"dims": Param(int, 2, minimum=1, rule="a positive integer")}

    def form(self):
        return EUCLIDEAN

    def embedding(self):
        return "classical"

    def public_params(self):
        return {**super().public_params(), "dims": str(self.dims)}

    def disguise(self, X, columns):
        return [condensed("sqdist", pdist(X, "sqeuclidean"))]


def test_a_new_embedding_is_computed_and_its_parameters_agreed(monkeypatch):
    from coordinator.embed import EMBEDDINGS, Embedding

    monkeypatch.setitem(EMBEDDINGS, "classical", Embedding(classical_scaling, keys=("dims",)))
    monkeypatch.setitem(METHODS, "scaled", Scaled)  # only for the conformance check at the end
    X = blobs()
    ids = np.arange(len(X))

    def contributions(dims_a: int, dims_b: int) -> list[Contribution]:
        out = []
        for party, block, dims in (("a", X[:, :2], dims_a), ("b", X[:, 2:], dims_b)):
            method = Scaled(dims=dims)
            sent = {s.name: s.array for s in method.disguise(block, [])}
            out.append(Contribution(party, method.name, method.public_params(), ids, sent, is_dissimilarity=True))
        return out

    outcome = pipeline(contributions(3, 3), ClusteringSpec(algorithm="kmeans", n_clusters=3, seed=0))
    assert outcome.combined.embedding == {"embedding": "classical", "dims": 3}
    expected = classical_scaling(Combined(dissimilarity=pdist(X)), {"dims": "3"}, 0).features
    # the same coordinates up to each axis' sign: scaling keeps every distance of the joined columns' top 3 axes
    np.testing.assert_allclose(pdist(outcome.combined.features), pdist(expected), atol=1e-9)
    with pytest.raises(SessionError, match="the parties ask for different embeddings at the coordinator "
                                           r"\(a: classical 3; b: classical 2\)"):
        pipeline(contributions(3, 2), ClusteringSpec(algorithm="kmeans", n_clusters=3, seed=0))
    check_method("scaled")  # what it sends matches what it declares, embedding included
