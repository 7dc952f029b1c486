#!/usr/bin/env python3
"""Record real GPUs into a scenario for gpumon's fake NVML (format: docs/scenarios.md).

Reads every GPU (or --gpus) every --interval seconds for --duration seconds through pynvml
(the nvidia-ml-py package) and writes static facts, a `points` series per field, the fields
that answered NOT_SUPPORTED, fields that always failed otherwise (as error rules), the compute
processes seen, and the median latency of each NVML call. UUIDs and serials are replaced with
fake ones unless --keep-ids. Needs Python 3.12 and pynvml only.

    python3 tools/capture_scenario.py --duration 30 --interval 0.1 --name h200-training \
        --out testdata/scenarios/h200-training.json
"""

import argparse
import json
import os
import statistics
import sys
import time
import types

NOT_SUPPORTED = 3
ERROR_NAMES = {1: "UNINITIALIZED", 2: "INVALID_ARGUMENT", 3: "NOT_SUPPORTED", 4: "NO_PERMISSION",
               6: "NOT_FOUND", 10: "TIMEOUT", 15: "GPU_IS_LOST", 17: "OPERATING_SYSTEM",
               21: "NO_DATA", 27: "NOT_READY", 999: "UNKNOWN"}
FI_MEMORY_TEMP = 82
FI_POWER_INSTANT = 186
FI_POWER_AVERAGE = 185


def text(value):
    """pynvml returns bytes or str depending on its version."""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def number(value):
    return int(value) if float(value).is_integer() else round(float(value), 3)


def memory_v2(nvml, handle):
    """Total, reserved, free and used bytes (the v2 struct: used excludes the driver's reserve)."""
    version = getattr(nvml, "nvmlMemory_v2", None)
    if version is None:  # pynvml before 12.535 has v1 only, whose `used` includes the reserve
        m = nvml.nvmlDeviceGetMemoryInfo(handle)
        return types.SimpleNamespace(total=m.total, reserved=0, free=m.free, used=m.used)
    return nvml.nvmlDeviceGetMemoryInfo(handle, version=version)


class Recorder:
    """Times every NVML call, and remembers per field what failed how."""

    def __init__(self, nvml):
        self.nvml = nvml
        self.latencies_ns = {}

    def call(self, symbol, fn, *args):
        start = time.perf_counter_ns()
        try:
            return fn(*args)
        finally:
            self.latencies_ns.setdefault(symbol, []).append(time.perf_counter_ns() - start)

    def try_call(self, symbol, fn, *args):
        """(value, None) or (None, NVML error code)."""
        try:
            return self.call(symbol, fn, *args), None
        except self.nvml.NVMLError as e:
            return None, int(getattr(e, "value", 999))


