/* SPDX-License-Identifier: MIT */
/* The baseline for gpumon's sampling cost: the same NVML calls as one cheap-field sample,
 * made from plain C with no gpumon code in between. */
#ifndef GPUMON_BENCH_RAW_NVML_H
#define GPUMON_BENCH_RAW_NVML_H
#ifdef __cplusplus
extern "C" {
#endif

/* dlopen()s `path` and calls nvmlInit; returns the device count, or -1. */
int raw_nvml_open(const char* path);
/* Reads every cheap field of every device once, skipping calls that answered NOT_SUPPORTED
 * when the device was opened (as gpumon does); returns how many calls succeeded. */
int raw_nvml_sample_all(void);

#ifdef __cplusplus
}
#endif
#endif
