"""Self-contained HTML reports (tables and figures embedded) that open in any browser."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

from coordinator.clustering import SECURE
from parties.methods import METHODS
from ppcsim.evaluate.agreement import AGREEMENT
from ppcsim.evaluate.artifacts import RunArtifacts
from ppcsim.evaluate.attackers import ATTACKS
from ppcsim.evaluate.classification import CLASSIFIERS
from ppcsim.evaluate.scores import PRIVACY_METRICS
from ppcsim.report.ledger import apart_lines
from ppcsim.report.model import ABSENT, AttackScore, MpcPrivacy, OwnCheck, Party, Report, SecurePrivacy, Skipped, as_report, given
from ppcsim.report.outputs import own_check_words, uniformity

STYLE = """
body{font-family:system-ui,sans-serif;max-width:72em;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right;vertical-align:top}
th{background:#f3f3f3}td:first-child,th:first-child,td.t,th.t{text-align:left}
.wide{overflow-x:auto;max-width:100%}.nowrap td{white-space:nowrap}
img{max-width:100%;border:1px solid #eee;margin:.5em 0}
figure{margin:1em 0}figcaption{color:#555;font-size:.9em}
.note{color:#555;font-size:.9em}
.na{color:#999;font-style:italic}
.zero{font-weight:bold;color:#b00}.exact{font-weight:bold;color:#070}
sup a{text-decoration:none}
dt{font-weight:bold;margin-top:.6em}dd{margin-left:1.5em}
ol.notes{font-size:.85em;color:#444}
"""

#: Shown where a value was not measured (an attack that does not apply, a run without attacks).
NOT_MEASURED = "<span class='na' title='not measured'>not measured</span>"
#: Below this a privacy or stress value is zero but for floating-point rounding.
ROUNDING = 1e-9



def _cell(value) -> str:
    if value is None:
        return NOT_MEASURED
    if isinstance(value, Raw):
        return value.html
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}"
    return html.escape(str(value))


class Raw:
    """A table cell that is already HTML."""

    def __init__(self, text: str, left: bool = True):
        self.html, self.left = text, left


#: What a stress of 0 means: every distance kept, the best value (004 eq. 6), marked as good, not as a loss.
STRESS_ZERO = "every distance kept exactly: the best value"


def score(value: float | None, *, zero_means: str = "recovered exactly") -> Raw:
    """A privacy or stress value; an exact (or rounding-level) zero is marked, and never looks like a gap: in red
    where it is a loss (a column recovered exactly), in green where it is the best value (stress: every distance
    kept, ``STRESS_ZERO``)."""
    if value is None:
        return Raw(NOT_MEASURED, left=False)
    if abs(value) < ROUNDING:
        shown = "0" if value == 0 else f"0 <span class='note'>({value:.3g}, floating-point rounding)</span>"
        mark = "exact" if zero_means == STRESS_ZERO else "zero"
        return Raw(f"<span class='{mark}' title='{html.escape(zero_means)}'>{shown}</span>", left=False)
    return Raw(f"{value:.4g}", left=False)


def _figure(metric: str, value: float | None) -> Raw:
    """A one-figure privacy metric; its zero is marked only when 0 means "recovered exactly"."""
    if value is None or PRIVACY_METRICS[metric].recovered == 0:
        return score(value, zero_means="recovered exactly")
    return Raw(f"{value:.4g}", left=False)


def _over_draws(scored: AttackScore | None) -> Raw:
    """An averaged attack's mean column privacy over its draws: median [interquartile range] and the draws."""
    if scored is None or not scored.get("median") or not scored.get("iqr"):
        return Raw(NOT_MEASURED, left=False)
    median, iqr = scored["median"], scored["iqr"]
    return Raw(f"{median['mean']:.4g} [{iqr['mean']:.4g}], {given(scored.draws)}", left=False)


def table(header: list[str], rows: list[list], nowrap: bool = False) -> str:
    """A table, scrollable sideways when wider than the page; ``nowrap`` keeps each cell on one line."""
    def text(v) -> bool:  # left-aligned, as text reads
        return isinstance(v, str) or getattr(v, "left", False)

    def td(v) -> str:
        return f"<td{' class=t' if text(v) else ''}>{_cell(v)}</td>"

    # a column's header is aligned as its cells: left over text, right over numbers
    texts = [bool(rows) and all(text(r[j]) or r[j] is None for r in rows if j < len(r)) for j in range(len(header))]
    head = "".join(f"<th{' class=t' if t else ''}>{html.escape(h)}</th>" for h, t in zip(header, texts))

    body = "".join("<tr>" + "".join(td(v) for v in r) + "</tr>" for r in rows)
    return f"<div class='wide{' nowrap' if nowrap else ''}'><table><tr>{head}</tr>{body}</table></div>"


def image(path: Path, alt: str, caption: str = "") -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode()
    img = f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
    return f"<figure>{img}<figcaption>{caption}</figcaption></figure>" if caption else img


def page(title: str, sections: list[str]) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>{''.join(sections)}</body></html>")


class Notes:
    """Numbered footnotes: where a plain-language label comes from in the papers."""

    def __init__(self):
        self.texts: list[str] = []

    def __call__(self, text: str) -> str:
        if text not in self.texts:
            self.texts.append(text)
        n = self.texts.index(text) + 1
        return f"<sup><a href='#note-{n}' id='ref-{n}'>{n}</a></sup>"

    def html(self) -> str:
        if not self.texts:
            return ""
        items = "".join(f"<li id='note-{i}'>{t}</li>" for i, t in enumerate(self.texts, 1))
        return ("<h2>Sources</h2><p class='note'>Oliveira &amp; Za&iuml;ane, <i>Privacy-Preserving Clustering by "
                "Object Similarity-Based Representation and Dimensionality Reduction Transformation</i> (2004) is "
                "cited as 004; Chen &amp; Liu, <i>Geometric Data Perturbation</i> as 002; Alotaibi's PhD thesis as "
                f"000; its companion paper with de la Iglesia as 003; the survey of perturbation methods as 001.</p>"
                f"<ol class='notes'>{items}</ol>")


#: What each method does, in plain words, and where it comes from.
def method_words(name: str) -> tuple[str, str]:
    """A registered method's words and source (``Disguise.summary``, ``Disguise.source``), or its bare name."""
    cls = METHODS.get(name)
    return (cls.summary or name, cls.source) if cls is not None else (name, "")


PROJECTIONS = {
    "gaussian": ("Gaussian", "004 eq. 8 (RP1)"),
    "sparse": ("sparse", "004 eq. 9 (RP2)"),
    "sparse-unit": ("sparse, unit-length columns", "004 eq. 9 and Table 3 (RP2 as the paper built it)"),
    "orthonormal": ("orthonormal (a Haar-random frame)", "000 §5.2, Table 5.8"),
}


def agreement_directions() -> str:
    """E.g. "ARI, NMI and F-measure: 1 is identical; misclassified and VI: 0 is identical", from ``AGREEMENT``."""

    def listed(names: list[str]) -> str:
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"

    groups = {value: [m.short for m in AGREEMENT.values() if m.identical == value]
              for value in sorted({m.identical for m in AGREEMENT.values()}, reverse=True)}
    return "; ".join(f"{listed(names)}: {value:g} is identical" for value, names in groups.items())


def classification_section(found, notes) -> str:
    """The classifiers' cross-validated accuracy on the disguised and the original data, or why it is not there."""
    if found is ABSENT:
        return ""
    if isinstance(found, Skipped):
        return f"<p>Classification accuracy: not measured ({html.escape(found.skipped)}).</p>"
    rows = [[Raw(html.escape(CLASSIFIERS[name].plain if name in CLASSIFIERS else name)
                 + (notes(CLASSIFIERS[name].source) if name in CLASSIFIERS else "")),
             *[Raw(f"{v:{form}}", left=False) for v, form in ((a.disguised, ".4f"), (a.original, ".4f"),
                                                               (a.disguised - a.original, "+.4f"))]]
            for name, a in found.classifiers.items()]
    return (f"<p>Classification of the true labels{notes('000 §5.3; 003 Table I')}: mean accuracy over "
            f"{found.folds} stratified folds (scikit-learn's StratifiedKFold, shuffled with seed {found.seed}) on "
            f"{found.records:,} records, the same folds for the disguised features the coordinator joined and for "
            "the original joined columns.</p>"
            + table(["classifier", "accuracy, disguised", "accuracy, original", "difference"], rows))


def attack_words(name: str) -> tuple[str, str]:
    """An attack's name in plain words and its source, as registered (the bare name if it is not)."""
    return (ATTACKS[name].plain, ATTACKS[name].source) if name in ATTACKS else (name, "")


GLOSSARY = [
    ("stress", "How much the distances between records changed: the square root of the sum of squared "
     "differences between the original and the disguised distances over the sum of the squared original "
     "distances. 0: every distance kept; tiny values like 1e-16 are zero but for floating-point rounding.",
     "004 eq. 6"),
    ("payload, serialized and wire bytes", "Payload: the bytes of the arrays a party sent. Serialized: the protobuf "
     "messages that carried them, with ids and headers. Wire: what the party's TCP connection carried, TLS and "
     "HTTP/2 included.", "004 §4.5 (OSBR) and §5.5 (DRBT) for the prediction"),
]


def glossary_entries() -> list[tuple[str, str, str]]:
    """``GLOSSARY`` with, after stress, the registered agreement measures, privacy metrics and attacks."""
    registered = [*[(m.term, m.meaning, m.source) for m in AGREEMENT.values()],
                  *[(m.term, m.meaning, m.source) for m in PRIVACY_METRICS.values() if m.term],
                  *[(a.term, a.meaning, a.source) for a in ATTACKS.values() if a.term],
                  *[(c.term, c.meaning, c.source) for c in CLASSIFIERS.values()]]
    return [GLOSSARY[0], *registered, *GLOSSARY[1:]]


def glossary(notes: Notes) -> str:
    items = "".join(f"<dt id='g-{html.escape(term.split(' ')[0].lower())}'>{html.escape(term)}</dt>"
                    f"<dd>{html.escape(text)}{notes(src)}</dd>" for term, text, src in glossary_entries())
    return f"<h2>Glossary</h2><dl>{items}</dl>"


def what_sent(p: Party) -> str:
    """In words: what one party's arrays were, e.g. '3 numbers per record' or one value per pair of records."""
    if p.output_dims is None:
        return "nothing received"
    if p.method == SECURE:
        return (f"its ids once, then {p.output_dims} masked partial distances per record in every round (and one "
                "per record in every k-means++ seeding step)")
    if p.sends == "dissimilarities":
        m = p.rows or 0
        n = len(p.arrays)
        each = f"one per pair of its {m:,} records (m(m-1)/2 = {p.output_dims:,})"
        return (f"{n} arrays of {p.output_dims:,} values: {', '.join(p.arrays)}, each " if n > 1
                else f"{p.output_dims:,} values: ") + each
    return f"{p.output_dims} number{'s' if p.output_dims != 1 else ''} per record"


def _method_words(p: Party, notes: Notes) -> str:
    words, src = method_words(p.method)
    text = html.escape(words) + (notes(src) if src else "")
    projection = p.params.get("projection")
    if projection in PROJECTIONS:
        kind, psrc = PROJECTIONS[projection]
        text += f", {kind}{notes(psrc)}"
    if "metric" in p.params:
        text += f", {html.escape(str(p.params['metric']))} metric"
    return text + f" <span class='note'>({html.escape(p.method)})</span>"


def _seconds(value) -> str:
    return "-" if value is None else f"{value:.3f} s"


def samples_section(report: Report, artifacts: RunArtifacts, records: int = 5) -> str:
    """For the first few joined records: each party's original (normalised) values beside what it sent."""
    own, outcome = artifacts.own, artifacts.outcome
    if not own or outcome is None:
        return ""
    out = [f"<h2>What each party sent, beside its original</h2><p>The first {records} records of the join, by "
           "the party's own id (the coordinator joins on pseudonyms of them, unless the scenario sends plain ids). "
           "<i>Original</i> is the party's columns after its own normalisation (what its disguise starts from); "
           "<i>sent</i> is exactly what the coordinator received (also in sent/&lt;party&gt;.npz).</p>"]
    for p in report.parties:
        mine = own.get(p.name)
        if mine is None:
            continue
        rows = outcome.join.index[p.name][:records]
        sent = mine.wire_arrays()
        header = ["id", *[f"original {c}" for c in mine.data.columns]]
        first = next(iter(sent.values()))
        if first.ndim == 2:
            header += [f"sent {j + 1}" for j in range(first.shape[1])]
            body = [[str(i), *[float(v) for v in mine.X[r]], *[float(v) for v in first[r]]]
                    for i, r in zip(mine.data.ids[rows].tolist(), rows)]
        else:
            # a condensed triangle: the party's pairs in its own row order; show each record's distance to the next
            m = mine.X.shape[0]
            name = next(iter(sent))
            header += [f"sent {name}: to the next record"]

            def pair(i: int, j: int, first=first, m=m) -> float:
                i, j = min(i, j), max(i, j)
                return float(first[m * i - i * (i + 1) // 2 + (j - i - 1)])

            nxt = list(outcome.join.index[p.name][1:records + 1])
            body = [[str(i), *[float(v) for v in mine.X[r]], pair(int(r), int(s)) if s != r else None]
                    for i, r, s in zip(mine.data.ids[rows].tolist(), rows, nxt)]
        out.append(f"<h3>{html.escape(p.name)}: {html.escape(method_words(p.method)[0])}</h3>")
        out.append(table(header, body))
    return "".join(out)


def run_page(report: Report | dict, figures: dict[str, Path], artifacts: RunArtifacts | None = None) -> str:
    """One run, in plain language: what was sent and what it cost, the clusters, utility, privacy and the
    attacks' reconstructions, security, network and timings, a glossary and the sources."""
    report = as_report(report)
    notes = Notes()
    s = [f"<p class='note'>scenario file {html.escape(report.scenario_file)}, seed {report.seed}, "
         f"state {report.state}{': ' + html.escape(report.error) if report.error else ''}. "
         "Every number below is also in report.json.</p>"]
    s.append("<h2>What each party sent</h2>")
    rows = []
    for p in report.parties:
        b = p.bytes
        rows.append([p.name, Raw(_method_words(p, notes)), p.rows, ", ".join(p.columns), what_sent(p),
                     b.predicted, b.payload, b.serialized, given(b.wire)])
    s.append(table(["party", "disguise", "records", "its columns", "it sent", "predicted B", "payload B",
                    "serialized B", "wire B (up)"], rows))
    secure = report.secure_aggregation is not ABSENT
    model = ("the secure-aggregation cost model (docs/secure-aggregation.md, Sizes: m*k*8 bytes up and m*4 down "
             "per round, (k - 1)*m*8 up for the seeding steps)" if secure
             else f"the paper's cost model{notes('004 §4.5 and §5.5')}")
    s.append(f"<p class='note'><i>Predicted</i>: {model}. "
             "<i>Payload</i>: the array bytes the coordinator received. <i>Serialized</i>: the protobuf messages "
             "that carried them (ids, headers, framing). <i>Wire (up)</i>: what the party's TCP connection "
             "carried to the coordinator, TLS and HTTP/2 included, counted by a relay between party and "
             "coordinator (the bytes down are under Network).</p>")
    checked = [(p.name, p.own_check) for p in report.parties if isinstance(p.own_check, OwnCheck)]
    if checked:  # 004 §5.2 step 3: the data owner checks its own disguise before anything leaves its hands
        s.append(f"<p>What each party measured of its own disguise before sending it{notes('004 §5.2')}, on its "
                 "own block only (never sent): " + "; ".join(
                     f"{html.escape(name)}: {html.escape(own_check_words(check))}" for name, check in checked) + ".</p>")
    if "bytes" in figures:
        s.append(image(figures["bytes"], "bytes per party"))
    if artifacts is not None and artifacts.filled:
        s.append(samples_section(report, artifacts))
    j, c = report.join, report.clustering
    if j.rows_joined is not None:
        s.append(f"<h2>Join and clustering</h2><p>{j.rows_joined:,} records in common; dropped because not every "
                 "party holds them: " + ", ".join(f"{html.escape(k)} {v}" for k, v in (j.dropped or {}).items())
                 + f".</p><p>{html.escape(c.algorithm)} on {html.escape(c.input or '')}: "
                 f"{c.n_clusters_found} clusters of sizes {', '.join(map(str, c.sizes or []))}"
                 + (f", {c.noise} noise records" if c.noise else "") + ".</p>")
    if "clusters" in figures:
        s.append(image(figures["clusters"], "clusters", "The original joined data (each party's normalised columns "
                       "side by side), drawn on its first two principal components. Left: coloured by the clustering "
                       "the coordinator computed from the disguised data, with cluster numbers matched to the right "
                       "picture's; circled records are where the two differ. Right: the same algorithm on the "
                       "original data. Nobody in the protocol ever sees this picture; only the observer can draw it."))
    u = given(report.utility)
    if u and report.secure_aggregation is not ABSENT:
        s.append(secure_section(report))
        u = None
    if u and report.mpc is not ABSENT:
        s.append(mpc_section(report))
        u = None
    if u:
        st = given(u.stress)
        s.append(f"<h2>Utility: what the disguise cost</h2><p>Distance distortion (stress{notes('004 eq. 6')}): "
                 f"{_cell(score(st, zero_means=STRESS_ZERO))} over {u.stress_records:,} records"
                 + (" (zero but for rounding: every distance was kept)" if st is not None and st < ROUNDING else "")
                 + f". Compared with {html.escape(str(u.reference))}.</p>")
        against = [(k, m) for k, m in (("vs_original", u.vs_original), ("vs_truth", u.vs_truth),
                                       ("original_vs_truth", u.original_vs_truth)) if m is not ABSENT]
        names = {"vs_original": "private clustering vs the clustering of the original data",
                 "vs_truth": "private clustering vs the true labels",
                 "original_vs_truth": "clustering of the original data vs the true labels"}
        keys = list(against[0][1])
        plain = {k: m.plain for k, m in AGREEMENT.items()}
        s.append(table(["agreement", *[plain.get(k, k) for k in keys]], [[names[n], *[m[k] for k in keys]] for n, m in against]))
        s.append(classification_section(u.classification, notes))
        s.append(f"<p class='note'>{agreement_directions()} (see the glossary).</p>")
    priv = given(report.privacy)
    if isinstance(priv, dict) and priv:
        s.append("<h2>Privacy: what an attacker recovers</h2><p>For each party, each attack that applies to what "
                 f"it sent tries to rebuild its original columns. <i>Column privacy</i>{notes('002 §6.1.1')} is the "
                 "spread of the attacker's error on each column scaled to [0, 1]: "
                 "<span class='zero'>0</span> means recovered exactly (shown in red), higher is safer; "
                 f"{NOT_MEASURED} means the attack does not apply.</p>")
        # one column per registered one-figure metric averaged over the draws (VD; the rank metrics, measured on
        # one draw, are in report.json)
        extra = [name for name, m in PRIVACY_METRICS.items() if not m.per_column and not m.first_draw_only]
        rows = []
        for party, entry in priv.items():
            for attack, r in entry.attacks.items():
                words, src = attack_words(attack)
                scored = r if isinstance(r, AttackScore) else None
                rows.append([party, Raw(html.escape(words) + (notes(src) if src else "")),
                             given(r.knowledge, getattr(r, "skipped", None)),
                             score(scored.min if scored else None), score(scored.mean if scored else None),
                             _over_draws(scored),
                             *[_figure(name, scored.get(name) if scored else None) for name in extra]])
        s.append(table(["party", "attack", "the attacker knows", "column privacy, worst column",
                        "column privacy, mean", "mean over draws: median [interquartile range], draws",
                        *[PRIVACY_METRICS[name].plain for name in extra]], rows))
        if "privacy" in figures:
            s.append(image(figures["privacy"], "privacy per column", "Column privacy of every original column "
                           "against each attack (a missing bar: zero, or an attack that does not apply; the "
                           "table above tells which)."))
        for name, path in figures.items():
            if name.startswith("attacks_"):
                s.append(image(path, name, f"Each attack's estimate of {html.escape(name[8:])}'s original columns "
                               "against their true values (normalised), for up to 500 records (for known "
                               "input-output, records the attacker did not know); on the diagonal: recovered "
                               "exactly."))
    elif isinstance(priv, Skipped):
        s.append(f"<h2>Privacy</h2><p>{NOT_MEASURED}: the attacks were skipped ({html.escape(priv.skipped)}).</p>")
    sec = report.security
    s.append("<h2>Security</h2><p>Settings: TLS " + ("on" if sec.tls else "off") + ", mutual TLS "
             + ("on" if sec.mutual else "off") + ", per-party tokens " + ("on" if sec.tokens else "off") + ".</p>")
    s.append(table(["party", "connection", "identified by"],
                   [[name, v.transport, v.identity] for name, v in sec.parties.items()]))
    net = [(p, p.network) for p in report.parties if p.network is not ABSENT]
    if net:
        s.append("<h2>Network</h2>")
        s.append(table(["party", "link", "wire B up", "wire B down", "connections", "join and upload took"],
                       [[p.name, n.link, given(p.bytes.wire), given(p.bytes.wire_down), n.connections, _seconds(n.upload_seconds)]
                        for p, n in net]))
    t = report.timing
    phases = [(k, v) for k, v in (("start", t.start), ("parties_and_clustering", t.parties_and_clustering),
                                  ("evaluate", t.evaluate), ("total", t.total)) if v is not ABSENT]
    s.append("<h2>Timings</h2>" + table(["phase", "seconds"], [[k.replace("_", " "), f"{v:.3f}"] for k, v in phases]))
    party_phases = list(dict.fromkeys(k for p in report.parties for k in p.timing))
    if party_phases:
        s.append(table(["party", *[k.replace("_", " ") for k in party_phases]],
                       [[p.name, *[_seconds(p.timing.get(k)) for k in party_phases]] for p in report.parties]))
    if t.coordinator:
        s.append(table(["coordinator", "seconds (since the session opened, or spent)"],
                       [[k.replace("_", " "), f"{v:.3f}"] for k, v in t.coordinator.items()]))
    tot = report.communication.totals
    s.append(f"<h2>Communication</h2><p>up: {tot.up.messages} messages, {tot.up.serialized:,} B "
             f"serialized ({tot.up.payload:,} B payload); down: {tot.down.messages} messages, "
             f"{tot.down.serialized:,} B. Every message is in report.json under communication.ledger.</p>")
    s += [f"<p>{html.escape(line)}</p>" for line in apart_lines(report)]  # the helper's, status polls
    s.append(glossary(notes))
    s.append(notes.html())
    return page(f"ppc-sim run: {report.scenario}", s)


def secure_section(report: Report) -> str:
    """A secure-aggregation run: its rounds, utility and what the arbiter learned (docs/secure-aggregation.md)."""
    a, u, p = report.secure_aggregation, report.utility, report.privacy
    if a is ABSENT or u is ABSENT:
        return ""
    if given(a.reveal) == "labels":
        return labels_section(report)
    out = [f"<h2>Secure aggregation</h2><p>{a.rounds} rounds after {given(a.seeding_steps, 0)} seeding steps "
           f"(init {html.escape(str(given(a.init_method)))}); labels "
           f"{'equal' if given(u.labels_equal_same_init) else 'not equal'} to scikit-learn's KMeans from the same "
           f"initial records; ARI against the usual clustering of the original data {u.vs_original['ari']:.3f}."
           "</p>"]
    steps, rounds = given(a.per_seeding_step, []), given(a.per_round, [])
    rows = [[f"seeding step {r.index}", f"{r.seconds:.3f}", "", r.up_payload, r.down_payload] for r in steps]
    rows += [[f"round {r.index}", f"{r.seconds:.3f}", r.changed, r.up_payload, r.down_payload] for r in rounds]
    rows.append(["total", f"{sum(r.seconds for r in [*steps, *rounds]):.3f}", "",
                 sum(r.up_payload for r in [*steps, *rounds]), sum(r.down_payload for r in [*steps, *rounds])])
    out.append(table(["step", "seconds", "labels changed", "payload up B", "payload down B"], rows))
    out.append("<p class='note'>Payload of the seeding steps and rounds, all parties together; the total up is "
               "what the parties' payload in the first table adds up to. The labels of the final result "
               "(GetResult) and the alignment come on top of the total down.</p>")
    if isinstance(p, SecurePrivacy):
        out.append("<p>The coordinator saw: " + "; ".join(map(html.escape, p.arbiter.sees))
                   + ". It never saw: " + "; ".join(map(html.escape, p.arbiter.never_sees)) + ".</p>")
        out.append(placement_words(p.arbiter))
        for party, post in (p.posts.by_party if p.posts is not ABSENT else {}).items():
            out.append(f"<p>{html.escape(party)}'s last post as the coordinator received it, against its true "
                       f"partial distances: correlation {post.correlation_with_partial_distances:+.3f}; "
                       f"{html.escape(uniformity(post.uniformity_ks_pvalue))}.</p>")
        ml = p.multilateration
        out.append("<p>Multilateration from the initial records: "
                   + (html.escape(ml.skipped) if isinstance(ml, Skipped) else
                      f"column privacy min {ml.min:.3f}, mean {ml.mean:.3f} (0 = recovered)") + ".</p>")
    return "".join(out)


def placement_words(arbiter) -> str:
    """The arbiter's own attack (its Placement), in a sentence; empty when the report has none."""
    pl = getattr(arbiter, "placement", ABSENT)
    if pl is ABSENT:
        return ""
    if pl.relative_error is None:
        return f"<p>The arbiter's own attack ({html.escape(pl.attack)}): {html.escape(given(pl.skipped, ''))}.</p>"
    return (f"<p>The arbiter's own attack ({html.escape(pl.attack)}) placed the {pl.records} joined records to a "
            f"relative error of {pl.relative_error:.3g} (0: exactly, up to a rotation; 1: not at all), in "
            f"{pl.dims} of the data's dimensions.</p>")


def labels_section(report: Report) -> str:
    """A secure-aggregation run that opened the labels only: its rounds, its bytes beside the cost model, and
    the relay and roles as for an MPC (docs/secure-aggregation.md)."""
    a, u = report.secure_aggregation, report.utility
    if a is ABSENT or u is ABSENT:
        return ""
    out = [f"<h2>Secure aggregation, labels only</h2><p>{a.rounds} rounds, each an argmin over the parties' "
           f"secret-shared partial distances that opened only the labels; labels "
           f"{'equal' if given(u.labels_equal_same_init) else 'not equal'} to scikit-learn's KMeans from the same "
           f"initial records; ARI against the usual clustering of the original data {u.vs_original['ari']:.3f}.</p>"]
    rows = [[html.escape(name), b.predicted.up, b.payload.up, b.predicted.down, b.payload.down,
             "yes" if b.exact else "no"] for name, b in given(a.by_party, {}).items()]
    out.append(table(["party", "predicted up B", "relayed up B", "predicted down B", "relayed down B",
                      "within the model"], rows))
    out.append(mpc_section(report, heading=""))
    return "".join(out)


def mpc_section(report: Report, heading: str = "Secure multiparty computation") -> str:
    """An MPC run: who held shares, the relayed bytes per link and per round, and what each role learned."""
    m, u, p = report.mpc, report.utility, report.privacy
    if m is ABSENT or u is ABSENT:
        return ""
    out = [(f"<h2>{heading}</h2>" if heading else "") + f"<p>{len(m.parties)} share-holders "
           f"({html.escape(', '.join(m.parties))}), threshold t = {m.threshold}, {m.rounds} Lloyd rounds on secret "
           f"shares; labels {'equal' if given(u.labels_equal_same_init) else 'not equal'} to scikit-learn's KMeans "
           f"from the same initial records; ARI against the usual clustering of the original data "
           f"{u.vs_original['ari']:.3f}.</p>"]
    out.append(table(["sender", "receiver", "frames", "bytes (sealed)"],
                     [[html.escape(link.sender), html.escape(link.receiver), link.frames, link.bytes]
                      for link in given(m.links, [])]))
    out.append(table(["round", "frames", *map(html.escape, m.parties)],
                     [["input" if r.round < 0 else r.round, r.frames, *[r.up.get(q, 0) for q in m.parties]]
                      for r in given(m.per_round, [])]))
    if isinstance(p, MpcPrivacy):
        out.append(f"<p>Assumption: {html.escape(p.assumption)}.</p>")
        for role, seen in p.roles.items():
            out.append(f"<p>The {html.escape(role)} saw: " + "; ".join(map(html.escape, seen.sees))
                       + ". It never saw: " + "; ".join(map(html.escape, seen.never_sees)) + ".</p>")
            out.append(placement_words(seen))
    return "".join(out)


#: What each sweep figure shows, before the list of what it leaves out.
SWEEP_CAPTIONS = {
    "stress_vs_dims": "Distance distortion (stress, 004 eq. 6) against the output dimensions sent: a line per "
                      "value of the other swept parameters, at the mean over seeds, with the range over seeds "
                      "shaded. ",
    "utility_vs_privacy": "One point per run: agreement with the clustering of the original data (ARI) against "
                          "the column privacy left by the attack named on the axis; colour (and shape) give the "
                          "swept values. ",
    "methods": "One point per run: agreement (ARI) against the privacy left by the strongest attack that "
               "applies; the marker's area grows with the bytes sent. ",
    "parties": "The same columns re-split over more parties (each a disguise of its own): agreement (ARI), the "
               "privacy left by the strongest attack that applies (when attacks ran) and the payload each party "
               "sent, against the number of parties, at the mean over the other swept values with their range "
               "shaded. ",
    "bytes_vs_rows": "Bytes uploaded by all parties against the records: the paper's prediction (line), the "
                     "arrays received (dots) and, where the points ran as processes, the wire (crosses). ",
}


def _is_score(key: str, value) -> bool:
    """Stress and privacy columns: a zero there means 'kept exactly' or 'recovered exactly', and is marked."""
    return (key == "stress" or key.startswith("privacy_")) and (value is None or isinstance(value, float))


def _runs_cell(key: str, value):
    """A cell of the sweep page's table: a stress or privacy score marked at zero, anything else as it is."""
    if not _is_score(key, value):
        return value
    return score(value, zero_means=STRESS_ZERO if key == "stress" else "recovered exactly")


#: The sweep page's table: after the point and its swept values, these columns of sweep.csv, where measured.
RUNS_COLUMNS = ("rows", "methods", "parties", "output_dims", "stress", "ari", "ari_truth", "nmds_stress_1",
                "own_local_stress", "privacy_worst_mean", *(f"privacy_{a}_mean" for a in ATTACKS), "rounds",
                "labels_equal_same_init", "bytes_predicted", "bytes_payload", "bytes_serialized", "bytes_wire",
                "seconds")


def runs_columns(rows: list[dict]) -> list[str]:
    """The columns of the sweep page's table: the point, the swept values, then ``RUNS_COLUMNS``; each only
    where some run has a value (a sweep without attacks shows no privacy column)."""
    every = list(dict.fromkeys(k for r in rows for k in r))
    wanted = ["point", *(k for k in every if k.startswith("param_")), *RUNS_COLUMNS]
    return [k for k in wanted if k in every and any(r.get(k) is not None for r in rows)]


def sweep_page(title: str, rows: list[dict], figures: dict[str, Path], grid: dict | None = None,
               notes: Sequence[str] = ()) -> str:
    """A sweep: what was swept, the figures (each saying which methods it leaves out), then one table row
    per run (scrollable when wide)."""
    from ppcsim.report.plots import left_out

    s = []
    if grid:
        runs = 1
        for values in grid.values():
            runs *= len(values)
        s.append("<h2>What was swept</h2><p>Every combination of these values is one run "
                 f"({runs} runs):</p>" + table(["parameter", "values"],
                                                [[k, ", ".join(map(str, v))] for k, v in grid.items()]))
    s += [f"<p class='note'>{html.escape(n)}</p>" for n in notes]
    for name, path in figures.items():
        missing = left_out(name, rows)
        caption = SWEEP_CAPTIONS.get(name, "") + (
            "Left out: " + "; ".join(f"{html.escape(m)} ({html.escape(why)})" for m, why in missing.items())
            + "." if missing else "Every run of the sweep is drawn.")
        s.append(image(path, name, caption))
    every = list(dict.fromkeys(k for r in rows for k in r))
    header = runs_columns(rows)
    s.append("<h2>Runs</h2><p class='note'>One row per run: the swept values and the main figures, "
             f"{NOT_MEASURED} where a run has no such value. sweep.csv has every figure of every run "
             f"({len(every)} columns: each attack's distortion measures, the classifiers' accuracy, ...); columns "
             "no run measured are left out here.</p>"
             + table(header, [[_runs_cell(k, r.get(k)) for k in header] for r in rows], nowrap=True))
    return page(f"ppc-sim sweep: {title}", s)
