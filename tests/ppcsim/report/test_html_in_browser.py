"""The demo's report.html in a real browser (headless Chromium): every figure renders, no script error.

Skipped on a machine without Chromium, except in CI (``CI`` set), where it
fails instead: CI installs Chromium (see .ci/run) and must run this test.
"""

from __future__ import annotations

from conftest import browser, probe


def test_demo_report_renders_in_chromium(demo_run, tmp_path):
    chromium = browser()
    out, proc = demo_run  # the demo writes report.html by itself
    assert proc.returncode == 0, proc.stderr
    seen = probe(chromium, out / "report.html", tmp_path)
    assert seen["errors"] == []
    assert seen["title"] == "ppc-sim run: wine-3-parties"
    # bytes per party, the clusters, privacy per column, and each of the three parties' reconstructions
    assert sorted(i["alt"] for i in seen["images"]) == [
        "attacks_lab", "attacks_shop", "attacks_winery", "bytes per party", "clusters", "privacy per column"]
    for image in seen["images"]:
        assert image["complete"] and image["width"] > 300 and image["height"] > 150, image
