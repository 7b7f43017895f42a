"""What a secure-aggregation run says on the console and on its page: the right quantity under the right name.

One ``ppc run`` with k-means++ seeding: the console says the parties sent
their ids (not "uploaded (0 bytes)"), what they send per round, the KS
p-value to enough digits with its verdict; the page's per-round table lists
the seeding steps too, so its total equals the parties' payload in the first
table, and its prediction names the cost model it comes from.
"""

from __future__ import annotations

import html
import re

from conftest import WINE, kmeans, party_table, read_report, run_ppc, scenario_toml, write_scenario
from ppcsim.report.outputs import uniformity

SCENARIO = scenario_toml(
    "secure-words", [party_table("a", WINE[:3], None), party_table("b", ["hue", "proline"], None)], seed=3,
    clustering=kmeans(5, "secure_aggregation", init="k-means++", reveal="distances"))


def test_the_ks_verdict_has_enough_digits_and_says_whether_uniformity_is_rejected():
    assert uniformity(0.003) == ("KS p = 0.003: uniformity rejected at the 5% level (as it is for 1 run in 20 of "
                                 "truly uniform posts)")
    assert uniformity(0.69) == "KS p = 0.69: uniformity not rejected at the 5% level"
    assert uniformity(0.0534).startswith("KS p = 0.053: uniformity not rejected")


def test_console_and_page_of_a_seeded_secure_run(tmp_path):
    path = write_scenario(tmp_path, SCENARIO)
    out = tmp_path / "out"
    done = run_ppc("run", path, "--out", out, "--html")
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "uploaded (0 bytes)" not in err and "5 dims" not in err
    assert "ppc: party a sent its ids (secure aggregation: its columns stay with it)" in err
    assert re.search(r"^a +178 +3 +secure_aggregation +5 per record per round ", err, re.M), err
    assert "(k - 1)*m*8 up for 4 k-means++ seeding steps" in err
    report = read_report(out)
    for party, post in report["privacy"]["posts"]["by_party"].items():
        assert f"privacy of {party}: its posts vs its partial distances: correlation " in err
        assert uniformity(post["uniformity_ks_pvalue"]) in err

    secure, m, k = report["secure_aggregation"], 178, 5
    assert secure["seeding_steps"] == 4
    payload = sum(p["bytes"]["payload"] for p in report["parties"])
    steps = [*secure["per_seeding_step"], *secure["per_round"]]
    assert sum(r["up_payload"] for r in steps) == payload == 2 * (secure["rounds"] * m * k * 8 + (k - 1) * m * 8)

    page = html.unescape(re.sub(r"<[^>]+>", "|", (out / "report.html").read_text()))
    cells = re.sub(r"\|+", "|", page)
    assert "|array bytes|" not in cells and "|message bytes|" not in cells and "numbers per record" not in page
    assert "|predicted B|payload B|serialized B|wire B (up)|" in cells and "|wire B up|wire B down|" in cells
    assert "the secure-aggregation cost model" in page and "004 §4.5 and §5.5" not in cells.split("Secure aggregation")[0]
    assert "|seeding step 1|" in cells and "|seeding step 4|" in cells and "|round 0|" in cells
    total = re.search(r"\|total\|[0-9.]+\|([0-9,]+)\|", cells)
    assert total and int(total.group(1).replace(",", "")) == payload
    for post in report["privacy"]["posts"]["by_party"].values():
        assert uniformity(post["uniformity_ks_pvalue"]) in page
