# SPDX-License-Identifier: MIT
"""The OOM guard (docs/oom-guard.md) on real CUDA out-of-memory errors. For the GPU machine
(torch with CUDA); needs no gpumon build (the guard runs on an inactive monitor).

usage (from the repository root):
    PYTHONPATH=$PWD/python python3 tools/device/oom_guard_cuda.py [--out FILE.json]

The process's allocator is capped with torch.cuda.set_per_process_memory_fraction (default
2.8 GiB of the device) so a plain MLP's batch of 16384 runs out of memory for real:
1. equivalence: STEPS steps through the guard with predict=False; it must split to a size that
   fits, and the weights must equal a reference run accumulating at that size (max |diff|);
2. prediction: 40 steps with the default CUDA memory probe every 5 steps and a hysteresis of
   10: the actions it takes, with their evidence (mem_get_info does not see the fraction cap,
   so the headroom is the device's: the merge it tries shows the cap's limit);
Prints one JSON object; exit status 0 when 1. passes.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
import gpumon  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--cap-gib", type=float, default=2.8)
p.add_argument("--batch", type=int, default=16384)
p.add_argument("--width", type=int, default=4096)
p.add_argument("--steps", type=int, default=5)
p.add_argument("--out", default=None)
a = p.parse_args()

torch.cuda.set_device(0)
total = torch.cuda.get_device_properties(0).total_memory
torch.cuda.set_per_process_memory_fraction(a.cap_gib * (1 << 30) / total, 0)
torch.backends.cuda.matmul.allow_tf32 = False


def make():
    torch.manual_seed(0)
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(a.width, a.width), torch.nn.GELU()]
    return torch.nn.Sequential(*layers, torch.nn.Linear(a.width, 10)).cuda()


def batch_of(step):
    g = torch.Generator(device="cuda").manual_seed(step)
    return (torch.randn(a.batch, a.width, device="cuda", generator=g),
            torch.randint(0, 10, (a.batch,), device="cuda", generator=g))


def train(steps, **options):
    model = make()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    guard = gpumon.Monitor().oom_guard(model, **options)
    for step in range(steps):
        opt.zero_grad(set_to_none=True)
        guard.run(batch_of(step), lambda mb: torch.nn.functional.cross_entropy(model(mb[0]),
                                                                               mb[1]))
        opt.step()
    return model, guard


out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
       "cap_bytes": int(a.cap_gib * (1 << 30)), "batch": a.batch, "width": a.width}
model, guard = train(a.steps, predict=False)
size = guard.micro_batch_size
out["equivalence"] = {"micro_batch_size": size, "actions": guard.actions}
ref = make()
opt = torch.optim.SGD(ref.parameters(), lr=0.01)
for step in range(a.steps):
    opt.zero_grad(set_to_none=True)
    x, y = batch_of(step)
    for xs, ys in zip(x.split(size or a.batch), y.split(size or a.batch)):
        (torch.nn.functional.cross_entropy(ref(xs), ys) * (xs.shape[0] / a.batch)).backward()
    opt.step()
diff = max(float((p - q).abs().max()) for p, q in zip(model.parameters(), ref.parameters()))
out["equivalence"]["max_abs_weight_diff"] = diff
ok = size is not None and size < a.batch and diff <= 1e-6
out["equivalence"]["pass"] = ok
del model, guard, ref, opt
torch.cuda.empty_cache()
_, guard = train(40, probe_every=5, hysteresis_steps=10)
out["prediction"] = {"micro_batch_size": guard.micro_batch_size, "actions": guard.actions}
text = json.dumps(out, indent=1)
print(text)
if a.out:
    with open(a.out, "w") as f:
        f.write(text + "\n")
sys.exit(0 if ok else 1)
