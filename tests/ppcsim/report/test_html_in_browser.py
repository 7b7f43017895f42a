"""The demo's report.html in a real browser (headless Chromium): every figure renders, no script error.

Skipped on a machine without Chromium, except in CI (``CI`` set), where it
fails instead: CI installs Chromium (see .ci/run) and must run this test.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")

#: Put first in <head>: records every script or loading error, then, once the page has loaded, writes what it
#: found into the page, where --dump-dom shows it.
PROBE = """<script>
window.__errors = [];
window.addEventListener("error", e => window.__errors.push(
  (e.message || ("failed to load " + (e.target && (e.target.alt || e.target.src || e.target.tagName))))), true);
window.addEventListener("load", () => {
  const images = [...document.images];
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({
    images: images.map(i => ({alt: i.alt, src: i.getAttribute("src"), complete: i.complete, width: i.naturalWidth,
                              height: i.naturalHeight})),
    errors: window.__errors,
    title: document.title,
  });
  document.body.appendChild(out);
});
</script>"""


def browser() -> str:
    found = next((path for path in map(shutil.which, BROWSERS) if path), None)
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("no Chromium on this machine: CI must install it (apt-get install chromium), see .ci/run")
    pytest.skip("no Chromium on this machine (apt-get install chromium); CI runs this test")


def probe(chromium: str, page, tmp, copy=None) -> dict:
    """Load ``page`` in headless Chromium with the probe and return what it found; the probed copy is ``copy``
    (beside the page, for a page whose images are files of their own), else in ``tmp``."""
    text = page.read_text(encoding="utf-8")
    checked = copy or tmp / "probe.html"
    checked.write_text(text.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    proc = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         f"--user-data-dir={tmp / 'profile'}", "--virtual-time-budget=10000", "--dump-dom", checked.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    found = re.search(r'<pre id="probe"[^>]*>(.*?)</pre>', proc.stdout, re.S)  # a theme may add attributes
    assert found, f"the page did not finish loading in Chromium: {proc.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


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
