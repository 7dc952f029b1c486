# SPDX-License-Identifier: MIT
"""Which physical GPU torch's cuda:N is, so a step or an OOM can be matched to NVML's index.

torch numbers the devices it sees after CUDA_VISIBLE_DEVICES (and in CUDA_DEVICE_ORDER, which
defaults to "fastest first", not NVML's PCI order); the PCI bus id names the same GPU in both.
Every function here returns None rather than raise; none imports torch.
"""


def pci_bus_id(torch, index):
    """NVML's form "00000000:18:00.0" (8-digit domain, upper-case hex), or None when this torch
    does not expose the device's PCI location."""
    try:
        props = torch.cuda.get_device_properties(index)
        bus = getattr(props, "pci_bus_id", None)
        dev = getattr(props, "pci_device_id", None)
        if bus is None or dev is None:
            return None
        domain = getattr(props, "pci_domain_id", 0) or 0
        return "%08X:%02X:%02X.0" % (int(domain), int(bus), int(dev))
    except Exception:
        return None


def uuid(torch, index):
    """NVML's form "GPU-xxxxxxxx-...", from torch's device properties (torch >= 2.1), or None."""
    try:
        value = getattr(torch.cuda.get_device_properties(index), "uuid", None)
        if value is None:
            return None
        text = str(value)
        return text if text.startswith(("GPU-", "MIG-")) else "GPU-" + text
    except Exception:
        return None


def same_bus_id(a, b):
    """Whether two PCI bus ids name one device (NVML writes a 4- or 8-digit domain depending on
    the call): gpumon's one parser (src/gpu/pci_bus_id.h); False for None or junk."""
    if not isinstance(a, str) or not isinstance(b, str):
        return False
    from gpumon import _gpumon
    return _gpumon.same_pci_bus_id(a, b)
