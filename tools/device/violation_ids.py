# SPDX-License-Identifier: MIT
"""Which nvmlDeviceGetFieldValues ids carry the clock-event (violation) time counters that
`nvidia-smi -q -d PERFORMANCE` prints as "Clocks Event Reasons Counters": public nvml.h copies
disagree (251-253 or 269-271 for the thermal and power-brake ones). Prints, for GPU 0, each
candidate id's return code, value type and value, to set beside nvidia-smi's microseconds.
usage: python3 violation_ids.py"""
import ctypes

CANDIDATES = {
    74: "PERF_POLICY_POWER (= CLOCKS_EVENT_REASON_SW_POWER_CAP)",
    75: "PERF_POLICY_THERMAL",
    76: "PERF_POLICY_SYNC_BOOST (= CLOCKS_EVENT_REASON_SYNC_BOOST)",
    77: "PERF_POLICY_BOARD_LIMIT",
    78: "PERF_POLICY_LOW_UTILIZATION",
    79: "PERF_POLICY_RELIABILITY",
    80: "PERF_POLICY_TOTAL_APP_CLOCKS",
    81: "PERF_POLICY_TOTAL_BASE_CLOCKS",
    251: "older header: SW_THERM_SLOWDOWN / newer: power smoothing",
    252: "older header: HW_THERM_SLOWDOWN / newer: power smoothing",
    253: "older header: HW_POWER_BRAKE_SLOWDOWN / newer: power smoothing",
    269: "newer header: SW_THERM_SLOWDOWN?",
    270: "newer header: HW_THERM_SLOWDOWN?",
    271: "newer header: HW_POWER_BRAKE_SLOWDOWN?",
}


class Value(ctypes.Union):
    _fields_ = [("d", ctypes.c_double), ("ui", ctypes.c_uint), ("ul", ctypes.c_ulong),
                ("ull", ctypes.c_ulonglong), ("sll", ctypes.c_longlong)]


class FieldValue(ctypes.Structure):
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint),
                ("timestamp", ctypes.c_longlong), ("latencyUsec", ctypes.c_longlong),
                ("valueType", ctypes.c_uint), ("nvmlReturn", ctypes.c_uint), ("value", Value)]


nvml = ctypes.CDLL("libnvidia-ml.so.1")
assert nvml.nvmlInit_v2() == 0
handle = ctypes.c_void_p()
assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) == 0
values = (FieldValue * len(CANDIDATES))()
for i, fid in enumerate(CANDIDATES):
    values[i].fieldId = fid
rc = nvml.nvmlDeviceGetFieldValues(handle, len(CANDIDATES), values)
print("nvmlDeviceGetFieldValues rc=%d (struct size %d)" % (rc, ctypes.sizeof(FieldValue)))
for v in values:
    print("id %3d rc=%2d type=%d ull=%d double=%g  %s" % (
        v.fieldId, v.nvmlReturn, v.valueType, v.value.ull, v.value.d, CANDIDATES[v.fieldId]))
nvml.nvmlShutdown()
