// SPDX-License-Identifier: MIT
#include "fake_nvml/runtime.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>

#include "fake_nvml/scenario_parser.h"

namespace gpumon::fake {
namespace {

nvmlDevice_st g_handles[kMaxDevices];  // NOLINT: fixed storage that handles point into

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// The shipped scenarios sit beside this library (the build copies testdata/scenarios to
// <build>/fake-nvml/scenarios), so a bare name finds this build's scenarios even after the
// checkout moves; a path compiled in would find another checkout's.
std::string shipped_scenario_dir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&shipped_scenario_dir), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  return (std::filesystem::path(info.dli_fname).parent_path() / "scenarios").string();
}

ResolvedPath resolve_from_env(const std::string& name_or_path) {
  return resolve_scenario_path(name_or_path, env("GPUMON_SCENARIO_DIR"), shipped_scenario_dir());
}

// A float from the environment: empty gives `fallback`; garbage or out of range is an error.
std::string env_number(const char* name, double lo, double hi, double fallback, double* out) {
  const std::string text = env(name);
  *out = fallback;
  if (text.empty()) return "";
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) {
    return std::string(name) + "=\"" + text + "\": must be a number between " + std::to_string(lo) +
           " and " + std::to_string(hi);
  }
  *out = v;
  return "";
}

std::string scenario_env() {
  const std::string v = env("GPUMON_FAKE_SCENARIO");
  return v.empty() ? "demo" : v;
}

}  // namespace

void Latency::apply() const {
  if (us <= 0) return;
  const auto duration = std::chrono::duration<double, std::micro>(us);
  if (sleep) {
    std::this_thread::sleep_for(duration);
    return;
  }
  const auto until = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < until) {
  }
}

