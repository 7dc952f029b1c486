// SPDX-License-Identifier: MIT
#include "query/field_help.h"

#include <fmt/format.h>

#include <vector>

#include "query/app_fields.h"
#include "query/gpu_fields.h"

namespace gpumon::query {
namespace {

// "memory.used [MiB] (JSON: bytes)" and "name, gpu_name".
std::string entry_title(const FieldInfo& f) {
  std::string title(f.name);
  for (std::string_view alias : f.aliases) title += fmt::format(", {}", alias);
  if (!f.csv_unit.empty() || !f.json_unit.empty()) {
    title += "  [";
    if (!f.csv_unit.empty()) title += fmt::format("CSV: {}", f.csv_unit);
    if (!f.csv_unit.empty() && !f.json_unit.empty()) title += "; ";
    if (!f.json_unit.empty()) title += fmt::format("JSON: {}", f.json_unit);
    title += ']';
  }
  if (f.extension) title += "  (gpumon only)";
  return title;
}

template <typename Spec>
std::string help_for(std::string_view option, std::string_view what,
                     const std::vector<Spec>& table) {
  std::string text = fmt::format(
      "Fields for gpumon query {}=FIELD[,FIELD...] ({}).\n"
      "Each entry: the field's name and other accepted names, the unit of its values in CSV and\n"
      "JSON, and what it is. A value that cannot be read prints [N/A], [Not Supported],\n"
      "[Insufficient Permissions], [GPU is lost] or [Unknown Error] (JSON: null plus a "
      "reason).\n\n",
      option, what);
  for (const Spec& spec : table) {
    text += entry_title(spec.info);
    text += "\n    ";
    text += spec.info.description;
    text += "\n";
  }
  return text;
}

}  // namespace

std::string gpu_fields_help() {
  return help_for("--query-gpu", "one row per GPU", gpu_fields());
}

std::string app_fields_help() {
  return help_for("--query-compute-apps", "one row per compute process", app_fields());
}

}  // namespace gpumon::query