def static_facts(rec, nvml, handle, index, keep_ids):
    """The device's facts that do not change, in scenario keys."""
    dev = {}
    def put(key, symbol, fn, *args, convert=lambda v: v):
        value, err = rec.try_call(symbol, fn, handle, *args)
        if err is None:
            dev[key] = convert(value)
        return err
    put("name", "nvmlDeviceGetName", nvml.nvmlDeviceGetName, convert=text)
    put("uuid", "nvmlDeviceGetUUID", nvml.nvmlDeviceGetUUID, convert=text)
    put("serial", "nvmlDeviceGetSerial", nvml.nvmlDeviceGetSerial, convert=text)
    if not keep_ids:
        dev["uuid"] = "GPU-00000000-0000-4000-8000-%012x" % index
        dev["serial"] = "REDACTED%04d" % index
    pci, err = rec.try_call("nvmlDeviceGetPciInfo_v3", nvml.nvmlDeviceGetPciInfo, handle)
    if err is None:
        dev["pci_bus_id"] = text(pci.busId)
        dev["pci_device_id"] = "0x%08X" % pci.pciDeviceId
        dev["pci_subsystem_id"] = "0x%08X" % pci.pciSubSystemId
    put("minor_number", "nvmlDeviceGetMinorNumber", nvml.nvmlDeviceGetMinorNumber)
    mem, err = rec.try_call("nvmlDeviceGetMemoryInfo_v2", memory_v2, nvml, handle)
    if err is None:
        dev["memory_total_bytes"] = int(mem.total)
        dev["memory_reserved_bytes"] = int(mem.reserved)
    for key, clock in (("max_sm_clock_mhz", nvml.NVML_CLOCK_SM),
                       ("max_mem_clock_mhz", nvml.NVML_CLOCK_MEM),
                       ("max_graphics_clock_mhz", nvml.NVML_CLOCK_GRAPHICS)):
        put(key, "nvmlDeviceGetMaxClockInfo", nvml.nvmlDeviceGetMaxClockInfo, clock)
    put("persistence_mode", "nvmlDeviceGetPersistenceMode", nvml.nvmlDeviceGetPersistenceMode,
        convert=lambda v: v == nvml.NVML_FEATURE_ENABLED)
    unsupported = []
    if put("ecc_enabled", "nvmlDeviceGetEccMode", nvml.nvmlDeviceGetEccMode,
           convert=lambda v: v[0] == nvml.NVML_FEATURE_ENABLED) == NOT_SUPPORTED:
        unsupported.append("ecc_mode")
    put("power_limit_mw", "nvmlDeviceGetPowerManagementLimit",
        nvml.nvmlDeviceGetPowerManagementLimit)
    if put("vbios_version", "nvmlDeviceGetVbiosVersion", nvml.nvmlDeviceGetVbiosVersion,
           convert=text) == NOT_SUPPORTED:
        unsupported.append("vbios_version")
    if put("compute_mode", "nvmlDeviceGetComputeMode", nvml.nvmlDeviceGetComputeMode,
           convert=int) == NOT_SUPPORTED:
        unsupported.append("compute_mode")
    mig, err = rec.try_call("nvmlDeviceGetMigMode", nvml.nvmlDeviceGetMigMode, handle)
    if err is None:
        dev["mig_mode_current"] = mig[0] == 1  # NVML_DEVICE_MIG_ENABLE
        dev["mig_mode_pending"] = mig[1] == 1
    elif err == NOT_SUPPORTED:
        unsupported.append("mig_mode")
    pcie_errors = [
        put(key, symbol, getattr(nvml, symbol))
        for key, symbol in (("pcie_link_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration"),
                            ("pcie_link_gen_gpu_max", "nvmlDeviceGetGpuMaxPcieLinkGeneration"),
                            ("pcie_link_width_max", "nvmlDeviceGetMaxPcieLinkWidth"))
        if hasattr(nvml, symbol)]
    if NOT_SUPPORTED in pcie_errors:
        unsupported.append("pcie_link")
    if put("inforom_image_version", "nvmlDeviceGetInforomImageVersion",
           nvml.nvmlDeviceGetInforomImageVersion, convert=text) == NOT_SUPPORTED:
        unsupported.append("inforom_image")
    for key, symbol in (("display_active", "nvmlDeviceGetDisplayActive"),
                        ("accounting_mode", "nvmlDeviceGetAccountingMode")):
        if put(key, symbol, getattr(nvml, symbol),
               convert=lambda v: v == nvml.NVML_FEATURE_ENABLED) == NOT_SUPPORTED:
            unsupported.append(key)
    return dev, unsupported


