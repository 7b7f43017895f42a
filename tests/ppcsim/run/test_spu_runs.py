"""protocol = "mpc" with engine = "spu": k-means on SPU's ABY3 shares, every byte relayed through the coordinator.

The tests that run SPU skip, saying why, where its separate environment is absent (``ppc spu-env`` creates it;
``PPC_SPU_PYTHON`` names another); the loader's and the refusal's tests run everywhere.
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import ROOT, blobs, by_hand, kmeans, read_report, run_ppc, scenario_toml, split_x, write_scenario
from parties import spu_env
from parties.spu_run import program_env
from ppcsim.scenario.load import ScenarioError, load_scenario

SPU = dict(seed=5, deadline=300, data=blobs(60, 6, 3, label_column="target"),
           clustering=kmeans(3, "mpc", max_iter=3, engine="spu"))
THREE = scenario_toml("blobs-spu", split_x(2, 2, 2), **SPU)
TWO = scenario_toml("blobs-spu", split_x(2, 4), **SPU)

_problem = spu_env.problem()
needs_spu = pytest.mark.skipif(_problem is not None, reason=f"SPU cannot run here: {_problem}")


# -- the scenario's checks and the refusal (no SPU needed) --------------------------------------------------------

def test_the_loader_refuses_an_spu_session_without_exactly_three_share_holders(tmp_path):
    four = scenario_toml("blobs-spu", split_x(2, 2, 1, 1), **SPU)
    with pytest.raises(ScenarioError, match="needs exactly three share-holders: three parties, or two and"):
        load_scenario(write_scenario(tmp_path, four))
    with pytest.raises(ScenarioError, match="'helper = true'; this scenario has 2 parties"):
        load_scenario(write_scenario(tmp_path, TWO))
    with pytest.raises(ScenarioError, match="'engine' must be one of"):
        load_scenario(write_scenario(tmp_path, THREE.replace('engine = "spu"', 'engine = "aby3"')))
    with pytest.raises(ScenarioError, match="appl(y|ies) to protocol = \"mpc\""):
        load_scenario(write_scenario(tmp_path, THREE.replace('protocol = "mpc"',
                                                             'protocol = "secure_aggregation"\nreveal = "distances"')))
    assert load_scenario(write_scenario(tmp_path, TWO + "helper = true\n")).clustering.engine == "spu"


def test_ppc_run_refuses_before_anything_starts_when_spu_is_not_set_up(tmp_path, monkeypatch):
    monkeypatch.setenv(spu_env.VARIABLE, str(tmp_path / "no-such-env" / "bin" / "python"))
    done = run_ppc("run", write_scenario(tmp_path, THREE), "--out", tmp_path / "out", timeout=120)
    assert done.returncode != 0
    assert "engine = \"spu\"" in done.stderr and "no-such-env" in done.stderr and "ppc spu-env" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())  # no party was started


def test_an_interpreter_without_spu_is_refused_naming_it(tmp_path):
    found = spu_env.problem(__import__("pathlib").Path(sys.executable))  # this environment has no spu (numpy 2)
    if spu_env.machine_problem():
        assert "AVX and AES-NI" in found
    else:
        assert found is not None and sys.executable in found and "ppc spu-env" in found


def test_a_party_that_ppc_run_checked_spu_for_does_not_check_again_and_only_for_that_interpreter(tmp_path,
                                                                                                monkeypatch):
    if spu_env.machine_problem():
        pytest.skip("this CPU cannot run SPU: every check says so first")
    here = __import__("pathlib").Path(sys.executable)  # no spu (numpy 2): its check fails
    monkeypatch.setenv(spu_env.CHECKED, str(tmp_path / "another" / "python"))
    assert spu_env.problem(here) is not None
    monkeypatch.setenv(spu_env.CHECKED, str(here))
    assert spu_env.problem(here) is None  # ppc run said it checked this interpreter: not started again
    monkeypatch.delenv(spu_env.CHECKED)
    monkeypatch.setenv(spu_env.VARIABLE, str(here))
    spu_env.checked()  # what ppc run says once its check passed, in its environment, which its parties inherit
    assert spu_env.problem() is None and __import__("os").environ[spu_env.CHECKED] == str(here)
    monkeypatch.delenv(spu_env.CHECKED)


def test_the_cpu_and_python_checks_say_why_and_what_to_do():
    with_both = "processor : 0\nflags\t\t: fpu sse2 avx aes avx2\n"
    assert spu_env.missing_cpu_flags(with_both) == []
    assert spu_env.missing_cpu_flags("flags\t\t: fpu sse2 sse4_2\n") == ["avx", "aes"]
    assert "lacks aes" in spu_env.machine_problem("flags : fpu avx\n") and "mpyc" in spu_env.machine_problem(
        "flags : fpu avx\n")
    assert spu_env.python_problem((3, 11)) is None and spu_env.python_problem((3, 10)) is None
    assert "not 3.12" in spu_env.python_problem((3, 12)) and "--python python3.11" in spu_env.python_problem((3, 13))


# -- real processes ------------------------------------------------------------------------------------------------

@needs_spu
def test_ppc_run_three_parties_gives_plain_lloyds_labels_and_counts_every_relayed_byte(tmp_path):
    path = write_scenario(tmp_path, THREE + "reveal_centres = true\n")
    done = run_ppc("run", path, "--out", tmp_path / "out", timeout=400)
    assert done.returncode == 0, done.stderr
    report = read_report(tmp_path / "out")
    assert report["state"] == "done"
    u = report["utility"]
    assert u["labels_equal_same_init"] and u["reference"].endswith("max_iter = 3)")
    assert u["centres_max_abs_error"] < 2.0**-8  # 16 fractional bits: a few units of 2^-16 after three divisions
    mpc = report["mpc"]
    assert mpc["engine"] == "spu" and mpc["parties"] == ["a", "b", "c"] and mpc["threshold"] == 1
    relay = [e for e in report["communication"]["ledger"] if e["rpc"] == "Relay"]
    m, k = report["join"]["rows_joined"], 3
    for name, party in mpc["by_party"].items():
        result = 4 * m + 8 * k * 6  # the RelayResult: labels (int32) and the opened centres (float64)
        assert party["up"] == sum(e["payload"] for e in relay if e["party"] == name and e["direction"] == "up"
                                  and e["payload"] > 0) - result
        assert party["down"] == sum(e["payload"] for e in relay if e["party"] == name and e["direction"] == "down")
        assert party["up"] == sum(link["bytes"] for link in mpc["links"] if link["sender"] == name)
        assert party["up"] - party["plaintext_up"] == 16 * party["frames_up"]
        assert party["up"] > 100 * result  # ABY3's traffic: far beyond the labels and centres it opens
    assert {(link["sender"], link["receiver"]) for link in mpc["links"]} == {
        (s, r) for s in "abc" for r in "abc" if s != r}
    assert [r["round"] for r in mpc["per_round"]] == [-1, 0, 1, 2, 3]
    sent = sum(p["up"] for p in mpc["by_party"].values())
    assert sum(sum(r["up"].values()) for r in mpc["per_round"]) == sent
    assert "ABY3" in report["privacy"]["assumption"] and "SPU, ABY3" in report["clustering"]["input"]
    assert "mpc: 3 share-holders" in done.stderr


@needs_spu
def test_two_parties_with_the_coordinators_helper_as_third_share_holder(tmp_path):
    path = write_scenario(tmp_path, TWO + "helper = true\n")
    done = run_ppc("run", path, "--out", tmp_path / "out", timeout=400)
    assert done.returncode == 0, done.stderr
    report = read_report(tmp_path / "out")
    assert report["utility"]["labels_equal_same_init"]
    mpc = report["mpc"]
    assert mpc["engine"] == "spu" and mpc["parties"] == ["a", "b", "helper"] and mpc["helper"] == "helper"
    assert {(link["sender"], link["receiver"]) for link in mpc["links"]} == {
        ("a", "b"), ("b", "a"), ("a", "helper"), ("helper", "a"), ("b", "helper"), ("helper", "b")}
    # a share-holder like the others: ABY3 sends about as much from each of the three
    assert mpc["by_party"]["helper"]["up"] > 0.5 * max(mpc["by_party"][p]["up"] for p in "ab") > 10_000
    assert "must not collude" in report["privacy"]["assumption"]


@needs_spu
def test_roles_by_hand_over_mutual_tls_three_parties(tmp_path):
    path = write_scenario(tmp_path, THREE + "[security]\nmutual = true\n")
    errors = by_hand(path, tmp_path, ["a", "b", "c"], timeout=400)
    assert all("Lloyd rounds as an MPC over 3 parties" in err for err in errors.values())
    report = read_report(tmp_path / "out")
    assert report["state"] == "done" and report["mpc"]["engine"] == "spu"
    a = (tmp_path / "a.csv").read_text().splitlines()
    assert a[0] == "id,cluster" and len(a) == 61 and a == (tmp_path / "c.csv").read_text().splitlines()


@needs_spu
def test_the_spu_program_never_outlives_the_party_that_started_it(tmp_path):
    """Its peers never come, so it would wait for ever; closing its standard input ends it."""
    from parties.mpc import free_port
    from parties.spu_run import program_command, program_env

    data = tmp_path / "in.npz"
    np.savez(data, X=np.zeros((3, 1)), columns=[1, 1, 1], init=[0, 1], k=2, rounds=1, bits=32, frac=16, m=3,
             reveal_centres=False)
    command = program_command(data, tmp_path / "out.npz", 0, [f"127.0.0.1:{free_port()}" for _ in range(3)],
                              "test", 300)
    program = subprocess.Popen([*command, "--watch-stdin"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=program_env())
    try:
        time.sleep(3.0)
        assert program.poll() is None  # still waiting for its peers
        program.stdin.close()
        assert program.wait(timeout=30) == 3
    finally:
        if program.poll() is None:
            program.kill()
            program.wait()


# -- the program's division on SPU's own fixed point, at any number of records -------------------------------------

_SIMULATED_UPDATE = """
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import spu.libspu as libspu
import spu.utils.simulation as spsim
import spu_kmeans
m = int(sys.argv[2])
start, update, _ = spu_kmeans.programs(3, 1, [0, 1, 2], m, 16)
sim = spsim.Simulator(3, libspu.RuntimeConfig(protocol=libspu.ProtocolKind.ABY3, field=libspu.FieldType.FM64,
                                              fxp_fraction_bits=16))
