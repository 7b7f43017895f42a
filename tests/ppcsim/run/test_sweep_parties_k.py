"""A ``parties`` sweep whose first party's drbt ``k`` cannot be shared out over as many parties is refused with the
other problems of the grid, naming the point, the party and the k that would do (it used to end in a traceback)."""

import pytest

from conftest import WINE, kmeans, party_table, write_scenario
from ppcsim.run.sweep import plan
from ppcsim.scenario.load import ScenarioError, load_scenario


def test_a_k_smaller_than_the_swept_parties_is_a_listed_problem_not_a_traceback(tmp_path):
    path = write_scenario(tmp_path, name="sp", parties=[party_table("lab", WINE[:5], "drbt", k=3),
                                                        party_table("shop", WINE[5:])],
                          clustering=kmeans(3), sweep={"parties": [2, 3, 4], "seed": [0, 1]})
    with pytest.raises(ScenarioError) as info:
        plan(path, tmp_path / "out")
    why = ("[[parties]] 'lab': its k = 3, the total output dimensions, cannot be shared out over 4 parties (at least "
           "1 each, at most their columns): give it a k from 4 to 13")
    assert info.value.errors == [f"point 4 {{'parties': 4, 'seed': 0}}: {why}", f"point 5 {{'parties': 4, 'seed': 1}}: {why}"]
    path.write_text(path.read_text().replace("k = 3", "k = 4"))
    assert [len(load.parties) for load in (load_scenario(p.path) for p in plan(path, tmp_path / "out2"))] == [2, 2, 3, 3, 4, 4]

