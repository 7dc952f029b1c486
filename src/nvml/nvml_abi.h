// SPDX-License-Identifier: MIT
// The subset of the NVML C ABI that gpumon uses, declared by hand so that neither gpumon nor
// its fake library needs CUDA headers or links libnvidia-ml. Layouts follow nvml.h (API 12/13);
// the static_asserts at the bottom pin the sizes that the driver writes into.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef enum nvmlTemperatureSensors_enum { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;

typedef enum nvmlClockType_enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;

/// 0 (max performance) .. 15 (min); 32 = unknown.
typedef enum nvmlPStates_enum {
  NVML_PSTATE_0 = 0,
  NVML_PSTATE_15 = 15,
  NVML_PSTATE_UNKNOWN = 32
} nvmlPstates_t;

typedef enum nvmlMemoryErrorType_enum {
  NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
  NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
} nvmlMemoryErrorType_t;

typedef enum nvmlEccCounterType_enum {
  NVML_VOLATILE_ECC = 0,
  NVML_AGGREGATE_ECC = 1
} nvmlEccCounterType_t;

typedef enum nvmlEnableState_enum {
  NVML_FEATURE_DISABLED = 0,
  NVML_FEATURE_ENABLED = 1
} nvmlEnableState_t;

typedef enum nvmlComputeMode_enum {
  NVML_COMPUTEMODE_DEFAULT = 0,
  NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
  NVML_COMPUTEMODE_PROHIBITED = 2,
  NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3
} nvmlComputeMode_t;

typedef enum nvmlValueType_enum {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_SIGNED_INT = 5,
  NVML_VALUE_TYPE_UNSIGNED_SHORT = 6
} nvmlValueType_t;

typedef union nvmlValue_st {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;     ///< % of the last sample period with one or more kernels running
  unsigned int memory;  ///< % of the last sample period with device memory read or written
} nvmlUtilization_t;

typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
  unsigned int version;  ///< kNvmlMemoryV2Version
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;

/// nvmlDeviceGetBAR1MemoryInfo: the PCIe BAR1 aperture the host (and peers, GPUDirect) map
/// device memory through, bytes.
typedef struct nvmlBAR1Memory_st {
  unsigned long long bar1Total;
  unsigned long long bar1Free;
  unsigned long long bar1Used;
} nvmlBAR1Memory_t;

/// nvmlDeviceGetMarginTemperature: degrees C below the GPU's T.Limit (negative: above it).
typedef struct nvmlMarginTemperature_v1_st {
  unsigned int version;  ///< kMarginTemperatureV1Version
  int marginTemperature;
} nvmlMarginTemperature_t;

// What only nvidia-smi -q's report shows (layouts from nvml.h of CUDA 13.2, the version words
// checked against what nvidia-smi 580.159 passes on an H200:
// docs/results/h200-2026-12-04-nvml-trace).

/// nvmlDeviceGetFBCStats: frame-buffer-capture sessions. No version field.
typedef struct nvmlFBCStats_st {
  unsigned int sessionsCount;
  unsigned int averageFPS;
  unsigned int averageLatency;  ///< us
} nvmlFBCStats_t;

/// nvmlDeviceGetRowRemapperHistogram: memory banks by how many spare rows they have left.
typedef struct nvmlRowRemapperHistogramValues_st {
  unsigned int max;
  unsigned int high;
  unsigned int partial;
  unsigned int low;
  unsigned int none;
} nvmlRowRemapperHistogramValues_t;

/// nvmlDeviceGetRemappedRows_v2: rows remapped, active and inactive. No version field.
typedef struct nvmlRemappedRowsInfo_v2_st {
  unsigned int corrActiveRemaps;
  unsigned int corrInactiveRemaps;
  unsigned int uncActiveRemaps;
  unsigned int uncInactiveRemaps;
  unsigned int bPending;
  unsigned int bFailureOccurred;
} nvmlRemappedRowsInfo_v2_t;

/// nvmlDeviceGetC2cModeInfoV: no version field despite the name.
typedef struct nvmlC2cModeInfo_v1_st {
  unsigned int isC2cEnabled;
} nvmlC2cModeInfo_v1_t;

