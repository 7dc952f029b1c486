// SPDX-License-Identifier: MIT
#include "exporter/exposition.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace gpumon::exporter {
namespace {

bool name_char(char c, bool first, bool colon) {
  const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  if (alpha || (colon && c == ':')) return true;
  return !first && c >= '0' && c <= '9';
}

bool valid_name(std::string_view name, bool colon) {
  if (name.empty() || name.starts_with("__")) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!name_char(name[i], i == 0, colon)) return false;
  }
  return true;
}

}  // namespace

std::string_view to_string(MetricType type) {
  switch (type) {
    case MetricType::kGauge: return "gauge";
    case MetricType::kCounter: return "counter";
    case MetricType::kSummary: return "summary";
    case MetricType::kHistogram: return "histogram";
    case MetricType::kUntyped: return "untyped";
  }
  return "untyped";
}

bool valid_metric_name(std::string_view name) {
  return valid_name(name, true);
}

bool valid_label_name(std::string_view name) {
  return valid_name(name, false);
}

void append_label_value(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
}

void append_help_text(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
}

void append_number(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    // 32 bytes always hold the shortest form of a double (at most 24 characters).
    if (ec != std::errc()) throw std::logic_error("append_number: buffer too small");
    out.append(buf, end);
  }
}

void ExpositionWriter::family(std::string_view name, std::string_view help, MetricType type) {
  if (!valid_metric_name(name)) {
    throw std::invalid_argument("invalid metric name: " + std::string(name));
  }
  if (!started_.emplace(name).second) {
    throw std::logic_error("metric family started twice: " + std::string(name));
  }
  name_ = name;
  help_ = help;
  type_ = type;
  open_ = true;
  header_done_ = false;
}

void ExpositionWriter::sample(std::span<const Label> labels, double value) {
  sample_suffixed("", labels, value);
}

void ExpositionWriter::sample_suffixed(std::string_view suffix, std::span<const Label> labels,
                                       double value) {
  if (!open_) throw std::logic_error("ExpositionWriter::sample before family()");
  for (const Label& l : labels) {
    if (!valid_label_name(l.name)) {
      throw std::invalid_argument("invalid label name: " + std::string(l.name));
    }
  }
  if (!header_done_) {
    out_ += "# HELP ";
    out_ += name_;
    out_ += ' ';
    append_help_text(out_, help_);
    out_ += "\n# TYPE ";
    out_ += name_;
    out_ += ' ';
    out_ += to_string(type_);
    out_ += '\n';
    header_done_ = true;
    ++written_;
  }
  out_ += name_;
  out_ += suffix;
  if (!labels.empty()) {
    out_ += '{';
    bool first = true;
    for (const Label& l : labels) {
      if (!first) out_ += ',';
      first = false;
      out_ += l.name;
      out_ += "=\"";
      append_label_value(out_, l.value);
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  append_number(out_, value);
  out_ += '\n';
}

}  // namespace gpumon::exporter
