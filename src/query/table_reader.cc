// SPDX-License-Identifier: MIT
#include "query/table_reader.h"

#include <string>

namespace gpumon::query {

GpuTableReader::GpuTableReader(GpuBackend& backend, std::vector<unsigned> devices,
                               std::vector<const GpuField*> fields)
    : backend_(backend),
      devices_(std::move(devices)),
      fields_(std::move(fields)),
      groups_(needed_groups(fields_)) {}

SampleTable GpuTableReader::read() {
  SampleTable table;
  table.time = std::chrono::system_clock::now();
  table.rows.reserve(devices_.size());
  for (unsigned index : devices_) {
    const DeviceSample sample = backend_.sample(index, groups_);
    const GpuRowSource source{backend_.system(), backend_.device(index), sample,
                              backend_.device_count()};
    std::vector<Cell> row;
    row.reserve(fields_.size());
    for (const GpuField* f : fields_) row.push_back(f->extract(source));
    table.rows.push_back(std::move(row));
  }
  return table;
}

AppTableReader::AppTableReader(GpuBackend& backend, std::vector<unsigned> devices,
                               std::vector<const AppField*> fields, std::ostream& notes)
    : backend_(backend), devices_(std::move(devices)), fields_(std::move(fields)), notes_(notes) {}

SampleTable AppTableReader::read() {
  SampleTable table;
  table.time = std::chrono::system_clock::now();
  for (unsigned index : devices_) {
    const Reading<std::vector<GpuProcess>> processes = backend_.processes(index);
    const WallTime read_at = std::chrono::system_clock::now();
    if (!processes.has_value()) {
      if (noted_.insert(index).second) {
        const std::string line = "gpumon: GPU " + std::to_string(index) +
                                 ": cannot list compute processes (" +
                                 std::string(to_string(processes.why())) + ")\n";
        notes_.write(line.data(), static_cast<std::streamsize>(line.size()));
      }
      continue;
    }
    noted_.erase(index);
    for (const GpuProcess& process : *processes) {
      const AppRowSource source{backend_.device(index), process, read_at};
      std::vector<Cell> row;
      row.reserve(fields_.size());
      for (const AppField* f : fields_) row.push_back(f->extract(source));
      table.rows.push_back(std::move(row));
    }
  }
  return table;
}

}  // namespace gpumon::query
