# SPDX-License-Identifier: MIT
"""One job across nodes, on one machine: two `gpumon record`s each play a node (their own agent
socket, GPUMON_HOSTNAME, the fake NVML), a 4-rank gloo job runs two ranks under each, and
`gpumon doctor` and `gpumon report` join the two recordings into the job on one clock."""
import json
import socket
import subprocess
import sys

import pytest

from test_gpumon import BINARY, base_env
from test_auto import SCRIPT

torch = pytest.importorskip("torch")
STEPS = 40


def test_two_nodes_of_one_gloo_job_are_joined_by_doctor(tmp_path):
    if not torch.distributed.is_available():
        pytest.skip("this torch has no torch.distributed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    recs, procs = [], []
    for node in (0, 1):
        home = tmp_path / ("node%d" % node)
        home.mkdir()
        env = base_env(home)  # its own XDG_RUNTIME_DIR: its own agent socket
        # node-1's host name is hostile: every page and text must show it as text.
        env.update(GPUMON_HOSTNAME="node-%d%s" % (node, "<b>" if node else ""),
                   GPUMON_JOB_ID="e2e-job")
        launcher = home / "launch.sh"
        launcher.write_text(
            "export WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=%d "
            "OMP_NUM_THREADS=1\n"
            "RANK=%d LOCAL_RANK=0 %s %s %d --ddp &\n"
            "RANK=%d LOCAL_RANK=1 %s %s %d --ddp\n"
            "wait\n" % (port, 2 * node, sys.executable, SCRIPT, STEPS,
                        2 * node + 1, sys.executable, SCRIPT, STEPS))
        rec = home / "run.gpumon"
        recs.append(str(rec))
        procs.append(subprocess.Popen(
            [BINARY, "record", "-o", str(rec), "--interval", "100", "--", "/bin/sh",
             str(launcher)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for p in procs:
        out, err = p.communicate(timeout=280)
        assert p.returncode == 0 and out.count("done %d" % STEPS) == 2, out + err

    r = subprocess.run([BINARY, "doctor", *recs, "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["job"] == "e2e-job" and j["world_size"] == 4, j
    assert [n["name"] for n in j["nodes"]] == ["node-0", "node-1<b>"], j["nodes"]
    assert [n["ranks"] for n in j["nodes"]] == [[0, 1], [2, 3]]
    assert j["clock_reference"] == "node-0"
    clock = j["nodes"][1]["clock"]
    # One machine, one clock: the estimate is the ranks' spread in the collective, a few ms.
    assert clock["applied"] and abs(clock["offset_s"]) < 0.05, clock
    assert clock["common_steps"] >= STEPS - 5, clock
    assert j["not_judged"] == [], j["not_judged"]
    assert [f for f in j["findings"] if f["severity"] != "info"] == [], j["findings"]
    assert j["simulated"] == "demo"
    for n in j["nodes"]:
        assert n["diagnosis"]["recording"] == n["recording"]
    # A folder of the recordings is the same job; text names the job and its nodes.
    folder = tmp_path / "job"
    folder.mkdir()
    for i, rec in enumerate(recs):
        (folder / ("n%d.gpumon" % i)).symlink_to(rec)
    t = subprocess.run([BINARY, "doctor", str(folder)], capture_output=True, text=True)
    assert t.returncode == 0, t.stderr
    assert "gpumon doctor: job e2e-job, 2 nodes, 4 ranks of 4" in t.stdout, t.stdout
    assert "== node node-1<b> (ranks 2-3) ==" in t.stdout, t.stdout

    # The job's report: one page across the nodes, private to its owner.
    page = tmp_path / "job.html"
    rep = subprocess.run([BINARY, "report", *recs, "-o", str(page)], capture_output=True,
                         text=True)
    assert rep.returncode == 0, rep.stderr
    assert "job e2e-job on 2 nodes" in rep.stdout, rep.stdout
    html = page.read_text()
    assert "<h2>Findings across nodes</h2>" in html and "<h2>Ranks</h2>" in html
    assert "Node node-1&lt;b&gt;: its own findings" in html and "node-1<b>" not in html
    for rank in range(4):  # a row per rank, with its node
        assert "<tr><td>%d</td><td>node-%d" % (rank, rank // 2) in html, rank
    assert (page.stat().st_mode & 0o777) == 0o600
    assert "<script" not in html
    # Without -o: job-ID.html beside the first recording.
    rep = subprocess.run([BINARY, "report", str(folder)], capture_output=True, text=True)
    assert rep.returncode == 0 and (folder / "job-e2e-job.html").exists(), rep.stdout + rep.stderr

    # Another job's recording is refused, naming both.
    other = tmp_path / "other.gpumon"
    env = base_env(tmp_path)
    env.update(GPUMON_HOSTNAME="node-9", GPUMON_JOB_ID="another-job", RANK="0", WORLD_SIZE="1")
    subprocess.run([BINARY, "record", "-o", str(other), "--interval", "100", "--",
                    sys.executable, SCRIPT, "3", "--explicit"], env=env, check=True,
                   capture_output=True, timeout=120)
    bad = subprocess.run([BINARY, "doctor", recs[0], str(other)], capture_output=True, text=True)
    assert bad.returncode == 1 and "different jobs" in bad.stderr, bad.stderr
