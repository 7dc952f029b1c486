// SPDX-License-Identifier: MIT
#include "report/text_escape.h"

#include <charconv>
#include <cmath>
#include <cstdint>

#include "util/json_text.h"

namespace gpumon::report {

// The UTF-8 scan and the JSON string escaper are shared with the C++ client's messages.
using util::for_each_utf8_char;
using util::kReplacementChar;

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for_each_utf8_char(s, [&](std::string_view c) { out += c; });
  return out;
}

void append_json_string(std::string& out, std::string_view s) {
  util::append_json_string(out, s, util::JsonEscape::kHtmlSafe);
}

void append_html_text(std::string& out, std::string_view s) {
  for_each_utf8_char(s, [&](std::string_view c) {
    if (c.size() != 1) {
      out += c;
      return;
    }
    const auto ch = static_cast<unsigned char>(c[0]);
    switch (ch) {
      case '&': out += "&amp;"; return;
      case '<': out += "&lt;"; return;
      case '>': out += "&gt;"; return;
      case '"': out += "&quot;"; return;
      case '\'': out += "&#39;"; return;
      case '\t':
      case '\n': out += c; return;
      default: out += (ch < 0x20 || ch == 0x7F) ? kReplacementChar : c;
    }
  });
}

std::string html_text(std::string_view s) {
  std::string out;
  append_html_text(out, s);
  return out;
}

void append_json_number(std::string& out, double v, int decimals) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (r.ec != std::errc()) {  // beyond what fixed notation fits in 64 characters
    out += "null";
    return;
  }
  std::string_view text(buf, static_cast<std::size_t>(r.ptr - buf));
  if (text.find('.') != std::string_view::npos) {
    while (text.back() == '0') text.remove_suffix(1);
    if (text.back() == '.') text.remove_suffix(1);
  }
  if (text == "-0") text = "0";
  out += text;
}

}  // namespace gpumon::report
