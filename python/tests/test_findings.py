# SPDX-License-Identifier: MIT
"""Live findings reach the training process: a real `gpumon agent` on the fake NVML's "xid"
scenario (XID 13 on GPU 0 at 3 s) diagnosing every 0.5 s; mon.findings() / mon.health_score()
see it by polling and mon.on_finding() by callback, from the training thread's next step.
Needs no torch."""
import os
import signal
import subprocess
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "util", "testing"))
import gpumon  # noqa: E402
from wait_for import TIMEOUT_S, wait_for  # noqa: E402
from fake_client import FakeClient  # noqa: E402

BINARY = os.environ.get("GPUMON_TEST_BINARY", os.path.join(HERE, "..", "..", "build", "gpumon"))
FAKE_NVML = os.environ.get(
    "GPUMON_TEST_FAKE_NVML", os.path.join(os.path.dirname(BINARY), "fake-nvml", "libnvidia-ml.so.1"))


def start_agent(tmp_path):
    env = dict(os.environ, GPUMON_NVML_LIBRARY=FAKE_NVML, GPUMON_FAKE_SCENARIO="xid",
               XDG_RUNTIME_DIR=str(tmp_path))
    sock = str(tmp_path / "agent.sock")
    log = open(tmp_path / "agent.log", "w")
    proc = subprocess.Popen([BINARY, "agent", "--socket", sock, "--interval", "100",
                             "--diagnose-period", "500"], env=env, stderr=log)
    assert wait_for(lambda: os.path.exists(sock)), "the agent did not listen"
    return proc, sock


def test_findings_reach_the_client_by_poll_and_by_callback(tmp_path):
    proc, sock = start_agent(tmp_path)
    try:
        mon = gpumon.start(socket_path=sock, start_agent=False)
        assert mon.active
        events = []
        mon.on_finding(events.append)
        mon.on_finding(lambda e: 1 / 0)  # a broken callback: one warning, nothing raised
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            def xid_seen():  # from the training thread's next step
                mon.step()
                return any(e["id"] == "xid" for e in events)

            wait_for(xid_seen)
        assert any(e["id"] == "xid" and e["state"] == "appeared" for e in events), events
        xid = next(e for e in events if e["id"] == "xid")
        assert 0 in xid["gpus"] and xid["severity"] in ("warning", "critical")
        assert xid["summary"]
        assert any(f["id"] == "xid" for f in mon.findings()), mon.findings()
        score = mon.health_score()
        assert isinstance(score, int) and 0 <= score <= 100, score
        # This process trains on the CPU (or names no GPU): the XID is the machine's, not the
        # run's, and costs it points only when the rank's device is unknown.
        assert xid["scope"] == "machine" or score < 100, (xid, score)
        raised = [w for w in caught if "on_finding callback raised" in str(w.message)]
        assert len(raised) == 1, [str(w.message) for w in caught]
        mon.close()
        assert mon.findings() == [] and mon.health_score() is None, "inactive after close"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(TIMEOUT_S)
    log = (tmp_path / "agent.log").read_text()
    assert " xid gpu 0" in log, log


def test_a_callback_registered_after_the_findings_came_still_sees_them(tmp_path):
    proc, sock = start_agent(tmp_path)
    try:
        mon = gpumon.start(socket_path=sock, start_agent=False)
        def pushed():  # steps hand over and read what the agent pushed
            mon.step()
            return '"xid"' in mon._client.findings_line()

        assert wait_for(pushed)
        events = []
        mon.on_finding(events.append)

        def seen():  # a hand-over every 1 s; the agent may push nothing new
            mon.step()
            return events

        wait_for(seen)
        assert any(e["id"] == "xid" and e["state"] == "appeared" for e in events), events
        mon.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(TIMEOUT_S)


def test_inactive_monitor_has_no_findings(tmp_path):
    mon = gpumon.Monitor()
    assert mon.findings() == [] and mon.health_score() is None
    mon.on_finding(print)


def test_a_finding_another_gpu_joins_changes_it_does_not_clear_and_reappear():
    agent = FakeClient()  # findings the test pushes
    mon = gpumon.Monitor(client=agent)
    events = []
    mon.on_finding(lambda e: events.append((e["state"], e["id"], e["gpus"])))
    throttled = {"id": "throttled", "severity": "warning", "gpus": [0], "ranks": [0], "pids": []}
    agent.push(throttled)
    mon.findings()
    assert events == [("appeared", "throttled", [0])]
    agent.push(dict(throttled, gpus=[0, 1], ranks=[0, 1]))
    mon.findings()
    assert events[1:] == [("changed", "throttled", [0, 1])], events
    agent.push(dict(throttled, gpus=[0, 1], ranks=[0, 1]),
               {"id": "xid", "severity": "critical", "gpus": [3], "ranks": [], "pids": []})
    mon.findings()
    assert events[2:] == [("appeared", "xid", [3])], events
    agent.push({"id": "xid", "severity": "critical", "gpus": [3], "ranks": [], "pids": []})
    mon.findings()
    assert events[3:] == [("cleared", "throttled", [0, 1])], events
    mon.close()
