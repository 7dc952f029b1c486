# SPDX-License-Identifier: MIT
"""ctest cpp_example_train_libtorch: the libtorch example against a real `gpumon agent -o REC` on
the fake NVML; its steps and hello are read back with `gpumon export`. Standard library only."""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "util", "testing"))
from wait_for import TIMEOUT_S, wait_for  # noqa: E402


def export(gpumon, rec, *what):
    out = subprocess.check_output([gpumon, "export", rec, *what, "--format", "jsonl"], text=True)
    return [json.loads(line) for line in out.splitlines()]


def recorded_kinds(gpumon, rec):
    """The rank events' kinds in the recording so far ([] while it cannot be read yet)."""
    try:
        return [e["kind"] for e in export(gpumon, rec, "--table", "rank_events")]
    except subprocess.CalledProcessError:
        return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumon", required=True)
    ap.add_argument("--example", required=True)
    ap.add_argument("--fake-nvml", required=True)
    args = ap.parse_args()
    steps, loader_ms = 30, 5
    with tempfile.TemporaryDirectory(prefix="gpumon-cpp-example-") as tmp:
        sock, rec = os.path.join(tmp, "agent.sock"), os.path.join(tmp, "run.gpumon")
        env = {k: v for k, v in os.environ.items()
               if k not in ("GPUMON_AGENT_SOCKET", "GPUMON_BINARY", "GPUMON_RECORD")}
        env.update(XDG_RUNTIME_DIR=tmp, GPUMON_NVML_LIBRARY=args.fake_nvml,
                   GPUMON_FAKE_SCENARIO="demo", RANK="0", LOCAL_RANK="0", WORLD_SIZE="1")
        agent = subprocess.Popen(
            [args.gpumon, "agent", "--socket", sock, "-o", rec, "--interval", "100"], env=env)
        try:
            assert wait_for(lambda: os.path.exists(sock)), "the agent did not listen"
            run = subprocess.run(
                [args.example, "--steps", str(steps), "--loader-ms", str(loader_ms)],
                env=dict(env, GPUMON_AGENT_SOCKET=sock), capture_output=True, text=True,
                timeout=90)
            sys.stdout.write(run.stdout)
            assert run.returncode == 0, run.stderr
            assert "gpumon: " not in run.stderr, "unexpected warning: " + run.stderr
            assert "gpumon active" in run.stdout, run.stdout
            # The agent stops without reading what a client still has in flight: first the
            # recording (a commit a second) holds the example's bye.
            assert wait_for(lambda: "bye" in recorded_kinds(args.gpumon, rec)), "no bye recorded"
        finally:
            if agent.poll() is None:
                agent.send_signal(signal.SIGTERM)
            assert agent.wait(timeout=TIMEOUT_S) == 0, "the agent failed"
        got = export(args.gpumon, rec, "--steps")
        assert [s["step"] for s in got] == list(range(steps)), got
        for s in got:
            assert s["rank"] == 0 and s["world_size"] == 1, s
            assert s["device"] == "cpu", s
            assert s["data_wait_s"] >= loader_ms / 1000.0 * 0.9, s
            assert s["cpu_step_s"] >= s["data_wait_s"], s
        events = export(args.gpumon, rec, "--table", "rank_events")
        kinds = [e["kind"] for e in events]
        assert kinds[0] == "hello" and kinds[-1] == "bye", kinds
        print("ok: %d steps recorded, rank events %s" % (len(got), kinds))

        # No socket given and none listening: Monitor::start() starts `gpumon agent` itself
        # (GPUMON_BINARY, recording into GPUMON_RECORD), which exits once idle.
        rec2 = os.path.join(tmp, "spawned.gpumon")
        run = subprocess.run(
            [args.example, "--steps", "5"], capture_output=True, text=True, timeout=90,
            env=dict(env, GPUMON_BINARY=args.gpumon, GPUMON_RECORD=rec2,
                     GPUMON_AGENT_IDLE_EXIT_S="1"))
        assert run.returncode == 0 and "gpumon active" in run.stdout, run.stdout + run.stderr
        default_sock = os.path.join(tmp, "gpumon", "agent.sock")
        assert wait_for(lambda: not os.path.exists(default_sock)), "the agent did not exit"
        got = export(args.gpumon, rec2, "--steps")
        assert [s["step"] for s in got] == list(range(5)), got
        print("ok: the agent started by the example recorded %d steps" % len(got))


if __name__ == "__main__":
    main()
