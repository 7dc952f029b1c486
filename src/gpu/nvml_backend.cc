// SPDX-License-Identifier: MIT
#include "gpu/nvml_backend.h"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "gpu/metric_catalog.h"
#include "gpu/nvml_values.h"

namespace gpumon {
namespace {

using Clock = std::chrono::steady_clock;

// Copies a NUL-terminated string NVML wrote into a fixed buffer (never trusting the NUL).
std::string from_buffer(const char* buf, std::size_t size) {
  return std::string(buf, strnlen(buf, size));
}

// A string NVML writes into a buffer of `size` (at most 1024): `fill(buffer, size)` makes the
// call; `available` false (the entry point is missing) reads as not supported.
template <typename Fill>
Reading<std::string> read_buffer(bool available, unsigned size, Fill fill) {
  if (!available) return Reading<std::string>::missing(Missing::kNotSupported);
  std::array<char, 1024> buf{};
  const nvmlReturn_t rc = fill(buf.data(), size);
  if (rc != NVML_SUCCESS) return Reading<std::string>::missing(missing_from(rc));
  return from_buffer(buf.data(), size);
}

template <typename Fn>
Reading<std::string> read_string(Fn fn, nvmlDevice_t h, unsigned size) {
  return read_buffer(fn != nullptr, size, [&](char* buf, unsigned n) { return fn(h, buf, n); });
}

template <typename Fn>
Reading<std::string> read_system_string(Fn fn, unsigned size) {
  if (fn == nullptr) return Reading<std::string>::missing(Missing::kNotSupported);
  std::array<char, 256> buf{};
  const nvmlReturn_t rc = fn(buf.data(), size);
  if (rc != NVML_SUCCESS) return Reading<std::string>::missing(missing_from(rc));
  return from_buffer(buf.data(), size);
}

template <typename T, typename Fn, typename... Args>
Reading<T> read_value(Fn fn, Args... args) {
  if (fn == nullptr) return Reading<T>::missing(Missing::kNotSupported);
  T value{};
  const nvmlReturn_t rc = fn(args..., &value);
  if (rc != NVML_SUCCESS) return Reading<T>::missing(missing_from(rc));
  return value;
}

}  // namespace

Missing missing_from(nvmlReturn_t rc) {
  if (nvml::is_gpu_lost(rc)) return Missing::kGpuLost;
  switch (rc) {
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND: return Missing::kNotSupported;
    case NVML_ERROR_NO_PERMISSION: return Missing::kNoPermission;
    case NVML_ERROR_DEPRECATED: return Missing::kDeprecated;
    case NVML_ERROR_NOT_FOUND:
    case NVML_ERROR_NO_DATA:
    case NVML_ERROR_NOT_READY: return Missing::kNotAvailable;
    default: return Missing::kError;
  }
}

std::string init_failure_message(nvmlReturn_t rc, const std::string& nvml_text) {
  const std::string head = "NVML initialisation failed (" + nvml_text + "): ";
  switch (rc) {
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return head +
             "the NVIDIA kernel driver is not loaded. Check that this machine has an "
             "NVIDIA GPU and that `nvidia-smi` works (load the driver with `modprobe nvidia`).";
    case NVML_ERROR_NO_PERMISSION:
      return head +
             "no permission to open the GPU device files (/dev/nvidia*). Run as a user "
             "with access to them (often the `video` group).";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return head +
             "the NVIDIA driver was upgraded but the old kernel module is still loaded. "
             "Reboot, or reload the nvidia kernel modules.";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return head + "the driver's libraries are incomplete. Reinstall the NVIDIA driver.";
    case NVML_ERROR_INSUFFICIENT_POWER:
      return head + "a GPU's power cables are not connected properly.";
    default: return head + "check `nvidia-smi` and the kernel log (`dmesg | grep -i nvrm`).";
  }
}

std::unique_ptr<NvmlBackend> NvmlBackend::open(const NvmlOpenOptions& options,
                                               NvmlOpenError* error) {
  nvml::LoadError load_error;
  auto lib = nvml::NvmlLibrary::load(options.library_path, &load_error);
  if (!lib) {
    if (error != nullptr) {
      error->kind = load_error.kind == nvml::LoadError::Kind::kLibraryNotFound
                        ? NvmlOpenError::Kind::kNoDriver
                        : NvmlOpenError::Kind::kBadLibrary;
      error->message = load_error.message;
    }
    return nullptr;
  }

  const auto t0 = Clock::now();
  const nvmlReturn_t rc = lib->fn().init();
  const auto init_time = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
  if (rc != NVML_SUCCESS) {
    if (error != nullptr) {
      error->kind = rc == NVML_ERROR_DRIVER_NOT_LOADED ? NvmlOpenError::Kind::kNoDriver
                                                       : NvmlOpenError::Kind::kInitFailed;
      error->nvml_code = rc;
      error->message = init_failure_message(rc, lib->error_string(rc));
    }
    return nullptr;
  }

  std::unique_ptr<NvmlBackend> b(new NvmlBackend());
  b->options_ = options;
  b->init_duration_ = init_time;
  const auto& fn = lib->fn();
  b->system_.driver_version =
      read_system_string(fn.system_get_driver_version, nvml::kSystemDriverVersionBufferSize);
  b->system_.nvml_version =
      read_system_string(fn.system_get_nvml_version, nvml::kSystemNvmlVersionBufferSize);
  b->system_.cuda_driver_version = read_value<int>(fn.system_get_cuda_driver_version);
  b->system_.simulated_scenario = lib->simulated_scenario();
  b->system_.library_path = lib->path();

  unsigned count = 0;
  if (fn.device_get_count(&count) != NVML_SUCCESS) count = 0;
  b->lib_ = std::move(lib);
  b->devices_.resize(count);
  for (unsigned i = 0; i < count; ++i) {
    Device& d = b->devices_[i];
    d.info.index = i;
    const nvmlReturn_t hrc = b->lib_->fn().device_get_handle_by_index(i, &d.handle);
    if (hrc != NVML_SUCCESS) {
      // A GPU that cannot be opened is listed, not dropped: the user should see it.
      b->not_opened(d, hrc);
      d.last_lost_probe = b->now();
      continue;
    }
    b->read_static(d);
  }
  return b;
}

NvmlBackend::~NvmlBackend() {
  if (!lib_) return;
  for (Device& d : devices_) release_gpm(d);
  lib_->fn().shutdown();
}

void NvmlBackend::read_static(Device& d) {
  const auto& fn = lib_->fn();
  nvmlDevice_t h = d.handle;
  d.info.name = read_string(fn.device_get_name, h, nvml::kDeviceNameBufferSize);
  d.info.uuid = read_string(fn.device_get_uuid, h, nvml::kDeviceUuidBufferSize);
  d.info.serial = read_string(fn.device_get_serial, h, nvml::kDeviceSerialBufferSize);
  d.info.minor_number = read_value<unsigned>(fn.device_get_minor_number, h);
  if (fn.device_get_pci_info != nullptr) {
    nvmlPciInfo_t pci{};
    const nvmlReturn_t rc = fn.device_get_pci_info(h, &pci);
    if (rc == NVML_SUCCESS) {
      std::string bus = from_buffer(pci.busId, sizeof(pci.busId));
      if (bus.empty()) bus = from_buffer(pci.busIdLegacy, sizeof(pci.busIdLegacy));
      d.info.pci_bus_id = bus;
      d.info.pci_device_id = pci.pciDeviceId;
      d.info.pci_subsystem_id = pci.pciSubSystemId;
    } else {
      d.info.pci_bus_id = Reading<std::string>::missing(missing_from(rc));
      d.info.pci_device_id = Reading<std::uint32_t>::missing(missing_from(rc));
      d.info.pci_subsystem_id = Reading<std::uint32_t>::missing(missing_from(rc));
    }
  } else {
    d.info.pci_bus_id = Reading<std::string>::missing(Missing::kNotSupported);
    d.info.pci_device_id = d.info.pci_subsystem_id =
        Reading<std::uint32_t>::missing(Missing::kNotSupported);
  }
  DeviceSample mem = sample(d.info.index, MetricGroup::kMemory);
  d.info.memory_total_bytes = mem.memory_total_bytes;
}

// What nvidia-smi -q shows of the board and nothing else reads: brand, architecture, part
// numbers, firmware and InfoROM object versions, PCI class, virtualization and addressing.
void NvmlBackend::read_board_identity(Device& d) {
  const auto& fn = lib_->fn();
  nvmlDevice_t h = d.handle;
  d.info.brand = read_value<unsigned>(fn.device_get_brand, h);
  d.info.architecture = read_value<unsigned>(fn.device_get_architecture, h);
  d.info.board_id = read_value<unsigned>(fn.device_get_board_id, h);
  const auto multi = read_value<unsigned>(fn.device_get_multi_gpu_board, h);
  d.info.multi_gpu_board = multi ? Reading<bool>(*multi != 0) : Reading<bool>::missing(multi.why());
  d.info.board_part_number =
      read_string(fn.device_get_board_part_number, h, nvml::kDevicePartNumberBufferSize);
  d.info.gsp_firmware_version = read_buffer(
      fn.device_get_gsp_firmware_version != nullptr, nvml::kGspFirmwareVersionBufferSize,
      [&](char* buf, unsigned) { return fn.device_get_gsp_firmware_version(h, buf); });
  d.info.module_id = read_value<unsigned>(fn.device_get_module_id, h);
  d.info.virtualization_mode = read_value<unsigned>(fn.device_get_virtualization_mode, h);
  d.info.accounting_buffer_size = read_value<unsigned>(fn.device_get_accounting_buffer_size, h);
  const auto inforom = [&](unsigned object) {
    return read_buffer(
        fn.device_get_inforom_version != nullptr, nvml::kDeviceInforomVersionBufferSize,
        [&](char* buf, unsigned n) { return fn.device_get_inforom_version(h, object, buf, n); });
  };
  d.info.inforom_oem_version = inforom(nvml::kInforomOem);
  d.info.inforom_ecc_version = inforom(nvml::kInforomEcc);
  d.info.inforom_power_version = inforom(nvml::kInforomPower);
  nvmlReturn_t rc = NVML_ERROR_NOT_SUPPORTED;
  nvmlPciInfoExt_v1_t pci{};
  pci.version = nvml::kPciInfoExtV1;
  if (fn.device_get_pci_info_ext != nullptr) rc = fn.device_get_pci_info_ext(h, &pci);
  d.info.pci_base_class = rc == NVML_SUCCESS ? Reading<unsigned>(pci.baseClass)
                                             : Reading<unsigned>::missing(missing_from(rc));
  d.info.pci_sub_class = rc == NVML_SUCCESS ? Reading<unsigned>(pci.subClass)
                                            : Reading<unsigned>::missing(missing_from(rc));
  rc = NVML_ERROR_NOT_SUPPORTED;
  nvmlDeviceAddressingMode_t mode{};
  mode.version = nvml::kDeviceAddressingModeV1;
  if (fn.device_get_addressing_mode != nullptr) rc = fn.device_get_addressing_mode(h, &mode);
  d.info.addressing_mode = rc == NVML_SUCCESS ? Reading<unsigned>(mode.value)
                                              : Reading<unsigned>::missing(missing_from(rc));
}

// The static facts that cost milliseconds on an H200 (GetMaxClockInfo ~3 ms each, GetEccMode
// ~1.8 ms): read only when a caller needs them, so a one-shot query stays cheap. The VBIOS,
// InfoROM image, compute, MIG, display and accounting modes and the PCIe maxima come with them.
void NvmlBackend::read_static_details(Device& d) {
  const auto& fn = lib_->fn();
  nvmlDevice_t h = d.handle;
  d.details_loaded = true;
  d.info.max_sm_clock_mhz = read_value<unsigned>(fn.device_get_max_clock_info, h, NVML_CLOCK_SM);
  d.info.max_mem_clock_mhz = read_value<unsigned>(fn.device_get_max_clock_info, h, NVML_CLOCK_MEM);
  d.info.max_graphics_clock_mhz =
      read_value<unsigned>(fn.device_get_max_clock_info, h, NVML_CLOCK_GRAPHICS);
  if (auto pm = read_value<nvmlEnableState_t>(fn.device_get_persistence_mode, h)) {
    d.info.persistence_mode = *pm == NVML_FEATURE_ENABLED;
  } else {
    d.info.persistence_mode = Reading<bool>::missing(pm.why());
  }
  if (fn.device_get_ecc_mode != nullptr) {
    nvmlEnableState_t current{}, pending{};
    const nvmlReturn_t rc = fn.device_get_ecc_mode(h, &current, &pending);
    d.info.ecc_enabled = rc == NVML_SUCCESS ? Reading<bool>(current == NVML_FEATURE_ENABLED)
                                            : Reading<bool>::missing(missing_from(rc));
    d.info.ecc_pending = rc == NVML_SUCCESS ? Reading<bool>(pending == NVML_FEATURE_ENABLED)
                                            : Reading<bool>::missing(missing_from(rc));
  } else {
    d.info.ecc_enabled = d.info.ecc_pending = Reading<bool>::missing(Missing::kNotSupported);
  }
  d.info.vbios_version =
      read_string(fn.device_get_vbios_version, h, nvml::kDeviceVbiosVersionBufferSize);
  if (auto mode = read_value<nvmlComputeMode_t>(fn.device_get_compute_mode, h)) {
    d.info.compute_mode = static_cast<unsigned>(*mode);
  } else {
    d.info.compute_mode = Reading<unsigned>::missing(mode.why());
  }
  if (fn.device_get_mig_mode != nullptr) {
    unsigned current = 0, pending = 0;
    const nvmlReturn_t rc = fn.device_get_mig_mode(h, &current, &pending);
    d.info.mig_mode_current = rc == NVML_SUCCESS ? Reading<bool>(current == nvml::kDeviceMigEnable)
                                                 : Reading<bool>::missing(missing_from(rc));
    d.info.mig_mode_pending = rc == NVML_SUCCESS ? Reading<bool>(pending == nvml::kDeviceMigEnable)
                                                 : Reading<bool>::missing(missing_from(rc));
  } else {
    d.info.mig_mode_current = d.info.mig_mode_pending =
        Reading<bool>::missing(Missing::kNotSupported);
  }
  d.info.pcie_link_gen_max = read_value<unsigned>(fn.device_get_max_pcie_link_generation, h);
  d.info.pcie_link_gen_gpu_max =
      read_value<unsigned>(fn.device_get_gpu_max_pcie_link_generation, h);
  d.info.pcie_link_width_max = read_value<unsigned>(fn.device_get_max_pcie_link_width, h);
  d.info.inforom_image_version =
      read_string(fn.device_get_inforom_image_version, h, nvml::kDeviceInforomVersionBufferSize);
  read_board_identity(d);
  auto enabled = [&](auto fnptr) {
    const auto state = read_value<nvmlEnableState_t>(fnptr, h);
    return state ? Reading<bool>(*state == NVML_FEATURE_ENABLED)
                 : Reading<bool>::missing(state.why());
  };
  d.info.display_mode = enabled(fn.device_get_display_mode);
  const auto watts = [](const Reading<unsigned>& mw) {
    return mw ? Reading<double>(*mw / 1000.0) : Reading<double>::missing(mw.why());
  };
  d.info.power_default_limit_w =
      watts(read_value<unsigned>(fn.device_get_power_management_default_limit, h));
  if (fn.device_get_power_management_limit_constraints != nullptr) {
    unsigned min_mw = 0, max_mw = 0;
    const nvmlReturn_t rc = fn.device_get_power_management_limit_constraints(h, &min_mw, &max_mw);
    d.info.power_min_limit_w = rc == NVML_SUCCESS ? Reading<double>(min_mw / 1000.0)
                                                  : Reading<double>::missing(missing_from(rc));
    d.info.power_max_limit_w = rc == NVML_SUCCESS ? Reading<double>(max_mw / 1000.0)
                                                  : Reading<double>::missing(missing_from(rc));
  } else {
    d.info.power_min_limit_w = d.info.power_max_limit_w =
        Reading<double>::missing(Missing::kNotSupported);
  }
  d.info.applications_graphics_clock_mhz =
      read_value<unsigned>(fn.device_get_applications_clock, h, NVML_CLOCK_GRAPHICS);
  d.info.applications_mem_clock_mhz =
      read_value<unsigned>(fn.device_get_applications_clock, h, NVML_CLOCK_MEM);
  d.info.default_applications_graphics_clock_mhz =
      read_value<unsigned>(fn.device_get_default_applications_clock, h, NVML_CLOCK_GRAPHICS);
  d.info.default_applications_mem_clock_mhz =
      read_value<unsigned>(fn.device_get_default_applications_clock, h, NVML_CLOCK_MEM);
  d.info.display_active = enabled(fn.device_get_display_active);
  d.info.accounting_mode = enabled(fn.device_get_accounting_mode);
  read_tlimits(d);
}

Missing NvmlBackend::note_failure(Device& d, MetricGroup group, nvmlReturn_t rc) {
  const Missing why = missing_from(rc);
  if (why == Missing::kNotSupported) d.unsupported |= group;
  if (why == Missing::kGpuLost && !d.lost) {
    d.lost = true;
    d.last_lost_probe = now();  // the retry period starts when the loss is seen
  }
  return why;
}

void NvmlBackend::not_opened(Device& d, nvmlReturn_t rc) {
  const Missing why = missing_from(rc);
  d.handle = nullptr;
  d.lost = why == Missing::kGpuLost;
  d.unopened = d.lost ? std::nullopt : std::optional<Missing>(why);
  d.info.name = Reading<std::string>::missing(why);
  d.info.open_error = d.lost ? std::nullopt : std::optional<std::string>(lib_->error_string(rc));
}

// A lost or unopened GPU is re-opened by index at most once per lost_retry; true if it answers.
bool NvmlBackend::probe(Device& d) {
  const auto now = this->now();
  if (now - d.last_lost_probe < options_.lost_retry) return false;
  d.last_lost_probe = now;
  nvmlDevice_t h = nullptr;
  const nvmlReturn_t rc = lib_->fn().device_get_handle_by_index(d.info.index, &h);
  if (rc != NVML_SUCCESS) {
    if (d.handle == nullptr) not_opened(d, rc);  // one that had a handle stays lost
    return false;
  }
  if (lib_->fn().device_get_utilization_rates != nullptr) {
    nvmlUtilization_t u{};
    const nvmlReturn_t urc = lib_->fn().device_get_utilization_rates(h, &u);
    if (nvml::is_gpu_lost(urc)) {
      if (d.handle == nullptr) not_opened(d, urc);
      return false;
    }
  }
  const bool had_static = d.handle != nullptr;
  d.handle = h;
  d.lost = false;
  d.unopened.reset();
  d.info.open_error.reset();
  if (!had_static) read_static(d);
  return true;
}

std::optional<Missing> NvmlBackend::unavailable(Device& d) {
  if ((d.handle != nullptr && !d.lost) || probe(d)) return std::nullopt;
  return d.lost ? Missing::kGpuLost : d.unopened.value_or(Missing::kError);
}

DeviceSample NvmlBackend::sample(unsigned index, MetricSet what) {
  Device& d = devices_.at(index);
  DeviceSample s;
  s.index = index;
  s.wall_time = std::chrono::system_clock::now();
  s.mono_time = now();
  if (const auto why = unavailable(d)) {
    if (*why == Missing::kGpuLost) {
      mark_lost(s);
    } else {
      set_all_missing(s, *why);  // a GPU that could not be opened: why, on every metric
    }
    return s;
  }
  if (what.has(MetricGroup::kStaticDetails) && !d.details_loaded) read_static_details(d);
  const auto& fn = lib_->fn();
  nvmlDevice_t h = d.handle;

  // Runs one group unless it is unsupported; returns false when the GPU was found lost.
  auto want = [&](MetricGroup g) { return what.has(g) && !d.unsupported.has(g); };
  auto unsupported = [&](MetricGroup g) { return what.has(g) && d.unsupported.has(g); };
  constexpr auto kNs = Missing::kNotSupported;

  if (want(MetricGroup::kUtilization) && fn.device_get_utilization_rates != nullptr) {
    nvmlUtilization_t u{};
    const nvmlReturn_t rc = fn.device_get_utilization_rates(h, &u);
    if (rc == NVML_SUCCESS) {
      s.utilization_gpu_pct = u.gpu;
      s.utilization_memory_pct = u.memory;
    } else {
      const Missing why = note_failure(d, MetricGroup::kUtilization, rc);
      s.utilization_gpu_pct = s.utilization_memory_pct = Reading<unsigned>::missing(why);
    }
  } else if (unsupported(MetricGroup::kUtilization) || fn.device_get_utilization_rates == nullptr) {
    if (what.has(MetricGroup::kUtilization))
      s.utilization_gpu_pct = s.utilization_memory_pct = Reading<unsigned>::missing(kNs);
  }
  if (d.lost) {
    mark_lost(s);
    return s;
  }

  if (want(MetricGroup::kMemory)) {
    nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
    if (fn.device_get_memory_info_v2 != nullptr && !d.memory_v2_broken) {
      nvmlMemory_v2_t m{};
      m.version = nvml::kMemoryV2Version;
      rc = fn.device_get_memory_info_v2(h, &m);
      if (rc == NVML_SUCCESS) {
        s.memory_total_bytes = m.total;
        s.memory_reserved_bytes = m.reserved;
        s.memory_used_bytes = m.used;
        s.memory_free_bytes = m.free;
      } else if (rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH || rc == NVML_ERROR_NOT_SUPPORTED) {
        d.memory_v2_broken = true;
      }
    }
    if (rc != NVML_SUCCESS && fn.device_get_memory_info != nullptr && !nvml::is_gpu_lost(rc)) {
      nvmlMemory_t m{};
      rc = fn.device_get_memory_info(h, &m);
      if (rc == NVML_SUCCESS) {
        s.memory_total_bytes = m.total;
        s.memory_used_bytes = m.used;
        s.memory_free_bytes = m.free;
        s.memory_reserved_bytes = Reading<std::uint64_t>::missing(Missing::kNotSupported);
      }
    }
    if (rc != NVML_SUCCESS) {
      const Missing why = note_failure(d, MetricGroup::kMemory, rc);
      s.memory_total_bytes = s.memory_reserved_bytes = s.memory_used_bytes = s.memory_free_bytes =
          Reading<std::uint64_t>::missing(why);
    }
  } else if (unsupported(MetricGroup::kMemory)) {
    s.memory_total_bytes = s.memory_reserved_bytes = s.memory_used_bytes = s.memory_free_bytes =
        Reading<std::uint64_t>::missing(kNs);
  }
  if (d.lost) {
    mark_lost(s);
    return s;
  }

  // Single-value groups share one shape: call, convert, remember NOT_SUPPORTED.
  auto single = [&](MetricGroup g, auto fnptr, auto& out, auto raw_tag, auto convert,
                    auto... args) {
    using Out = std::decay_t<decltype(out)>;
    if (!what.has(g) || d.lost) return;
    if (d.unsupported.has(g) || fnptr == nullptr) {
      out = Out::missing(kNs);
      return;
    }
    typename decltype(raw_tag)::type raw{};
    const nvmlReturn_t rc = fnptr(h, args..., &raw);
    if (rc == NVML_SUCCESS) {
      out = convert(raw);
    } else {
      out = Out::missing(note_failure(d, g, rc));
    }
  };
  using UintTag = std::type_identity<unsigned>;
  using UllTag = std::type_identity<unsigned long long>;
  auto same = [](auto v) { return v; };
  auto milliwatts = [](unsigned mw) { return static_cast<double>(mw) / 1000.0; };

  single(MetricGroup::kTemperature, fn.device_get_temperature, s.temperature_gpu_c, UintTag{}, same,
         NVML_TEMPERATURE_GPU);
  single(MetricGroup::kPower, fn.device_get_power_usage, s.power_draw_w, UintTag{}, milliwatts);
  single(MetricGroup::kPowerLimit, fn.device_get_enforced_power_limit, s.power_limit_w, UintTag{},
         milliwatts);
  single(MetricGroup::kEnergy, fn.device_get_total_energy_consumption, s.energy_mj, UllTag{},
         [](unsigned long long v) { return static_cast<std::uint64_t>(v); });
  single(MetricGroup::kSmClock, fn.device_get_clock_info, s.sm_clock_mhz, UintTag{}, same,
         NVML_CLOCK_SM);
  single(MetricGroup::kMemClock, fn.device_get_clock_info, s.mem_clock_mhz, UintTag{}, same,
         NVML_CLOCK_MEM);
  single(MetricGroup::kGraphicsClock, fn.device_get_clock_info, s.graphics_clock_mhz, UintTag{},
         same, NVML_CLOCK_GRAPHICS);
  single(MetricGroup::kPstate, fn.device_get_performance_state, s.pstate,
         std::type_identity<nvmlPstates_t>{}, [](nvmlPstates_t p) {
           return p == NVML_PSTATE_UNKNOWN ? Reading<unsigned>::missing(Missing::kNotAvailable)
                                           : Reading<unsigned>(static_cast<unsigned>(p));
         });
  single(MetricGroup::kFan, fn.device_get_fan_speed, s.fan_speed_pct, UintTag{}, same);
  single(MetricGroup::kClockEvents, fn.device_get_current_clocks_event_reasons,
         s.clock_event_reasons, UllTag{},
         [](unsigned long long v) { return static_cast<std::uint64_t>(v); });
  auto counter = [](unsigned long long v) { return static_cast<std::uint64_t>(v); };
  single(MetricGroup::kEcc, fn.device_get_total_ecc_errors, s.ecc_corrected_volatile, UllTag{},
         counter, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC);
  single(MetricGroup::kEcc, fn.device_get_total_ecc_errors, s.ecc_uncorrected_volatile, UllTag{},
         counter, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC);
  single(MetricGroup::kPcieLinkGen, fn.device_get_curr_pcie_link_generation, s.pcie_link_gen,
         UintTag{}, same);
  single(MetricGroup::kPcieLinkWidth, fn.device_get_curr_pcie_link_width, s.pcie_link_width,
         UintTag{}, same);
  single(MetricGroup::kPcieReplay, fn.device_get_pcie_replay_counter, s.pcie_replay_count,
         UintTag{}, same);
  // Encoder and decoder answer a percentage and the sampling period it covers (not kept).
  auto codec = [&](MetricGroup g, auto fnptr, Reading<unsigned>& out) {
    if (!what.has(g) || d.lost) return;
    if (d.unsupported.has(g) || fnptr == nullptr) {
      out = Reading<unsigned>::missing(kNs);
      return;
    }
    unsigned pct = 0, period_us = 0;
    const nvmlReturn_t rc = fnptr(h, &pct, &period_us);
    out = rc == NVML_SUCCESS ? Reading<unsigned>(pct)
                             : Reading<unsigned>::missing(note_failure(d, g, rc));
  };
  codec(MetricGroup::kEncoderUtil, fn.device_get_encoder_utilization, s.utilization_encoder_pct);
  codec(MetricGroup::kDecoderUtil, fn.device_get_decoder_utilization, s.utilization_decoder_pct);
  codec(MetricGroup::kJpegUtil, fn.device_get_jpg_utilization, s.utilization_jpeg_pct);
  codec(MetricGroup::kOfaUtil, fn.device_get_ofa_utilization, s.utilization_ofa_pct);
  // Versioned struct: the version goes in, the margin comes out.
  if (what.has(MetricGroup::kTemperatureMargin) && !d.lost) {
    if (d.unsupported.has(MetricGroup::kTemperatureMargin) ||
        fn.device_get_margin_temperature == nullptr) {
      s.temperature_margin_c = Reading<int>::missing(kNs);
    } else {
      nvmlMarginTemperature_t m{};
      m.version = nvml::kMarginTemperatureV1Version;
      nvmlReturn_t rc = fn.device_get_margin_temperature(h, &m);
      // A driver with another version of the struct will not take ours on the next call either.
      if (rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH) rc = NVML_ERROR_NOT_SUPPORTED;
      s.temperature_margin_c =
          rc == NVML_SUCCESS
              ? Reading<int>(m.marginTemperature)
              : Reading<int>::missing(note_failure(d, MetricGroup::kTemperatureMargin, rc));
    }
  }
  if (what.has(MetricGroup::kBar1Memory) && !d.lost) {
    if (d.unsupported.has(MetricGroup::kBar1Memory) || fn.device_get_bar1_memory_info == nullptr) {
      s.bar1_total_bytes = s.bar1_used_bytes = Reading<std::uint64_t>::missing(kNs);
    } else {
      nvmlBAR1Memory_t b{};
      const nvmlReturn_t rc = fn.device_get_bar1_memory_info(h, &b);
      if (rc == NVML_SUCCESS) {
        s.bar1_total_bytes = b.bar1Total;
        s.bar1_used_bytes = b.bar1Used;
      } else {
        s.bar1_total_bytes = s.bar1_used_bytes =
            Reading<std::uint64_t>::missing(note_failure(d, MetricGroup::kBar1Memory, rc));
      }
    }
  }
  if (d.lost) {
    mark_lost(s);
    return s;
  }
  read_field_values(d, what, s);
  if (d.lost) mark_lost(s);
  return s;
}

namespace {

// What one batched nvmlDeviceGetFieldValues reads: each field's group, id, scope and metric,
// and the divisor from NVML's unit to the catalog's.
struct FieldRead {
  MetricGroup group;
  unsigned field_id;
  unsigned scope_id;
  MetricId metric;
  double per_catalog_unit;
};
constexpr std::array kFieldReads{
    FieldRead{MetricGroup::kMemoryTemperature, nvml::kFiDevMemoryTemp, 0,
              MetricId::kTemperatureMemoryC, 1},
    FieldRead{MetricGroup::kPowerInstant, nvml::kFiDevPowerInstant, 0, MetricId::kPowerDrawInstantW,
              1000},  // mW
    FieldRead{MetricGroup::kPowerAverage, nvml::kFiDevPowerAverage, 0, MetricId::kPowerDrawAverageW,
              1000},
    FieldRead{MetricGroup::kRemappedRows, nvml::kFiDevRemappedCor, 0,
              MetricId::kRemappedRowsCorrectable, 1},
    FieldRead{MetricGroup::kRemappedRows, nvml::kFiDevRemappedUnc, 0,
              MetricId::kRemappedRowsUncorrectable, 1},
    FieldRead{MetricGroup::kRemappedRows, nvml::kFiDevRemappedPending, 0,
              MetricId::kRemappedRowsPending, 1},
    FieldRead{MetricGroup::kRemappedRows, nvml::kFiDevRemappedFailure, 0,
              MetricId::kRemappedRowsFailure, 1},
    FieldRead{MetricGroup::kNvlinkThroughput, nvml::kFiDevNvlinkThroughputDataTx,
              nvml::kFiScopeAllLinks, MetricId::kNvlinkDataTxKib, 1},
    FieldRead{MetricGroup::kNvlinkThroughput, nvml::kFiDevNvlinkThroughputDataRx,
              nvml::kFiScopeAllLinks, MetricId::kNvlinkDataRxKib, 1},
    // Time counters in ns; the catalog's unit is s.
    FieldRead{MetricGroup::kPerfPolicyTime, nvml::kFiDevPerfPolicyPower, 0,
              MetricId::kClockEventSwPowerCapS, 1e9},
    FieldRead{MetricGroup::kPerfPolicyTime, nvml::kFiDevPerfPolicySyncBoost, 0,
              MetricId::kClockEventSyncBoostS, 1e9},
    FieldRead{MetricGroup::kSlowdownTime, nvml::kFiDevClocksEventReasonSwThermSlowdown, 0,
              MetricId::kClockEventSwThermalS, 1e9},
    FieldRead{MetricGroup::kSlowdownTime, nvml::kFiDevClocksEventReasonHwThermSlowdown, 0,
              MetricId::kClockEventHwThermalS, 1e9},
    FieldRead{MetricGroup::kSlowdownTime, nvml::kFiDevClocksEventReasonHwPowerBrakeSlowdown, 0,
              MetricId::kClockEventHwPowerBrakeS, 1e9},
};

}  // namespace

// Every kFieldReads group asked for comes from one batched nvmlDeviceGetFieldValues. Each field
// has its own status (field_status), so one unsupported field leaves the others, of its group
// too.
void NvmlBackend::read_field_values(Device& d, MetricSet what, DeviceSample& s) {
  static_assert(kFieldReads.size() <= 32, "Device::unsupported_fields has 32 bits");
  const auto fn = lib_->fn().device_get_field_values;
  std::array<nvmlFieldValue_t, kFieldReads.size()> values{};
  std::array<std::size_t, kFieldReads.size()> asked{};
  std::size_t n = 0;
  for (std::size_t k = 0; k < kFieldReads.size(); ++k) {
    const FieldRead& f = kFieldReads[k];
    if (!what.has(f.group)) continue;
    if (fn == nullptr || d.unsupported.has(f.group) || (d.unsupported_fields >> k & 1U) != 0) {
      set_metric_missing(s, f.metric, Missing::kNotSupported);
      continue;
    }
    asked[n] = k;
    values[n].fieldId = f.field_id;
    values[n].scopeId = f.scope_id;
    ++n;
  }
  if (n == 0) return;
  const nvmlReturn_t rc = fn(d.handle, static_cast<int>(n), values.data());
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = asked[i];
    const FieldRead& f = kFieldReads[k];
    const nvmlReturn_t r = field_status(rc, values[i]);
    if (r == NVML_SUCCESS) {
      set_metric_value(s, f.metric,
                       nvml_number(values[i].valueType, values[i].value) / f.per_catalog_unit);
      continue;
    }
    if (missing_from(r) != Missing::kNotSupported) {
      set_metric_missing(s, f.metric, note_failure(d, f.group, r));
      continue;
    }
    d.unsupported_fields |= 1U << k;
    bool whole_group = true;
    for (std::size_t j = 0; j < kFieldReads.size(); ++j) {
      if (kFieldReads[j].group == f.group && (d.unsupported_fields >> j & 1U) == 0)
        whole_group = false;
    }
    if (whole_group) d.unsupported |= f.group;
    set_metric_missing(s, f.metric, Missing::kNotSupported);
  }
}

