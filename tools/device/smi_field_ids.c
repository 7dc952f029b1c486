// SPDX-License-Identifier: MIT
// LD_PRELOAD shim for tools/device/smi_field_ids.sh: logs every field id nvidia-smi asks
// nvmlDeviceGetFieldValues for, with the status, value type and value the driver answered, to
// /tmp/smi-field-ids.txt, and passes the answer on unchanged. Works whether nvidia-smi links
// NVML or dlopens it (dlsym is interposed for that one name). Its own copy of the struct
// (nvml.h's nvmlFieldValue_t layout).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  unsigned int fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType, nvmlReturn;
  union {
    double d;
    unsigned int ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
  } value;
} FieldValue;

typedef int (*Fn)(void*, int, FieldValue*);
static Fn next_fn = NULL;

static void* real_dlsym(void* handle, const char* name) {
  static void* (*real)(void*, const char*) = NULL;
  if (real == NULL) real = (void* (*)(void*, const char*))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  if (real == NULL) real = (void* (*)(void*, const char*))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  return real(handle, name);
}

int nvmlDeviceGetFieldValues(void* device, int count, FieldValue* values) {
  if (next_fn == NULL) next_fn = (Fn)real_dlsym(RTLD_NEXT, "nvmlDeviceGetFieldValues");
  if (next_fn == NULL) return 13;  // NVML_ERROR_FUNCTION_NOT_FOUND
  const int rc = next_fn(device, count, values);
  FILE* f = fopen("/tmp/smi-field-ids.txt", "a");
  if (f != NULL) {
    for (int i = 0; i < count; ++i)
      fprintf(f, "id %u scope %u rc %d type %d ull %llu\n", values[i].fieldId, values[i].scopeId,
              values[i].nvmlReturn, values[i].valueType, values[i].value.ull);
    fclose(f);
  }
  return rc;
}

void* dlsym(void* handle, const char* name) {
  void* found = real_dlsym(handle, name);
  if (found != NULL && name != NULL && strcmp(name, "nvmlDeviceGetFieldValues") == 0) {
    next_fn = (Fn)found;
    return (void*)&nvmlDeviceGetFieldValues;
  }
  return found;
}
