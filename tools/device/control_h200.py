# SPDX-License-Identifier: MIT
"""The OOM guard and the adaptive loader on real CUDA (docs/oom-guard.md, docs/adaptive-loader.md).
For the GPU machine (torch with CUDA); tools/device/control_h200.sh runs each part under
`gpumon record` and collects the results.

usage (repository root, PYTHONPATH=$PWD/python, gpumon built):
  control_h200.py neighbour --leave-gib G [--ramp-to-gib G2 --ramp-s S] [--hold-s H]
      another process holding all but G GiB of the GPU (memory outside this training's
      allocator, as a neighbour job's); with --ramp-to-gib it then takes more until only G2 GiB
      are free over S seconds, holds H seconds and gives it back to G GiB free.
  control_h200.py oom --out FILE.json     a guarded loop whose full batch does not fit beside the
      neighbour: real CUDA OOMs, split and retried; then the reference run (plain accumulation
      at the guard's final micro-batch size, same seed and data) and the largest weight
      difference.
  control_h200.py predict --out FILE.json a guarded loop beside a neighbour that ramps up and
      backs off: a predicted split before any OOM, a merge after the hysteresis.
  control_h200.py lightning|hf --out FILE.json  the guard inside Lightning (manual optimization)
      and the Hugging Face Trainer (gpumon.hf.OomGuardMixin), beside the neighbour.
  control_h200.py loader --out FILE.json  a CPU-heavy Dataset feeding a GPU model through
      mon.wrap(loader, adapt=True) from num_workers=0: per epoch the data-wait share, workers.
Each part prints one JSON line and writes it to --out.
"""
import argparse
import gc
import json
import os
import subprocess
import sys
import time

GIB = 1 << 30
HERE = os.path.dirname(os.path.abspath(__file__))


def neighbour(args):
    import torch
    free, _ = torch.cuda.mem_get_info()
    held = [torch.empty(max(free - int(args.leave_gib * GIB), 0), dtype=torch.uint8,
                        device="cuda")]
    print("neighbour: holding %.1f GiB, %.1f GiB left free" %
          (held[0].numel() / GIB, torch.cuda.mem_get_info()[0] / GIB), flush=True)
    time.sleep(args.start_s)
    if args.ramp_to_gib is not None:
        chunk = 256 << 20
        want = int((args.leave_gib - args.ramp_to_gib) * GIB)
        n = max(want // chunk, 1)
        for _ in range(n):
            try:
                held.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
            except RuntimeError:  # the training holds it: stop ramping there
                print("neighbour: full", flush=True)
                break
            time.sleep(args.ramp_s / n)
        print("neighbour: ramped, %.1f GiB free" % (torch.cuda.mem_get_info()[0] / GIB),
              flush=True)
        time.sleep(args.hold_s)
        del held[1:]
        torch.cuda.empty_cache()
        print("neighbour: backed off, %.1f GiB free" % (torch.cuda.mem_get_info()[0] / GIB),
              flush=True)
    time.sleep(3600)


def start_neighbour(leave_gib, *extra):
    p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "neighbour",
                          "--leave-gib", str(leave_gib)] + list(extra),
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()  # holding: the GPU is full before the training starts
    print(line.strip(), flush=True)
    return p


def model_and_data(torch, width, depth, batch, steps, seed=0):
    """The model, and its batches made on the GPU one at a time from a seeded generator (the
    same for every call with the same seed)."""
    torch.manual_seed(seed)
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(width, 10)).cuda()

    def data():
        g = torch.Generator(device="cuda").manual_seed(seed + 1)
        for _ in range(steps):
            yield (torch.randn(batch, width, device="cuda", generator=g),
                   torch.randint(0, 10, (batch,), device="cuda", generator=g))
    return model, data


def deterministic(torch):
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def guarded_run(torch, mon, model, data, **guard_options):
    import torch.nn.functional as F
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    guard = mon.oom_guard(model, **guard_options)
    sizes = []
    for x, y in mon.wrap(data()):
        opt.zero_grad(set_to_none=True)
        guard.run((x, y), lambda mb: F.cross_entropy(model(mb[0]), mb[1]))
        opt.step()
        sizes.append(guard.micro_batch_size)
        mon.step()
    torch.cuda.synchronize()
    return guard, sizes


def reference_run(torch, model, data, sizes):
    """Plain accumulation, step i at micro-batch sizes[i] (None: the whole batch): the sizes the
    guard's successful attempts used."""
    import torch.nn.functional as F
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for (x, y), micro in zip(data(), sizes):
        opt.zero_grad(set_to_none=True)
        n = x.shape[0]
        micro = micro or n
        for i in range(0, n, micro):
            loss = F.cross_entropy(model(x[i:i + micro]), y[i:i + micro])
            (loss * (min(micro, n - i) / n)).backward()
        opt.step()
    torch.cuda.synchronize()


