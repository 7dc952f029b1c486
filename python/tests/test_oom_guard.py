# SPDX-License-Identifier: MIT
"""The OOM guard (docs/oom-guard.md) on Debian's CPU torch: a planted allocator raises
torch.cuda.OutOfMemoryError above a micro-batch size (oom_guard_models.py); a fake memory probe
stands for the CUDA allocator's statistics; a 2-rank gloo DDP run; the actions sent to a real
agent."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
torch = pytest.importorskip("torch")

import gpumon  # noqa: E402
from gpumon._actions import action_line  # noqa: E402
from oom_guard_models import (BATCH, OOM_MESSAGE, STEPS, Planted, batch_of, loss_of,  # noqa: E402
                              reference_grads)


def train(model, steps, sizes_seen=None, **guard_options):
    torch.manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    guard = gpumon.Monitor().oom_guard(model, **guard_options)
    losses = []
    for step in range(steps):
        opt.zero_grad()
        losses.append(guard.run(batch_of(step), lambda mb: loss_of(model, mb)))
        opt.step()
        if sizes_seen is not None:
            sizes_seen.append(guard.micro_batch_size)
    return guard, losses


def reference(sizes):
    torch.manual_seed(0)
    model = Planted()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, size in enumerate(sizes):
        opt.zero_grad()
        reference_grads(model, batch_of(step), size or BATCH)
        opt.step()
    return model


def same_weights(a, b, tol=1e-6):
    return all(torch.allclose(p, q, rtol=0, atol=tol) for p, q in zip(a.parameters(),
                                                                       b.parameters()))


def test_a_planted_oom_splits_the_same_batch_and_training_ends_as_the_reference():
    torch.manual_seed(0)
    model = Planted(limit=8)
    sizes = []
    guard, losses = train(model, 20, sizes)
    assert sizes == [8] * 20
    assert [(a["action"], a["reason"], a["micro_batch_size"], a["previous_micro_batch_size"])
            for a in guard.actions] == [("oom_split", "oom", 16, 32), ("oom_split", "oom", 8, 16)]
    assert guard.actions[0]["step"] == 0 and guard.actions[0]["batch_size"] == BATCH
    assert guard.actions[0]["evidence"]["requested_bytes"] == 2 << 30
    assert "split the batch of 32 into 2 micro-batches of 16" in guard.actions[0]["summary"]
    ref = reference([8] * 20)
    assert same_weights(model, ref)
    # The loss returned is the batch's: the same as one forward of the whole batch.
    torch.manual_seed(0)
    whole = Planted()
    assert abs(float(losses[0]) - float(loss_of(whole, batch_of(0)))) < 1e-6


def test_an_oom_in_the_backward_of_a_later_micro_batch_drops_the_partial_gradients():
    # Step 0: 32 fails in its forward; at 16 the first micro-batch's backward (call 0) passes,
    # the second's (call 1) fails: its gradients so far must go; at 8 all four pass.
    torch.manual_seed(0)
    model = Planted(limit=16, fail_backward_calls=[1])
    sizes = []
    guard, _ = train(model, 5, sizes)
    assert sizes == [8] * 5 and model.backward_calls == 2 + 4 * 5
    assert [a["micro_batch_size"] for a in guard.actions] == [16, 8]
    assert same_weights(model, reference([8] * 5))


def test_no_oom_leaves_the_computation_unchanged():
    torch.manual_seed(0)
    model = Planted()
    guard, _ = train(model, 5)
    assert guard.micro_batch_size is None and guard.actions == []
    assert same_weights(model, reference([None] * 5), tol=0)


def test_the_floor_raises_the_original_oom_and_a_user_error_passes_through():
    torch.manual_seed(0)
    model = Planted(limit=4)
    guard = gpumon.Monitor().oom_guard(model, min_micro_batch_size=8)
    planted = []

    def forward(mb):
        try:
            return loss_of(model, mb)
        except torch.cuda.OutOfMemoryError as e:
            planted.append(e)
            raise

    with pytest.raises(torch.cuda.OutOfMemoryError) as raised:
        guard.run(batch_of(0), forward)
    assert raised.value is planted[-1] and str(raised.value) == OOM_MESSAGE
    assert [(a["action"], a["micro_batch_size"]) for a in guard.actions] == [
        ("oom_split", 16), ("oom_split", 8), ("oom_floor", 8)]
    assert "min_micro_batch_size=8" in guard.actions[-1]["summary"]
    assert all(p.grad is None for p in model.parameters())

    def broken(mb):
        raise ValueError("the user's own")

    with pytest.raises(ValueError, match="the user's own"):
        gpumon.Monitor().oom_guard(Planted()).run(batch_of(0), broken)


def test_a_runtime_error_saying_out_of_memory_counts_and_dicts_split():
    model = Planted()
    calls = []

    def forward(mb):
        calls.append(mb["x"].shape[0])
        if mb["x"].shape[0] > 10:
            raise RuntimeError("CUDA error: out of memory")
        return loss_of(model, (mb["x"], mb["y"])) + 0 * mb["scale"]

    x, y = batch_of(0)
    guard = gpumon.Monitor().oom_guard(model)
    guard.run({"x": x[:20], "y": y[:20], "scale": 1.0}, forward)
    assert calls == [20, 10, 10] and guard.micro_batch_size == 10


def test_a_batch_it_cannot_split_keeps_its_oom_with_a_warning():
    oom = torch.cuda.OutOfMemoryError(OOM_MESSAGE)

    def forward(batch):
        raise oom

    guard = gpumon.Monitor().oom_guard(Planted())
    with pytest.warns(gpumon.GpumonWarning, match="cannot split this batch"):
        with pytest.raises(torch.cuda.OutOfMemoryError) as raised:
            guard.run("some text", forward)
    assert raised.value is oom and guard.actions == []


class FakeProbe:
    """Stands for the CUDA allocator: returns the next planted reading at each call."""

    def __init__(self, readings):
        self.readings = list(readings)
        self.calls = 0

    def __call__(self):
        r = self.readings[min(self.calls, len(self.readings) - 1)]
        self.calls += 1
        return dict(r)


def reading(peak, allocated=200, peak_allocated=None, total=1000, outside=50, retries=0):
    return {"total_bytes": total, "outside_bytes": outside, "reserved_bytes": peak,
            "allocated_bytes": allocated,
            "peak_reserved_bytes": peak,
            "peak_allocated_bytes": peak if peak_allocated is None else peak_allocated,
            "num_alloc_retries": retries}


def test_a_predicted_split_before_the_oom_and_a_merge_after_the_hysteresis():
    # Margin 10 % of 1000 bytes = 100. Steps 0-2: peak 500, headroom 450. Step 3: peak 880
    # (headroom 70 < 100; halving frees half of the 680 of activations): split 32 -> 16 from
    # step 4. Then peak 560 with 200 static: the activations are 360 at 16, so 32 would peak
    # at 920 (headroom 30): no merge. From the probe after step 9 the peak is 440: 32 would
    # reach 680 (headroom 270, over twice the margin): a merge, but not before 5 steps after
    # the split (applies from step 9 at the earliest).
    readings = [reading(500)] * 3 + [reading(880)] + [reading(560)] * 4 + [reading(440)] * 10
    probe = FakeProbe(readings)
    torch.manual_seed(0)
    model = Planted()
    sizes = []
    guard, _ = train(model, 14, sizes, memory_probe=probe, probe_every=1, headroom_margin=0.1,
                     hysteresis_steps=5)
    assert sizes[:3] == [None] * 3 and sizes[3:8] == [16] * 5
    split, merge = guard.actions
    assert (split["action"], split["reason"], split["step"]) == ("oom_split", "predicted", 4)
    assert split["evidence"] == {"total_bytes": 1000, "outside_bytes": 50,
                                 "peak_allocated_bytes": 880, "headroom_bytes": 70,
                                 "margin_bytes": 100, "num_alloc_retries": 0,
                                 "trigger": "headroom"}
    assert "headroom 0.00 GiB under the margin" in split["summary"]
    assert (merge["action"], merge["reason"], merge["micro_batch_size"]) == (
        "oom_merge", "headroom", 32)
    assert merge["step"] == 9 and merge["evidence"]["estimated_peak_bytes"] == 680
    assert sizes[8:] == [32] * 6
    # Micro-batching changed only the accumulation: the weights match that reference.
    assert same_weights(model, reference([None] * 4 + [16] * 5 + [32] * 5))


def test_a_predicted_split_judges_the_peak_allocated_and_never_one_that_cannot_help():
    # The allocator's cache (reserved) stays at 990 after the split, as on a real GPU; what the
    # steps allocate drops from 880 to 540: one split, not a cascade. Then the static part
    # grows to 850 of a 900 peak: headroom 50 under the margin of 100, but halving frees only
    # 25: no split (the OOM path stays).
    high = dict(reading(880), peak_reserved_bytes=990, reserved_bytes=990)
    after = dict(reading(540), peak_reserved_bytes=990, reserved_bytes=990)
    static = dict(reading(900, allocated=850), peak_reserved_bytes=990, reserved_bytes=990)
    probe = FakeProbe([high] + [after] * 4 + [static] * 6)
    torch.manual_seed(0)
    sizes = []
    guard, _ = train(Planted(), 11, sizes, memory_probe=probe, probe_every=1,
                     headroom_margin=0.1, hysteresis_steps=1000)
    assert [(a["action"], a["reason"], a["micro_batch_size"]) for a in guard.actions] == [
        ("oom_split", "predicted", 16)]
    assert sizes == [16] * 11  # from the probe after step 0 on


def test_alloc_retries_growing_in_two_probes_in_a_row_split():
    probe = FakeProbe([reading(500, retries=r) for r in (0, 0, 1, 1, 3, 5)])
    torch.manual_seed(0)
    guard, _ = train(Planted(), 6, memory_probe=probe, probe_every=1, headroom_margin=0.1,
                     hysteresis_steps=100)
    assert [(a["action"], a["step"], a["evidence"]["trigger"]) for a in guard.actions] == [
        ("oom_split", 6, "retries")]


def test_a_failing_probe_warns_once_and_the_guard_still_splits_on_an_oom():
    def broken():
        raise RuntimeError("no allocator statistics")

    torch.manual_seed(0)
    model = Planted(limit=16)
    with pytest.warns(gpumon.GpumonWarning, match="memory probe is off"):
        guard, _ = train(model, 4, memory_probe=broken, probe_every=1)
    assert [a["reason"] for a in guard.actions] == ["oom"]
    assert same_weights(model, reference([16] * 4))


def test_a_size_that_ran_out_of_memory_is_not_merged_back_into_soon():
    probe = FakeProbe([reading(300)])  # plenty of headroom all along
    torch.manual_seed(0)
    model = Planted(limit=16)
    sizes = []
    guard, _ = train(model, 12, sizes, memory_probe=probe, probe_every=1, headroom_margin=0.1,
                     hysteresis_steps=2)
    # The OOM at 32 in step 0 blocks a merge into 32 for 4 x 2 steps: the merge proposed after
    # step 7 applies from step 8, which runs out of memory again and splits: blocked anew.
    assert sizes == [16] * 7 + [32] + [16] * 4, sizes
    assert [(a["action"], a["reason"], a["step"], a["micro_batch_size"])
            for a in guard.actions] == [("oom_split", "oom", 0, 16),
                                        ("oom_merge", "headroom", 8, 32),
                                        ("oom_split", "oom", 8, 16)]
    assert same_weights(model, reference([16] * 12))


def test_the_action_line_is_the_spec_s():
    line = action_line("oom_split", 120, "x" * 500, reason="oom", batch_size=32,
                       micro_batch_size=16, previous_micro_batch_size=32, epoch=None,
                       evidence={"requested_bytes": 2147483648, "free_bytes": None,
                                 "share": float("nan")})
    msg = json.loads(line)
    assert msg["type"] == "action" and msg["action"] == "oom_split" and msg["step"] == 120
    assert len(msg["summary"]) == 400 and "epoch" not in msg
    assert msg["evidence"] == {"requested_bytes": 2147483648}
    assert "\n" not in line and len(line) <= 4095
    big = action_line("oom_split", 1, "s", evidence={"k%d" % i: "v" * 100 for i in range(60)})
    assert len(big) <= 4095 and "evidence" not in json.loads(big)
    with pytest.raises(ValueError):
        action_line("OOM split", 1, "s")


def two_gloo_ranks(limits, floor=1, script="oom_guard_ddp.py"):
    """Runs `script` as ranks 0 and 1 (planted limits per rank); their JSON lines."""
    if not torch.distributed.is_available():
        pytest.skip("this torch has no torch.distributed")
    from test_ddp import free_port
    port = free_port()
    ranks = []
    for rank, limit in enumerate(limits):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2",
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1",
                   PYTHONPATH=os.path.join(HERE, ".."))
        env.pop("GPUMON_AGENT_SOCKET", None)
        ranks.append(subprocess.Popen(
            [sys.executable, os.path.join(HERE, script), str(limit), str(floor)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    try:
        outs = [p.communicate(timeout=120)[0] for p in ranks]  # a hang fails here
    finally:
        for p in ranks:
            if p.poll() is None:
                p.kill()
    results = []
    for p, out in zip(ranks, outs):
        assert p.returncode == 0, out
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def test_two_gloo_ranks_with_an_oom_on_rank_1_end_identical_at_the_same_size():
    r0, r1 = two_gloo_ranks((0, 8))
    assert r0["weights"] == r1["weights"]  # the replicas did not diverge
    # The buffers are rank 0's after each step, as DDP's broadcast_buffers makes them: rank 0
    # began 32 + 2 x 16 in step 0's attempts at 32 and 16 (rank 1's OOMs), then 4 x 8 a step.
    assert r0["seen"] == r1["seen"] == 32 + 32 + 32 * STEPS
    # 32 -> 16 -> 8 at step 0 (rank 1's OOMs), 8 -> 4 from step 3 (rank 1's probe after step
    # 2): both ranks at once.
    assert r0["sizes"] == r1["sizes"] == [8, 8, 4, 4, 4, 4]
    for r in (r0, r1):
        assert [(a["reason"], a["step"], a["micro_batch_size"]) for a in r["actions"]] == [
            ("oom", 0, 16), ("oom", 0, 8), ("predicted", 3, 4)]
    assert r0["actions"][0]["evidence"] == {"oom_on_other_rank": 1}
    assert "on another rank" in r0["actions"][0]["summary"]
    assert r0["actions"][2]["evidence"]["trigger"] == "other_rank"
    assert r0["actions"][2]["summary"].startswith(
        "another rank predicted an OOM: micro-batch 8 -> 4 from step 3")
    assert r1["actions"][2]["evidence"]["trigger"] == "headroom"
    assert r1["actions"][0]["evidence"]["requested_bytes"] == 2 << 30
    # The gradients were the average of the two ranks' full-batch gradients at every step.
    torch.manual_seed(0)
    model = Planted()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        opt.zero_grad()
        for rank in (0, 1):
            (loss_of(model, batch_of(step, rank)) / 2).backward()
        opt.step()
    for got, want in zip(r0["weights"], model.parameters()):
        assert torch.allclose(torch.tensor(got), want.detach().reshape(-1), rtol=0, atol=1e-6)


def test_actions_reach_a_real_agent(tmp_path):
    from test_findings import start_agent
    proc, sock = start_agent(tmp_path)
    try:
        mon = gpumon.start(socket_path=sock, start_agent=False)
        assert mon.active
        lines = []
        send_now = mon._send_now

        def spy(line):
            lines.append(line)
            send_now(line)

        mon._send_now = spy
        torch.manual_seed(0)
        model = Planted(limit=8)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        guard = mon.oom_guard(model)
        sent_before = mon.stats()["sent"]
        for step in range(3):
            with mon.step():
                opt.zero_grad()
                guard.run(batch_of(step), lambda mb: loss_of(model, mb))
                opt.step()
        stats = mon.stats()
        assert [json.loads(line)["action"] for line in lines] == ["oom_split", "oom_split"]
        assert all(json.loads(line)["step"] == 0 for line in lines)
        assert stats["sent"] >= sent_before + 2 + 3 and stats["dropped"] == 0, stats
        assert stats["disconnects"] == 0 and proc.poll() is None, stats
        mon.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_lightning_manual_optimization_with_manual_backward():
    # The documented use (docs/oom-guard.md): automatic_optimization = False and the guard's
    # backward is the LightningModule's manual_backward (a stand-in here: Lightning is absent).
    class Module(Planted):
        def __init__(self):
            super().__init__(limit=8)
            self.manual_calls = 0
            self.guard = gpumon.Monitor().oom_guard(self, backward=self.manual_backward)

        def manual_backward(self, loss):
            self.manual_calls += 1
            loss.backward()

        def training_step(self, batch, batch_idx):
            opt.zero_grad()
            loss = self.guard.run(batch, lambda mb: loss_of(self, mb))
            opt.step()
            return loss

    torch.manual_seed(0)
    module = Module()
    opt = torch.optim.SGD(module.parameters(), lr=0.1)
    for step in range(4):
        module.training_step(batch_of(step), step)
    assert module.manual_calls == 4 * 4 and module.guard.micro_batch_size == 8
    assert same_weights(module, reference([8] * 4))


def test_hf_trainer_mixin_runs_training_step_through_the_guard(monkeypatch):
    import contextlib
    from types import SimpleNamespace
    from fake_trainers import install_transformers
    install_transformers(monkeypatch)
    import gpumon.hf

    backwards = []

    class Trainer:  # what OomGuardMixin.training_step uses of transformers' Trainer
        def __init__(self, model):
            self.args = SimpleNamespace(gradient_accumulation_steps=2, n_gpu=1)
            self.accelerator = SimpleNamespace(backward=lambda loss: (backwards.append(1),
                                                                      loss.backward()))
            self.callback_handler = SimpleNamespace(
                callbacks=[gpumon.hf.GpumonCallback(monitor=gpumon.Monitor())])
            self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

        def _prepare_inputs(self, inputs):
            return inputs

        def compute_loss_context_manager(self):
            return contextlib.nullcontext()

        def compute_loss(self, model, inputs):
            return loss_of(model, (inputs["x"], inputs["y"]))

    class GuardedTrainer(gpumon.hf.OomGuardMixin, Trainer):
        gpumon_oom_guard_options = {"min_micro_batch_size": 2}

    torch.manual_seed(0)
    model = Planted(limit=8)
    trainer = GuardedTrainer(model)
    # The Trainer's own gradient accumulation: allowed, with a warning that a retry in its
    # second step would drop the first's gradients (here the OOMs come in the first).
    with pytest.warns(gpumon.GpumonWarning, match="gradient_accumulation_steps=2"):
        for update in range(3):
            trainer.optimizer.zero_grad()
            for micro in range(2):
                x, y = batch_of(2 * update + micro)
                loss = trainer.training_step(model, {"x": x, "y": y})
                assert loss.requires_grad is False
            trainer.optimizer.step()
    assert trainer.gpumon_oom_guard.micro_batch_size == 8 and len(backwards) == 3 * 2 * 4
    torch.manual_seed(0)
    ref = Planted()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for update in range(3):
        opt.zero_grad()
        for micro in range(2):
            x, y = batch_of(2 * update + micro)
            for xs, ys in zip(x.split(8), y.split(8)):
                (loss_of(ref, (xs, ys)) * (8 / 32) / 2).backward()
        opt.step()
    assert same_weights(model, ref)


def test_at_the_floor_on_one_gloo_rank_both_ranks_raise_and_none_hangs():
    r0, r1 = two_gloo_ranks((0, 2), floor=8)
    assert r1["raised"] == OOM_MESSAGE  # rank 1's own OOM, as it was
    assert "another rank ran out of memory at step 0 with micro-batch 8" in r0["raised"]
    assert "CUDA out of memory" in r0["raised"]


def test_inside_ddp_forward_as_lightning_runs_it_ddp_never_syncs_and_unused_grads_stay_none():
    # Lightning calls training_step inside DDP.forward: a no_sync() per attempt left
    # require_backward_grad_sync True again at DDP's post-forward, which armed the reducer for
    # the guard's next backward ("marked as ready twice" here; a hang on a real OOM).
    r0, r1 = two_gloo_ranks((0, 8), script="oom_guard_nested.py")
    assert r0["reducer_calls"] == r1["reducer_calls"] == 0  # no bucket all-reduce of DDP's
    assert r0["weights"] == r1["weights"] and r0["size"] == r1["size"] == 8
    # A parameter no rank used keeps grad None, as under DDP (not zeros: an optimizer with
    # weight decay or momentum would move it).
    assert r0["unused_grad_is_none"] and r1["unused_grad_is_none"]
    # BatchNorm's running statistics: rank 0's forwards at 32 and 16 (rank 1's OOMs at step
    # 0) are undone; 5 steps of 4 micro-batches of 8 remain.
    assert r0["batches_tracked"] == 20


def test_zero_grad_clears_parameters_outside_the_model_on_a_retry():
    # The OOM comes in the second micro-batch's forward, after the first's backward reached
    # `head`, which is not the model's: without zero_grad it is counted twice.
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    head = torch.nn.Parameter(torch.ones(1))
    head_opt = torch.optim.SGD([head], lr=0.1)
    x = torch.randn(8, 3)
    calls = []

    def forward(mb):
        calls.append(mb.shape[0])
        if len(calls) == 2:
            raise torch.cuda.OutOfMemoryError(OOM_MESSAGE)
        return ((model(mb) * head) ** 2).mean()

    guard = gpumon.Monitor().oom_guard(model, micro_batch_size=4, zero_grad=head_opt.zero_grad)
    guard.run(x, forward)
    assert calls == [4, 4, 2, 2, 2, 2]
    got = head.grad.clone()
    head.grad = None
    ((model(x) * head) ** 2).mean().backward()
    assert torch.allclose(got, head.grad, rtol=0, atol=1e-6)
    # A zero_grad without set_to_none is called as it is.
    plain = []
    guard = gpumon.Monitor().oom_guard(Planted(limit=8), zero_grad=lambda: plain.append(1))
    guard.run(batch_of(0), lambda mb: loss_of(guard._model, mb))
    assert plain == [1, 1]


def test_a_zero_dim_tensor_in_the_batch_keeps_the_oom_with_one_warning(monkeypatch):
    from gpumon import _monitor
    monkeypatch.setattr(_monitor, "_warned", set())
    model = Planted(limit=4)

    def forward(mb):
        return loss_of(model, (mb["x"], mb["y"])) * mb["scale"]

    x, y = batch_of(0)
    guard = gpumon.Monitor().oom_guard(model)
    with pytest.warns(gpumon.GpumonWarning, match="cannot split this batch.*shape \\(\\)"):
        with pytest.raises(torch.cuda.OutOfMemoryError) as raised:
            guard.run({"x": x, "y": y, "scale": torch.tensor(2.0)}, forward)
    assert str(raised.value) == OOM_MESSAGE and guard.actions == []


def test_under_torch_distributed_without_ddp_every_oom_is_raised(monkeypatch):
    # FSDP, DeepSpeed, ...: a retry on one rank alone would hang the others in a collective.
    dist = torch.distributed
    monkeypatch.setattr(dist, "is_available", lambda: True)
    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_world_size", lambda group=None: 2)
    from gpumon import _monitor
    monkeypatch.setattr(_monitor, "_warned", set())
    model = Planted(limit=8)
    with pytest.warns(gpumon.GpumonWarning, match="not DDP"):
        guard = gpumon.Monitor().oom_guard(model, memory_probe=FakeProbe([reading(990)]),
                                           probe_every=1)
    with pytest.raises(torch.cuda.OutOfMemoryError) as raised:
        guard.run(batch_of(0), lambda mb: loss_of(model, mb))
    assert str(raised.value) == OOM_MESSAGE
    assert [(a["action"], a["micro_batch_size"]) for a in guard.actions] == [("oom_floor", 32)]
    # No split is predicted either (it would change the collectives of this rank alone).
    model.limit = None
    for step in range(3):
        guard.run(batch_of(step), lambda mb: loss_of(model, mb))
    assert guard.micro_batch_size is None and len(guard.actions) == 1


class BackwardOom(torch.autograd.Function):
    """Passes its input on; its backward runs out of memory (an OOM after the forward has
    updated BatchNorm's running statistics)."""

    @staticmethod
    def forward(ctx, t):
        return t.clone()

    @staticmethod
    def backward(ctx, grad):
        raise torch.cuda.OutOfMemoryError(OOM_MESSAGE)


def test_batchnorm_running_statistics_are_those_of_the_micro_batches_that_passed():
    def net():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3))

    x = torch.randn(8, 3)
    model = net()

    def forward(mb):  # the whole batch's forward passes, its backward runs out of memory
        out = (model(mb) ** 2).mean()
        return BackwardOom.apply(out) if mb.shape[0] > 4 else out

    gpumon.Monitor().oom_guard(model).run(x, forward)
    ref = net()
    for mb in x.split(4):
        ref(mb)
    got, want = model[1], ref[1]
    assert int(got.num_batches_tracked) == int(want.num_batches_tracked) == 2
    assert torch.allclose(got.running_mean, want.running_mean, rtol=0, atol=1e-7)
    assert torch.allclose(got.running_var, want.running_var, rtol=0, atol=1e-7)