X = np.random.default_rng(1).random((300, 4)).astype(np.float32)
Xe, C = spsim.sim_jax(sim, start)(X[:, :2], X[:, 2:])
table = np.asarray(spu_kmeans.division_table(m, 16), dtype=np.float32)  # public in a run; secret here, same values
np.save(sys.argv[3], np.asarray(spsim.sim_jax(sim, update)(Xe, C, table)))
"""


@needs_spu
@pytest.mark.parametrize("m", [1000, 100_000])
def test_one_round_on_spus_fixed_point_moves_the_centres_as_plain_lloyd_whatever_the_number_of_records(m, tmp_path):
    # m bounds every count and sizes the division's table: from 2^14 records a count's power-of-two factor would
    # be one SPU refuses, so from there the factors are scaled up by 2^L and the quotient down after; a round on
    # 300 records with the bound of 100,000 (L = 3) must still give Lloyd's centres to the fixed point's precision
    out = tmp_path / "C.npy"
    command = [str(spu_env.interpreter()), "-c", _SIMULATED_UPDATE, str(ROOT / "parties"), str(m), str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=program_env())
    assert done.returncode == 0, done.stderr[-2000:]
    X = np.random.default_rng(1).random((300, 4)).astype(np.float32).astype(np.float64)
    C = X[[0, 1, 2]]
    labels = np.argmin(((X[:, None, :] - C[None]) ** 2).sum(axis=2), axis=1)
    expected = np.stack([X[labels == j].mean(axis=0) for j in range(3)])
    assert np.abs(np.load(out) - expected).max() < 6e-5  # 2.7e-5 to 3.8e-5 measured; 1.6e-4 if the bits are lost
