"""Alotaibi's thesis ("000") Figs 5.1-5.3 as figures: the variation of information (eq. 5.5) between the
clusterings of X and Y against the dimensions p kept, for RP, PCA, SVD, NMDS and DCT.

``ppc reproduce`` draws them from the numbers ``thesis000_utility.figures_5_1_5_3``
computes (one PNG and one SVG per data set, a panel per clustering: k-means,
Fig. 5.1; hierarchical, Fig. 5.2; DBSCAN, Fig. 5.3) into ``figures/`` beside
``reproduction.md``. They can be redrawn from a stored ``reproduction.json``
without recomputing::

    python -m ppcsim.reproduce.figures000 docs/reproduction.json --out docs/figures
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ppcsim.reproduce.thesis000_utility import CLUSTERINGS, FIG_5_1_BELOW, METHODS  # noqa: E402

#: Each clustering's figure in the thesis and its name on the panel.
PANELS = {"kmeans": ("5.1", "k-means"), "agglomerative": ("5.2", "hierarchical (average linkage)"),
          "dbscan": ("5.3", "DBSCAN")}
#: SVD of centred data is PCA up to signs (docs/reproduction.md, Table 5.8): its line, dashed, lies on PCA's.
STYLE_LABEL = {"svd": "SVD (dashed: on PCA's line)"}
#: The file names, per data set (``.png`` and ``.svg``).
STEM = "thesis000-vi-against-p-{name}"


def vi_figures(figs: dict, out: Path) -> dict[str, Path]:
    """Draw Figs 5.1-5.3 for each data set of ``figs`` (``figures_5_1_5_3``'s result) into ``out``.

    Each method's mean VI over its seeds is a line; a random method's (RP's) band spans the mean plus and
    minus one standard deviation. Fig. 5.1's panel also marks the thesis' statement for wine (VI < 0.08 for
    p = 5..12, §5.2.3.2).

    Returns
    -------
    dict of str to Path
        The PNG of each data set (its SVG beside it).
    """
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    with plt.rc_context({"svg.hashsalt": "ppc-sim", "svg.fonttype": "none"}):  # an SVG that redraws the same
        for name, block in figs.items():
            ps = block["p"]
            fig, axes = plt.subplots(1, len(CLUSTERINGS), figsize=(11, 3.2), layout="constrained", sharey=True)
            for ax, how in zip(axes, CLUSTERINGS):
                number, title = PANELS[how]
                for method, label in METHODS.items():
                    cells = block["vi"][how][method]
                    mean = [c["mean"] for c in cells]
                    style = {"linestyle": "--", "marker": "x"} if method == "svd" else {"marker": "o"}
                    line, = ax.plot(ps, mean, markersize=3, label=STYLE_LABEL.get(method, label), **style)
                    if any(c.get("n", 1) > 1 for c in cells):
                        ax.fill_between(ps, [c["mean"] - c["std"] for c in cells],
                                        [c["mean"] + c["std"] for c in cells], alpha=0.15, color=line.get_color())
                if how == "kmeans" and name == "wine":
                    ax.axhline(FIG_5_1_BELOW, color="grey", linestyle=":", linewidth=1,
                               label=f"thesis: VI < {FIG_5_1_BELOW} for p = 5..12")
                ax.set(title=f"Fig. {number}: {title}", xlabel="p (dimensions kept)", xticks=ps)
                ax.grid(alpha=0.3)
            axes[0].set_ylabel("VI between clusterings of X and Y (bits)")
            axes[0].legend(fontsize=7, frameon=False)
            fig.suptitle(f"{name}: VI against p (000 eq. 5.5, Figs 5.1-5.3)", fontsize=10)
            stem = STEM.format(name=name)
            fig.savefig(out / f"{stem}.png", dpi=100)
            fig.savefig(out / f"{stem}.svg", metadata={"Date": None})
            plt.close(fig)
            written[name] = out / f"{stem}.png"
    return written


def markdown(names, folder: str = "figures") -> str:
    """The images' Markdown, linked relative to ``reproduction.md``."""
    return "\n\n".join(f"![VI against p on {n}, Figs 5.1-5.3]({folder}/{STEM.format(name=n)}.png)" for n in names)


def main(argv: list[str] | None = None) -> int:
    """``python -m ppcsim.reproduce.figures000 reproduction.json --out DIR``: redraw the figures."""
    parser = argparse.ArgumentParser(prog="python -m ppcsim.reproduce.figures000", description=__doc__.split("\n")[0])
    parser.add_argument("json", type=Path, help="a reproduction.json that ppc reproduce wrote")
    parser.add_argument("--out", type=Path, required=True, help="the folder for the PNG and SVG files")
    args = parser.parse_args(argv)
    try:
        stored = json.loads(args.json.read_text())
    except (OSError, ValueError) as exc:
        print(f"figures000: error: {args.json}: {exc}", file=sys.stderr)
        return 2
    figs = stored.get("thesis000_utility", {}).get("figures_5_1_5_3")
    if not figs:
        print(f"figures000: error: {args.json} holds no thesis000_utility.figures_5_1_5_3 (ppc reproduce writes "
              "them unless the thesis part is left out)", file=sys.stderr)
        return 2
    for name, path in vi_figures(figs, args.out).items():
        print(f"{name}: {path} and {path.with_suffix('.svg')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