// The four T.Limit thresholds in one field-value call; each field has its own status
// (field_status).
void NvmlBackend::read_tlimits(Device& d) {
  std::array<Reading<int>*, 4> out{&d.info.tlimit_shutdown_c, &d.info.tlimit_slowdown_c,
                                   &d.info.tlimit_mem_max_c, &d.info.tlimit_gpu_max_c};
  const auto fn = lib_->fn().device_get_field_values;
  if (fn == nullptr) {
    for (Reading<int>* r : out) *r = Reading<int>::missing(Missing::kNotSupported);
    return;
  }
  std::array<nvmlFieldValue_t, 4> v{};
  v[0].fieldId = nvml::kFiDevTemperatureShutdownTlimit;
  v[1].fieldId = nvml::kFiDevTemperatureSlowdownTlimit;
  v[2].fieldId = nvml::kFiDevTemperatureMemMaxTlimit;
  v[3].fieldId = nvml::kFiDevTemperatureGpuMaxTlimit;
  const nvmlReturn_t rc = fn(d.handle, static_cast<int>(v.size()), v.data());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const nvmlReturn_t r = field_status(rc, v[i]);
    *out[i] =
        r == NVML_SUCCESS
            ? Reading<int>(static_cast<int>(std::lround(nvml_number(v[i].valueType, v[i].value))))
            : Reading<int>::missing(missing_from(r));
  }
}

