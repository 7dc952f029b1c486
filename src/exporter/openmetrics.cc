// SPDX-License-Identifier: MIT
#include "exporter/openmetrics.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

namespace gpumon::exporter {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The q parameter of a media range's parameters; 1 when absent or unreadable.
double quality(std::string_view params) {
  while (!params.empty()) {
    const std::size_t semi = std::min(params.find(';'), params.size());
    const std::string_view p = trim(params.substr(0, semi));
    params.remove_prefix(std::min(semi + 1, params.size()));
    if (p.size() > 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
      const std::string value(p.substr(2));
      char* end = nullptr;
      const double q = std::strtod(value.c_str(), &end);
      if (end != value.c_str()) return q;
    }
  }
  return 1;
}

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
  while (!accept.empty()) {
    const std::size_t comma = std::min(accept.find(','), accept.size());
    const std::string_view item = accept.substr(0, comma);
    accept.remove_prefix(std::min(comma + 1, accept.size()));
    const std::size_t semi = std::min(item.find(';'), item.size());
    const std::string_view type = trim(item.substr(0, semi));
    const double q = quality(item.substr(std::min(semi + 1, item.size())));
    auto best = [q](std::optional<double>& slot) { slot = std::max(slot.value_or(0), q); };
    if (type == "application/openmetrics-text") best(om);
    if (type == "text/plain" || type == "text/*" || type == "*/*") best(text);
  }
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
