"""Output folders: one command at a time, no older run's files, one file mode; the run page's content."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import IRIS_DRBT_OSBR, changed, run_ppc, scenario_toml, write_scenario
from ppcsim.run.outdir import LOCK, OutputError, claim

SMALL = scenario_toml(
    "small", changed(IRIS_DRBT_OSBR, "a", projection="sparse"), seed=3,
    data={"source": "sklearn:iris", "label_column": "target"},
    clustering={"algorithm": "agglomerative", "linkage": "average", "n_clusters": 3})


def test_a_folder_is_claimed_by_one_command_at_a_time(tmp_path):
    out = tmp_path / "out"
    with claim(out):
        assert (out / LOCK).read_text().strip() == str(os.getpid())
        with pytest.raises(OutputError, match=rf"another ppc command \(process {os.getpid()}\) is writing into"):
            claim(out)
    assert not (out / LOCK).exists()  # released and removed
    with claim(out):  # free again
        pass


def test_a_claim_held_by_another_process_is_refused_and_freed_when_it_dies(tmp_path):
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom ppcsim.run.outdir import claim\n"
         f"c = claim({str(out)!r})\nprint('held', flush=True)\ntime.sleep(60)\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(OutputError, match="is writing into this folder"):
            claim(out)
    finally:
        holder.kill()
        holder.wait()
    # killed without releasing: the lock died with it, and the stale file does not count as a file
    with claim(out):
        pass


def test_a_folder_with_files_is_refused_and_replace_empties_only_ppc_outputs(tmp_path):
    out = tmp_path / "out"
    (out / "sent").mkdir(parents=True)
    (out / "report.json").write_text("{}")
    (out / "sent" / "ghost.npz").write_bytes(b"x")
    with pytest.raises(OutputError, match=r"already holds files \(report.json, sent\).*--replace"):
        claim(out)
    with claim(out, replace=True):
        assert os.listdir(out) == [LOCK]
    other = tmp_path / "thesis"
    other.mkdir()
    (other / "chapter1.tex").write_text("keep me")
    with pytest.raises(OutputError, match="holds files that are not a ppc run's outputs"):
        claim(other, replace=True)
    assert (other / "chapter1.tex").read_text() == "keep me"
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputError, match="exists and is not a folder"):
        claim(tmp_path / "file")


def test_ppc_run_twice_into_one_folder(tmp_path):
    """One real run writes the page and every file with the user's mode; a second run into the same folder is
    refused before it starts; --replace leaves only the new run's files (a stale sent/ file goes)."""
    path = write_scenario(tmp_path, SMALL)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "ppcsim", "run", str(path), "--out", str(out), "--quiet", "--html"],
                          capture_output=True, text=True, timeout=180, preexec_fn=lambda: os.umask(0o027))
    assert proc.returncode == 0, proc.stderr
    # labels and sent/ were 0600 (from the temporary file), logs and figures 0644: all now the user's mode, but
    # report.json, which holds every party's seed, 0600 whatever the umask
    modes = {str(f.relative_to(out)): stat.S_IMODE(f.stat().st_mode) for f in out.rglob("*") if f.is_file()}
    assert {"report.json", "labels.csv", "report.html", "sent/a.npz", "logs/a.log", "figures/bytes.png"} <= set(modes)
    assert modes.pop("report.json") == 0o600 and "party_seeds" in (out / "report.json").read_text()
    assert set(modes.values()) == {0o640}, modes
    check_run_page(out)

    (out / "sent" / "p5.npz").write_bytes(b"an older, five-party run's file")
    again = run_ppc("run", path, "--out", out, "--quiet", "--no-eval")
    assert again.returncode == 2
    assert again.stderr.startswith(f"ppc run: error: {out}: already holds files (figures, labels.csv, logs, report.html")
    replaced = run_ppc("run", path, "--out", out, "--quiet", "--no-eval", "--replace")
    assert replaced.returncode == 0, replaced.stderr
    assert sorted(os.listdir(out)) == ["labels.csv", "logs", "report.json", "sent"]
    assert sorted(os.listdir(out / "sent")) == ["a.npz", "b.npz"] and sorted(os.listdir(out / "logs")) == ["a.log", "b.log"]


