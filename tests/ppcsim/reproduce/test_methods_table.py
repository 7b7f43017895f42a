"""docs/methods.md's table is what its own sweep gives (``ppcsim.reproduce.methods_table``)."""

from __future__ import annotations

import pytest

from conftest import ROOT, run_ppc
from ppcsim.reproduce.methods_table import methods_table, page_table

PAGE = ROOT / "docs" / "methods.md"


def test_a_row_is_the_mean_over_seeds_with_dashes_where_an_attack_does_not_apply(tmp_path):
    csv = tmp_path / "sweep.csv"
    head = ("param_method,stress,np,ari,ari_truth,privacy_known_io_mean,privacy_known_io_forward_mean,"
            "privacy_ica_mean,privacy_multilateration_mean,privacy_multilateration_nmds_mean,bytes_payload\n")
    csv.write_text(head + "drbt,0.1,0.5,0.25,0.5,0.1,0.2,0.3,,,100\ndrbt,0.2,0.6,0.75,0.7,0.2,0.3,0.4,,,101\n"
                   "nmds,0.1,0.3,0.8,0.7,,,,0.0,0.125,7000\n")
    table = methods_table(csv).splitlines()
    assert table[2] == "| `drbt` | 0.150 | 0.550 | 0.500 | 0.600 | 0.150 | 0.250 | 0.350 | - | 100 |"
    assert table[3] == "| `nmds` | 0.100 | 0.300 | 0.800 | 0.700 | - | - | - | 0.000 (embedding: 0.125) | 7,000 |"


@pytest.mark.slow
def test_the_page_table_is_what_its_sweep_gives_now(tmp_path):
    """Reruns the command the page names (30 in-process points) and compares the whole table."""
    proc = run_ppc("sweep", ROOT / "scenarios" / "sweep-methods.toml", "--out", tmp_path / "methods", "--in-process",
                   timeout=1800)
    assert proc.returncode == 0, proc.stderr
    assert methods_table(tmp_path / "methods" / "sweep.csv") == page_table(PAGE)