def oom(args):
    import torch
    import gpumon
    deterministic(torch)
    mon = gpumon.start()
    # width 8192, 8 layers: 2.1 GiB of weights (6.4 GiB with gradients and momentum);
    # activations about 0.5 MiB a sample, so a batch of 16384 (8 GiB) does not fit in the
    # 10-12 GiB a neighbour leaves free; 4096 does.
    width, depth, batch, steps = 8192, 8, 16384, args.steps
    neighbour_p = start_neighbour(args.leave_gib)
    try:
        model, data = model_and_data(torch, width, depth, batch, steps)
        t0 = time.monotonic()
        guard, sizes = guarded_run(torch, mon, model, data, predict=False)
        guarded_s = time.monotonic() - t0
        final, actions = guard.micro_batch_size, guard.actions
        after = [p.detach().cpu() for p in model.parameters()]
        del guard, model  # the guard holds the model: both go before the reference starts
        gc.collect()
        torch.cuda.empty_cache()
        ref, data2 = model_and_data(torch, width, depth, batch, steps)
        reference_run(torch, ref, data2, sizes)
        diff = max((a - b.detach().cpu()).abs().max().item()
                   for a, b in zip(after, ref.parameters()))
    finally:
        neighbour_p.kill()
    result = {"part": "oom", "steps": steps, "batch": batch, "final_micro_batch_size": final,
              "sizes": sizes, "actions": actions,
              "max_abs_weight_diff": diff, "guarded_s": round(guarded_s, 2),
              "torch": torch.__version__}
    mon.close()
    return result


def predict(args):
    import torch
    import gpumon
    mon = gpumon.start()
    width, depth, batch = 8192, 8, 8192
    # Free 20 GiB: a batch of 8192 (about 4 GiB of activations beside 2.1+2.1+2.1 GiB of
    # weights, gradients and momentum) fits; the neighbour then leaves 9 GiB, which it does not.
    neighbour_p = start_neighbour(args.leave_gib, "--start-s", "4", "--ramp-to-gib",
                                  str(args.ramp_to_gib), "--ramp-s", "8", "--hold-s", "10")
    try:
        model, _ = model_and_data(torch, width, depth, batch, 1)
        g = torch.Generator(device="cuda").manual_seed(1)
        import torch.nn.functional as F
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        guard = mon.oom_guard(model, probe_every=1, hysteresis_steps=args.hysteresis)
        t_end = time.monotonic() + args.seconds
        step = 0
        while time.monotonic() < t_end:
            x = torch.randn(batch, width, device="cuda", generator=g)
            y = torch.randint(0, 10, (batch,), device="cuda", generator=g)
            opt.zero_grad(set_to_none=True)
            guard.run((x, y), lambda mb: F.cross_entropy(model(mb[0]), mb[1]))
            opt.step()
            mon.step()
            step += 1
        torch.cuda.synchronize()
    finally:
        neighbour_p.kill()
    kinds = [(a.get("action"), a.get("reason")) for a in guard.actions]
    result = {"part": "predict", "steps": step, "actions": guard.actions,
              "predicted_split_before_any_oom": bool(kinds) and kinds[0] == ("oom_split",
                                                                          "predicted"),
              "merged": ("oom_merge", "headroom") in kinds,
              "final_micro_batch_size": guard.micro_batch_size}
    mon.close()
    return result


def lightning(args):
    import torch
    import torch.nn.functional as F
    try:
        import lightning as L
    except ImportError:
        import pytorch_lightning as L
    import gpumon
    from gpumon.lightning import GpumonCallback
    width, depth, batch = 8192, 8, 16384
    mon = gpumon.start()
    callback = GpumonCallback(monitor=mon)

    class Model(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.automatic_optimization = False
            layers = []
            for _ in range(depth):
                layers += [torch.nn.Linear(width, width), torch.nn.GELU()]
            self.net = torch.nn.Sequential(*layers, torch.nn.Linear(width, 10))

        def on_train_start(self):
            self.guard = mon.oom_guard(self, backward=self.manual_backward, predict=False)

        def training_step(self, b, i):
            opt = self.optimizers()
            opt.zero_grad()
            loss = self.guard.run(b, lambda mb: F.cross_entropy(self.net(mb[0]), mb[1]))
            opt.step()
            return loss

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    steps = min(args.steps, 4)
    ds = torch.utils.data.TensorDataset(torch.randn(batch * steps, width),
                                        torch.randint(0, 10, (batch * steps,)))
    neighbour_p = start_neighbour(args.leave_gib)
    try:
        model = Model()
        trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1, logger=False,
                            enable_checkpointing=False, enable_progress_bar=False,
                            callbacks=[callback])
        trainer.fit(model, torch.utils.data.DataLoader(ds, batch_size=batch))
    finally:
        neighbour_p.kill()
    return {"part": "lightning", "steps": trainer.global_step, "actions": model.guard.actions,
            "final_micro_batch_size": model.guard.micro_batch_size}


