# SPDX-License-Identifier: MIT
"""Hardware: ECC errors, XID events, a GPU falling off the bus, during otherwise healthy runs."""
from case_model import Run, steady_mem
from cases_common import GIB, expect, finding, same_for_all


def _healthy_training(run, n, duration_stop=None):
    for r in range(n):
        run.add_rank(r, r, n, mem=steady_mem(60 * GIB, 66 * GIB))
    return run.run_steps(1.0, duration_stop or run.duration_s - 0.8,
                         same_for_all(n, 0.003, 0.30, 0.005, run))


def ecc_errors():
    run = Run("ecc_errors", 14, 1, seed=61)
    onset = 6.0
    _healthy_training(run, 1)
    run.fields[0] = {"ecc_uncorrected_volatile": {"step": [[0, 0], [onset, 1]]},
                     "ecc_corrected_volatile": {"step": [[0, 0], [onset, 3], [9, 7]]}}
    run.device_extra[0] = {"ecc_events": [{"at_s": onset, "type": "double_bit"},
                                          {"at_s": onset, "type": "single_bit"},
                                          {"at_s": 9, "type": "single_bit"}]}
    return run, {"planted": "at 6 s an uncorrectable (double-bit) ECC error on GPU 0, and "
                            "corrected errors 0 -> 3 -> 7; training goes on", "onset_s": onset}, \
        expect([finding("ecc_errors", gpus=[0])])


def xid():
    run = Run("xid", 14, 1, seed=62)
    onset = 6.0
    _healthy_training(run, 1)
    run.device_extra[0] = {"xid_events": [{"at_s": onset, "xid": 119}]}
    return run, {"planted": "XID 119 (GSP RPC timeout) on GPU 0 at 6 s; training goes on",
                 "onset_s": onset}, \
        expect([finding("xid", gpus=[0], mentions=["119"])])


def gpu_lost():
    run = Run("gpu_lost", 14, 2, seed=63)
    onset = 8.0
    _healthy_training(run, 2, duration_stop=onset)
    for r in run.ranks:  # NCCL errors out on both ranks once GPU 1 is gone
        r.end = (onset + 0.4, "crash")
    run.device_extra[1] = {"xid_events": [{"at_s": onset - 0.1, "xid": 79}], "lost_at_s": onset}
    return run, {"planted": "GPU 1 falls off the bus (XID 79 at 7.9 s, lost from 8 s); both "
                            "ranks die 0.4 s later", "onset_s": onset - 0.1}, \
        expect([finding("gpu_lost", gpus=[1])], allowed=["xid"])


CASES = [ecc_errors, xid, gpu_lost]
