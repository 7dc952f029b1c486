// SPDX-License-Identifier: MIT
// Reads one SampleTable from a GpuBackend: a row per selected GPU (--query-gpu) or per compute
// process on the selected GPUs (--query-compute-apps). Only the MetricGroups that the requested
// fields need are read, so a query costs only the NVML calls its fields need.
//
// Thread-safety: as the backend, one thread at a time.
#pragma once

#include <ostream>
#include <set>
#include <vector>

#include "gpu/gpu_backend.h"
#include "query/app_fields.h"
#include "query/gpu_fields.h"
#include "query/sample_writer.h"

namespace gpumon::query {

/// Union of what `fields` need.
template <typename Spec>
MetricSet needed_groups(const std::vector<const Spec*>& fields) {
  MetricSet needs;
  for (const Spec* f : fields) needs |= f->needs;
  return needs;
}

class GpuTableReader {
 public:
  GpuTableReader(GpuBackend& backend, std::vector<unsigned> devices,
                 std::vector<const GpuField*> fields);
  /// Samples every selected GPU once. A lost GPU still gets its row: its static fields from
  /// what was read at start, its dynamic fields "[GPU is lost]".
  SampleTable read();
  MetricSet groups() const { return groups_; }

 private:
  GpuBackend& backend_;
  std::vector<unsigned> devices_;
  std::vector<const GpuField*> fields_;
  MetricSet groups_;
};

class AppTableReader {
 public:
  /// `notes` receives one "gpumon: ..." line per GPU whose process list cannot be read (the
  /// first time only, so a loop does not repeat it).
  AppTableReader(GpuBackend& backend, std::vector<unsigned> devices,
                 std::vector<const AppField*> fields, std::ostream& notes);
  SampleTable read();

 private:
  GpuBackend& backend_;
  std::vector<unsigned> devices_;
  std::vector<const AppField*> fields_;
  std::ostream& notes_;
  std::set<unsigned> noted_;
};

}  // namespace gpumon::query
