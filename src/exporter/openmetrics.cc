// SPDX-License-Identifier: MIT
#include "exporter/openmetrics.h"

#include <algorithm>
#include <optional>

#include "util/quality_list.h"

namespace gpumon::exporter {
namespace {

constexpr std::string_view kTotal = "_total";

// HELP text of the text format (`\\` and `\n` escaped) with `"` escaped too.
std::string help_text(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (char c : escaped) {
    if (c == '"') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

bool prefers_openmetrics(std::string_view accept) {
  std::optional<double> om, text;
  util::for_each_quality_item(accept, [&](std::string_view type, double q) {
    auto best = [q](std::optional<double>& slot) { slot = std::max(slot.value_or(0), q); };
    if (type == "application/openmetrics-text") best(om);
    if (type == "text/plain" || type == "text/*" || type == "*/*") best(text);
  });
  return om && *om > 0 && *om >= text.value_or(0);
}

std::string to_openmetrics(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 64);
  // The HELP line waits for its TYPE line: a counter's name in both depends on its samples.
  std::string_view pending_help_name, pending_help;
  bool help_pending = false;
  while (!text.empty()) {
    const std::size_t nl = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(std::min(nl + 1, text.size()));
    if (line.starts_with("# HELP ")) {
      const std::string_view rest = line.substr(7);
      const std::size_t space = std::min(rest.find(' '), rest.size());
      pending_help_name = rest.substr(0, space);
      pending_help = rest.substr(std::min(space + 1, rest.size()));
      help_pending = true;
      continue;
    }
    if (line.starts_with("# TYPE ")) {
      const std::string_view rest = line.substr(7);
      const std::size_t space = std::min(rest.find(' '), rest.size());
      std::string_view name = rest.substr(0, space);
      std::string_view type = rest.substr(std::min(space + 1, rest.size()));
      if (type == "untyped") type = "unknown";
      if (type == "counter") {
        if (name.ends_with(kTotal))
          name.remove_suffix(kTotal.size());
        else
          type = "unknown";  // its samples are not name_total, which a counter's must be
      }
      if (help_pending && pending_help_name == rest.substr(0, space)) {
        out += "# HELP ";
        out += name;
        out += ' ';
        out += help_text(pending_help);
        out += '\n';
      }
      help_pending = false;
      out += "# TYPE ";
      out += name;
      out += ' ';
      out += type;
      out += '\n';
      continue;
    }
    if (line.empty()) continue;  // OpenMetrics has no blank lines
    out += line;
    out += '\n';
  }
  out += "# EOF\n";
  return out;
}

}  // namespace gpumon::exporter
