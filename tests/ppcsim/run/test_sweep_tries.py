"""A sweep over drbt's ``tries`` (004 §5.2 step 3): local stress, utility and privacy side by side."""

from __future__ import annotations

import matplotlib.image

from conftest import LAB_SHOP_DRBT, WINE_LABELLED, changed, scenario_toml, write_scenario
from ppcsim.evaluate.settings import Settings
from ppcsim.report.plots import sweep_figures
from ppcsim.run.sweep import apply_point, sweep, sweep_notes


def test_tries_reaches_every_party_whose_method_takes_it():
    raw = {"parties": [dict(p) for p in changed(LAB_SHOP_DRBT, "shop", method="none", k=None, projection=None)]}
    point = apply_point(raw, {"tries": 7})
    assert point["parties"][0]["tries"] == 7 and "tries" not in point["parties"][1]
    assert sweep_notes(raw, {"tries": [1, 7]}) == ["'tries' applies to lab only: shop (none) takes no 'tries'"]


def test_a_sweep_over_tries_gives_local_stress_beside_ari_and_privacy(tmp_path):
    path = write_scenario(tmp_path, scenario_toml("tries", LAB_SHOP_DRBT, seed=0, data=WINE_LABELLED,
                                                  clustering={"n_clusters": 3}, sweep={"tries": [1, 8], "seed": [0, 1]}))
    rows = sweep(path, tmp_path / "out", settings=Settings(known_draws=3), in_process=True)
    assert [(r["param_tries"], r["param_seed"]) for r in rows] == [(1, 0), (1, 1), (8, 0), (8, 1)]
    for one, eight in zip(rows[:2], rows[2:]):
        assert one["own_tries_used"] == 1 and eight["own_tries_used"] == 8
        assert eight["own_local_stress"] <= one["own_local_stress"]  # the first draw is among the eight
        for row in (one, eight):
            assert 0 <= row["ari"] <= 1 and row["privacy_known_io_mean"] is not None
    figures = sweep_figures(rows, tmp_path / "out" / "figures")
    image = matplotlib.image.imread(figures["tries"])
    assert image.shape[0] > 150 and image.shape[1] > 500
