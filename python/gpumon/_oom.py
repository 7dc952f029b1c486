# SPDX-License-Identifier: MIT
"""OOM forensics: one JSON file per CUDA out-of-memory error (docs/python.md, "OOM forensics").

Three hooks lead here, and whichever sees an OOM first writes its bundle; the exception is
then marked so the others do nothing: torch's allocator OOM observer (torch >= 2.0; it only
records its arguments, since it runs inside the allocator and also fires for OOMs that torch
catches and retries itself), the `with mon.step():` exit, and a sys.excepthook chained in
front of the previous one. mon.oom_report(exc) is the same entry point for users who catch the
OOM themselves. Nothing here imports torch or raises: the Monitor turns a failure into one
GpumonWarning.
"""

import datetime
import json
import os
import re
import socket
import subprocess
import sys
import time

from gpumon import _device

_MARK = "_gpumon_oom_bundle"  # set on a reported exception: its bundle path ("" if none)
_UNITS = {"bytes": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
_SIZE = r"([0-9]+(?:\.[0-9]+)?) ?(bytes|B|KiB|MiB|GiB|TiB)"
_TRIED = re.compile(r"Tried to allocate " + _SIZE)
_CAPACITY = re.compile(r"total capacity of " + _SIZE + r" of which " + _SIZE + r" is free")
_SNAPSHOT_BYTES = 4 << 20  # the allocator snapshot's share of the file, at most (by default)
_PROCESS_TIMEOUT_S = 3.0

_observed = None  # (wall time, device, requested, total or allowed, free) of the last observer call
_observer_attached = False


def _observer(device, alloc, total, free):
    """torch's OOM observer: called inside the allocator (its lock released) before the
    exception. It only records; the bundle is written where the exception is seen."""
    global _observed
    try:
        _observed = (time.time(), int(device), int(alloc), int(total), int(free))
    except Exception:
        pass


def attach_observer(torch):
    """Registers _observer once per process (torch has no way to remove one)."""
    global _observer_attached
    attach = getattr(getattr(torch, "_C", None), "_cuda_attach_out_of_memory_observer", None)
    if _observer_attached or attach is None:
        return
    attach(_observer)
    _observer_attached = True


def is_cuda_oom(exc):
    try:
        if any(c.__name__ == "OutOfMemoryError" for c in type(exc).__mro__):
            return True
        return isinstance(exc, RuntimeError) and "CUDA out of memory" in str(exc)
    except Exception:
        return False


def find_oom(exc, depth=8):
    """The OOM in exc or in what caused it (a wrapper raised `from` it), else None."""
    while exc is not None and depth > 0:
        if is_cuda_oom(exc):
            return exc
        exc = exc.__cause__ or exc.__context__
        depth -= 1
    return None


def _size(number, unit):
    return int(round(float(number) * _UNITS[unit]))


def parse_message(text):
    """(requested, total, free) in bytes from torch's message; each None when absent. torch
    prints two decimals, so these are rounded (to 10 MiB for GiB figures)."""
    tried = _TRIED.search(text)
    cap = _CAPACITY.search(text)
    return (_size(*tried.groups()) if tried else None,
            _size(*cap.groups()[:2]) if cap else None,
            _size(*cap.groups()[2:]) if cap else None)


def _take_observed(requested):
    """The observer's record when it belongs to this OOM (recent, same size), consumed."""
    global _observed
    seen, _observed = _observed, None
    if seen is None or time.time() - seen[0] > 60:
        return None
    if requested is not None and abs(seen[2] - requested) > max(requested * 0.01, 1024):
        return None
    return seen


def _guard(errors, name, fn):
    try:
        return fn()
    except Exception as e:
        errors[name] = "%s: %s" % (type(e).__name__, e)
        return None


def _processes(binary, bus_id, uuid):
    """(the NVML GPU, its processes, None) from one `gpumon --json`, or (None, None, why)."""
    if binary is None:
        return None, None, "no gpumon binary (GPUMON_BINARY, PATH or the build folder)"
    if bus_id is None and uuid is None:
        return None, None, "torch does not give this device's PCI bus id or UUID"
    try:
        r = subprocess.run([binary, "--json", "--show-uuid"], stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=_PROCESS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, None, "%s --json took more than %g s" % (binary, _PROCESS_TIMEOUT_S)
    snap = json.loads(r.stdout.decode("utf-8", "replace"))
    if snap.get("error"):
        return None, None, "%s --json: %s" % (binary, snap.get("message") or snap["error"])
    for gpu in snap.get("gpus", []):
        if (bus_id and _device.same_bus_id(gpu.get("pci_bus_id"), bus_id)) or (
                bus_id is None and uuid and gpu.get("uuid") == uuid):
            procs = [p for p in snap.get("processes", []) if p.get("gpu_index") == gpu["index"]]
            return gpu, procs, None
    return None, None, "no GPU with PCI bus id %s / UUID %s in %s --json" % (bus_id, uuid, binary)


def _snapshot(torch, index, limit):
    """The allocator's segments on this device, biggest first, cut to about `limit` bytes of
    JSON; and the largest free (inactive) block over all of them."""
    segments = [s for s in torch.cuda.memory_snapshot() if s.get("device", index) == index]
    largest = max((b.get("size", 0) for s in segments for b in s.get("blocks", ())
                   if b.get("state") == "inactive"), default=None)
    segments.sort(key=lambda s: s.get("total_size", 0), reverse=True)
    kept, used = [], 0
    for seg in segments:
        size = len(json.dumps(seg, default=str))
        if used + size > limit:
            break
        kept.append(seg)
        used += size
    out = {"segments": kept, "segments_total": len(segments), "segments_kept": len(kept),
           "truncated": len(kept) < len(segments)}
    if out["truncated"]:
        out["note"] = ("only the %d biggest of %d segments are kept (about %d bytes of JSON at "
                       "most)" % (len(kept), len(segments), limit))
    return out, largest


def _snapshot_limit():
    try:
        return max(int(os.environ["GPUMON_OOM_SNAPSHOT_BYTES"]), 0)
    except (KeyError, ValueError):
        return _SNAPSHOT_BYTES


def collect(mon, exc, binary):
    """The bundle as a dict. Every part is guarded: a part that fails is null, and why is in
    "errors"."""
    torch, index, errors = mon._torch, mon._device_index, {}
    text = str(exc) if exc is not None else ""
    requested, msg_total, msg_free = parse_message(text)
    seen = _take_observed(requested)
    free = total = None
    source = None
    if seen is not None:
        requested, total, free, source = seen[2], seen[3], seen[4], "observer"
    elif index is not None:
        got = _guard(errors, "mem_get_info", lambda: torch.cuda.mem_get_info(index))
        if got is not None:
            free, total, source = int(got[0]), int(got[1]), "mem_get_info"
    if source is None and msg_total is not None:
        free, total, source = msg_free, msg_total, "message"
    stats = None
    if index is not None:
        stats = _guard(errors, "memory_stats", lambda: dict(torch.cuda.memory_stats(index)))
    snap = largest = None
    if index is not None and hasattr(torch.cuda, "memory_snapshot"):
        got = _guard(errors, "memory_snapshot", lambda: _snapshot(torch, index, _snapshot_limit()))
        if got is not None:
            snap, largest = got
    bus_id = _device.pci_bus_id(torch, index) if index is not None else None
    uuid = _device.uuid(torch, index) if index is not None else None
    got = _guard(errors, "processes", lambda: _processes(binary, bus_id, uuid))
    gpu, procs, why = got if got is not None else (None, None, errors["processes"])
    s = stats or {}
    reserved, allocated = s.get("reserved_bytes.all.current"), s.get("allocated_bytes.all.current")
    now = time.time()
    return {
        "gpumon_oom": 1,
        "time": datetime.datetime.fromtimestamp(now, datetime.timezone.utc).isoformat(),
        "time_unix_s": now,
        "host": _host(), "pid": os.getpid(),
        "rank": mon._rank, "local_rank": mon._local_rank, "world_size": mon._world_size,
        "device": mon._device, "pci_bus_id": bus_id, "device_uuid": uuid,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "torch_version": str(getattr(torch, "__version__", "")) or None,
        "step": mon._step_number(),
        "error": {"type": type(exc).__module__ + "." + type(exc).__qualname__,
                  "message": text[:8192]} if exc is not None else None,
        "requested_bytes": requested,
        "requested_bytes_source": "observer" if seen else ("message" if requested else None),
        "free_bytes": free, "total_bytes": total, "free_total_source": source,
        "fragmentation": {
            "reserved_bytes": reserved, "allocated_bytes": allocated,
            "reserved_unallocated_bytes": (reserved - allocated
                                           if reserved is not None and allocated is not None
                                           else None),
            "inactive_split_bytes": s.get("inactive_split_bytes.all.current"),
            "largest_free_block_bytes": largest,
            "num_alloc_retries": s.get("num_alloc_retries"), "num_ooms": s.get("num_ooms"),
        },
        "memory_stats": stats,
        "last_steps": _guard(errors, "last_steps", mon._recent_steps),
        "nvml_gpu": gpu, "processes": procs, "processes_unavailable": why,
        "memory_snapshot": snap,
        "errors": errors,
    }


def _host():
    """This machine's name as gpumon stores it (util/host_name.h): GPUMON_HOSTNAME overrides."""
    return os.environ.get("GPUMON_HOSTNAME") or socket.gethostname()


def _safe_host():
    return re.sub(r"[^A-Za-z0-9._-]", "_", _host()) or "host"


def write(bundle, folder):
    """Writes the bundle 0600 under a new name (never over another file); returns its path."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    base = os.path.join(os.path.abspath(folder),
                        "gpumon-oom-%s-%d-%s" % (_safe_host(), os.getpid(), stamp))
    data = json.dumps(bundle, default=str, separators=(",", ":")).encode("utf-8") + b"\n"
    for n in range(100):
        path = base + (".json" if n == 0 else "-%d.json" % n)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return path
    raise FileExistsError(base + "*.json: 100 bundles in one second")


def report(mon, exc, binary, folder):
    """Writes the bundle of `exc` (None: of the last observed OOM) once, tells the agent, stderr
    and the exception; returns the path. A second call for the same exception returns the first
    path. A failure to write still marks the exception and tells the agent, then raises."""
    if exc is not None:
        done = getattr(exc, _MARK, None)
        if done is not None:
            return done or None
    path = bundle = None
    try:
        bundle = collect(mon, exc, binary)
        path = write(bundle, folder)
    finally:
        if exc is not None:
            try:
                setattr(exc, _MARK, path or "")
            except Exception:
                pass
        if bundle is None:
            bundle = {"step": mon._step_number(), "requested_bytes": None}
        from gpumon import _gpumon
        mon._send_now(_gpumon.oom_line(bundle["step"], bundle["requested_bytes"], mon._device,
                                       path))
    rank = "" if mon._rank is None else " (rank %d)" % mon._rank
    sys.stderr.write("gpumon: CUDA out of memory on %s%s; forensics in %s\n"
                     % (mon._device or "the GPU", rank, path))
    sys.stderr.flush()
    if exc is not None and hasattr(exc, "add_note"):
        exc.add_note("gpumon: OOM forensics in %s" % path)
    return path