def hf(args):
    import torch
    import transformers
    from gpumon.hf import GpumonCallback, OomGuardMixin
    width, depth, batch = 8192, 8, 16384

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            layers = []
            for _ in range(depth):
                layers += [torch.nn.Linear(width, width), torch.nn.GELU()]
            self.net = torch.nn.Sequential(*layers, torch.nn.Linear(width, 10))

        def forward(self, x, labels=None):
            logits = self.net(x)
            loss = torch.nn.functional.cross_entropy(logits, labels)
            return {"loss": loss, "logits": logits}

    class Items(torch.utils.data.Dataset):
        def __init__(self, n):
            g = torch.Generator().manual_seed(0)
            self.x = torch.randn(n, width, generator=g)
            self.y = torch.randint(0, 10, (n,), generator=g)

        def __len__(self):
            return len(self.y)

        def __getitem__(self, i):
            return {"x": self.x[i], "labels": self.y[i]}

    class GuardedTrainer(OomGuardMixin, transformers.Trainer):
        gpumon_oom_guard_options = {"predict": False}

    targs = transformers.TrainingArguments(
        output_dir="/tmp/hf-guard", per_device_train_batch_size=batch, max_steps=min(args.steps, 4),
        report_to=[], save_strategy="no", logging_steps=1000, dataloader_num_workers=0,
        remove_unused_columns=False)
    neighbour_p = start_neighbour(args.leave_gib)
    try:
        trainer = GuardedTrainer(model=Net(), args=targs, train_dataset=Items(batch * min(args.steps, 4)),
                                 callbacks=[GpumonCallback()])
        out = trainer.train()
    finally:
        neighbour_p.kill()
    guard = getattr(trainer, "gpumon_oom_guard", None) or getattr(trainer, "_gpumon_guard", None)
    return {"part": "hf", "steps": out.global_step, "transformers": transformers.__version__,
            "actions": getattr(guard, "actions", None),
            "final_micro_batch_size": getattr(guard, "micro_batch_size", None)}


class HeavyItems:
    """Each item costs --item-ms of single-threaded CPU work (a decode and an augmentation)."""

    def __init__(self, n, item_ms):
        self.n, self.item_ms = n, item_ms

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import torch
        t_end = time.thread_time() + self.item_ms / 1000.0
        x = torch.full((3, 64, 64), float(i % 97))
        while time.thread_time() < t_end:
            x = (x * 1.0001).sin_()
        return x, i % 10


def loader(args):
    import torch
    import torch.nn.functional as F
    import gpumon
    torch.set_num_threads(2)
    mon = gpumon.start()
    ds = HeavyItems(args.batches * args.batch_size, args.item_ms)
    dl = torch.utils.data.DataLoader(ds, batch_size=args.batch_size, shuffle=True,
                                     generator=torch.Generator().manual_seed(0), num_workers=0)
    # Width 16384, 8 layers: about 16 ms of fp32 work a batch of 64 on an H200, against
    # 64 x 2 ms = 128 ms to load it on one core: 8+ workers to keep up.
    w = args.loader_width
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 64 * 64, w),
                                torch.nn.GELU(), *[m for _ in range(7) for m in
                                                   (torch.nn.Linear(w, w), torch.nn.GELU())],
                                torch.nn.Linear(w, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = mon.wrap(dl, adapt=True)
    epochs = []
    for epoch in range(args.epochs):
        t0 = time.monotonic()
        for x, y in batches:
            loss = F.cross_entropy(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            torch.cuda.synchronize()  # the step's GPU time is the consume time
            mon.step()
        epochs.append({"epoch": epoch + 1, "wall_s": round(time.monotonic() - t0, 2),
                       "num_workers_after": batches.num_workers})
    result = {"part": "loader", "cpus": len(os.sched_getaffinity(0)), "epochs": epochs,
              "measured": getattr(batches, "epochs", None), "actions": batches.actions}
    mon.close()
    return result


def main():
    p = argparse.ArgumentParser()
    p.add_argument("part", choices=("neighbour", "oom", "predict", "lightning", "hf", "loader"))
    p.add_argument("--out")
    p.add_argument("--leave-gib", type=float, default=10.0)
    p.add_argument("--ramp-to-gib", type=float, default=None)
    p.add_argument("--ramp-s", type=float, default=8.0)
    p.add_argument("--hold-s", type=float, default=10.0)
    p.add_argument("--start-s", type=float, default=0.0)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--seconds", type=float, default=40.0)
    p.add_argument("--hysteresis", type=int, default=50)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batches", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--item-ms", type=float, default=2.0)
    p.add_argument("--loader-width", type=int, default=16384)
    args = p.parse_args()
    if args.part == "neighbour":
        return neighbour(args)
    result = globals()[args.part](args)
    line = json.dumps(result, default=str)
    print(line, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
