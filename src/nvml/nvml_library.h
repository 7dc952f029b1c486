// SPDX-License-Identifier: MIT
// NvmlLibrary: the one place that loads NVML. It dlopen()s libnvidia-ml.so.1 (or the path in
// GPUMON_NVML_LIBRARY), resolves every entry point of nvml_entry_points.inc with its versioned
// fallbacks, and exposes them as callable entry points (a function pointer and its symbol).
// Nothing is linked at build time.
//
// Thread-safety: load() is not thread-safe; after it returns, the table is immutable and may be
// read from any thread. NVML itself is thread-safe; gpumon calls it from one reader thread per
// GPU (the sampler's), each noting the call it is inside in its CallSlot.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nvml/nvml_abi.h"

namespace gpumon::nvml {

/// Where a thread notes the NVML symbol it is inside while a call runs (nullptr between calls),
/// so another thread can name a call that has not returned. Written by its thread, read by any.
using CallSlot = std::atomic<const char*>;

/// The calling thread's slot (nullptr: its calls note nothing, the default).
inline constinit thread_local CallSlot* t_call_slot = nullptr;

/// One NVML entry point: its function (nullptr when missing) and the symbol that resolved.
/// Calling it notes the symbol in the thread's CallSlot for the call's duration (two relaxed
/// stores; one thread-local read without a slot).
template <typename F>
class EntryPoint;
template <typename R, typename... A>
class EntryPoint<R(A...)> {
 public:
  using Pointer = R (*)(A...);
  EntryPoint() = default;
  EntryPoint(Pointer fn, const char* symbol) : fn_(fn), symbol_(symbol) {}

  R operator()(A... args) const {
    CallSlot* slot = t_call_slot;
    if (slot == nullptr) return fn_(args...);
    slot->store(symbol_, std::memory_order_relaxed);
    const struct Clear {
      CallSlot* slot;
      ~Clear() { slot->store(nullptr, std::memory_order_relaxed); }
    } clear{slot};
    return fn_(args...);
  }
  const char* symbol() const { return symbol_; }
  /// The function itself, called without noting it (a test passing what the types forbid).
  Pointer pointer() const { return fn_; }
  friend bool operator==(const EntryPoint& e, std::nullptr_t) { return e.fn_ == nullptr; }

 private:
  Pointer fn_ = nullptr;
  const char* symbol_ = nullptr;  // a literal of nvml_entry_points.inc
};

/// NVML entry points. A missing optional entry point compares equal to nullptr.
struct NvmlFunctions {
#define GPUMON_NVML_REQUIRED(member, ret, params, ...) EntryPoint<ret params> member;
#define GPUMON_NVML_OPTIONAL(member, ret, params, ...) EntryPoint<ret params> member;
#include "nvml/nvml_entry_points.inc"
#undef GPUMON_NVML_REQUIRED
#undef GPUMON_NVML_OPTIONAL
};

/// Which struct nvmlDeviceGetComputeRunningProcesses* writes, decided from the resolved symbol
/// and the driver generation (drivers 535-549 export _v3 with an extra 8-byte member; 550 and
/// later export _v3 but fill the 24-byte v2 layout).
enum class ProcessInfoLayout { kNone, kV1, kV2, kV3 };

/// One resolved (or missing) entry point, for diagnostics (`gpumon --debug-nvml`).
struct ResolvedSymbol {
  std::string member;
  std::string symbol;  ///< the name that resolved; empty when none did
  bool required = false;
};

/// Why loading failed, in words a user can act on.
struct LoadError {
  enum class Kind { kLibraryNotFound, kMissingRequiredSymbol };
  Kind kind;
  std::string message;
};

class NvmlLibrary {
 public:
  /// Environment variable naming the library to load instead of libnvidia-ml.so.1.
  static constexpr std::string_view kLibraryEnv = "GPUMON_NVML_LIBRARY";
  static constexpr std::string_view kDefaultLibrary = "libnvidia-ml.so.1";

  /// Loads NVML (does not call nvmlInit). `path` empty: GPUMON_NVML_LIBRARY, else the default.
  /// On failure returns nullptr and fills `error`.
  static std::unique_ptr<NvmlLibrary> load(std::string path, LoadError* error);

  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const NvmlFunctions& fn() const { return fn_; }
  const std::string& path() const { return path_; }
  const std::vector<ResolvedSymbol>& symbols() const { return symbols_; }
  ProcessInfoLayout process_info_layout() const { return process_layout_; }

  /// The scenario name when this is gpumon's fake NVML (it exports gpumonFakeScenarioName);
  /// empty for a real driver. Every output labels simulated GPUs with it.
  const std::string& simulated_scenario() const { return simulated_scenario_; }

  /// nvmlErrorString when available, otherwise gpumon's own name for the code.
  std::string error_string(nvmlReturn_t rc) const;

 private:
  NvmlLibrary() = default;
  void* handle_ = nullptr;
  std::string path_;
  NvmlFunctions fn_;
  std::vector<ResolvedSymbol> symbols_;
  ProcessInfoLayout process_layout_ = ProcessInfoLayout::kNone;
  std::string simulated_scenario_;
};

/// NVML_ERROR_* name of a return code ("GPU_IS_LOST"), for logs and tests.
std::string_view return_code_name(nvmlReturn_t rc);

/// Whether `rc` says the GPU is lost: it fell off the bus (GPU_IS_LOST) or must be reset before
/// it answers again (RESET_REQUIRED). The one test of a lost GPU for every NVML call, opening
/// one included: any other failure (no permission, UNKNOWN, a driver error) is that failure.
constexpr bool is_gpu_lost(nvmlReturn_t rc) {
  return rc == NVML_ERROR_GPU_IS_LOST || rc == NVML_ERROR_RESET_REQUIRED;
}

}  // namespace gpumon::nvml