def test_batchnorm_statistics_are_put_back_after_steps_and_a_dtype_change():
    # The saved copies are kept from step to step; model.double() replaces the buffers, and the
    # guard must save the new ones, not copy into the old.
    def net():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3),
                                   torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3))

    xs = [torch.randn(8, 3, dtype=torch.float64) for _ in range(4)]
    model = net()
    guard = gpumon.Monitor().oom_guard(model)

    def forward(mb, oom_above=8):
        out = (model(mb.to(next(model.parameters()).dtype)) ** 2).mean()
        return BackwardOom.apply(out) if mb.shape[0] > oom_above else out

    guard.run(xs[0].float(), forward)
    guard.run(xs[1].float(), forward)
    model.double()
    guard.run(xs[2], forward)
    guard.run(xs[3], lambda mb: forward(mb, oom_above=4))  # splits into two halves of 4
    assert guard.micro_batch_size == 4
    ref = net()
    ref(xs[0].float())
    ref(xs[1].float())
    ref.double()
    ref(xs[2])
    for mb in xs[3].split(4):
        ref(mb)
    for got, want in ((model[1], ref[1]), (model[3], ref[3])):
        assert int(got.num_batches_tracked) == int(want.num_batches_tracked) == 5
        assert got.running_mean.dtype == torch.float64
        assert torch.allclose(got.running_mean, want.running_mean, rtol=0, atol=1e-12)
        assert torch.allclose(got.running_var, want.running_var, rtol=0, atol=1e-12)


def test_weight_makes_token_mean_losses_the_full_batch_s(monkeypatch):
    # A token-mean loss (labels -100 ignored, as transformers' losses): micro-batches weighted
    # by their labelled tokens give the full batch's token mean; by samples they would not.
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    x = torch.randn(8, 5, 4)
    labels = torch.randn(8, 5)
    labels[:4, 1:] = -100  # the first half has one labelled token a row, the second five

    def token_mean(batch):
        xs, ls = batch["x"], batch["labels"]
        mask = ls.ne(-100)
        return ((model(xs).squeeze(-1) - ls) ** 2)[mask].mean()

    from fake_trainers import install_transformers
    install_transformers(monkeypatch)
    from gpumon.hf import _labelled_tokens
    guard = gpumon.Monitor().oom_guard(model, micro_batch_size=4, weight=_labelled_tokens)
    guard.run({"x": x, "labels": labels}, token_mean)
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    token_mean({"x": x, "labels": labels}).backward()
    for g, p in zip(got, model.parameters()):
        assert torch.allclose(g, p.grad, rtol=0, atol=1e-6)
    assert _labelled_tokens({"x": x}) is None
