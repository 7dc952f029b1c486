#!/usr/bin/env python3
"""Tests of tools/capture_scenario.py.

Runs everywhere: the series/device conversion and a whole capture against a small stand-in for
pynvml. Where pynvml is installed and the fake NVML library is built (GPUMON_FAKE_NVML_DIR,
default build/fake-nvml), it also captures the fake's scenarios through the real pynvml and
plays the result back through the fake, so the output is checked by the real parser.
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import capture_scenario as cs  # noqa: E402

FAKE_DIR = os.environ.get("GPUMON_FAKE_NVML_DIR", os.path.join(ROOT, "build", "fake-nvml"))
HAVE_PYNVML = importlib.util.find_spec("pynvml") is not None
HAVE_FAKE = os.path.exists(os.path.join(FAKE_DIR, "libnvidia-ml.so.1"))


class StubNvml:
    """Just enough of pynvml for capture(): one GPU whose fan, ECC and MIG are not supported and
    whose power draw answers NO_PERMISSION; one process that appears after the first sample."""

    NVML_CLOCK_GRAPHICS, NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 1, 2
    NVML_TEMPERATURE_GPU = 0
    NVML_FEATURE_ENABLED = 1
    NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 0, 1
    NVML_VOLATILE_ECC = 0
    nvmlMemory_v2 = 0x02000028

    class NVMLError(Exception):
        def __init__(self, value):
            super().__init__(value)
            self.value = value

    def __init__(self):
        self.samples = 0

    def fail(self, code):
        raise self.NVMLError(code)

    def nvmlInit(self): pass
    def nvmlShutdown(self): pass
    def nvmlSystemGetDriverVersion(self): return b"580.159.04"
    def nvmlSystemGetNVMLVersion(self): return "13.580.159.04"
    def nvmlSystemGetCudaDriverVersion(self): return 13000
    def nvmlDeviceGetCount(self): return 1
    def nvmlDeviceGetHandleByIndex(self, i): return ("gpu", i)
    def nvmlDeviceGetName(self, h): return b"NVIDIA H200"
    def nvmlDeviceGetUUID(self, h): return "GPU-real-uuid"
    def nvmlDeviceGetSerial(self, h): return "1654923999999"
    def nvmlDeviceGetPciInfo(self, h):
        return types.SimpleNamespace(busId=b"00000000:18:00.0", pciDeviceId=0x233510DE,
                                     pciSubSystemId=0x18A810DE)
    def nvmlDeviceGetMinorNumber(self, h): return 0
    def nvmlDeviceGetMemoryInfo(self, h, version=None):
        assert version == self.nvmlMemory_v2
        return types.SimpleNamespace(total=1000, reserved=10, free=490, used=500)
    def nvmlDeviceGetMaxClockInfo(self, h, kind): return 1980
    def nvmlDeviceGetPersistenceMode(self, h): return 1
    def nvmlDeviceGetEccMode(self, h): self.fail(3)
    def nvmlDeviceGetPowerManagementLimit(self, h): return 700000
    def nvmlDeviceGetVbiosVersion(self, h): return b"96.00.A5.00.1A"
    def nvmlDeviceGetComputeMode(self, h): return 3
    def nvmlDeviceGetMigMode(self, h): self.fail(3)
    def nvmlDeviceGetMaxPcieLinkGeneration(self, h): return 5
    def nvmlDeviceGetGpuMaxPcieLinkGeneration(self, h): return 5
    def nvmlDeviceGetMaxPcieLinkWidth(self, h): return 16
    def nvmlDeviceGetInforomImageVersion(self, h): return "G520.0282.02.02"
    def nvmlDeviceGetDisplayActive(self, h): return 0
    def nvmlDeviceGetAccountingMode(self, h): return 1
    def nvmlDeviceGetCurrPcieLinkGeneration(self, h): return 3
    def nvmlDeviceGetCurrPcieLinkWidth(self, h): return 16
    def nvmlDeviceGetEncoderUtilization(self, h): return [0, 167000]
    def nvmlDeviceGetDecoderUtilization(self, h): return [7, 167000]
    def nvmlDeviceGetUtilizationRates(self, h):
        self.samples += 1
        return types.SimpleNamespace(gpu=90 + self.samples % 2, memory=40)
    def nvmlDeviceGetTemperature(self, h, sensor): return 60
    def nvmlDeviceGetPowerUsage(self, h): self.fail(4)
    def nvmlDeviceGetEnforcedPowerLimit(self, h): return 700000
    def nvmlDeviceGetTotalEnergyConsumption(self, h): return 1000 + self.samples
    def nvmlDeviceGetClockInfo(self, h, kind): return 1980
    def nvmlDeviceGetPerformanceState(self, h): return 0
    def nvmlDeviceGetFanSpeed(self, h): self.fail(3)
    def nvmlDeviceGetCurrentClocksEventReasons(self, h): return 0
    def nvmlDeviceGetTotalEccErrors(self, h, kind, counter): self.fail(3)
    def nvmlDeviceGetFieldValues(self, h, ids):
        return [types.SimpleNamespace(nvmlReturn=0 if i == 82 else 3,
                                      value=types.SimpleNamespace(uiVal=66)) for i in ids]
    def nvmlDeviceGetComputeRunningProcesses(self, h):
        if self.samples < 2:
            return []
        return [types.SimpleNamespace(pid=4242, usedGpuMemory=400)]
    def nvmlSystemGetProcessName(self, pid): return b"/usr/bin/python3"


class ConversionTest(unittest.TestCase):
    def test_series_is_a_constant_or_held_points_without_repeats(self):
        self.assertEqual(cs.series([[0, 5], [0.1, 5]], None), 5)
        self.assertEqual(cs.series([[0, 5], [0.1, 5], [0.2, 7], [0.3, 7], [0.4, 5]], 0.6),
                         {"points": {"values": [[0, 5], [0.2, 7], [0.4, 5]], "interpolate": "hold",
                                     "repeat_s": 0.6}})

    def test_capture_against_a_stand_in_for_pynvml(self):
        args = types.SimpleNamespace(duration=0.3, interval=0.1, name="stub", gpus="",
                                     keep_ids=False, repeat=True)
        sc = cs.capture(StubNvml(), args)
        self.assertEqual(sc["driver_version"], "580.159.04")
        dev = sc["devices"][0]
        self.assertEqual(dev["uuid"], "GPU-00000000-0000-4000-8000-000000000000")  # redacted
        self.assertEqual(dev["serial"], "REDACTED0000")
        self.assertEqual(dev["pci_bus_id"], "00000000:18:00.0")
        self.assertEqual(dev["memory_reserved_bytes"], 10)
        self.assertEqual(dev["unsupported"], ["ecc_corrected_volatile", "ecc_mode",
                                              "ecc_uncorrected_volatile", "fan_speed_pct",
                                              "mig_mode", "power_average_mw",
                                              "power_instant_mw"])
        self.assertEqual(dev["vbios_version"], "96.00.A5.00.1A")
        self.assertEqual(dev["compute_mode"], 3)
        self.assertNotIn("mig_mode_current", dev)
        self.assertEqual(dev["inforom_image_version"], "G520.0282.02.02")
        self.assertEqual((dev["display_active"], dev["accounting_mode"]), (False, True))
        self.assertEqual((dev["pcie_link_gen_max"], dev["pcie_link_gen_gpu_max"],
                          dev["pcie_link_width_max"]), (5, 5, 16))
        self.assertEqual(dev["errors"], [{"field": "power_draw_mw", "error": "NO_PERMISSION"}])
        f = dev["fields"]
        self.assertEqual(f["memory_used_bytes"], 500)
        self.assertEqual(f["temperature_memory_c"], 66)
        self.assertEqual((f["pcie_link_gen"], f["pcie_link_width"]), (3, 16))
        self.assertEqual((f["encoder_util_pct"], f["decoder_util_pct"]), (0, 7))
        self.assertEqual(f["utilization_gpu_pct"]["points"]["interpolate"], "hold")
        self.assertNotIn("energy_mj", f)  # repeating: the fake integrates power instead
        self.assertEqual(dev["energy_at_start_mj"], 1001)
        self.assertEqual(dev["processes"][0]["pid"], 4242)
        self.assertEqual(dev["processes"][0]["name"], "python3")
        self.assertGreater(dev["processes"][0]["start_s"], 0)
        self.assertIn("nvmlDeviceGetUtilizationRates", sc["latency_us"])
        json.dumps(sc)  # serialisable


@unittest.skipUnless(HAVE_PYNVML and HAVE_FAKE, "needs pynvml and the fake NVML library")
class ThroughFakeNvmlTest(unittest.TestCase):
    def run_capture(self, scenario, out, *extra):
        env = dict(os.environ, LD_LIBRARY_PATH=FAKE_DIR, GPUMON_FAKE_SCENARIO=scenario,
                   GPUMON_SCENARIO_DIR=os.path.join(ROOT, "testdata", "scenarios"),
                   GPUMON_FAKE_TIME_OFFSET_S="10")
        subprocess.run([sys.executable, os.path.join(HERE, "capture_scenario.py"), "--duration",
                        "0.6", "--interval", "0.2", "--out", out, *extra], env=env, check=True)
        with open(out, encoding="utf-8") as f:
            return json.load(f)

    def test_demo_round_trip(self):
        with tempfile.TemporaryDirectory() as tmp:
            first = self.run_capture("demo", os.path.join(tmp, "a.json"), "--name", "again")
            self.assertEqual(len(first["devices"]), 8)
            self.assertEqual(first["devices"][5]["pci_bus_id"], "00000000:AB:00.0")
            self.assertIn("fan_speed_pct", first["devices"][0]["unsupported"])
            self.assertEqual(first["devices"][3]["fields"]["ecc_corrected_volatile"], 1)
            self.assertGreaterEqual(first["latency_us"]["nvmlDeviceGetTotalEnergyConsumption"], 2000)
            self.assertEqual(first["devices"][0]["processes"][0]["name"], "python3")
            # The capture is itself a scenario the fake (and its strict parser) accepts.
            second = self.run_capture(os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json"))
            self.assertEqual(len(second["devices"]), 8)
            self.assertEqual(second["devices"][0]["fields"]["memory_used_bytes"],
                             first["devices"][0]["fields"]["memory_used_bytes"])

    def test_unsupported_and_no_permission(self):
        with tempfile.TemporaryDirectory() as tmp:
            dev = self.run_capture("unsupported", os.path.join(tmp, "u.json"))["devices"][0]
            for field in ("ecc_mode", "energy_mj", "power_instant_mw", "temperature_memory_c"):
                self.assertIn(field, dev["unsupported"])
            self.assertIn({"field": "power_draw_mw", "error": "NO_PERMISSION"}, dev["errors"])
            self.assertIn("fan_speed_pct", dev["fields"])


if __name__ == "__main__":
    unittest.main()