/// nvmlDeviceGetSramEccErrorStatus (Ampere and newer). NVML documents it as root only; driver
/// 580.159 answers an unprivileged user too.
typedef struct nvmlEccSramErrorStatus_v1_st {
  unsigned int version;  ///< kEccSramErrorStatusV1
  unsigned long long aggregateUncParity;
  unsigned long long aggregateUncSecDed;
  unsigned long long aggregateCor;
  unsigned long long volatileUncParity;
  unsigned long long volatileUncSecDed;
  unsigned long long volatileCor;
  unsigned long long aggregateUncBucketL2;
  unsigned long long aggregateUncBucketSm;
  unsigned long long aggregateUncBucketPcie;
  unsigned long long aggregateUncBucketMcu;
  unsigned long long aggregateUncBucketOther;
  unsigned int bThresholdExceeded;
} nvmlEccSramErrorStatus_v1_t;

/// nvmlDeviceGetRepairStatus (driver 580 and newer).
typedef struct nvmlRepairStatus_v1_st {
  unsigned int version;  ///< kRepairStatusV1
  unsigned int bChannelRepairPending;
  unsigned int bTpcRepairPending;
} nvmlRepairStatus_v1_t;

/// nvmlDeviceGetUnrepairableMemoryFlag_v1: no version field.
typedef struct nvmlUnrepairableMemoryStatus_v1_st {
  unsigned int bUnrepairableMemory;
} nvmlUnrepairableMemoryStatus_v1_t;

/// nvmlDeviceGetCapabilities: capMask's bit 0 is EGM (extended GPU memory).
typedef struct nvmlDeviceCapabilities_v1_st {
  unsigned int version;  ///< kDeviceCapabilitiesV1
  unsigned int capMask;
} nvmlDeviceCapabilities_v1_t;

#define GPUMON_NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define GPUMON_NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32

