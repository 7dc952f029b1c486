// SPDX-License-Identifier: MIT
// JSON output: one document per sample,
//   {"timestamp": "<ISO 8601>", "simulated": "<scenario>" or null, "gpus": [ {row}, ... ]}
// where a row maps each requested field's canonical name to its value in base units, null when
// missing, plus "missing": {field: reason} when any is. See docs/query.md.
#include <string_view>

#include "query/sample_writer.h"
#include "query/value_format.h"

namespace gpumon::query {
namespace {

using Json = nlohmann::ordered_json;

class JsonWriter final : public SampleWriter {
 public:
  JsonWriter(WriterSetup setup, bool lines) : setup_(std::move(setup)), lines_(lines) {}

  void begin(std::ostream&) override {}

  void write(const SampleTable& sample, std::ostream& out) override {
    Json doc = Json::object();
    doc["timestamp"] = format_iso_timestamp(to_local_time(sample.time));
    doc["simulated"] = setup_.simulated_scenario.empty() ? nlohmann::json()
                                                         : nlohmann::json(setup_.simulated_scenario);
    Json rows = Json::array();
    for (const auto& row : sample.rows) rows.push_back(row_object(row));
    doc[setup_.rows_key] = std::move(rows);
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
      const std::string key(setup_.columns[i]->name);
      if (row[i].has_value()) {
        object[key] = json_value(*row[i]);
        missing.erase(key);  // a repeated field: the latest reading decides
      } else {
        object[key] = nullptr;
        missing[key] = std::string(missing_json_name(row[i].why()));
      }
    }
    if (!missing.empty()) object["missing"] = std::move(missing);
    return object;
  }

  WriterSetup setup_;
  bool lines_;
};

}  // namespace

std::unique_ptr<SampleWriter> make_json_writer(WriterSetup setup, bool lines) {
  return std::make_unique<JsonWriter>(std::move(setup), lines);
}

}  // namespace gpumon::query
