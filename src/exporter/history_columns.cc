// SPDX-License-Identifier: MIT
#include "exporter/history_columns.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>

#include "exporter/renderers.h"
#include "gpu/throttle.h"

namespace gpumon::exporter {
namespace {

template <typename T>
void write_number(fmt::memory_buffer& out, T v) {
  if (std::isfinite(v)) {
    fmt::format_to(std::back_inserter(out), "{}", v);
  } else {
    out.append(std::string_view("null"));
  }
}

template <typename T>
void write_array(fmt::memory_buffer& out, const std::vector<T>& values) {
  out.push_back('[');
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(',');
    write_number(out, values[i]);
  }
  out.push_back(']');
}

// `"time":[...],"values":{` of one series: unix seconds to the millisecond.
void write_times(fmt::memory_buffer& out, const std::vector<double>& time) {
  out.append(std::string_view("\"time\":["));
  for (std::size_t i = 0; i < time.size(); ++i) {
    if (i > 0) out.push_back(',');
    fmt::format_to(std::back_inserter(out), "{:.3f}", time[i]);
  }
  out.append(std::string_view("],\"values\":{"));
}

// Names are the catalog's, kThrottledColumn and TrainingHistory's: plain ASCII identifiers, no
// escaping needed.
void write_name(fmt::memory_buffer& out, std::string_view name) {
  out.push_back('"');
  out.append(name);
  out.push_back('"');
}

template <typename T>
std::string write(const HistoryColumns<T>& c) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "{{\"interval_s\":{},\"stride\":{},\"metrics\":[",
                 c.interval_s, c.stride);
  for (std::size_t m = 0; m < c.metrics.size(); ++m) {
    if (m > 0) out.push_back(',');
    write_name(out, metric_info(c.metrics[m]).name);
  }
  if (c.throttled) {
    if (!c.metrics.empty()) out.push_back(',');
    write_name(out, kThrottledColumn);
  }
  out.append(std::string_view("],\"gpus\":["));
  for (std::size_t g = 0; g < c.gpus.size(); ++g) {
    const HistoryGpuColumns<T>& gpu = c.gpus[g];
    if (g > 0) out.push_back(',');
    fmt::format_to(std::back_inserter(out), "{{\"gpu\":{},", gpu.gpu);
    write_times(out, gpu.time);
    for (std::size_t m = 0; m < c.metrics.size(); ++m) {
      if (m > 0) out.push_back(',');
      write_name(out, metric_info(c.metrics[m]).name);
      out.push_back(':');
      write_array(out, gpu.values[m]);
    }
    if (c.throttled) {
      if (!c.metrics.empty()) out.push_back(',');
      write_name(out, kThrottledColumn);
      out.append(std::string_view(":["));
      for (std::size_t i = 0; i < gpu.throttled.size(); ++i) {
        if (i > 0) out.push_back(',');
        out.append(gpu.throttled[i] < 0   ? std::string_view("null")
                   : gpu.throttled[i] > 0 ? std::string_view("1")
                                          : std::string_view("0"));
      }
      out.push_back(']');
    }
    out.append(std::string_view("}}"));
  }
  out.append(std::string_view("]}"));
  return fmt::to_string(out);
}

}  // namespace

std::string write_history_json(const TrainingHistoryColumns& c) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "{{\"interval_s\":{},\"stride\":{},\"metrics\":[",
                 c.interval_s, c.stride);
  for (std::size_t m = 0; m < c.metrics.size(); ++m) {
    if (m > 0) out.push_back(',');
    write_name(out, c.metrics[m]);
  }
  out.append(std::string_view("],\"ranks\":["));
  for (std::size_t r = 0; r < c.ranks.size(); ++r) {
    const HistoryRankColumns& rank = c.ranks[r];
    if (r > 0) out.push_back(',');
    fmt::format_to(std::back_inserter(out), "{{\"pid\":{},\"rank\":", rank.pid);
    if (rank.rank)
      fmt::format_to(std::back_inserter(out), "{}", *rank.rank);
    else
      out.append(std::string_view("null"));
    out.push_back(',');
    write_times(out, rank.time);
    for (std::size_t m = 0; m < c.metrics.size(); ++m) {
      if (m > 0) out.push_back(',');
      write_name(out, c.metrics[m]);
      out.push_back(':');
      write_array(out, rank.values[m]);
    }
    out.append(std::string_view("}}"));
  }
  out.append(std::string_view("]}"));
  return fmt::to_string(out);
}

std::string write_history_json(const HistoryColumns<double>& columns) {
  return write(columns);
}

std::string write_history_json(const HistoryColumns<float>& columns) {
  return write(columns);
}

std::int8_t throttled_flag(const std::optional<double>& reasons,
                           const std::optional<double>& sm_clock_mhz,
                           const std::optional<double>& max_sm_clock_mhz) {
  if (!reasons) return -1;
  return throttle_causes(static_cast<std::uint64_t>(*reasons), sm_clock_mhz, max_sm_clock_mhz).any()
             ? 1
             : 0;
}

std::size_t history_stride(std::size_t values, std::size_t max_values) {
  if (max_values == 0) return 1;
  return std::max<std::size_t>(1, (values + max_values - 1) / max_values);
}

}  // namespace gpumon::exporter
