"""The Python API: run a scenario and get back every array behind its report.

``ppcsim.simulate(scenario)`` runs a scenario and returns a :class:`Run`: the
report (what ``ppc run`` writes to ``report.json``), what each party sent, the
matrix the coordinator clustered, the shared labels, and each privacy attack's
reconstruction beside the true columns. By default the run happens in this
process, through the same party and coordinator code as a real run
(``ppcsim.run.inprocess``: no sockets, no processes, seconds saved per run);
``processes=True`` runs the coordinator here and one OS process per party,
over TLS gRPC, exactly as ``ppc run`` does, and adds the bytes each party's
connection carried. Both give the same labels and the same payload for the
same scenario.

The arrays come from the observer (``ppcsim.run.observer``), the one
place that sees every party's original columns; the same arrays draw
``report.html``'s pictures. See docs/api.md.
"""

from __future__ import annotations

import io
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from ppcsim.evaluate.artifacts import RunArtifacts
from ppcsim.evaluate.settings import Settings
from ppcsim.report.model import ABSENT, Evaluation, Report
from ppcsim.scenario.load import Scenario, ScenarioError, generated, load_scenario
from protos.ids import for_file

__all__ = ["Run", "simulate", "load", "from_file", "from_toml", "from_dict"]


@dataclass
class Run:
    """A finished run: its report and the arrays behind it.

    Rows of ``labels``, ``ids``, ``coordinator_ids``, ``clustered``,
    ``joined`` and ``plain_labels`` are in the join's order (the order in
    which the coordinator clustered the records).

    Attributes
    ----------
    scenario : Scenario
        The scenario as the observer loaded it (every party's seed included).
    report : dict
        The report, as ``ppc run`` writes it to ``report.json``: bytes,
        join, clustering, utility, privacy, security, communication, timings.
        :attr:`typed` is the same report as typed sections
        (``run.typed.parties[0].bytes.payload``; see docs/report.md).
    sent : dict of str to dict of str to ndarray
        What the coordinator received from each party, as ``sent/<party>.npz``
        holds it: ``ids`` (the ids the party sent, as text: pseudonyms in
        hexadecimal when the session uses them) and every array by name (``data`` for a feature method,
        ``sqdist`` for OSBR's Euclidean triangle, ``numerator`` for its Gower one, ...).
    clustered : ndarray or None
        The matrix the coordinator clustered (the joined disguised features,
        or an NMDS embedding), as ``clustered.npz`` holds it; None when it
        clustered dissimilarities (OSBR) or ran secure aggregation.
    labels : ndarray of int
        The shared cluster of every joined record (-1 is DBSCAN noise).
    ids : ndarray
        The records' own ids, as the parties know them.
    coordinator_ids : ndarray
        The ids the coordinator joined on, as text: pseudonyms (16 bytes, in
        hexadecimal) when the session uses them, else ``ids`` as text.
    original : dict of str to ndarray
        Each party's original columns, normalised as its method normalises
        them, in the party's own row order.
    columns : dict of str to list of str
        Each party's column names.
    joined : ndarray or None
        The original joined normalised columns (every party's, side by side),
        which no one in the protocol holds: the observer's reference.
    plain_labels : ndarray or None
        The same clustering of ``joined`` (no disguise): what ``labels`` is
        compared with for utility.
    attacks : dict of str to dict of str to dict
        ``attacks[party][attack]`` for each registered attack
        (``ppcsim.evaluate.attackers.ATTACKS``) that applies and keeps its
        reconstruction (today ``known_io``, ``ica``, ``multilateration``, ``pca_known_sample``):
        ``original`` (the true values of the
        records the attacker did not know), ``estimate`` (its reconstruction
        of them, same shape) and ``columns``. One draw of the known records,
        apart from the draws that ``report["privacy"]`` averages.
    out : Path or None
        The folder a ``processes=True`` run wrote its outputs into.
    """

    scenario: Scenario
    report: dict
    sent: dict[str, dict[str, np.ndarray]]
    clustered: np.ndarray | None
    labels: np.ndarray
    ids: np.ndarray
    coordinator_ids: np.ndarray
    original: dict[str, np.ndarray]
    columns: dict[str, list[str]]
    joined: np.ndarray | None = None
    plain_labels: np.ndarray | None = None
    attacks: dict[str, dict[str, dict]] = field(default_factory=dict)
    out: Path | None = None

    def __repr__(self) -> str:
        return (f"Run({self.scenario.name!r}: {len(self.scenario.parties)} parties, {len(self.labels):,} records, "
                f"{self.typed.clustering.n_clusters_found} clusters, {self.payload_bytes:,} payload bytes)")

    @cached_property
    def typed(self) -> Report:
        """:attr:`report` as typed sections (ppcsim.report.model.Report), read and checked once."""
        return Report.from_json(self.report)

    @property
    def payload_bytes(self) -> int:
        """The array bytes the coordinator received from every party together."""
        return sum(p.bytes.payload or 0 for p in self.typed.parties)


