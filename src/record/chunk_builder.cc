// SPDX-License-Identifier: MIT
#include "record/chunk_builder.h"

#include "gpu/metric_catalog.h"
#include "record/quantize.h"

namespace gpumon::record {

ChunkBuilder::ChunkBuilder() {
  for (const auto& m : metric_catalog()) {
    ChunkColumn c;
    c.metric = static_cast<std::uint16_t>(m.id);
    data_.columns.push_back(std::move(c));
  }
}

void ChunkBuilder::append(std::int64_t time_ms, const DeviceSample& s) {
  data_.time_ms.push_back(time_ms);
  for (auto& c : data_.columns) {
    const auto& info = metric_info(static_cast<MetricId>(c.metric));
    std::optional<std::int64_t> q;
    if (auto v = metric_value(s, info.id)) q = quantize(*v, info.quantum);
    c.present.push_back(q.has_value() ? 1 : 0);
    c.values.push_back(q.value_or(0));
  }
}

void ChunkBuilder::clear() {
  data_.time_ms.clear();
  for (auto& c : data_.columns) {
    c.present.clear();
    c.values.clear();
  }
}

}  // namespace gpumon::record
