# SPDX-License-Identifier: MIT
"""A loop that runs out of CUDA memory at step 5, on a stand-in torch (torch.cuda as gpumon
uses it, with torch's real OOM message and observer), run by test_oom.py in a subprocess.

usage: oom_loop.py {with,plain,caught,cpu} [--no-observer]
  with:   `with mon.step():`, the OOM uncaught (observer, the with exit and the excepthook fire)
  plain:  plain mon.step(), the OOM uncaught (observer and excepthook)
  caught: the loop catches the OOM, calls mon.oom_report(e) twice and goes on
Prints "pid N", "report PATH" for each oom_report, then "done STEPS WARNINGS" and each
GpumonWarning as "warning: ...".
"""
import os
import sys
import types
import warnings

GIB = 1 << 30
TOTAL, FREE, REQUESTED = 150120529920, 1342177280, 2 * GIB
MESSAGE = (
    "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.81 GiB "
    "of which 1.25 GiB is free. Including non-PyTorch memory, this process has 138.55 GiB memory "
    "in use. Of the allocated memory 136.20 GiB is allocated by PyTorch, and 1.10 GiB is reserved "
    "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation "
    "for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
STATS = {"allocated_bytes.all.current": 146243174400, "reserved_bytes.all.current": 147424296960,
         "active_bytes.all.current": 146243174400, "inactive_split_bytes.all.current": 524288000,
         "allocated_bytes.all.peak": 146800000000, "reserved_bytes.all.peak": 147424296960,
         "num_alloc_retries": 3, "num_ooms": 1}


class OutOfMemoryError(RuntimeError):
    pass


OutOfMemoryError.__module__ = "torch.cuda"
observers = []


class Event:
    def __init__(self, enable_timing):
        pass

    def record(self):
        pass

    def query(self):
        return True

    def elapsed_time(self, end):
        return 1.0


def segment(i, size, free_block):
    return {"device": 0, "address": i << 32, "total_size": size, "allocated_size": size - free_block,
            "active_size": size - free_block, "segment_type": "large",
            "blocks": [{"size": size - free_block, "state": "active_allocated"},
                       {"size": free_block, "state": "inactive"}]}


cuda = types.SimpleNamespace(
    OutOfMemoryError=OutOfMemoryError, Event=Event,
    is_available=lambda: True, current_device=lambda: 0,
    memory_stats=lambda device=None: dict(STATS),
    mem_get_info=lambda device=None: (FREE, TOTAL),
    get_device_properties=lambda i: types.SimpleNamespace(
        name="NVIDIA H200", pci_bus_id=0x18, pci_device_id=0, pci_domain_id=0),
    memory_snapshot=lambda: [segment(i, (i + 1) * 20 * (1 << 20), (i % 7) << 20)
                             for i in range(5000)])
torch = types.ModuleType("torch")
torch.__version__ = "2.11.0+fake"
torch.cuda = cuda
if "--no-observer" not in sys.argv:
    torch._C = types.SimpleNamespace(_cuda_attach_out_of_memory_observer=observers.append)
sys.modules["torch"] = torch


def allocate(n):
    for obs in observers:
        obs(0, n, TOTAL, FREE)
    raise OutOfMemoryError(MESSAGE)


import gpumon  # noqa: E402  (after the stand-in torch, as a script imports torch first)

mode = sys.argv[1]
warnings.simplefilter("always")
caught = warnings.catch_warnings(record=True)
seen = caught.__enter__()


def finish(done):
    caught.__exit__(None, None, None)
    ours = [w for w in seen if issubclass(w.category, gpumon.GpumonWarning)]
    for w in ours:
        print("warning:", w.message, flush=True)
    print("done", done, len(ours), flush=True)


mon = gpumon.start()
print("pid", os.getpid(), flush=True)
done = 0
for i in mon.wrap(range(10)):
    if mode == "with":
        with mon.step():
            if i == 5:
                finish(done)
                allocate(REQUESTED)
    elif mode == "plain":
        if i == 5:
            finish(done)
            allocate(REQUESTED)
        mon.step()
    elif mode == "caught":
        with mon.step():
            try:
                if i == 5:
                    allocate(REQUESTED)
            except OutOfMemoryError as e:
                print("report", mon.oom_report(e), flush=True)
                print("report", mon.oom_report(e), flush=True)
    done += 1
mon.close()
finish(done)
