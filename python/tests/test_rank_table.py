# SPDX-License-Identifier: MIT
"""Seed 000's per-GPU table in `gpumon` and `gpumon watch`: a real `gpumon agent` on the fake
NVML publishes the attached ranks' PyTorch memory (<socket>.ranks.json), and the snapshot shows
each rank on its GPU (mapped by the PCI bus id its hello names) with allocated and reserved
memory; a rank that leaves goes from the table, and the file goes with the agent. This process
plays the rank over the wire protocol (docs/python.md "Protocol"). Needs no torch."""
import json
import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "util", "testing"))
from wait_for import wait_for  # noqa: E402

BINARY = os.environ.get("GPUMON_TEST_BINARY", os.path.join(HERE, "..", "..", "build", "gpumon"))
FAKE_NVML = os.environ.get(
    "GPUMON_TEST_FAKE_NVML", os.path.join(os.path.dirname(BINARY), "fake-nvml", "libnvidia-ml.so.1"))
GIB = 1 << 30


def test_the_snapshot_shows_each_ranks_torch_memory_on_its_gpu(tmp_path):
    env = dict(os.environ, GPUMON_NVML_LIBRARY=FAKE_NVML, GPUMON_FAKE_SCENARIO="demo",
               XDG_RUNTIME_DIR=str(tmp_path))
    sock_path = str(tmp_path / "agent.sock")
    table = sock_path + ".ranks.json"
    bus_ids = subprocess.check_output(
        [BINARY, "query", "--query-gpu=pci.bus_id", "--format=csv,noheader"], env=env,
        text=True, stderr=subprocess.DEVNULL).split()
    # The agent samples the GPUs (it diagnoses): it places the rank and carries their readings.
    agent = subprocess.Popen([BINARY, "agent", "--socket", sock_path, "--interval", "100"],
                             env=env, stderr=open(tmp_path / "agent.log", "w"))
    try:
        assert wait_for(lambda: os.path.exists(sock_path)), "the agent did not listen"
        rank = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        rank.connect(sock_path)
        hello = {"type": "hello", "pid": os.getpid(), "rank": 0, "local_rank": 0,
                 "world_size": 1, "device": "cuda:0", "pci_bus_id": bus_ids[3]}
        lines = [json.dumps(hello)]
        for n in range(3):
            t = time.time()
            lines.append(json.dumps({"type": "step", "step": n, "t_start": t, "t_end": t + 0.1,
                                     "cpu_step_s": 0.1, "mem": {"allocated": 30 * GIB + n,
                                                                "reserved": 34 * GIB}}))
        rank.sendall(("\n".join(lines) + "\n").encode())

        def snapshot():
            out = subprocess.run([BINARY, "--json"], env=dict(env, GPUMON_AGENT_SOCKET=sock_path),
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            return json.loads(out.stdout) if out.returncode == 0 else {}

        assert wait_for(lambda: snapshot().get("ranks")), "no rank in the snapshot: " + \
            open(tmp_path / "agent.log").read()
        row = snapshot()["ranks"][0]
        assert row["pid"] == os.getpid() and row["rank"] == 0 and row["gpu"] == 3, row
        assert row["torch_allocated_bytes"] == 30 * GIB, row  # the first step: written at once
        assert row["torch_reserved_bytes"] == 34 * GIB, row
        assert row["step_s"] == 0.1 and row["data_wait_s"] is None, row  # not measured
        assert os.stat(table).st_mode & 0o777 == 0o600
        # The node placed the rank itself and carries the GPUs' readings (the Python table's).
        # (Rewritten each second: the rank came before the node had opened its GPUs.)
        def published_table():
            try:
                return json.load(open(table))
            except (OSError, ValueError):
                return {}

        assert wait_for(lambda: published_table().get("ranks", [{}])[0].get("gpu") == 3), \
            published_table()
        published = published_table()
        assert any(g["index"] == 3 and g["util_pct"] is not None for g in published["gpus"]), \
            published["gpus"]
        text = subprocess.check_output([BINARY], env=dict(env, GPUMON_AGENT_SOCKET=sock_path),
                                       text=True, stderr=subprocess.DEVNULL)
        assert "Training ranks (attached to gpumon)" in text, text
        assert "100.0 ms          -    30.0 GiB   34.0 GiB" in text, text  # wait not measured

        rank.close()  # the rank leaves: out of the table at once
        assert wait_for(lambda: not snapshot().get("ranks", [1])), snapshot().get("ranks")
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=60)
    assert not os.path.exists(table), "the agent left its table behind"