def from_file(path: str | Path) -> Scenario:
    """The scenario in the TOML file ``path``, checked as ``ppc run`` checks it.

    Relative data paths (``[data] source``, ``[[parties]] data``) resolve
    against the file's folder.

    Raises
    ------
    ppcsim.scenario.load.ScenarioError
        Listing every problem, naming the file, table and field.
    """
    return load_scenario(path)


def from_toml(text: str, base: str | Path | None = None) -> Scenario:
    """The scenario in TOML ``text`` (a scenario file's content), checked as ``ppc run`` checks it.

    Parameters
    ----------
    text : str
        The scenario file's text.
    base : str or Path, optional
        The folder that relative data paths (``[data] source``,
        ``[[parties]] data``) resolve against; the current directory by
        default. The text is written to a temporary file (party processes
        read a file), removed when Python exits.

    Raises
    ------
    ppcsim.scenario.load.ScenarioError
        Listing every problem, naming ``<TOML text>``, the table and the field.

    Examples
    --------
    >>> s = from_toml('name = "tiny"\\n[data]\\nsource = "sklearn:iris"\\n'
    ...               '[[parties]]\\nname = "a"\\ncolumns = ["sepal length (cm)"]\\nmethod = "none"\\n')
    >>> s.name, [p.name for p in s.parties]
    ('tiny', ['a'])
    """
    if not isinstance(text, str):
        raise TypeError(f"from_toml takes a scenario file's text (str), not {type(text).__name__}")
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(Path("<TOML text>"), [f"not valid TOML: {exc}"]) from None
    return _load_written(text, base, _scratch())


def from_dict(tables: dict, base: str | Path | None = None) -> Scenario:
    """The scenario whose file would hold ``tables`` (``{"name": ..., "data": {...}, "parties": [...],
    "clustering": {...}}``), checked as ``ppc run`` checks it; ``base`` as for :func:`from_toml`.

    Raises
    ------
    ppcsim.scenario.load.ScenarioError
        Listing every problem, naming ``<scenario dict>``, the table and the field.
    """
    if not isinstance(tables, dict):
        raise TypeError(f"from_dict takes a dict of the scenario file's tables, not {type(tables).__name__}")
    return _load_written(tables, base, _scratch())


def load(scenario, base: str | Path | None = None) -> Scenario:
    """A scenario from a :class:`Scenario`, a file's path or a dict of its tables, checked as ``ppc run``
    checks it: :func:`from_file` for a path (str or Path), :func:`from_dict` for a dict. TOML text goes to
    :func:`from_toml`: a string is always a path here, never guessed to be text.

    Parameters
    ----------
    scenario : Scenario, str, Path or dict
        What to load, by its type.
    base : str or Path, optional
        For a dict, the folder that relative data paths resolve against
        (see :func:`from_toml`); a file's resolve against its own folder.

    Returns
    -------
    Scenario

    Raises
    ------
    ppcsim.scenario.load.ScenarioError
        Listing every problem, naming file, table and field; or saying that a
        string that holds a newline is TOML text, for :func:`from_toml`.
    TypeError
        For anything else.
    """
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return from_dict(scenario, base)
    if isinstance(scenario, str) and "\n" in scenario:
        raise ScenarioError(Path("<TOML text>"), ["a scenario given as a string is a file's path; this one holds "
                                                  "a newline, so it is a file's text: load it with "
                                                  "ppcsim.api.from_toml(text) and pass the Scenario"])
    if isinstance(scenario, (str, Path)):
        return from_file(scenario)
    raise TypeError(f"a scenario is a Scenario, a file's path (str or Path) or a dict of its tables "
                    f"(ppcsim.api.from_toml for TOML text), not {type(scenario).__name__}")


