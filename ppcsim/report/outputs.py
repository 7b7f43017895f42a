"""What a run leaves behind: report.json, labels.csv, sent/<party>.npz, and the printed summary."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import numpy as np

from coordinator.clustering import SECURE
from coordinator.summary import SessionSummary
from coordinator.types import Contribution, Outcome
from parties.client import WITHOUT_MUTUAL_TLS
from parties.metrics import peak_rss
from ppcsim.report import ledger, settings
from ppcsim.report.model import (
    ABSENT,
    FORMAT,
    Absent,
    AttackScore,
    Cluster,
    Clustering,
    Communication,
    Evaluation,
    IdBytes,
    Join,
    LedgerEntry,
    Memory,
    MpcPrivacy,
    Network,
    Observer,
    OwnCheck,
    Party,
    PartyBytes,
    Protection,
    Refusal,
    RefusedCounts,
    Report,
    SecurePrivacy,
    Security,
    Skipped,
    Timing,
    as_report,
    given,
)
from ppcsim.report.protocols import report_of
from ppcsim.scenario.load import Scenario
from ppcsim.scenario.network import Link
from protos.ids import as_text, for_file


class Relayed(Protocol):
    """What the report reads of a party's counting relay (ppcsim.run.relay.Relay, or the ProcessRelay that
    ``ppc run``'s relay process holds for it): the link it shaped and its counts (``counts.up.bytes``,
    ``counts.down.bytes``, ``counts.connections``)."""

    link: Link
    counts: Any


def _umask() -> int:
    """This process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: Read once, when this module is imported (before any thread starts): setting it to read it is not thread-safe.
UMASK = _umask()


