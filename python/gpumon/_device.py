# SPDX-License-Identifier: MIT
"""Which physical GPU torch's cuda:N is, so a step or an OOM can be matched to NVML's index.

torch numbers the devices it sees after CUDA_VISIBLE_DEVICES (and in CUDA_DEVICE_ORDER, which
defaults to "fastest first", not NVML's PCI order); the PCI bus id names the same GPU in both.
Every function here returns None rather than raise; none imports torch.
"""

import os


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
    """NVML writes a 4- or 8-digit domain depending on the call; compare the numbers."""
    try:
        da, rest_a = a.lower().split(":", 1)
        db, rest_b = b.lower().split(":", 1)
        return int(da, 16) == int(db, 16) and rest_a == rest_b
    except (AttributeError, ValueError):
        return False


def identity(torch, index):
    """The hello's device fields: pci_bus_id, device_uuid, CUDA_VISIBLE_DEVICES and
    CUDA_DEVICE_ORDER (None where unknown or unset)."""
    have_cuda = torch is not None and index is not None
    return {
        "pci_bus_id": pci_bus_id(torch, index) if have_cuda else None,
        "device_uuid": uuid(torch, index) if have_cuda else None,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "cuda_device_order": os.environ.get("CUDA_DEVICE_ORDER"),
    }
