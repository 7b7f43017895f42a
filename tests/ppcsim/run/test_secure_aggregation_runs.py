"""Secure-aggregation k-means with real party processes over TLS: through ``ppc run`` with mutual TLS, and the
roles by hand."""

from __future__ import annotations

from conftest import WINE_SECURE_AGGREGATION as WINE
from conftest import by_hand, read_report, run_ppc, write_scenario


def test_ppc_run_over_mutual_tls_gives_scikit_learns_labels(tmp_path):
    path = write_scenario(tmp_path, WINE + "[security]\nmutual = true\n")
    done = run_ppc("run", path, "--out", tmp_path / "out", "--html")
    assert done.returncode == 0, done.stderr
    assert "<h2>Secure aggregation</h2>" in (tmp_path / "out" / "report.html").read_text()
    report = read_report(tmp_path / "out")
    assert report["utility"]["labels_equal_same_init"]
    secure = report["secure_aggregation"]
    assert secure["rounds"] > 2 and all(p["exact"] for p in secure["by_party"].values())
    assert all(p["bytes"]["payload"] == p["bytes"]["predicted"] for p in report["parties"])
    assert all(p["bytes"]["wire_down"] > 0 and p["bytes"]["wire"] > p["bytes"]["serialized"]
               for p in report["parties"])
    assert "secure aggregation:" in done.stderr and "equal to scikit-learn" in done.stderr


def test_roles_by_hand_over_tls(tmp_path):
    path = write_scenario(tmp_path, WINE + "[security]\nmutual = true\n")
    errors = by_hand(path, tmp_path, ["lab", "winery", "shop"])
    assert all("rounds of secure aggregation" in err for err in errors.values())
    out = tmp_path / "out"
    report = read_report(out)
    assert report["state"] == "done" and report["secure_aggregation"]["rounds"] > 2
    assert all(p["exact"] for p in report["secure_aggregation"]["by_party"].values())
    lab = (tmp_path / "lab.csv").read_text().splitlines()
    assert lab[0] == "id,cluster" and len(lab) == 179
    assert lab == (tmp_path / "shop.csv").read_text().splitlines()
