// SPDX-License-Identifier: MIT
// JSON output, one document per sample, in two shapes (docs/query.md):
// - nvidia-smi's (json, jsonl): {"timestamp", "simulated", "gpu": [row, ...]} ("process_info"
//   for --query-compute-apps), each row nested by the dotted field names as `nvidia-smi -q`
//   nests them ({"temperature": {"gpu": 45}}, "product_name"), values in nvidia-smi's units;
// - gpumon's flat one (json-flat, jsonl-flat): {"timestamp", "simulated", "gpus": [row, ...]}
//   ("processes"), each row keyed by canonical field name, values in base units (bytes).
// Both: null for a missing value, plus "missing": {field name: reason} when any is.
#include <string_view>

#include "query/sample_writer.h"
#include "query/value_format.h"

namespace gpumon::query {
namespace {

using Json = nlohmann::ordered_json;

// The object at dotted `path` under `row` (created as needed), and the last part's key in it.
std::pair<Json*, std::string> place(Json& row, std::string_view path) {
  Json* node = &row;
  for (std::size_t dot; (dot = path.find('.')) != std::string_view::npos;
       path.remove_prefix(dot + 1)) {
    Json& child = (*node)[std::string(path.substr(0, dot))];
    if (!child.is_object()) child = Json::object();  // the registries keep paths apart
    node = &child;
  }
  return {node, std::string(path)};
}

class JsonWriter final : public SampleWriter {
 public:
  JsonWriter(WriterSetup setup, bool lines, bool flat)
      : setup_(std::move(setup)), lines_(lines), flat_(flat) {}

  void begin(std::ostream&) override {}

  void write(const SampleTable& sample, std::ostream& out) override {
    Json doc = Json::object();
    doc["timestamp"] = format_iso_timestamp(to_local_time(sample.time));
    doc["simulated"] = setup_.simulated_scenario.empty()
                           ? nlohmann::json()
                           : nlohmann::json(setup_.simulated_scenario);
    Json rows = Json::array();
    for (const auto& row : sample.rows) rows.push_back(row_object(row));
    const char* key =
        setup_.process_rows ? (flat_ ? "processes" : "process_info") : (flat_ ? "gpus" : "gpu");
    doc[key] = std::move(rows);
    // Names from the driver or /proc may hold invalid UTF-8: replace, never throw.
    std::string text = doc.dump(lines_ ? -1 : 2, ' ', false, Json::error_handler_t::replace);
    text += '\n';
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }

 private:
  Json row_object(const std::vector<Cell>& row) const {
    Json object = Json::object();
    Json missing = Json::object();
    for (std::size_t i = 0; i < row.size() && i < setup_.columns.size(); ++i) {
      const FieldInfo& field = *setup_.columns[i];
      const std::string name(field.name);
      auto [parent, key] =
          flat_ ? std::pair{&object, name} : place(object, nested_json_path(field));
      if (row[i].has_value()) {
        (*parent)[key] = flat_ ? json_value(*row[i]) : nvidia_smi_json_value(*row[i], field);
        missing.erase(name);  // a repeated field: the latest reading decides
      } else {
        (*parent)[key] = nullptr;
        missing[name] = std::string(missing_json_name(row[i].why()));
      }
    }
    if (!missing.empty()) object["missing"] = std::move(missing);
    return object;
  }

  WriterSetup setup_;
  bool lines_;
  bool flat_;
};

}  // namespace

std::unique_ptr<SampleWriter> make_json_writer(WriterSetup setup, bool lines, bool flat) {
  return std::make_unique<JsonWriter>(std::move(setup), lines, flat);
}

}  // namespace gpumon::query
