/* SPDX-License-Identifier: MIT */
#include "raw_nvml.h"

#include <dlfcn.h>

/* Only what this file needs, matching nvml.h. */
typedef struct nvmlDevice_st* dev_t_;
typedef struct { unsigned gpu, memory; } util_t;
typedef struct { unsigned version; unsigned long long total, reserved, free, used; } mem2_t;
typedef struct {
  unsigned field_id, scope_id;
  long long timestamp, latency_usec;
  int value_type, nvml_return;
  unsigned long long value;
} field_t;

typedef int (*init_fn)(void);
typedef int (*count_fn)(unsigned*);
typedef int (*handle_fn)(unsigned, dev_t_*);
typedef int (*util_fn)(dev_t_, util_t*);
typedef int (*mem2_fn)(dev_t_, mem2_t*);
typedef int (*u_fn)(dev_t_, unsigned*);
typedef int (*u_arg_fn)(dev_t_, int, unsigned*);
typedef int (*ull_fn)(dev_t_, unsigned long long*);
typedef int (*ecc_fn)(dev_t_, int, int, unsigned long long*);
typedef int (*pstate_fn)(dev_t_, int*);
typedef int (*fields_fn)(dev_t_, int, field_t*);

static struct {
  util_fn util;
  mem2_fn mem2;
  u_arg_fn temp, clock;
  u_fn power, limit, fan;
  pstate_fn pstate;
  ull_fn reasons;
  ecc_fn ecc;
  fields_fn fields;
  dev_t_ devs[1024];
  unsigned skip[1024]; /* per device: bit k set = call k answered NOT_SUPPORTED at open */
  unsigned n;
} g;

enum { kNotSupported = 3 };

/* Makes call k on device d unless it was found unsupported; 1 when it succeeded. The first
 * pass (probe != 0) records NOT_SUPPORTED, as gpumon does, so both arms make the same calls. */
static int call(unsigned d, int k, int rc_if_called, int probe) {
  if (probe && rc_if_called == kNotSupported) g.skip[d] |= 1u << k;
  return rc_if_called == 0;
}
#define CALL(k, expr) ((g.skip[i] & (1u << (k))) ? 0 : call(i, (k), (expr), probe))

static int sample_device(unsigned i, int probe) {
  dev_t_ d = g.devs[i];
  util_t u;
  mem2_t m = {40u | (2u << 24), 0, 0, 0, 0};
  unsigned v;
  int p;
  unsigned long long r;
  field_t f[2] = {{82, 0, 0, 0, 0, 0, 0}, {186, 0, 0, 0, 0, 0, 0}};
  int ok = 0;
  ok += CALL(0, g.util(d, &u));
  ok += CALL(1, g.mem2(d, &m));
  ok += CALL(2, g.temp(d, 0, &v));
  ok += CALL(3, g.power(d, &v));
  ok += CALL(4, g.limit(d, &v));
  ok += CALL(5, g.clock(d, 1, &v));
  ok += CALL(6, g.clock(d, 2, &v));
  ok += CALL(7, g.clock(d, 0, &v));
  ok += CALL(8, g.pstate(d, &p));
  ok += CALL(9, g.fan(d, &v));
  ok += CALL(10, g.reasons(d, &r));
  ok += CALL(11, g.ecc(d, 0, 0, &r));
  ok += CALL(12, g.ecc(d, 1, 0, &r));
  ok += CALL(13, g.fields(d, 2, f));
  return ok;
}

int raw_nvml_open(const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) return -1;
  init_fn init = (init_fn)dlsym(h, "nvmlInit_v2");
  count_fn count = (count_fn)dlsym(h, "nvmlDeviceGetCount_v2");
  handle_fn handle = (handle_fn)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
  g.util = (util_fn)dlsym(h, "nvmlDeviceGetUtilizationRates");
  g.mem2 = (mem2_fn)dlsym(h, "nvmlDeviceGetMemoryInfo_v2");
  g.temp = (u_arg_fn)dlsym(h, "nvmlDeviceGetTemperature");
  g.clock = (u_arg_fn)dlsym(h, "nvmlDeviceGetClockInfo");
  g.power = (u_fn)dlsym(h, "nvmlDeviceGetPowerUsage");
  g.limit = (u_fn)dlsym(h, "nvmlDeviceGetEnforcedPowerLimit");
  g.fan = (u_fn)dlsym(h, "nvmlDeviceGetFanSpeed");
  g.pstate = (pstate_fn)dlsym(h, "nvmlDeviceGetPerformanceState");
  g.reasons = (ull_fn)dlsym(h, "nvmlDeviceGetCurrentClocksEventReasons");
  g.ecc = (ecc_fn)dlsym(h, "nvmlDeviceGetTotalEccErrors");
  g.fields = (fields_fn)dlsym(h, "nvmlDeviceGetFieldValues");
  if (!init || !count || !handle || !g.util || !g.mem2 || !g.temp || !g.clock || !g.power ||
      !g.limit || !g.fan || !g.pstate || !g.reasons || !g.ecc || !g.fields)
    return -1;
  if (init() != 0 || count(&g.n) != 0) return -1;
  if (g.n > 1024) g.n = 1024;
  for (unsigned i = 0; i < g.n; ++i)
    if (handle(i, &g.devs[i]) != 0) return -1;
  for (unsigned i = 0; i < g.n; ++i) sample_device(i, 1);
  return (int)g.n;
}

int raw_nvml_sample_all(void) {
  int ok = 0;
  for (unsigned i = 0; i < g.n; ++i) ok += sample_device(i, 0);
  return ok;
}