Reading<std::vector<GpuProcess>> NvmlBackend::processes(unsigned index) {
  using Result = Reading<std::vector<GpuProcess>>;
  Device& d = devices_.at(index);
  if (const auto why = unavailable(d)) return Result::missing(*why);
  const auto& fn = lib_->fn();
  const auto layout = lib_->process_info_layout();
  if (fn.device_get_compute_running_processes == nullptr ||
      layout == nvml::ProcessInfoLayout::kNone) {
    return Result::missing(Missing::kNotSupported);
  }
  const std::size_t stride = layout == nvml::ProcessInfoLayout::kV3 ? sizeof(nvmlProcessInfo_v3_t)
                             : layout == nvml::ProcessInfoLayout::kV2
                                 ? sizeof(nvmlProcessInfo_v2_t)
                                 : sizeof(nvmlProcessInfo_v1_t);
  // Processes come and go between the sizing call and the read: retry a bounded number of
  // times with headroom (2n + 5, as nvitop does).
  std::vector<unsigned char> buf;
  unsigned count = 0;
  nvmlReturn_t rc = fn.device_get_compute_running_processes(d.handle, &count, nullptr);
  for (int attempt = 0; attempt < 4 && rc == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    count = count * 2 + 5;
    buf.assign(static_cast<std::size_t>(count) * stride, 0);
    rc = fn.device_get_compute_running_processes(d.handle, &count, buf.data());
  }
  if (rc != NVML_SUCCESS) {
    if (nvml::is_gpu_lost(rc) && !d.lost) {
      d.lost = true;
      d.last_lost_probe = now();
    }
    return Result::missing(missing_from(rc));
  }
  std::vector<GpuProcess> out;
  out.reserve(count);
  for (unsigned i = 0; i < count && (static_cast<std::size_t>(i) + 1) * stride <= buf.size(); ++i) {
    const unsigned char* p = buf.data() + static_cast<std::size_t>(i) * stride;
    GpuProcess proc;
    proc.gpu_index = index;
    unsigned long long used = 0;
    std::memcpy(&proc.pid, p + offsetof(nvmlProcessInfo_v2_t, pid), sizeof(unsigned));
    std::memcpy(&used, p + offsetof(nvmlProcessInfo_v2_t, usedGpuMemory), sizeof(used));
    proc.used_memory_bytes = used == nvml::kValueNotAvailableUll
                                 ? Reading<std::uint64_t>::missing(Missing::kNotAvailable)
                                 : Reading<std::uint64_t>(used);
    if (layout != nvml::ProcessInfoLayout::kV1) {
      unsigned gi = 0, ci = 0;
      std::memcpy(&gi, p + offsetof(nvmlProcessInfo_v2_t, gpuInstanceId), sizeof(gi));
      std::memcpy(&ci, p + offsetof(nvmlProcessInfo_v2_t, computeInstanceId), sizeof(ci));
      if (gi != nvml::kNoMigInstance) proc.gpu_instance_id = gi;
      if (ci != nvml::kNoMigInstance) proc.compute_instance_id = ci;
    }
    if (fn.system_get_process_name != nullptr) {
      std::array<char, nvml::kProcessNameBufferSize> name{};
      const nvmlReturn_t nrc =
          fn.system_get_process_name(proc.pid, name.data(), static_cast<unsigned>(name.size()));
      proc.name = nrc == NVML_SUCCESS ? Reading<std::string>(from_buffer(name.data(), name.size()))
                                      : Reading<std::string>::missing(missing_from(nrc));
    } else {
      proc.name = Reading<std::string>::missing(Missing::kNotSupported);
    }
    out.push_back(std::move(proc));
  }
  return out;
}

}  // namespace gpumon