/// Filled by nvmlDeviceGetPciInfo_v3 (and the older _v2).
typedef struct nvmlPciInfo_st {
  char busIdLegacy[GPUMON_NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  ///< device id << 16 | vendor id
  unsigned int pciSubSystemId;
  char busId[GPUMON_NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  ///< "00000000:18:00.0"
} nvmlPciInfo_t;

/// Filled by nvmlDeviceGetPciInfoExt: nvmlPciInfo_t's ids and the PCI class codes.
typedef struct nvmlPciInfoExt_v1_st {
  unsigned int version;  ///< kPciInfoExtV1
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  unsigned int baseClass;  ///< 0x3: display controller
  unsigned int subClass;   ///< 0x2: 3D controller
  char busId[GPUMON_NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfoExt_v1_t;

/// Filled by nvmlDeviceGetAddressingMode: 0 none, 1 HMM, 2 ATS.
typedef struct nvmlDeviceAddressingMode_st {
  unsigned int version;  ///< kDeviceAddressingModeV1
  unsigned int value;
} nvmlDeviceAddressingMode_t;

typedef struct nvmlProcessInfo_v1_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  ///< bytes; ULLONG_MAX when unavailable
} nvmlProcessInfo_v1_t;

/// What nvmlDeviceGetComputeRunningProcesses_v3 fills on drivers from 550 on (and _v2 earlier).
typedef struct nvmlProcessInfo_v2_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;  ///< 0xFFFFFFFF when not MIG
  unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

/// What _v3 fills on drivers 535-549 (nvitop's observation; see nvml_library.cc).
typedef struct nvmlProcessInfo_v3_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessInfo_v3_t;

typedef struct nvmlFieldValue_st {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;  ///< CPU time of the value, us since 1970
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;

typedef struct nvmlEventData_st {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  ///< the XID for nvmlEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlEventData_t;

typedef enum nvmlSamplingType_enum {
  NVML_TOTAL_POWER_SAMPLES = 0,
  NVML_GPU_UTILIZATION_SAMPLES = 1,
  NVML_MEMORY_UTILIZATION_SAMPLES = 2,
  NVML_ENC_UTILIZATION_SAMPLES = 3,
  NVML_DEC_UTILIZATION_SAMPLES = 4,
  NVML_PROCESSOR_CLK_SAMPLES = 5,
  NVML_MEMORY_CLK_SAMPLES = 6,
  NVML_JPG_UTILIZATION_SAMPLES = 8,
  NVML_OFA_UTILIZATION_SAMPLES = 9
} nvmlSamplingType_t;

typedef struct nvmlSample_st {
  unsigned long long timeStamp;  ///< us since 1970
  nvmlValue_t sampleValue;
} nvmlSample_t;

/// One process's utilization over the driver's last sample period
/// (nvmlDeviceGetProcessUtilization).
typedef struct nvmlProcessUtilizationSample_st {
  unsigned int pid;
  unsigned long long timeStamp;  ///< CPU time of the sample, us since 1970
  unsigned int smUtil;           ///< %
  unsigned int memUtil;          ///< %
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef enum nvmlPcieUtilCounter_enum {
  NVML_PCIE_UTIL_TX_BYTES = 0,
  NVML_PCIE_UTIL_RX_BYTES = 1
} nvmlPcieUtilCounter_t;

// GPM (GPU Performance Monitoring, Hopper and newer), as nvml.h of API 12 declares it.
typedef enum nvmlGpmMetricId_enum {
  NVML_GPM_METRIC_GRAPHICS_UTIL = 1,    ///< % of time any compute/graphics app was active
  NVML_GPM_METRIC_SM_UTIL = 2,          ///< % of SMs that were busy
  NVML_GPM_METRIC_SM_OCCUPANCY = 3,     ///< % of warps active vs the theoretical maximum
  NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,  ///< % of time the SMs did any tensor operation
  NVML_GPM_METRIC_DRAM_BW_UTIL = 10,    ///< % of DRAM bandwidth used vs the theoretical maximum
  NVML_GPM_METRIC_MAX = 98              ///< array size of nvmlGpmMetricsGet_t for version 1
} nvmlGpmMetricId_t;

typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

typedef struct nvmlGpmMetric_st {
  unsigned int metricId;    ///< IN
  nvmlReturn_t nvmlReturn;  ///< OUT: value is valid only when SUCCESS
  double value;             ///< OUT
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;  ///< OUT: owned by NVML, may be NULL
} nvmlGpmMetric_t;

typedef struct nvmlGpmMetricsGet_st {
  unsigned int version;     ///< kGpmMetricsGetVersion (NVML_GPM_METRICS_GET_VERSION)
  unsigned int numMetrics;  ///< entries of metrics[] to fill
  nvmlGpmSample_t sample1;  ///< the earlier sample
  nvmlGpmSample_t sample2;  ///< the later sample
  nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct nvmlGpmSupport_st {
  unsigned int version;  ///< kGpmSupportVersion (NVML_GPM_SUPPORT_VERSION)
  unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

}  // extern "C"

namespace gpumon::nvml {

inline constexpr unsigned int kStructVersion(std::size_t size, unsigned int version) {
  return static_cast<unsigned int>(size) | (version << 24U);
}
inline constexpr unsigned int kMemoryV2Version = kStructVersion(sizeof(nvmlMemory_v2_t), 2);
inline constexpr unsigned int kMarginTemperatureV1Version =
    kStructVersion(sizeof(nvmlMarginTemperature_t), 1);
inline constexpr unsigned int kEccSramErrorStatusV1 =
    kStructVersion(sizeof(nvmlEccSramErrorStatus_v1_t), 1);  // 0x1000068
inline constexpr unsigned int kRepairStatusV1 = kStructVersion(sizeof(nvmlRepairStatus_v1_t), 1);
inline constexpr unsigned int kDeviceCapabilitiesV1 =
    kStructVersion(sizeof(nvmlDeviceCapabilities_v1_t), 1);
// GPM structs carry plain version numbers, not NVML_STRUCT_VERSION.
inline constexpr unsigned int kGpmMetricsGetVersion = 1;
inline constexpr unsigned int kGpmSupportVersion = 1;
/// NVML refuses GPM metrics from two samples less than this apart (nvml.h, GPM functions).
inline constexpr double kGpmMinWindowS = 0.1;

inline constexpr unsigned kDeviceNameBufferSize = 96;
inline constexpr unsigned kDeviceUuidBufferSize = 80;
inline constexpr unsigned kDeviceSerialBufferSize = 30;
inline constexpr unsigned kSystemDriverVersionBufferSize = 80;
inline constexpr unsigned kSystemNvmlVersionBufferSize = 80;
inline constexpr unsigned kProcessNameBufferSize = 1024;
inline constexpr unsigned kDeviceVbiosVersionBufferSize = 32;
inline constexpr unsigned kDeviceInforomVersionBufferSize = 16;
inline constexpr unsigned kDevicePartNumberBufferSize = 80;
inline constexpr unsigned kGspFirmwareVersionBufferSize = 0x40;

/// nvmlDeviceGetInforomVersion's objects (nvmlInforomObject_t).
inline constexpr unsigned kInforomOem = 0, kInforomEcc = 1, kInforomPower = 2;
/// The versions of nvmlDeviceGetPciInfoExt's and nvmlDeviceGetAddressingMode's structs
/// (NVML_STRUCT_VERSION: the size | version << 24).
inline constexpr unsigned kPciInfoExtV1 = 0x1000040;
inline constexpr unsigned kDeviceAddressingModeV1 = 0x1000008;

/// nvmlDeviceGetMigMode's current and pending modes (NVML_DEVICE_MIG_ENABLE / _DISABLE).
inline constexpr unsigned kDeviceMigEnable = 1;

// Field ids for nvmlDeviceGetFieldValues.
inline constexpr unsigned kFiDevMemoryTemp = 82;
inline constexpr unsigned kFiDevPowerAverage = 185;
inline constexpr unsigned kFiDevPowerInstant = 186;
/// Cumulative NVLink data (payload) KiB since the driver loaded; scope kFiScopeAllLinks.
inline constexpr unsigned kFiDevNvlinkThroughputDataTx = 138;
inline constexpr unsigned kFiDevNvlinkThroughputDataRx = 139;
/// Rows remapped for correctable / uncorrectable errors, a remap waiting for a reset (0/1),
/// a remap that failed (0/1): nvmlDeviceGetRemappedRows's values, Ampere and newer.
inline constexpr unsigned kFiDevRemappedCor = 142;
inline constexpr unsigned kFiDevRemappedUnc = 143;
inline constexpr unsigned kFiDevRemappedPending = 144;
inline constexpr unsigned kFiDevRemappedFailure = 145;
/// Time (ns, cumulative since the driver loaded) the clocks were held down by the power cap and by
/// sync boost: NVML's perf-policy fields, which nvidia-smi prints as "SW Power Capping" and
/// "Sync Boost" under "Clocks Event Reasons Counters".
inline constexpr unsigned kFiDevPerfPolicyPower = 74;
inline constexpr unsigned kFiDevPerfPolicySyncBoost = 76;
/// The same for SW thermal, HW thermal and HW power-brake slowdown: the ids nvidia-smi 580 asks
/// for its "Clocks Event Reasons Counters" (traced on an H200 with an LD_PRELOAD shim,
/// docs/results/h200-2026-12-03-counters/smi-field-ids.txt). Some nvml.h copies number them
/// 251-253 (which answer NOT_SUPPORTED on that driver) and give 269-271 to power smoothing; a
/// driver that does not know these ids shows the three as not supported.
inline constexpr unsigned kFiDevClocksEventReasonSwThermSlowdown = 269;
inline constexpr unsigned kFiDevClocksEventReasonHwThermSlowdown = 270;
inline constexpr unsigned kFiDevClocksEventReasonHwPowerBrakeSlowdown = 271;
/// The temperature thresholds relative to T.Limit, degrees C, signed (an H200 answers -8, -2, 0,
/// 0): shutdown, HW slowdown, memory max and GPU max operating. Ada and newer; they supersede
/// nvmlDeviceGetTemperatureThreshold, and nvidia-smi 580's -q prints them as "... T.Limit Temp".
inline constexpr unsigned kFiDevTemperatureShutdownTlimit = 193;
inline constexpr unsigned kFiDevTemperatureSlowdownTlimit = 194;
inline constexpr unsigned kFiDevTemperatureMemMaxTlimit = 195;
inline constexpr unsigned kFiDevTemperatureGpuMaxTlimit = 196;
/// PCIe replay-counter rollovers (unsigned int) and the action the driver asks for to recover
/// the GPU (unsigned int, kRecoveryAction*), as nvidia-smi 580 reads them for -q.
inline constexpr unsigned kFiDevPcieReplayRolloverCounter = 95;
inline constexpr unsigned kFiDevGpuRecoveryAction = 230;
/// scopeId of the power fields (185, 186) for the memory's share (NVML_POWER_SCOPE_MEMORY).
inline constexpr unsigned kPowerScopeMemory = 2;
/// nvmlDeviceGetClock's clockId for the highest clock the board's vendor allows.
inline constexpr unsigned kClockIdCustomerBoostMax = 3;
/// nvmlMemoryLocation_t of nvmlDeviceGetMemoryErrorCounter.
inline constexpr unsigned kMemoryLocationDram = 2;
inline constexpr unsigned kMemoryLocationSram = 7;
inline constexpr unsigned kDevCapEgm = 1U << 0;
/// scopeId for per-link fields: the sum over every link.
inline constexpr unsigned kFiScopeAllLinks = 0xFFFFFFFFU;

// Event types for nvmlDeviceRegisterEvents.
inline constexpr unsigned long long kEventTypeSingleBitEccError = 0x1;
inline constexpr unsigned long long kEventTypeDoubleBitEccError = 0x2;
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8;

// Clock event (formerly "throttle") reasons, nvmlDeviceGetCurrentClocksEventReasons.
inline constexpr unsigned long long kClocksEventGpuIdle = 0x1;
inline constexpr unsigned long long kClocksEventApplicationsClocksSetting = 0x2;
inline constexpr unsigned long long kClocksEventSwPowerCap = 0x4;
inline constexpr unsigned long long kClocksEventHwSlowdown = 0x8;
inline constexpr unsigned long long kClocksEventSyncBoost = 0x10;
inline constexpr unsigned long long kClocksEventSwThermalSlowdown = 0x20;
inline constexpr unsigned long long kClocksEventHwThermalSlowdown = 0x40;
inline constexpr unsigned long long kClocksEventHwPowerBrakeSlowdown = 0x80;
inline constexpr unsigned long long kClocksEventDisplayClockSetting = 0x100;

inline constexpr unsigned long long kValueNotAvailableUll = ~0ULL;
inline constexpr unsigned int kNoMigInstance = 0xFFFFFFFFU;

static_assert(sizeof(nvmlUtilization_t) == 8);
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlMemory_v2_t) == 40);
static_assert(sizeof(nvmlBAR1Memory_t) == 24);
static_assert(sizeof(nvmlMarginTemperature_t) == 8);
static_assert(sizeof(nvmlPciInfo_t) == 68);
static_assert(sizeof(nvmlPciInfoExt_v1_t) == (kPciInfoExtV1 & 0xffffff));
static_assert(sizeof(nvmlDeviceAddressingMode_t) == (kDeviceAddressingModeV1 & 0xffffff));
static_assert(offsetof(nvmlPciInfo_t, busId) == 36);
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24);
static_assert(sizeof(nvmlProcessInfo_v3_t) == 32);
static_assert(sizeof(nvmlFieldValue_t) == 40);
static_assert(sizeof(nvmlFBCStats_t) == 12);
static_assert(sizeof(nvmlRowRemapperHistogramValues_t) == 20);
static_assert(sizeof(nvmlRemappedRowsInfo_v2_t) == 24);
static_assert(sizeof(nvmlC2cModeInfo_v1_t) == 4);
static_assert(sizeof(nvmlUnrepairableMemoryStatus_v1_t) == 4);
static_assert(sizeof(nvmlEccSramErrorStatus_v1_t) == 104);
static_assert(offsetof(nvmlEccSramErrorStatus_v1_t, aggregateUncParity) == 8);
static_assert(offsetof(nvmlEccSramErrorStatus_v1_t, bThresholdExceeded) == 96);
static_assert(kEccSramErrorStatusV1 == 0x1000068);
static_assert(kRepairStatusV1 == 0x100000C);
static_assert(kDeviceCapabilitiesV1 == 0x1000008);
static_assert(sizeof(nvmlEventData_t) == 32);
static_assert(sizeof(nvmlSample_t) == 16);
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32);
static_assert(offsetof(nvmlProcessUtilizationSample_t, timeStamp) == 8);
static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16);
static_assert(sizeof(nvmlGpmMetric_t) == 40);
static_assert(offsetof(nvmlGpmMetric_t, value) == 8);
static_assert(offsetof(nvmlGpmMetric_t, metricInfo) == 16);
static_assert(offsetof(nvmlGpmMetricsGet_t, sample1) == 8);
static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24);
static_assert(sizeof(nvmlGpmMetricsGet_t) == 24 + 98 * 40);
static_assert(sizeof(nvmlGpmSupport_t) == 8);

}  // namespace gpumon::nvml
