// SPDX-License-Identifier: MIT
#include "query/app_fields.h"

namespace gpumon::query {
namespace {

using S = AppRowSource;
using Style = CsvStyle;

std::vector<AppField> make_app_fields() {
  // clang-format off
  std::vector<AppField> t = {
    {{"timestamp", {}, "", "", Style::kTimestamp,
      "When the process list was read: local time YYYY/MM/DD HH:MM:SS.mmm (JSON: ISO 8601)."},
     {}, [](const S& s) { return Cell(Scalar(s.time)); }},
    {{"gpu_name", {}, "", "", Style::kPlain, "Product name of the GPU the process runs on."},
     {}, [](const S& s) { return to_cell(s.device.name); }},
    {{"gpu_bus_id", {}, "", "", Style::kPlain, "PCI address of that GPU (domain:bus:device.function)."},
     {}, [](const S& s) { return to_cell(s.device.pci_bus_id); }},
    {{"gpu_serial", {}, "", "", Style::kPlain, "Board serial number of that GPU."},
     {}, [](const S& s) { return to_cell(s.device.serial); }},
    {{"gpu_uuid", {}, "", "", Style::kPlain, "Unique id (GPU-...) of that GPU."},
     {}, [](const S& s) { return to_cell(s.device.uuid); }},
    {{"gpu_index", {}, "", "", Style::kPlain, "NVML index of that GPU.", false, true},
     {}, [](const S& s) { return Cell(Scalar(std::uint64_t{s.process.gpu_index})); }},
    {{"pid", {}, "", "", Style::kPlain,
      "Process id, in the host's PID namespace (inside a container it may differ)."},
     {}, [](const S& s) { return Cell(Scalar(std::uint64_t{s.process.pid})); }},
    {{"process_name", {"name"}, "", "", Style::kPlain,
      "Name of the process's executable as the driver reports it."},
     {}, [](const S& s) { return to_cell(s.process.name); }},
    {{"used_gpu_memory", {"used_memory"}, "MiB", "bytes", Style::kMib,
      "Device memory this process holds (CSV: MiB rounded up; JSON: bytes)."},
     {}, [](const S& s) { return to_cell(s.process.used_memory_bytes); }},
  };
  // clang-format on
  return t;
}

}  // namespace

const std::vector<AppField>& app_fields() {
  static const std::vector<AppField> kFields = make_app_fields();
  return kFields;
}

}  // namespace gpumon::query