_SCRATCH: list[Path] = []


def _scratch() -> Path:
    """A new folder for one scenario file, inside one temporary folder that is removed when Python exits (a
    Scenario's file must outlive the call that wrote it: party processes read it)."""
    if not _SCRATCH:
        import atexit
        import shutil

        _SCRATCH.append(Path(tempfile.mkdtemp(prefix="ppc-scenarios-")))
        atexit.register(shutil.rmtree, _SCRATCH[0], True)
    return Path(tempfile.mkdtemp(dir=_SCRATCH[0]))


def _load_written(scenario: str | dict, base: str | Path | None, folder: Path) -> Scenario:
    """TOML text or a dict, loaded; its errors name what it was given (not the temporary file)."""
    try:
        return load_scenario(_written(scenario, base, folder))
    except ScenarioError as exc:
        raise ScenarioError(Path("<TOML text>" if isinstance(scenario, str) else "<scenario dict>"),
                            exc.errors) from None


def _written(scenario: str | dict, base: str | Path | None, folder: Path) -> Path:
    """TOML text or a dict written to ``folder/<name>.toml``, its relative data paths made absolute."""
    import tomli_w

    raw = tomllib.loads(scenario) if isinstance(scenario, str) else dict(scenario)
    root = Path(base or ".").resolve()

    def absolute(source):
        return source if not isinstance(source, str) or generated(source) or Path(source).is_absolute() \
            else str(root / source)

    if isinstance(raw.get("data"), dict) and "source" in raw["data"]:
        raw["data"] = {**raw["data"], "source": absolute(raw["data"]["source"])}
    if isinstance(raw.get("parties"), list):
        raw["parties"] = [{**p, "data": absolute(p["data"])} if isinstance(p, dict) and "data" in p else p
                          for p in raw["parties"]]
    path = folder / f"{raw.get('name', 'scenario')}.toml"
    path.write_text(tomli_w.dumps(raw), encoding="utf-8")
    return path


def simulate(scenario, processes: bool = False, *, out: str | Path | None = None, attacks: bool = True,
             known_fraction: float | None = None, base: str | Path | None = None, log=None) -> Run:
    """Run a scenario and return its report with every array behind it.

    Parameters
    ----------
    scenario : Scenario, str, Path or dict
        A scenario file's path, a dict of its tables or a :class:`Scenario`
        (see :func:`load`; TOML text through :func:`from_toml`).
    processes : bool, default False
        False runs every party and the coordinator in this process, through
        the same code as a real run (``ppcsim.run.inprocess.simulate``); every
        number but the timings equals a real run's, and there are no wire
        bytes. True runs the coordinator here and one OS process per party
        over gRPC (TLS when the scenario asks), through a counting relay per
        party that also shapes its ``[network]`` link: as ``ppc run``.
    out : str or Path, optional
        With ``processes=True``, the folder for the run's outputs (report.json,
        labels.csv, sent/, logs/); a temporary folder, deleted after the run,
        by default. Ignored in process.
    attacks : bool, default True
        Measure privacy (the attacks of ``report["privacy"]`` and
        ``Run.attacks``); False skips them (``ppc run --no-attacks``).
    known_fraction : float, optional
        The share of records the known input-output attacker knows
        (``ppc run --known-fraction``).
    base : str or Path, optional
        Where relative data paths of TOML text or a dict resolve (see :func:`load`).
    log : file, optional
        Where a process run prints its progress and table (``ppc run``'s
        console output), and an in-process run what its parties print;
        nothing is printed by default.

    Returns
    -------
    Run

    Raises
    ------
    ppcsim.scenario.load.ScenarioError
        When the scenario is not valid, before anything starts.
    ppcsim.errors.RunError
        When a process run fails, naming the party or the cause.
    ValueError
        When ``known_fraction`` is not in (0, 1].

    Examples
    --------
    The iris data split over two parties, each sending its dissimilarities
    (OSBR, 004 §4):

    >>> import ppcsim
    >>> run = ppcsim.simulate({
    ...     "name": "two", "seed": 1,
    ...     "data": {"source": "sklearn:iris"},
    ...     "parties": [{"name": "a", "columns": ["sepal length (cm)", "sepal width (cm)"], "method": "osbr"},
    ...                 {"name": "b", "columns": ["petal length (cm)", "petal width (cm)"], "method": "osbr"}],
    ...     "clustering": {"algorithm": "agglomerative", "linkage": "average", "n_clusters": 3}})
    >>> run.labels.shape, sorted(run.sent["a"])
    ((150,), ['ids', 'sqdist'])
    >>> run.clustered is None   # it clustered dissimilarities, not features
    True
    """
    if known_fraction is not None and not 0 < known_fraction <= 1:
        raise ValueError(f"known_fraction must be in (0, 1], got {known_fraction}")
    scenario = load(scenario, base)
    settings = Settings(attacks=attacks, known_fraction=Settings().known_fraction if known_fraction is None
                        else known_fraction)
    if processes:
        return _processes(scenario, settings, out, log)
    from ppcsim.run.observers import observer

    if what := observer(scenario.clustering.protocol).needs_processes(scenario):
        raise ValueError(f"{scenario.path}: {what} runs each MPC party as its own OS process; simulate it with "
                         "processes=True (or 'ppc run'), not in this process")
    return _in_process(scenario, settings, log or io.StringIO())