def write_atomic(path: Path, data: bytes | Callable[[BinaryIO], None], private: bool = False) -> None:
    """Write ``data`` (bytes, or a function writing to a file) to ``path`` through a temporary file,
    so that ``path`` is never half-written.

    The file gets the mode any new file of this user gets (0666 less the
    umask, commonly 0644), like the logs and figures beside it, and not the
    temporary file's 0600: every output of a run is then readable alike, and
    ``umask 077`` keeps them all private. ``private``: 0600 whatever the
    umask (a file that holds seeds).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.chmod(tmp, 0o600 if private else 0o666 & ~UMASK)
        with os.fdopen(fd, "wb") as fh:
            data(fh) if callable(data) else fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def own_checks(own: Mapping[str, Any]) -> dict[str, dict]:
    """In-process runs, which have no party summaries: each party's ``own_check`` (what its disguise measured of
    itself, ``Disguise.facts``), as its summary would carry it, from its ``Disguised``."""
    return {name: {"own_check": check} for name, done in own.items() if (check := done.method.own_check())}


def output_dims(shapes: dict[str, list[int]]) -> int:
    """Columns per record sent (rows of features), or values per condensed array (m(m-1)/2)."""
    first = next(iter(shapes.values()))
    return first[1] if len(first) == 2 else first[0]


def build(
    scenario: Scenario,
    session: SessionSummary,
    *,
    summaries: dict[str, dict] | None = None,
    timing: dict[str, float] | None = None,
    relays: Mapping[str, Relayed] | None = None,
    failure: str | None = None,
    evaluation: Evaluation | None = None,
    observer: bool = False,
    cluster: tuple[str, dict[str, str]] | None = None,
    by_hand: bool = False,
    coordinator_peak_rss: int | None | Absent = ABSENT,
) -> Report:
    """The run's report, built once from everything the run produced (see docs/report.md).

    Parameters
    ----------
    scenario, session : Scenario, SessionSummary
        The scenario as loaded and the summary of its finished (or failed) session
        (coordinator.summary.summarise): the report reads no attribute of the session itself.
    summaries : dict, optional
        Each party process's summary (its timings, peak memory, rounds, the bytes of its plain ids), when the
        observer has them (``ppc run``).
    timing : dict, optional
        The launcher's phases in seconds (``start``, ``parties_and_clustering``, ``evaluate``, ``total``).
    relays : mapping of str to Relay, optional
        Each party's counting relay (``ppc run``): its wire bytes, link and connections.
    failure : str, optional
        Why the run failed, when the launcher knows better than the session.
    evaluation : Evaluation, optional
        What the observer measured (ppcsim.run.observer.evaluate, or evaluate_secure for secure aggregation).
    observer : bool
        Whether the report has an observer section (every party's seed): ``ppc run`` and the Python API.
    cluster : (str, dict), optional
        The Dask scheduler and the worker each party ran on (``ppc run --scheduler``).
    by_hand : bool
        A by-hand coordinator (``ppc coordinator``): the report says what it cannot measure.
    coordinator_peak_rss : int or None, optional
        This process's peak memory when the session ended (measure it before any evaluation); measured now
        when not given.

    Returns
    -------
    Report
    """
    summaries = summaries or {}
    outcome = session.outcome
    bytes_by_party = session.bytes
    protocol = report_of(session.clustering.protocol)  # its part of the report (ppcsim.report.protocols)
    parties = []
    for cfg in scenario.parties:
        upload = session.uploads.get(cfg.name)
        shapes = upload.shapes if upload is not None else {}
        b = bytes_by_party[cfg.name]
        summary = summaries.get(cfg.name, {})
        party = Party(
            name=cfg.name,
            method=cfg.method,
            params=cfg.effective_params,
            normalize=summary.get("normalize", cfg.normalize),
            source=cfg.source or None,
            rows=upload.rows if upload is not None else None,
            columns=list(cfg.columns),
            output_dims=output_dims(shapes) if shapes else None,
            sends=("dissimilarities" if len(next(iter(shapes.values()))) == 1 else "features") if shapes else None,
            arrays=shapes,
            bytes=PartyBytes(predicted=b["predicted"], payload=b["payload"], serialized=b["serialized"]),
            refused=RefusedCounts(**b["refused"]),
            timing=summary.get("timing", {}),
            peak_rss=summary.get("peak_rss"),
        )
        if summary.get("own_check"):
            party.own_check = OwnCheck.from_json(summary["own_check"], f"parties.{cfg.name}.own_check")
        protocol.party(party, session, summary)
        if relays is not None:
            relay = relays[cfg.name]
            party.bytes.wire, party.bytes.wire_down = relay.counts.up.bytes, relay.counts.down.bytes
            party.network = Network(link=relay.link.describe(), connections=relay.counts.connections,
                                    # measured by the party: Join and the Upload stream
                                    upload_seconds=party.timing.get("upload"))
        parties.append(party)
    # the parties' traffic; the helper's and status polls' apart (ppcsim.report.ledger)
    parties_total, by_party, helper, status = ledger.split(session.totals, session.parties)
    spec = session.clustering
    report = Report(
        format=FORMAT,
        scenario=scenario.name,
        scenario_file=str(scenario.path),
        seed=scenario.seed,
        state=session.state,
        error=failure or session.error or None,
        parties=parties,
        join=Join(rows_joined=len(outcome.join.ids) if outcome else None,
                  dropped=outcome.join.dropped if outcome else None),
        clustering=Clustering.from_json({
            **settings.applied(spec),  # the settings this run used, no other
            "input": outcome.combined.description if outcome else None,
            "embedding": outcome.combined.embedding if outcome else None,
            "sizes": outcome.sizes if outcome else None,
            "noise": outcome.noise if outcome else None,
            "n_clusters_found": len(outcome.sizes) if outcome else None,
        }, "clustering"),
        security=Security(
            tls=scenario.security.tls,
            mutual=scenario.security.mutual,
            tokens=scenario.security.tokens,
            ids=scenario.security.ids,
            parties={name: Protection(**v) for name, v in session.protection.items()},
            coordinator_learns=coordinator_learns(scenario),
        ),
        communication=Communication(
            totals=parties_total, by_party=by_party,
            **{k: v for k, v in (("helper", helper), ("status", status)) if v is not None},
            refused=[Refusal(**r) for r in session.refused],
            ids=id_bytes(session, summaries),
            ledger=[LedgerEntry(**e) for e in session.ledger],
        ),
        timing=Timing.from_json({**(timing or {}), "coordinator": dict(session.timing)}, "timing"),
        # the process hosting the coordinator, when the session is over and before any evaluation
        memory=Memory(coordinator_peak_rss=peak_rss() if coordinator_peak_rss is ABSENT else coordinator_peak_rss,
                      session_budget=session.budget_limit, session_peak=session.budget_peak),
    )
    protocol.sections(report, session, summaries)
    if observer:
        report.observer = observer_section(scenario)
    if evaluation is not None:
        report.utility, report.privacy = evaluation.utility, evaluation.privacy
    if cluster is not None:
        report.cluster = Cluster(scheduler=cluster[0], placed=dict(cluster[1]))
    if by_hand:
        report.not_measured = dict(NOT_MEASURED)
    return report


def observer_section(scenario: Scenario) -> Observer:
    """What repeats a simulation, known to the observer alone: the scenario seed and every party's seed.

    The coordinator's part of the report holds no party secret; a by-hand
    coordinator writes no observer section (it is not an observer: no utility,
    no privacy, no party seed).
    """
    return Observer(seed=scenario.seed, party_seeds={p.name: p.seed for p in scenario.parties})


#: What a by-hand coordinator's report cannot hold, and why (it is not an observer).
NOT_MEASURED = {
    "utility": "the coordinator never sees the parties' original data, so it cannot compare the clustering with "
               "theirs; 'ppc run' measures utility as an observer holding every party's data",
    "privacy": "the attacks need the original columns, which stay with the parties; 'ppc run' measures them",
    "observer": "each party's seed stays with that party; only 'ppc run', which plays every party, records them",
}


def coordinator_learns(scenario: Scenario) -> list[str]:
    """In plain words, what the coordinator of this session learned (README, "Security model"): the ids, then its
    protocol's words (ppcsim.report.protocols)."""
    active = ("as an active coordinator (one that does not follow the protocol), " + WITHOUT_MUTUAL_TLS
              if not scenario.security.mutual else
              "as an active coordinator, it could not substitute the parties' keys without the CA's private key "
              "(mutual TLS: every party checks every other's signed key)")
    return report_of(scenario.clustering.protocol).learns(scenario, _ids_learned(scenario), active)


def placement_line(arbiter) -> list[str]:
    """The arbiter's own attack (its report Placement) as a printed line, none without one."""
    pl = arbiter.placement
    if pl is ABSENT:
        return []
    if pl.relative_error is None:
        return [f"privacy of the joined records against the arbiter's own attack: {pl.skipped}"]
    return [f"privacy of the joined records against the arbiter's own attack (classical scaling of round 0's centres, "
            f"multilateration): placed to a relative error of {pl.relative_error:.3g} (0 = exactly)"]


def _ids_learned(scenario: Scenario) -> str:
    return ("16-byte keyed pseudonyms of each party's record ids (never a raw id; without the parties' key it "
           "can neither compute nor test one), so how many records each party holds and which of them are in "
           "every party's set (the join)" if scenario.security.ids == "pseudonymous" else
           "every party's raw record ids, and so which records each party holds")


def id_bytes(session: SessionSummary, summaries: dict[str, dict]) -> dict[str, IdBytes]:
    """Per party, how its accepted upload's record ids travelled and their bytes (packed block, or characters of
    text ids), beside what the smallest plain encoding of its raw ids would have taken (``plain_bytes``, known
    to the party alone: in its summary when the observer has it)."""
    return {party: IdBytes(encoding=upload.id_encoding, bytes=upload.id_bytes,
                           plain_bytes=summaries.get(party, {}).get("plain_id_bytes"))
            for party, upload in session.uploads.items()}


def write_outputs(out: Path, report: Report, outcome: Outcome | None, contributions: Mapping[str, Contribution],
                  sent: bool = True, labels: bytes | None = None) -> None:
    """report.json, labels.csv (id,cluster of the joined records) and, with ``sent``, clustered.npz and
    sent/<party>.npz: from the session's ``outcome`` (None if it failed) and each party's ``contributions`` (what
    it uploaded), as the coordinator's session holds them.

    ``labels``: labels.csv as a party wrote it, by its own record ids (``ppc run``); else the coordinator's,
    by the ids it received (pseudonyms in hexadecimal when the session uses them). ``clustered.npz`` holds
    ``ids`` (as the coordinator received them) and ``features``, the matrix the coordinator clustered, when it
    clustered features (not dissimilarities).
    """
    # the observer's section holds every party's seed: then readable by its owner alone
    write_atomic(out / "report.json", report.dumps().encode(), private=report.observer is not ABSENT)
    if labels is not None:
        write_atomic(out / "labels.csv", labels)
    elif outcome is not None:
        ids = as_text(outcome.join.ids).tolist()
        lines = ["id,cluster"] + [f"{i},{c}" for i, c in zip(ids, outcome.labels.tolist())]
        write_atomic(out / "labels.csv", ("\n".join(lines) + "\n").encode())
    features = outcome.combined.features if outcome is not None else None
    if sent and outcome is not None and features is not None:
        # what the coordinator clustered (joined features, or an nmds embedding), rows in the join's order
        ids = for_file(outcome.join.ids)
        write_atomic(out / "clustered.npz", lambda fh: np.savez(fh, ids=ids, features=features))
    for party, c in contributions.items():
        if not sent or not c.arrays:
            continue  # the coordinator only summed this party's dissimilarities (keep_uploads off)
        write_atomic(out / "sent" / f"{party}.npz", partial(_save_sent, c))


def _save_sent(contribution: Contribution, fh: BinaryIO) -> None:
    # numpy's stubs match **kwds against allow_pickle: bool too; the arrays are named by the method ("data", "sqdist")
    np.savez(fh, ids=for_file(contribution.ids), **contribution.arrays)  # type: ignore[arg-type]


def _n(x) -> str:
    return "-" if x is None else f"{x:,}"


#: The level at which a Kolmogorov-Smirnov test of a party's posts rejects uniformity.
KS_LEVEL = 0.05


def uniformity(pvalue: float) -> str:
    """A party's posts against the uniform distribution, in words: the p-value to enough digits, and whether a
    Kolmogorov-Smirnov test at ``KS_LEVEL`` rejects uniformity (a truly uniform post is rejected in 5% of runs)."""
    verdict = (f"uniformity rejected at the {KS_LEVEL:.0%} level (as it is for 1 run in 20 of truly uniform posts)"
               if pvalue < KS_LEVEL else f"uniformity not rejected at the {KS_LEVEL:.0%} level")
    return f"KS p = {pvalue:.2g}: {verdict}"


def own_check_words(c: OwnCheck) -> str:
    """What a party measured of its own disguise, in one line (the console and the page)."""
    parts = []
    if c.local_stress is not ABSENT:
        parts.append(f"local stress {c.local_stress:.4f} (004 eq. 6, {given(c.stress_records, 0):,} records), "
                     f"kept draw {given(c.kept_draw, 0) + 1} of {given(c.tries_used, 1)} tried")
    if c.stress_1 is not ABSENT:
        parts.append(f"stress-1 {c.stress_1:.4f} (000 eq. 3.12) from the {given(c.start, '?')} start"
                     + (f", {c.n_iter} iterations" if c.n_iter is not ABSENT else ""))
    trace = c.trace if isinstance(c.trace, dict) else {}
    if {"privacy", "rotation_privacy", "sigma", "distance_privacy"} <= trace.keys():  # 002 Algorithm 6.1
        parts.append(f"privacy guarantee {trace['privacy']:.3f} (002 Alg. 6.1: rotation {trace['rotation_privacy']:.3f}"
                     f" after {len(trace.get('iterations') or [])} iterations, noise sigma {trace['sigma']:.3g} "
                     f"leaving {trace['distance_privacy']:.3f})")
    if {"objective_start", "objective", "updates"} <= trace.keys():  # 001's NMF methods
        parts.append(f"objective {trace['objective_start']:.4g} to {trace['objective']:.4g} in {trace['updates']} "
                     "updates" + (f", side effect {trace['side_effect']}" if "side_effect" in trace else ""))
    if c.seconds is not ABSENT:  # what the party timed: drbt its draws and their stress, nmds its embedding
        what = "embedded in" if c.stress_1 is not ABSENT else "drawn and measured in"
        parts.append(f"{what} {c.seconds:.3f} s")
    return "; ".join(parts)


def summary_table(report: Report | dict) -> str:
    """The per-party table printed at the end of a run."""
    report = as_report(report)
    head = ("party", "rows", "cols", "method", "out", "predicted B", "payload B", "serialized B", "wire B")
    rows = []
    for p in report.parties:
        method = p.method + (f"/{p.params['projection']}" if "projection" in p.params else "")
        method += f"/{p.params['metric']}" if "metric" in p.params else ""
        if p.output_dims is None:
            out = "-"
        elif p.sends == "dissimilarities":
            out = f"{len(p.arrays)}x{p.output_dims:,} pairs"
        elif p.method == SECURE:  # m x k partial distances, once per round (and per seeding step)
            out = f"{p.output_dims} per record per round"
        else:
            out = f"{p.output_dims} dims"
        b = p.bytes
        rows.append((p.name, _n(p.rows), str(len(p.columns)), method, out,
                     _n(b.predicted), _n(b.payload), _n(b.serialized), _n(None if b.wire is ABSENT else b.wire)))
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    fmt = lambda r: "  ".join(c.ljust(w) if i in (0, 3, 4) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    lines = [fmt(head), fmt(tuple("-" * w for w in widths)), *map(fmt, rows)]
    j, c, t = report.join, report.clustering, report.communication.totals
    if j.rows_joined is not None:
        dropped = ", ".join(f"{k} {v}" for k, v in (j.dropped or {}).items())
        lines.append(f"join: {j.rows_joined:,} records in common (dropped: {dropped})")
        sizes = ", ".join(map(str, c.sizes or []))
        noise = f", noise {c.noise}" if c.noise else ""
        lines.append(f"clustering: {c.algorithm} on {c.input}")
        lines.append(f"clusters: {c.n_clusters_found} (sizes {sizes}{noise})")
        if (c.embedding or {}).get("warning"):
            lines.append(f"warning: {(c.embedding or {})['warning']}")
    secure = report.secure_aggregation
    if secure is not ABSENT and secure.rounds and given(secure.reveal) == "labels":
        within = all(p.exact for p in given(secure.by_party, {}).values())
        lines.append(f"secure aggregation, labels only: {secure.rounds} rounds of an MPC argmin; relayed payload "
                     + ("within 5% above" if within else "NOT within 5% above") + " the cost model (m*k inputs, "
                     "m*(k-1)*(17*mpc_bits/8 + 22) comparison elements, m labels per round and peer)")
    elif secure is not ABSENT and secure.rounds:
        per = secure.per_round if secure.per_round is not ABSENT else []
        exact = all(p.exact for p in (secure.by_party if secure.by_party is not ABSENT else {}).values())
        lines.append(f"secure aggregation: {secure.rounds} rounds ({'converged' if secure.converged else 'stopped'}"
                     f"), {sum(r.seconds for r in per):.2f} s of rounds at the arbiter (the sum of each round's time from "
                     "the previous round's labels to its own); payload "
                     + ("equal to" if exact else "DIFFERENT from") + " the prediction (m*k*8 up, m*4 down per round"
                     + (f"; (k - 1)*m*8 up for {secure.seeding_steps} k-means++ seeding steps"
                        if given(secure.seeding_steps, 0) else "") + ")")
    m = report.mpc
    if m is not ABSENT and m.by_party is not ABSENT:
        name, most = ledger.most_sent(report)
        frames = m.by_party[name].up if name in m.by_party else 0
        lines.append(f"mpc: {len(m.parties)} share-holders ({', '.join(m.parties)}), threshold t = {m.threshold}, "
                     f"{m.rounds} rounds; up to {most:,} B payload sent per party (the table's, {name}: "
                     f"{frames:,} B of it sealed MPC frames), all relayed"
                     + (f", {m.seconds:.1f} s from the first party's Relay stream to the last one's end"
                        if isinstance(m.seconds, float) else ""))
    u = report.utility if report.utility is not ABSENT else None
    if u and u.labels_equal_same_init is not ABSENT:
        lines.append(f"utility: labels {'equal' if u.labels_equal_same_init else 'NOT equal'} to scikit-learn's "
                     f"KMeans from the same initial records; vs clustering the original data: ARI "
                     f"{u.vs_original['ari']:.3f}")
        if u.fixed_point is not ABSENT:
            lines.append(f"         fixed point 2^{u.fixed_point.scale_bits}: largest distance error "
                         f"{u.fixed_point.max_abs_error:.2g} (bound {u.fixed_point.bound:.2g})")
        if u.vs_truth is not ABSENT and u.original_vs_truth is not ABSENT:
            lines.append(f"         vs true labels: ARI {u.vs_truth['ari']:.3f} "
                         f"(original data: {u.original_vs_truth['ari']:.3f})")
        u = None
    priv = report.privacy
    if isinstance(priv, MpcPrivacy):
        lines.append(f"privacy: {priv.assumption}")
        if "coordinator" in priv.roles:
            lines += placement_line(priv.roles["coordinator"])
    if isinstance(priv, SecurePrivacy):
        lines += placement_line(priv.arbiter)
        for party, entry in (priv.posts.by_party if priv.posts is not ABSENT else {}).items():
            lines.append(f"privacy of {party}: its posts vs its partial distances: correlation "
                         f"{entry.correlation_with_partial_distances:+.3f}; {uniformity(entry.uniformity_ks_pvalue)}")
        ml = priv.multilateration
        lines.append("privacy of the joined records against the arbiter: multilateration from the initial records "
                     + (f"skipped ({ml.skipped})" if isinstance(ml, Skipped) else
                        f"column privacy min {ml.min:.3f} mean {ml.mean:.3f} (0 = recovered)"))
    if u:
        o = u.vs_original
        lines.append(f"utility: stress {u.stress:.4f} (004 eq. 6, {u.stress_records:,} records); vs clustering "
                     f"the original data: ARI {o['ari']:.3f}, misclassified {o['misclassification']:.1%}")
        if u.np is not ABSENT:
            lines.append(f"         neighbourhood preservation {u.np.mean:.3f} (000 eq. 5.21, k = 3..10)"
                         + (f", class compactness {u.cc.mean:.3f} (original data: {u.cc_original.mean:.3f})"
                            if u.cc is not ABSENT and u.cc_original is not ABSENT else ""))
        if u.vs_truth is not ABSENT and u.original_vs_truth is not ABSENT:
            lines.append(f"         vs true labels: ARI {u.vs_truth['ari']:.3f} "
                         f"(original data: {u.original_vs_truth['ari']:.3f})")
    if isinstance(priv, dict):
        for party, e in priv.items():
            found = ", ".join(f"{a} min {r.min:.3f} mean {r.mean:.3f}"
                              + (f" (002 scale {r.privacy_002.mean:.3f})" if r.privacy_002 is not ABSENT else "")
                              if isinstance(r, AttackScore) else f"{a} skipped ({r.skipped})"
                              for a, r in e.attacks.items())
            lines.append(f"privacy of {party} (column privacy, 0 = recovered): {found}")
    for p in report.parties:
        if isinstance(p.own_check, OwnCheck):
            lines.append(f"own check {p.name}: {own_check_words(p.own_check)}")
    for p in report.parties:
        if p.network is ABSENT or p.network.link.startswith("loopback"):
            continue
        took = p.timing.get("upload")
        lines.append(f"network {p.name}: {p.network.link}; join and upload took "
                     + (f"{took:.2f} s" if took is not None else "-"))
    protection = {f"{v.transport}, identified by {v.identity}" for v in report.security.parties.values()}
    if protection:
        lines.append(f"security: {'; '.join(sorted(protection))}")
    ids = report.communication.ids
    if ids:
        sent = sum(v.bytes for v in ids.values())
        plain = [v.plain_bytes for v in ids.values()]
        beside = f" (plain ids packed: {sum(x for x in plain if x is not None):,} B)" if None not in plain else ""
        lines.append(f"ids: {report.security.ids}, {sent:,} B of ids sent{beside}")
    refused = report.communication.refused
    if refused:
        lines.append(f"refused: {len(refused)} upload{'s' if len(refused) > 1 else ''} discarded "
                     f"({sum(r.serialized for r in refused):,} B serialized): "
                     + "; ".join(r.error for r in refused[:3]))
    if report.not_measured is not ABSENT and report.not_measured:
        lines.append(f"not measured by the coordinator: {', '.join(report.not_measured)} (it is not an "
                     "observer: see report.json)")
    lines.append(
        f"messages: up {t.up.messages}, {t.up.serialized:,} B serialized "
        f"({t.up.payload:,} B payload); down {t.down.messages}, {t.down.serialized:,} B serialized"
    )
    up, down = [given(p.bytes.wire) for p in report.parties], [given(p.bytes.wire_down) for p in report.parties]
    if report.parties and None not in up and None not in down:
        lines.append(f"wire (TLS, HTTP/2, counted by the relays): up {sum(up):,} B; down {sum(down):,} B")
    lines += ledger.apart_lines(report)  # the helper's traffic and status polls, outside the totals
    return "\n".join(lines)
