# SPDX-License-Identifier: MIT
"""OOM forensics end to end: oom_loop.py runs out of memory on a stand-in torch.cuda (torch's
real message text, an OutOfMemoryError class, the allocator's OOM observer) against a real
agent on the fake NVML (scenario demo: cuda:0 is PCI 00000000:18:00.0, NVML's GPU 0). Checked:
the bundle's fields, the stderr line, the exception's note, the agent's "oom" rank event, one
bundle per OOM whichever hooks fire, and a warning (never an exception) when it cannot be written.
"""
import glob
import json
import os
import stat
import subprocess
import sys

import pytest

from test_gpumon import Agent, BINARY, HERE, base_env

GIB = 1 << 30


@pytest.fixture
def agent(tmp_path):
    a = Agent(tmp_path)
    yield a
    a.stop()


def run_loop(tmp_path, agent, mode, *extra, oom_dir=None, env_extra=None):
    env = base_env(tmp_path)
    oom_dir = oom_dir or tmp_path / "oom"
    os.makedirs(oom_dir, exist_ok=True)
    env.update(GPUMON_AGENT_SOCKET=agent.sock, GPUMON_BINARY=BINARY, GPUMON_OOM_DIR=str(oom_dir),
               RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", CUDA_VISIBLE_DEVICES="0,1",
               GPUMON_OOM_SNAPSHOT_BYTES="300000")
    env.update(env_extra or {})
    r = subprocess.run([sys.executable, os.path.join(HERE, "oom_loop.py"), mode] + list(extra),
                       env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    return r, sorted(glob.glob(os.path.join(str(oom_dir), "gpumon-oom-*.json")))


def oom_events(agent):
    agent.stop()
    return [e for e in agent.rank_events() if e["kind"] == "oom"], agent.rank_events()


def test_uncaught_oom_in_with_writes_one_bundle_though_three_hooks_fire(tmp_path, agent):
    r, bundles = run_loop(tmp_path, agent, "with")
    assert r.returncode == 1 and "done 5 0" in r.stdout, r.stdout + r.stderr
    assert len(bundles) == 1, bundles  # observer, with exit and excepthook: one bundle
    path = bundles[0]
    pid = int(r.stdout.split()[1])
    assert os.path.basename(path).startswith("gpumon-oom-%s-%d-" % (
        __import__("socket").gethostname(), pid))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    b = json.load(open(path))
    assert (b["rank"], b["local_rank"], b["world_size"], b["pid"]) == (0, 0, 1, pid)
    assert (b["device"], b["pci_bus_id"], b["cuda_visible_devices"]) == (
        "cuda:0", "00000000:18:00.0", "0,1")
    assert b["step"] == 5 and b["error"]["type"] == "torch.cuda.OutOfMemoryError"
    # The observer's exact figures, not the message's rounded ones.
    assert (b["requested_bytes"], b["requested_bytes_source"]) == (2 * GIB, "observer")
    assert (b["free_bytes"], b["total_bytes"]) == (1342177280, 150120529920)
    f = b["fragmentation"]
    assert f["reserved_unallocated_bytes"] == 147424296960 - 146243174400
    assert f["inactive_split_bytes"] == 524288000 and f["num_alloc_retries"] == 3
    assert f["largest_free_block_bytes"] == 6 << 20
    assert b["memory_stats"]["num_ooms"] == 1
    assert [s["step"] for s in b["last_steps"]] == [0, 1, 2, 3, 4]
    assert b["nvml_gpu"]["index"] == 0 and b["nvml_gpu"]["pci_bus_id"] == "00000000:18:00.0"
    assert b["processes"] and all(p["gpu_index"] == 0 for p in b["processes"])
    assert b["processes_unavailable"] is None
    snap = b["memory_snapshot"]
    assert snap["truncated"] and snap["segments_total"] == 5000
    assert 0 < snap["segments_kept"] < 5000 and "biggest" in snap["note"]
    sizes = [s["total_size"] for s in snap["segments"]]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == 5000 * 20 << 20
    assert os.path.getsize(path) < 400000
    assert b["errors"] == {}
    line = "gpumon: CUDA out of memory on cuda:0 (rank 0); forensics in %s" % path
    assert r.stderr.count(line) == 1, r.stderr
    if sys.version_info >= (3, 11):  # the note, printed under the traceback
        assert "gpumon: OOM forensics in %s" % path in r.stderr.split("OutOfMemoryError")[-1]
    ooms, events = oom_events(agent)
    assert len(ooms) == 1, events
    assert ooms[0]["detail"]["path"] == path and ooms[0]["detail"]["step"] == 5
    assert ooms[0]["detail"]["requested_bytes"] == 2 * GIB
    hello = events[0]["detail"]
    assert hello["pci_bus_id"] == "00000000:18:00.0" and hello["cuda_visible_devices"] == "0,1"


def test_plain_loop_without_observer_takes_the_size_from_the_message(tmp_path, agent):
    r, bundles = run_loop(tmp_path, agent, "plain", "--no-observer")
    assert r.returncode == 1 and "done 5 0" in r.stdout, r.stdout + r.stderr
    assert len(bundles) == 1
    b = json.load(open(bundles[0]))
    assert (b["requested_bytes"], b["requested_bytes_source"]) == (2 * GIB, "message")
    assert (b["free_bytes"], b["free_total_source"]) == (1342177280, "mem_get_info")
    assert b["step"] == 5 and [s["step"] for s in b["last_steps"]] == [0, 1, 2, 3, 4]
    assert "forensics in %s" % bundles[0] in r.stderr
    ooms, _ = oom_events(agent)
    assert [e["detail"]["step"] for e in ooms] == [5]


def test_a_caught_oom_reported_twice_is_one_bundle_and_training_goes_on(tmp_path, agent):
    r, bundles = run_loop(tmp_path, agent, "caught")
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "done 10 0", r.stdout + r.stderr
    reports = [line.split()[1] for line in r.stdout.splitlines() if line.startswith("report")]
    assert reports == bundles * 2 and len(bundles) == 1
    kinds = [e["kind"] for e in oom_events(agent)[1]]
    assert kinds == ["hello", "oom", "bye"]


def test_an_unwritable_folder_is_a_warning_not_an_exception(tmp_path, agent):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    r, _ = run_loop(tmp_path, agent, "caught", oom_dir=tmp_path / "oom",
                    env_extra={"GPUMON_OOM_DIR": str(blocker / "sub")})
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "done 10 1", r.stdout
    assert "report None" in r.stdout and "no OOM forensics bundle" in r.stdout
    ooms, events = oom_events(agent)
    assert len(ooms) == 1 and "path" not in ooms[0]["detail"]  # the agent still hears of it
    assert [e["kind"] for e in events][-1] == "bye"


def test_message_parsing_and_matching():
    from gpumon import _device, _oom
    assert _oom.parse_message("Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
                              "1.50 GiB of which 512 bytes is free.") == (
        20 << 20, int(1.5 * GIB), 512)
    assert _oom.parse_message("Tried to allocate 1023 bytes") == (1023, None, None)
    assert _oom.parse_message("something else") == (None, None, None)
    oom = type("OutOfMemoryError", (RuntimeError,), {})("CUDA out of memory.")
    try:
        try:
            raise oom
        except RuntimeError as e:
            raise ValueError("wrapped") from e
    except ValueError as wrapper:
        assert _oom.find_oom(wrapper) is oom
    assert _oom.is_cuda_oom(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert not _oom.is_cuda_oom(RuntimeError("DefaultCPUAllocator: can't allocate memory"))
    assert _device.same_bus_id("0000:18:00.0", "00000000:18:00.0")
    assert not _device.same_bus_id("00000000:2A:00.0", "00000000:18:00.0")
    assert not _device.same_bus_id(None, "00000000:18:00.0")
