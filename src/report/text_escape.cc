// SPDX-License-Identifier: MIT
#include "report/text_escape.h"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace gpumon::report {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not one.
std::size_t sequence_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto cont = [&](std::size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // beyond U+10FFFF
    return 4;
  }
  return 0;
}

// Calls emit(sequence) for each character of `s`, U+FFFD for each invalid byte.
template <typename F>
void for_each_char(std::string_view s, F&& emit) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = sequence_length(s, i);
    if (n == 0) {
      emit(kReplacement);
      ++i;
    } else {
      emit(s.substr(i, n));
      i += n;
    }
  }
}

void append_u_escape(std::string& out, unsigned code) {
  constexpr char kHex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(code >> shift) & 0xF];
}

}  // namespace

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for_each_char(s, [&](std::string_view c) { out += c; });
  return out;
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for_each_char(s, [&](std::string_view c) {
    if (c.size() == 1) {
      const auto ch = static_cast<unsigned char>(c[0]);
      switch (ch) {
        case '"': out += "\\\""; return;
        case '\\': out += "\\\\"; return;
        case '\n': out += "\\n"; return;
        case '\t': out += "\\t"; return;
        case '<':
        case '>':
        case '&': append_u_escape(out, ch); return;
        default:
          if (ch < 0x20 || ch == 0x7F) {
            append_u_escape(out, ch);
          } else {
            out += c;
          }
          return;
      }
    }
    if (c == "\xE2\x80\xA8") {
      out += "\\u2028";
    } else if (c == "\xE2\x80\xA9") {
      out += "\\u2029";
    } else {
      out += c;
    }
  });
  out += '"';
}

void append_html_text(std::string& out, std::string_view s) {
  for_each_char(s, [&](std::string_view c) {
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
      default: out += (ch < 0x20 || ch == 0x7F) ? kReplacement : c;
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