def readers(nvml):
    """(symbol, fields, read(handle) -> values) for every dynamic field; one NVML call each."""
    reasons = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
    reasons_symbol = "nvmlDeviceGetCurrentClocksEventReasons"
    if reasons is None:
        reasons = nvml.nvmlDeviceGetCurrentClocksThrottleReasons
        reasons_symbol = "nvmlDeviceGetCurrentClocksThrottleReasons"
    ecc = lambda kind: lambda h: [nvml.nvmlDeviceGetTotalEccErrors(h, kind, nvml.NVML_VOLATILE_ECC)]
    clock = lambda kind: lambda h: [nvml.nvmlDeviceGetClockInfo(h, kind)]
    return [
        ("nvmlDeviceGetUtilizationRates", ["utilization_gpu_pct", "utilization_memory_pct"],
         lambda h: (lambda u: [u.gpu, u.memory])(nvml.nvmlDeviceGetUtilizationRates(h))),
        ("nvmlDeviceGetMemoryInfo_v2", ["memory_used_bytes"], lambda h: [memory_v2(nvml, h).used]),
        ("nvmlDeviceGetTemperature", ["temperature_gpu_c"],
         lambda h: [nvml.nvmlDeviceGetTemperature(h, nvml.NVML_TEMPERATURE_GPU)]),
        ("nvmlDeviceGetPowerUsage", ["power_draw_mw"], lambda h: [nvml.nvmlDeviceGetPowerUsage(h)]),
        ("nvmlDeviceGetEnforcedPowerLimit", ["power_limit_mw"],
         lambda h: [nvml.nvmlDeviceGetEnforcedPowerLimit(h)]),
        ("nvmlDeviceGetTotalEnergyConsumption", ["energy_mj"],
         lambda h: [nvml.nvmlDeviceGetTotalEnergyConsumption(h)]),
        ("nvmlDeviceGetClockInfo", ["sm_clock_mhz"], clock(nvml.NVML_CLOCK_SM)),
        ("nvmlDeviceGetClockInfo", ["mem_clock_mhz"], clock(nvml.NVML_CLOCK_MEM)),
        ("nvmlDeviceGetClockInfo", ["graphics_clock_mhz"], clock(nvml.NVML_CLOCK_GRAPHICS)),
        ("nvmlDeviceGetPerformanceState", ["pstate"], lambda h: [nvml.nvmlDeviceGetPerformanceState(h)]),
        ("nvmlDeviceGetFanSpeed", ["fan_speed_pct"], lambda h: [nvml.nvmlDeviceGetFanSpeed(h)]),
        (reasons_symbol, ["clock_event_reasons"], lambda h: [reasons(h)]),
        ("nvmlDeviceGetTotalEccErrors", ["ecc_corrected_volatile"],
         ecc(nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED)),
        ("nvmlDeviceGetTotalEccErrors", ["ecc_uncorrected_volatile"],
         ecc(nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED)),
        ("nvmlDeviceGetCurrPcieLinkGeneration", ["pcie_link_gen"],
         lambda h: [nvml.nvmlDeviceGetCurrPcieLinkGeneration(h)]),
        ("nvmlDeviceGetCurrPcieLinkWidth", ["pcie_link_width"],
         lambda h: [nvml.nvmlDeviceGetCurrPcieLinkWidth(h)]),
        ("nvmlDeviceGetEncoderUtilization", ["encoder_util_pct"],
         lambda h: [nvml.nvmlDeviceGetEncoderUtilization(h)[0]]),
        ("nvmlDeviceGetDecoderUtilization", ["decoder_util_pct"],
         lambda h: [nvml.nvmlDeviceGetDecoderUtilization(h)[0]]),
    ]


class DeviceCapture:
    def __init__(self, index, handle):
        self.index, self.handle = index, handle
        self.points = {}           # field -> [[t, value], ...]
        self.failures = {}         # field -> last error code
        self.unsupported = set()
        self.processes = {}        # pid -> {"name", "first", "last", "mem": [[t, bytes]]}

    def note(self, field, t, value, err):
        if err is None:
            self.points.setdefault(field, []).append([round(t, 3), number(value)])
        elif err == NOT_SUPPORTED:
            self.unsupported.add(field)
        else:
            self.failures[field] = err


def sample(rec, nvml, cap, t, field_readers):
    for symbol, fields, read in field_readers:
        if all(f in cap.unsupported for f in fields):
            continue  # NOT_SUPPORTED once is NOT_SUPPORTED forever, as gpumon assumes
        values, err = rec.try_call(symbol, read, cap.handle)
        for i, field in enumerate(fields):
            cap.note(field, t, values[i] if err is None else None, err)
    field_ids = {"temperature_memory_c": FI_MEMORY_TEMP, "power_instant_mw": FI_POWER_INSTANT,
                 "power_average_mw": FI_POWER_AVERAGE}
    wanted = [f for f in field_ids if f not in cap.unsupported]
    if wanted:
        ids = [field_ids[f] for f in wanted]
        values, err = rec.try_call("nvmlDeviceGetFieldValues", nvml.nvmlDeviceGetFieldValues,
                                   cap.handle, ids)
        for i, field in enumerate(wanted):
            rc = err if err is not None else int(values[i].nvmlReturn)
            cap.note(field, t, values[i].value.uiVal if rc == 0 else None, rc or None)
    procs, err = rec.try_call("nvmlDeviceGetComputeRunningProcesses_v3",
                              nvml.nvmlDeviceGetComputeRunningProcesses, cap.handle)
    for p in procs or []:
        seen = cap.processes.get(p.pid)
        if seen is None:
            name, nerr = rec.try_call("nvmlSystemGetProcessName", nvml.nvmlSystemGetProcessName, p.pid)
            seen = cap.processes[p.pid] = {"name": os.path.basename(text(name)) if nerr is None
                                           else "unknown", "first": t, "mem": []}
        seen["last"] = t
        if p.usedGpuMemory is not None:
            seen["mem"].append([round(t, 3), int(p.usedGpuMemory)])


