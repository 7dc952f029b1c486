# SPDX-License-Identifier: MIT
"""gpumon for PyTorch: step-aligned GPU metrics in three lines (docs/python.md).

    mon = gpumon.start()
    for batch in mon.wrap(loader):
        ...
        mon.step()          # or: with mon.step(): ...

The training process only sends small step events to the per-node agent (`gpumon agent`, or
`gpumon record -- python train.py`) over a Unix socket; the agent owns NVML and the recording.
gpumon never raises into the training loop: every failure becomes one GpumonWarning and, where
it must, gpumon turns itself into a no-op.
"""

from gpumon._monitor import GpumonWarning, Monitor, start

__all__ = ["GpumonWarning", "Monitor", "start"]