def test_a_run_into_a_busy_folder_is_refused_at_once(tmp_path):
    """Two commands with one --out used to both run, mixing their logs; the second is now refused."""
    path = write_scenario(tmp_path, SMALL)
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time\nfrom ppcsim.run.outdir import claim\n"
         f"c = claim({str(out)!r})\nprint('held', flush=True)\ntime.sleep(60)\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        second = run_ppc("run", path, "--out", out, "--quiet", "--no-eval", timeout=60)
    finally:
        holder.kill()
        holder.wait()
    assert second.returncode == 2
    assert second.stderr == (f"ppc run: error: {out}: another ppc command (process {holder.pid}) is writing into "
                             "this folder; wait for it to end, or give another --out\n")
    assert os.listdir(out) == [LOCK]


def test_without_out_a_second_run_goes_to_a_new_folder(tmp_path, monkeypatch):
    from ppcsim.cli.commands import default_out

    monkeypatch.chdir(tmp_path)
    assert default_out("small") == Path("runs/small")
    Path("runs/small").mkdir(parents=True)
    assert default_out("small") == Path("runs/small")  # empty: still usable
    Path("runs/small/report.json").write_text("{}")
    assert default_out("small") == Path("runs/small-2")
    Path("runs/small-2").mkdir()
    Path("runs/small-2/report.json").write_text("{}")
    assert default_out("small") == Path("runs/small-3")


def check_run_page(out: Path) -> None:
    """The page of the SMALL scenario: what was sent, in words; every section; the glossary; wire bytes."""
    page = (out / "report.html").read_text()
    # osbr's condensed triangle, in words: 150 * 149 / 2 pairs
    assert "11,175 values: one per pair of its 150 records (m(m-1)/2 = 11,175)" in page
    assert "1 number per record" in page
    # records shown by the party's own ids (0, 1, ... for a built-in set), not by the pseudonyms the coordinator saw
    assert "<tr><td class=t>0</td>" in page and "b&#x27;" not in page
    for heading in ("What each party sent, beside its original", "Join and clustering", "Security", "Network",
                    "Timings", "Glossary", "Sources"):
        assert f"<h2>{heading}</h2>" in page
    for term in ("stress", "ARI", "NMI", "VI", "F-measure", "column privacy", "VD", "known input-output attack",
                 "ICA attack", "multilateration"):
        assert f">{term}" in page, term
    report = json.loads((out / "report.json").read_text())
    for party in report["parties"]:
        assert f"<td>{party['bytes']['wire']:,}</td>" in page
    assert page.count("data:image/png;base64,") == 5  # bytes, clusters, privacy, attacks of a and of b
    assert "random projection" in page and "sparse" in page and "004 eq. 9 (RP2)" in page
    # multilateration recovers b's columns exactly: a marked zero, not a blank
    assert "<span class='zero'" in page


def test_zero_and_not_measured_look_different():
    from ppcsim.report.html import NOT_MEASURED, _cell, score

    assert _cell(None) == NOT_MEASURED and "not measured" in NOT_MEASURED
    assert "class='zero'" in score(0.0).html and ">0<" in score(0.0).html
    assert "(1.43e-16, floating-point rounding)" in score(1.435e-16).html
    assert score(0.25).html == "0.25"
    assert score(None).html == NOT_MEASURED


def test_a_party_starts_without_unix_only_modules():
    """On Windows there is no 'resource' module; a party used to fail on importing parties.run."""
    code = ("import sys\nsys.modules['resource'] = None\nimport parties.run\nimport parties.metrics as m\n"
            "m.open = lambda *a, **k: (_ for _ in ()).throw(OSError())\nprint(m.peak_rss())\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "None", proc.stderr
