"""Every registered disguise method passes ppcsim.run.conformance; plug-ins that break a promise fail it."""

from __future__ import annotations

import numpy as np
import pytest

from parties.methods import METHODS, Disguise, Param
from parties.methods.base import condensed, rows
from ppcsim.run.conformance import ROWS, ConformanceError, check_method


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_registered_method_conforms(name, dtype):
    checked = check_method(name, dtype=dtype)
    itemsize = 4 if dtype == "float32" else 8
    per_record = sum(shape[1] if len(shape) == 2 else (ROWS - 1) / 2 for _, shape in checked.arrays)
    assert checked.payload == checked.predicted == int(ROWS * per_record * itemsize)


class Scaled(Disguise):
    """A well-behaved plug-in: the columns times one private seeded factor."""

    name = "scaled"
    randomised = True
    params = {"k": Param(int, required=True, minimum=1)}

    def disguise(self, X, columns):
        factor = np.random.default_rng(self.random_state).uniform(1.0, 2.0)
        return [rows("data", X[:, : self.k] * factor)]


class Unseeded(Scaled):
    """Draws from numpy's global generator, not its random_state: no run can be replayed."""

    name = "unseeded"

    def disguise(self, X, columns):
        return [rows("data", X[:, : self.k] * np.random.uniform(1.0, 2.0))]


class Undeclared(Scaled):
    """Randomised, without saying so."""

    name = "undeclared"
    randomised = False


class Constant(Scaled):
    """Says it is randomised, ignores its seed."""

    name = "constant"

    def disguise(self, X, columns):
        return [rows("data", X[:, : self.k] * 1.5)]


class Wider(Scaled):
    """Sends one dimension more than its k."""

    name = "wider"

    def disguise(self, X, columns):
        return [rows("data", X[:, : self.k + 1])]


class Infinite(Disguise):
    """Divides by a distance that can be zero."""

    name = "infinite"

    def disguise(self, X, columns):
        with np.errstate(divide="ignore"):
            return [rows("data", 1.0 / np.abs(X[:, :1] - X[0, 0]))]


class Short(Disguise):
    """A condensed array one value short."""

    name = "short"

    def disguise(self, X, columns):
        m = len(X)
        return [condensed("sqdist", np.ones(m * (m - 1) // 2 - 1))]


class Singles(Disguise):
    """Sends float32 arrays itself (the party converts; the method must hand float64)."""

    name = "singles"

    def disguise(self, X, columns):
        return [(rows("data", X)._replace(array=X.astype(np.float32)))]


def test_a_new_method_registered_in_one_line_gets_the_checks(monkeypatch):
    monkeypatch.setitem(METHODS, "scaled", Scaled)
    checked = check_method("scaled", {"k": 3}, dtype="float32")
    assert checked.arrays == (("data", (ROWS, 3)),) and checked.payload == ROWS * 3 * 4


@pytest.mark.parametrize("plugin, params, why", [
    (Unseeded, {"k": 2}, "the same seed gave different arrays"),
    (Undeclared, {"k": 2}, "gave different arrays, but the method does not say it is randomised"),
    (Constant, {"k": 2}, "gave the same arrays, but the method says it is randomised"),
    (Wider, {"k": 2}, "it sends 3 dimensions per record, not k = 2"),
    (Infinite, {}, "array 'data' holds NaN or infinite values"),
    (Short, {}, "array 'sqdist' has shape (275,); a condensed matrix over 24 records has (276,)"),
    (Singles, {}, "array 'data' is float32, not float64"),
])
def test_a_broken_plugin_fails_naming_the_check(monkeypatch, plugin, params, why):
    monkeypatch.setitem(METHODS, plugin.name, plugin)
    with pytest.raises(ConformanceError) as err:
        check_method(plugin.name, params)
    assert why in str(err.value)
    assert str(err.value).startswith(f"method '{plugin.name}': ")


def test_a_method_whose_replay_differs_from_what_it_sent_fails(monkeypatch):
    """Deterministic when asked twice in a row, but not on the third call: the observer's replay catches it."""
    calls = []

    class Drifting(Disguise):
        name = "drifting"

        def disguise(self, X, columns):
            calls.append(1)
            return [rows("data", X + (len(calls) > 4))]  # two calls, the other seed and the upload alike; then not

    monkeypatch.setitem(METHODS, "drifting", Drifting)
    with pytest.raises(ConformanceError, match="the observer's replay of array 'data' differs from what the "
                                               "coordinator received"):
        check_method("drifting")