def series(points, repeat_s):
    """A constant when the value never changed, else held points without repeated values."""
    kept = []
    for t, value in points:
        if not kept or (value != kept[-1][1] and t > kept[-1][0]):
            kept.append([t, value])
    if len(kept) == 1:
        return kept[0][1]
    body = {"values": kept, "interpolate": "hold"}
    if repeat_s is not None:
        body["repeat_s"] = repeat_s
    return {"points": body}


def device_scenario(cap, static, unsupported, duration_s, interval_s, repeat):
    """The scenario entry of one device; duration_s is how long the capture really ran."""
    dev = dict(static)
    repeat_s = round(duration_s + interval_s, 3) if repeat else None
    fields = {}
    for field, points in cap.points.items():
        if field == "energy_mj":
            dev["energy_at_start_mj"] = points[0][1]
            if repeat:
                continue  # a repeating counter would run backwards: the fake integrates power
        fields[field] = series(points, repeat_s)
    dev["fields"] = fields
    dev["unsupported"] = sorted(set(unsupported) | cap.unsupported)
    dev["errors"] = [{"field": f, "error": ERROR_NAMES.get(code, "UNKNOWN")}
                     for f, code in sorted(cap.failures.items()) if f not in cap.points]
    dev["processes"] = []
    for pid, p in sorted(cap.processes.items()):
        proc = {"pid": pid, "name": p["name"]}
        if p["mem"]:
            proc["used_memory_bytes"] = series(p["mem"], repeat_s)
        if p["first"] > interval_s:
            proc["start_s"] = round(p["first"], 3)
        if p["last"] < duration_s - 2 * interval_s:
            proc["end_s"] = round(p["last"] + interval_s, 3)
        if repeat and ("start_s" in proc or "end_s" in proc):
            proc.pop("used_memory_bytes", None)  # a repeating series would outlive the process
        dev["processes"].append(proc)
    return dev


def capture(nvml, args):
    rec = Recorder(nvml)
    nvml.nvmlInit()
    try:
        scenario = {"name": args.name,
                    "description": "Captured with tools/capture_scenario.py for %gs every %gs%s."
                    % (args.duration, args.interval, "" if args.keep_ids else " (ids redacted)"),
                    "driver_version": text(nvml.nvmlSystemGetDriverVersion()),
                    "nvml_version": text(nvml.nvmlSystemGetNVMLVersion()),
                    "cuda_driver_version": int(nvml.nvmlSystemGetCudaDriverVersion())}
        count = nvml.nvmlDeviceGetCount()
        indexes = [int(i) for i in args.gpus.split(",")] if args.gpus else list(range(count))
        caps = [DeviceCapture(i, nvml.nvmlDeviceGetHandleByIndex(i)) for i in indexes]
        statics = [static_facts(rec, nvml, c.handle, c.index, args.keep_ids) for c in caps]
        field_readers = readers(nvml)
        start = time.monotonic()
        n = 0
        while True:
            due = start + n * args.interval
            if due - start >= args.duration:
                break
            time.sleep(max(0.0, due - time.monotonic()))
            for cap in caps:
                sample(rec, nvml, cap, time.monotonic() - start, field_readers)
            n += 1
        scenario["latency_us"] = {symbol: round(statistics.median(ns) / 1000, 1)
                                  for symbol, ns in sorted(rec.latencies_ns.items())}
        elapsed = max(args.duration, time.monotonic() - start)
        scenario["devices"] = [device_scenario(c, s, u, elapsed, args.interval, args.repeat)
                               for c, (s, u) in zip(caps, statics)]
        return scenario
    finally:
        nvml.nvmlShutdown()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=30, help="seconds to record")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between samples")
    parser.add_argument("--name", default="capture", help="scenario name")
    parser.add_argument("--out", default="-", help="output file (- for stdout)")
    parser.add_argument("--gpus", default="", help="comma-separated indexes (default: all)")
    parser.add_argument("--keep-ids", action="store_true", help="keep real UUIDs and serials")
    parser.add_argument("--no-repeat", dest="repeat", action="store_false",
                        help="hold the last values after the capture instead of repeating it")
    args = parser.parse_args(argv)
    if args.duration <= 0 or args.interval <= 0:
        parser.error("--duration and --interval must be > 0")
    import pynvml  # only here, so that --help works without it
    scenario = capture(pynvml, args)
    data = json.dumps(scenario, indent=1) + "\n"
    if args.out == "-":
        sys.stdout.write(data)
    else:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(data)
        print("wrote %s: %d devices, %d bytes" % (args.out, len(scenario["devices"]), len(data)),
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