def _in_process(scenario: Scenario, settings: Settings, log) -> Run:
    from coordinator.summary import summarise
    from parties.metrics import peak_rss
    from ppcsim.report.outputs import build, own_checks
    from ppcsim.run.observers import observer

    t0 = time.perf_counter()
    artifacts = RunArtifacts()
    watcher = observer(scenario.clustering.protocol)
    session, own = watcher.in_process(scenario, log)
    outcome = session.wait(0)
    memory = peak_rss()
    evaluation: Evaluation = watcher.evaluate(scenario, session, settings, own=own, artifacts=artifacts)
    if artifacts.own is None:
        artifacts.own = own
    summaries = own_checks(own)
    report = build(scenario, summarise(session), timing={"total": time.perf_counter() - t0}, evaluation=evaluation,
                   observer=True, coordinator_peak_rss=memory, summaries=summaries)
    sent = {name: {"ids": for_file(c.ids), **c.arrays} for name, c in session.contributions.items() if c.arrays}
    return _run(scenario, report, sent, outcome, artifacts, None)


def _processes(scenario: Scenario, settings: Settings, out, log) -> Run:
    from ppcsim.run.launcher import run_scenario

    artifacts = RunArtifacts()
    if out is None:
        with tempfile.TemporaryDirectory(prefix="ppc-run-") as tmp:
            report = run_scenario(scenario, Path(tmp), log=log or io.StringIO(), settings=settings,
                                  artifacts=artifacts)
            sent = _read_sent(Path(tmp))
        folder = None
    else:
        folder = Path(out)
        report = run_scenario(scenario, folder, log=log or io.StringIO(), settings=settings, artifacts=artifacts)
        sent = _read_sent(folder)
    if artifacts.own is None:  # secure aggregation: the observer replays the parties' data for the arrays
        from parties.disguise import disguise

        artifacts.own = {cfg.name: disguise(cfg) for cfg in scenario.parties}
    return _run(scenario, report, sent, artifacts.outcome, artifacts, folder)


def _read_sent(folder: Path) -> dict[str, dict[str, np.ndarray]]:
    out = {}
    for path in sorted((folder / "sent").glob("*.npz")):
        with np.load(path) as z:
            out[path.stem] = {k: z[k] for k in z.files}
    return out


def _run(scenario: Scenario, report: Report, sent: dict, outcome, artifacts: RunArtifacts, out: Path | None) -> Run:
    own = artifacts.own
    assert own is not None  # filled by the run, or replayed
    first = scenario.parties[0].name
    features = outcome.combined.features
    return Run(
        scenario=scenario,
        report=report.to_json(),
        sent=sent,
        clustered=None if features is None or report.secure_aggregation is not ABSENT else features,
        labels=outcome.labels,
        ids=own[first].data.ids[outcome.join.index[first]],
        coordinator_ids=for_file(outcome.join.ids),
        original={p.name: own[p.name].X for p in scenario.parties},
        columns={p.name: list(own[p.name].data.columns) for p in scenario.parties},
        joined=artifacts.joined,
        plain_labels=artifacts.original_labels,
        attacks=artifacts.attacks,
        out=out,
    )
