"""000 Figs 5.1-5.3 drawn as figures (``ppcsim.reproduce.figures000``): well-formed PNG and SVG at a smoke size."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from ppcsim.reproduce import figures000
from ppcsim.reproduce.thesis000_utility import figures_5_1_5_3


@pytest.fixture(scope="module")
def iris_curves():
    """VI against p on iris, one seed (p = 1..3, five methods, three clusterings)."""
    return figures_5_1_5_3(1, names=("iris",), progress=lambda _: None)


def check_figures(folder, name: str) -> None:
    from PIL import Image

    png, svg = (folder / f"thesis000-vi-against-p-{name}.{ext}" for ext in ("png", "svg"))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(png) as image:
        image.verify()
    with Image.open(png) as image:
        assert image.size[0] > 2 * image.size[1] > 400  # three panels side by side
    root = ET.parse(svg).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    text = svg.read_text()
    for words in ("Fig. 5.1: k-means", "Fig. 5.2: hierarchical", "Fig. 5.3: DBSCAN", "NMDS", "DCT"):
        assert words in text  # svg.fonttype none keeps the text as text


def test_the_figures_are_well_formed_png_and_svg(tmp_path, iris_curves):
    written = figures000.vi_figures(iris_curves, tmp_path / "figures")
    assert list(written) == ["iris"]
    check_figures(tmp_path / "figures", "iris")
    first = (tmp_path / "figures" / "thesis000-vi-against-p-iris.svg").read_text()
    figures000.vi_figures(iris_curves, tmp_path / "again")
    assert (tmp_path / "again" / "thesis000-vi-against-p-iris.svg").read_text() == first  # redrawn the same


def test_the_command_redraws_them_from_a_stored_run(tmp_path, iris_curves, capsys):
    stored = tmp_path / "reproduction.json"
    stored.write_text(json.dumps({"thesis000_utility": {"figures_5_1_5_3": iris_curves}}))
    assert figures000.main([str(stored), "--out", str(tmp_path / "out")]) == 0
    check_figures(tmp_path / "out", "iris")
    stored.write_text("{}")
    assert figures000.main([str(stored), "--out", str(tmp_path / "out")]) == 2
    assert "holds no thesis000_utility.figures_5_1_5_3" in capsys.readouterr().err


def test_ppc_reproduce_writes_the_figures_beside_its_page(tmp_path, iris_curves, monkeypatch):
    """``ppc reproduce`` draws Figs 5.1-5.3 into figures/ beside reproduction.md, which shows them (smoke size:
    the thesis' VI curves on iris with one seed; the other thesis tables and the orthogonality count cut down)."""
    from ppcsim.reproduce import reproduction as rp

    orthogonal = rp.rp2_orthogonal
    monkeypatch.setattr(rp, "rp2_orthogonal", lambda: orthogonal(draws=1000))
    monkeypatch.setattr(rp, "thesis_utility", lambda seeds, progress: {"seeds": seeds,
                                                                       "figures_5_1_5_3": iris_curves})
    rp.reproduce(None, None, tmp_path / "out", seeds=1, progress=lambda _: None, table2_draws=5, thesis=True)
    check_figures(tmp_path / "out" / "figures", "iris")
    text = (tmp_path / "out" / "reproduction.md").read_text()
    assert "![VI against p on iris, Figs 5.1-5.3](figures/thesis000-vi-against-p-iris.png)" in text
