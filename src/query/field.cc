// SPDX-License-Identifier: MIT
#include "query/field.h"

namespace gpumon::query {

std::string csv_header(const FieldInfo& field) {
  std::string header(field.name);
  if (!field.csv_unit.empty()) {
    header += " [";
    header += field.csv_unit;
    header += ']';
  }
  return header;
}

Cell to_cell(const Reading<unsigned>& reading) {
  return to_cell(reading, [](unsigned v) { return std::uint64_t{v}; });
}
Cell to_cell(const Reading<std::uint64_t>& reading) {
  return to_cell(reading, [](std::uint64_t v) { return v; });
}
Cell to_cell(const Reading<std::string>& reading) {
  return to_cell(reading, [](const std::string& v) { return v; });
}
Cell to_cell(const Reading<int>& reading) {
  return to_cell(reading, [](int v) { return std::int64_t{v}; });
}

Cell to_cell(const Reading<double>& reading) {
  return to_cell(reading, [](double v) { return v; });
}
Cell to_cell(const Reading<bool>& reading) {
  return to_cell(reading, [](bool v) { return v; });
}

}  // namespace gpumon::query
