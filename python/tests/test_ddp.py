# SPDX-License-Identifier: MIT
"""A real 2-rank DistributedDataParallel run (gloo, CPU) sending to one `gpumon agent`: two
processes started the way torchrun starts them (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT), each running examples/train_ddp.py and calling gpumon.start(); both name their
job (GPUMON_JOB_ID) in their hello."""
import os
import socket
import subprocess
import sys

import pytest

from test_callbacks import stop_after_byes
from test_gpumon import REPO, Agent, base_env

torch = pytest.importorskip("torch")
if not torch.distributed.is_available():
    pytest.skip("this torch has no torch.distributed", allow_module_level=True)

STEPS = 6


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_gloo_ranks_send_their_steps_to_one_agent(tmp_path):
    agent = Agent(tmp_path)
    try:
        port = free_port()
        ranks = []
        for rank in range(2):
            env = base_env(tmp_path)
            env.update(GPUMON_AGENT_SOCKET=agent.sock, RANK=str(rank), LOCAL_RANK=str(rank),
                       WORLD_SIZE="2", LOCAL_WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(port), OMP_NUM_THREADS="1",
                       GPUMON_JOB_ID="ddp-test-job")
            ranks.append(subprocess.Popen(
                [sys.executable, os.path.join(REPO, "examples", "train_ddp.py"), "--steps",
                 str(STEPS), "--device", "cpu"],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        outs = [p.communicate(timeout=150)[0] for p in ranks]
        for rank, (p, out) in enumerate(zip(ranks, outs)):
            assert p.returncode == 0, out
            assert "train_ddp: rank %d/2, %d steps on cpu" % (rank, STEPS) in out, out
        stop_after_byes(agent, 2)
    finally:
        agent.stop()
    steps = agent.steps()
    by_rank = {}
    for s in steps:
        assert s["world_size"] == 2 and s["local_rank"] == s["rank"], s
        by_rank.setdefault(s["rank"], []).append(s)
    assert sorted(by_rank) == [0, 1]
    for rank, own in by_rank.items():
        assert [s["step"] for s in own] == list(range(STEPS))
        assert len({s["pid"] for s in own}) == 1
    pids = {rank: own[0]["pid"] for rank, own in by_rank.items()}
    assert pids[0] != pids[1] and pids[0] in (p.pid for p in ranks)
    events = agent.rank_events()
    for rank in (0, 1):
        mine = [e["kind"] for e in events if e["pid"] == pids[rank]]
        assert mine == ["hello", "bye"], events
        hello = next(e for e in events if e["pid"] == pids[rank] and e["kind"] == "hello")
        assert (hello["rank"], hello["detail"]["world_size"]) == (rank, 2)
        # Both ranks name one job: the id the node's rule gives (job/job_identity.h).
        assert hello["detail"]["job"]["id"] == "ddp-test-job", hello
        assert hello["detail"]["job"]["id_source"] == "gpumon", hello
