"""sweep.csv holds the columns its runs measured: with ``--no-attacks`` no attack's columns (they were 125 of its 165
columns, every cell empty), with the attacks on only those of the attacks that applied to some run."""

import csv

from conftest import WINE, kmeans, party_table, write_scenario
from ppcsim.evaluate.settings import Settings
from ppcsim.run.sweep import plan, row, run_point, write_csv


def _columns(tmp_path, settings):
    path = write_scenario(tmp_path, name="cols", seed=1, parties=[party_table("lab", WINE[:5], "drbt", k=2),
                                                                  party_table("shop", WINE[5:9])],
                          clustering=kmeans(3), sweep={"seed": [0, 1]})
    out = tmp_path / ("on" if settings.attacks else "off")
    rows = [row(p, run_point(p, out, settings, in_process=True)) for p in plan(path, out)]
    write_csv(out, rows)
    with open(out / "sweep.csv", newline="") as fh:
        found = list(csv.DictReader(fh))
    return rows, found


def test_without_attacks_no_attack_column_is_written(tmp_path):
    rows, found = _columns(tmp_path, Settings(attacks=False, known_draws=10))
    header = list(found[0])
    assert "privacy_known_io_mean" in rows[0] and "privacy_known_io_mean" not in header
    assert not [k for k in header if k.startswith(("privacy_", "sent_", "ica_", "known_io_"))], header
    assert {"stress", "ari", "bytes_payload", "bytes_payload_lab", "bytes_payload_shop", "bytes_wire"} <= set(header)
    assert [r["bytes_payload_lab"] for r in found] == [str(178 * 2 * 8)] * 2  # per-party bytes, every run


def test_with_attacks_the_measured_ones_stay_and_the_inapplicable_go(tmp_path):
    rows, found = _columns(tmp_path, Settings(known_draws=10))
    header = set(found[0])
    assert all(r["privacy_known_io_mean"] for r in found) and all(r["privacy_ica_mean"] for r in found)
    # multilateration_nmds needs an embedding at the coordinator, which no run has: its columns are left out
    assert "privacy_multilateration_nmds_mean" in rows[0] and "privacy_multilateration_nmds_mean" not in header
