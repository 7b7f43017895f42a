"""A conformance check every registered disguise method must pass, in the spirit of scikit-learn's ``check_estimator``.

``check_method(name)`` runs the method the way a real run does, on a small
synthetic party, and checks what every method promises:

- **seeded determinism**: the same seed gives the same arrays; for a method
  that declares itself ``randomised``, another seed gives other arrays;
- **shape and dtype**: rows are (m, j) with j >= 1 (j = ``k`` for a method
  that takes ``k``), condensed arrays hold m(m-1)/2 values; every array the
  method returns is float64, and travels as the party's ``dtype``;
- **finite values** only;
- **what it declares is what it sends**: a method that sends condensed
  dissimilarities names a combination form registered at the coordinator
  (``Disguise.form``, ``coordinator.forms``) whose arrays and public
  parameters its upload carries, and one that sends rows names none; an
  embedding it asks for (``Disguise.embedding``) is one the coordinator
  computes, asked for in its public ``embed``;
- **payload equals the prediction**: the bytes the coordinator received are
  the paper's cost, m * k_j * l for rows (004 §5.5) and m(m-1)/2 * l per
  condensed array (004 §4.5), with l the element size of ``dtype``;
- **the observer's replay equals what was sent**: ``parties.disguise.disguise``
  with the same configuration reproduces, bit for bit, the arrays the
  coordinator received through the in-process simulation
  (``ppcsim.run.inprocess``: the party's real upload messages, the coordinator's
  real handlers).

A new method registered in ``parties.methods.METHODS`` gets these checks from
``tests/ppcsim/run/test_method_conformance.py`` without any new test.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from parties.config import PartyConfig
from parties.methods import method_class
from parties.methods.base import Disguise
from protos.serde import Layout

#: The small party every check runs on: synthetic Gaussian blobs.
ROWS, COLUMNS, CLUSTERS = 24, 4, 3


class ConformanceError(AssertionError):
    """A method broke one or more of its promises; the message lists each, naming the method and the check."""


@dataclass(frozen=True)
class Checked:
    """What the check saw of one method: its parameters, output arrays (name, shape), and payload bytes."""

    method: str
    params: dict[str, Any]
    dtype: str
    arrays: tuple[tuple[str, tuple[int, ...]], ...]
    payload: int
    predicted: int


def example_params(cls: type[Disguise], columns: int = COLUMNS) -> dict[str, Any]:
    """Values for the method's required parameters, from its ``Param`` table: 2 for an integer (at least its
    minimum, at most ``columns``), the default or the first choice otherwise."""
    params: dict[str, Any] = {}
    for key, spec in cls.params.items():
        if not spec.required:
            continue
        if spec.type is int:
            params[key] = min(max(2, int(spec.minimum or 0)), columns)
        elif spec.choices:
            params[key] = spec.choices[0]
        elif spec.type is float:
            params[key] = float(spec.minimum or 0) + 0.5
        elif spec.type is list:
            params[key] = []
        else:
            params[key] = spec.default
    return params


def party_config(name: str, params: dict[str, Any], seed: int, dtype: str = "float64") -> PartyConfig:
    """The conformance party: ``ROWS`` x ``COLUMNS`` of synthetic blobs, disguised by ``name`` (min-max normalised
    for a method that takes non-negative data only, z-scored otherwise)."""
    return PartyConfig(
        name="p", source="synthetic:blobs", columns=tuple(f"x{j}" for j in range(COLUMNS)), method=name,
        params=dict(params), dtype=dtype, seed=seed,
        normalize="minmax" if method_class(name).nonnegative else "zscore",
        source_options={"rows": ROWS, "columns": COLUMNS, "clusters": CLUSTERS, "cluster_std": 1.0, "seed": 7},
    )


def _same(a, b) -> bool:
    return [s.name for s in a] == [s.name for s in b] and all(
        x.array.shape == y.array.shape and np.array_equal(x.array, y.array) for x, y in zip(a, b))


def declared_problems(method: Disguise, layouts: set[Layout], names: set[str]) -> list[str]:
    """Where what ``method`` (fitted) declares it sends (its combination form, its embedding, and the public
    parameters that carry them) differs from what it sent: arrays ``names`` in ``layouts``."""
    from coordinator.embed import EMBEDDINGS
    from coordinator.errors import SessionError
    from coordinator.forms import FORMS, check_upload

    problems = []
    form, embedding, public = method.form(), method.embedding(), method.public_params()
    if layouts == {Layout.CONDENSED} and form is None:
        problems.append("it sends condensed dissimilarities but declares no combination form (Disguise.form)")
    if layouts == {Layout.ROWS} and form is not None:
        problems.append(f"it declares the combination form '{form}' but sends rows of features")
    if form is not None:
        if public.get("metric") != form:
            problems.append(f"its public 'metric' is {public.get('metric')!r}, not its declared form '{form}'")
        if form not in FORMS:
            problems.append(f"it declares the combination form '{form}', which the coordinator does not know "
                            f"(registered: {', '.join(FORMS)})")
        elif layouts == {Layout.CONDENSED}:
            try:
                check_upload("-", {**public, "metric": form}, names)
            except SessionError as exc:
                problems.append("what it sends does not match its declared form: "
                                + str(exc).replace("party '-': ", "", 1))
    if embedding is not None:
        if form is None:
            problems.append(f"it asks for the embedding '{embedding}' of dissimilarities it does not send")
        if public.get("embed") != embedding:
            problems.append(f"its public 'embed' is {public.get('embed')!r}, not its declared embedding '{embedding}'")
        if embedding not in EMBEDDINGS:
            problems.append(f"it asks for the embedding '{embedding}', which the coordinator does not compute "
                            f"(registered: {', '.join(EMBEDDINGS)})")
    return problems


def check_method(name: str, params: dict[str, Any] | None = None, *, dtype: str = "float64",
                 seeds: tuple[int, int] = (11, 12)) -> Checked:
    """Run every check on the registered method ``name``; ConformanceError listing each failure.

    ``params`` default to :func:`example_params`; ``dtype`` is what the
    party's arrays travel as.
    """
    from coordinator.clustering import ClusteringSpec
    from coordinator.ledger import predicted_payload
    from parties.disguise import disguise
    from ppcsim.run.inprocess import simulate
    from ppcsim.scenario.load import Scenario, Security

    cls = method_class(name)
    params = example_params(cls) if params is None else params
    problems = [f"method '{name}': {p}" for p in cls.check_params(params)]
    if problems:
        raise ConformanceError("\n".join(problems))
    fail = problems.append
    cfg = party_config(name, params, seeds[0], dtype)

    # seeded determinism, through the party's own code path (load, normalise, disguise)
    first, again = disguise(cfg), disguise(cfg)
    if not _same(first.arrays, again.arrays):
        fail("the same seed gave different arrays (the method must draw only from its random_state)")
    other = disguise(party_config(name, params, seeds[1], dtype))
    randomised = bool(first.method.randomised)  # the instance's: it may depend on the parameters (nmds' init)
    if randomised and _same(first.arrays, other.arrays):
        fail(f"seeds {seeds[0]} and {seeds[1]} gave the same arrays, but the method says it is randomised")
    if not randomised and not _same(first.arrays, other.arrays):
        fail(f"seeds {seeds[0]} and {seeds[1]} gave different arrays, but the method does not say it is "
             "randomised (set randomised = True)")

    # shape, dtype and finite values of what the method returns
    m = ROWS
    if not first.arrays:
        fail("it sends no array")
    layouts = {s.layout for s in first.arrays}
    if len(layouts) > 1:
        fail("it sends rows and condensed arrays together; an upload carries one or the other")
    width = 0
    for s in first.arrays:
        where = f"array '{s.name}'"
        if s.array.dtype != np.float64:
            fail(f"{where} is {s.array.dtype}, not float64 (the party converts to its dtype when it sends)")
        if s.layout == Layout.ROWS:
            if s.array.ndim != 2 or s.array.shape[0] != m or s.array.shape[1] < 1:
                fail(f"{where} has shape {s.array.shape}; rows over {m} records are ({m}, j), j >= 1")
            else:
                width += s.array.shape[1]
        elif s.layout == Layout.CONDENSED:
            if s.array.shape != (m * (m - 1) // 2,):
                fail(f"{where} has shape {s.array.shape}; a condensed matrix over {m} records has "
                     f"({m * (m - 1) // 2},)")
        else:
            fail(f"{where} has layout {s.layout}, neither ROWS nor CONDENSED")
        if np.issubdtype(s.array.dtype, np.number) and not np.isfinite(s.array).all():
            fail(f"{where} holds NaN or infinite values")
    if "k" in params and layouts == {Layout.ROWS} and width != params["k"]:
        fail(f"it sends {width} dimensions per record, not k = {params['k']}")
    for problem in declared_problems(first.method, layouts, {s.name for s in first.arrays}):
        fail(problem)
    if problems:  # the wire checks below would only repeat these
        raise ConformanceError("\n".join(f"method '{name}': {p}" for p in problems))

    # through the coordinator: the bytes, the dtype on the wire, and the observer's replay
    scenario = Scenario(
        path=Path("conformance.toml"), name="conformance", seed=seeds[0], deadline=60.0, parties=[cfg],
        clustering=ClusteringSpec(algorithm="agglomerative", linkage="average", n_clusters=2),
        label_column=None, source=None, id_column=None, security=Security(tls=False, tokens=False, ids="plain"),
    )
    session, own = simulate(scenario)
    if session.outcome is None:
        raise ConformanceError(f"method '{name}': the coordinator could not use its upload: {session.error}")
    received = session.contributions["p"]
    itemsize = np.dtype(dtype).itemsize
    predicted = predicted_payload(m, [s.array.shape for s in first.arrays], itemsize)
    payload = session.byte_summary()["p"]["payload"]
    if payload != predicted:
        fail(f"the coordinator received {payload} payload bytes; the paper's cost is {predicted}")
    for arr_name, arr in received.arrays.items():
        if arr.dtype != np.dtype(dtype):
            fail(f"array '{arr_name}' arrived as {arr.dtype}, not the party's dtype {dtype}")
    replay = disguise(cfg).wire_arrays()  # the observer's replay, from the configuration alone
    if sorted(replay) != sorted(received.arrays):
        fail(f"the replay has arrays {sorted(replay)}, the coordinator received {sorted(received.arrays)}")
    for arr_name, arr in replay.items():
        if arr_name in received.arrays and not np.array_equal(arr, received.arrays[arr_name]):
            fail(f"the observer's replay of array '{arr_name}' differs from what the coordinator received")
    if problems:
        raise ConformanceError("\n".join(f"method '{name}': {p}" for p in problems))
    return Checked(name, dict(params), dtype, tuple((s.name, s.array.shape) for s in first.arrays), payload,
                   predicted)
