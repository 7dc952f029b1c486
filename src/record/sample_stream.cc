// SPDX-License-Identifier: MIT
#include "record/sample_stream.h"

#include "record/quantize.h"

namespace gpumon::record {

SampleStream::SampleStream(const RecordingReader& reader, std::optional<unsigned> gpu)
    : reader_(reader) {
  auto refs = reader.chunks(gpu);
  if (auto* e = std::get_if<std::string>(&refs)) {
    error_ = *e;
    return;
  }
  for (const auto& ref : std::get<std::vector<ChunkRef>>(refs)) {
    if (cursors_.empty() || cursors_.back().refs.back().gpu != ref.gpu) cursors_.emplace_back();
    cursors_.back().refs.push_back(ref);
  }
}

bool SampleStream::fill(Cursor& c) {
  while (c.pos >= c.chunk.time_ms.size()) {
    if (c.next_ref >= c.refs.size()) return false;
    auto decoded = reader_.read_chunk(c.refs[c.next_ref++]);
    if (auto* e = std::get_if<std::string>(&decoded)) {
      error_ = *e;
      return false;
    }
    c.chunk = std::get<ChunkData>(std::move(decoded));
    c.pos = 0;
  }
  return true;
}

bool SampleStream::next(SampleRow& row) {
  if (!error_.empty()) return false;
  Cursor* best = nullptr;
  for (auto& c : cursors_) {
    if (!fill(c)) {
      if (!error_.empty()) return false;
      continue;
    }
    if (!best || c.chunk.time_ms[c.pos] < best->chunk.time_ms[best->pos]) best = &c;
  }
  if (!best) return false;
  const auto& metrics = reader_.metrics();
  row.gpu = best->refs.front().gpu;
  row.time_ms = best->chunk.time_ms[best->pos];
  row.values.assign(kMetricCount, std::nullopt);
  for (const auto& col : best->chunk.columns) {
    if (col.metric >= kMetricCount || col.metric >= metrics.size() || !metrics[col.metric])
      continue;  // a metric from a newer gpumon: not in this catalog
    if (col.present[best->pos])
      row.values[col.metric] = dequantize(col.values[best->pos], metrics[col.metric]->quantum);
  }
  ++best->pos;
  return true;
}

ReadResult<std::vector<bool>> metrics_present(const RecordingReader& reader,
                                              std::optional<unsigned> gpu) {
  std::vector<bool> present(kMetricCount, false);
  auto refs = reader.chunks(gpu);
  if (auto* e = std::get_if<std::string>(&refs)) return *e;
  for (const auto& ref : std::get<std::vector<ChunkRef>>(refs)) {
    auto decoded = reader.read_chunk(ref);
    if (auto* e = std::get_if<std::string>(&decoded)) return *e;
    for (const auto& col : std::get<ChunkData>(decoded).columns)
      if (col.metric < kMetricCount) present[col.metric] = true;
  }
  return present;
}

}  // namespace gpumon::record