nvmlReturn_t copy_string(const std::string& text, char* buf, unsigned int length) {
  if (buf == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (text.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buf, text.c_str(), text.size() + 1);
  return NVML_SUCCESS;
}

Runtime& Runtime::get() {
  static Runtime* runtime = [] {
    for (unsigned i = 0; i < kMaxDevices; ++i) g_handles[i].index = i;
    return new Runtime();  // never destroyed: exports may run during the host's exit
  }();
  return *runtime;
}

std::uint64_t Runtime::count_of(const char* symbol) const {
  if (symbol == nullptr) return 0;
  const int index = symbol_index(symbol);
  return index < 0 ? 0 : counts_[static_cast<std::size_t>(index)].load();
}

void Runtime::reset_counts() {
  for (auto& c : counts_) c.store(0);
}

void Runtime::report(const std::string& message) {
  if (message == last_report_) return;
  last_report_ = message;
  std::fprintf(stderr, "gpumon fake NVML: %s\n", message.c_str());
}

std::string Runtime::load(Latency* latency) {
  const auto where = resolve_from_env(scenario_env());
  if (!where.error.empty()) return where.error;
  ParseResult parsed = load_scenario_file(where.path);
  if (!parsed.scenario) return parsed.error;
  double offset = 0, scale = 1;
  if (auto e = env_number("GPUMON_FAKE_TIME_OFFSET_S", 0, kMaxTimeS, 0, &offset); !e.empty())
    return e;
  // 0: scenario time stands at the offset until a test moves it (gpumonFakeSetTime).
  if (auto e = env_number("GPUMON_FAKE_TIME_SCALE", 0, 1e6, 1, &scale); !e.empty()) return e;
  if (scale != 0 && scale < 1e-3) {
    return "GPUMON_FAKE_TIME_SCALE=\"" + env("GPUMON_FAKE_TIME_SCALE") +
           "\": must be 0 (time stands still) or a number between 0.001 and 1000000";
  }

  scenario_ = std::make_shared<const Scenario>(std::move(*parsed.scenario));
  devices_.clear();
  devices_.resize(scenario_->devices.size());
  for (unsigned i = 0; i < devices_.size(); ++i) {
    devices_[i].spec = &scenario_->devices[i];
    devices_[i].index = i;
    devices_[i].rule_hits.assign(scenario_->devices[i].errors.size(), 0);
  }
  offset_s_ = offset;
  scale_ = scale == 0 ? 1 : scale;  // held time maps to wall time one to one
  held_s_ = scale == 0 ? std::optional<double>(offset) : std::nullopt;
  delivered_events_.clear();
  start_ = std::chrono::steady_clock::now();
  start_wall_ = std::chrono::system_clock::now();
  latency->us = scenario_->init_latency_us;
  return "";
}

nvmlReturn_t Runtime::init(Latency* latency) {
  if (init_count_ > 0) {
    ++init_count_;
    return NVML_SUCCESS;
  }
  if (const std::string error = load(latency); !error.empty()) {
    report(error);
    return NVML_ERROR_UNKNOWN;
  }
  if (scenario_->init_error != 0) return static_cast<nvmlReturn_t>(scenario_->init_error);
  init_count_ = 1;
  return NVML_SUCCESS;
}

nvmlReturn_t Runtime::shutdown() {
  if (init_count_ == 0) return NVML_ERROR_UNINITIALIZED;
  --init_count_;
  return NVML_SUCCESS;
}

double Runtime::now_s() const {
  if (held_s_) return *held_s_;
  const std::chrono::duration<double> since = std::chrono::steady_clock::now() - start_;
  return offset_s_ + since.count() * scale_;
}

void Runtime::hold_time(double t_s) {
  held_s_ = t_s;
  time_moved_.notify_all();
}

unsigned long long Runtime::wall_us(double t_s) const {
  const auto start_us =
      std::chrono::duration_cast<std::chrono::microseconds>(start_wall_.time_since_epoch()).count();
  const double us = static_cast<double>(start_us) + (t_s - offset_s_) / scale_ * 1e6;
  return us <= 0 ? 0 : static_cast<unsigned long long>(std::llround(us));
}

DeviceState* Runtime::device(nvmlDevice_t handle) {
  const auto p = reinterpret_cast<std::uintptr_t>(handle);
  const auto first = reinterpret_cast<std::uintptr_t>(&g_handles[0]);
  if (p < first || (p - first) % sizeof(nvmlDevice_st) != 0) return nullptr;
  return device(static_cast<unsigned>((p - first) / sizeof(nvmlDevice_st)));
}

DeviceState* Runtime::device(unsigned index) {
  return index < devices_.size() ? &devices_[index] : nullptr;
}

nvmlDevice_t Runtime::handle(unsigned index) {
  return &g_handles[index];
}

nvmlReturn_t Runtime::gate(DeviceState& d, int symbol, double t, Latency* latency) {
  const std::string_view name = kSymbolNames[symbol];
  auto pick = [&](const std::vector<LatencyRule>& rules) {
    for (const LatencyRule& r : rules) {
      if (t >= r.from_s && t < r.until_s && call_matches(r.call, name)) {
        *latency = {r.us, r.sleep};
        return true;
      }
    }
    return false;
  };
  if (!pick(d.spec->latencies) && !pick(scenario_->latencies) &&
      call_matches("nvmlDeviceGetPcieThroughput", name)) {
    *latency = {kPcieThroughputLatencyUs, true};  // the driver's ~20 ms counting window
  }
  if (d.spec->lost_at(t)) return NVML_ERROR_GPU_IS_LOST;
  return d.rule_error(std::nullopt, symbol, t);
}

Latency Runtime::system_latency(int symbol, double t) const {
  for (const LatencyRule& r : scenario_->latencies) {
    if (t >= r.from_s && t < r.until_s && call_matches(r.call, kSymbolNames[symbol])) {
      return {r.us, r.sleep};
    }
  }
  return {};
}

const char* Runtime::scenario_name() {
  std::string name;
  if (initialized()) {
    name = scenario_->name;
  } else {
    // Before nvmlInit (the loader asks right after dlopen): read the scenario for its name.
    const auto where = resolve_from_env(scenario_env());
    const ParseResult parsed = where.error.empty() ? load_scenario_file(where.path) : ParseResult{};
    name = parsed.scenario ? parsed.scenario->name
                           : std::filesystem::path(scenario_env()).stem().string();
  }
  const std::size_t n = std::min(name.size(), name_.size() - 1);
  std::memcpy(name_.data(), name.data(), n);
  name_[n] = '\0';
  return name_.data();
}

nvmlEventSet_t Runtime::new_event_set() {
  auto set = std::make_unique<nvmlEventSet_st>();
  nvmlEventSet_t raw = set.get();
  event_sets_.emplace(raw, std::move(set));
  return raw;
}

void Runtime::free_event_set(nvmlEventSet_t set) {
  event_sets_.erase(set);
}

nvmlGpmSample_t Runtime::new_gpm_sample() {
  auto sample = std::make_unique<nvmlGpmSample_st>();
  nvmlGpmSample_t raw = sample.get();
  gpm_samples_.emplace(raw, std::move(sample));
  return raw;
}

}  // namespace gpumon::fake
