// SPDX-License-Identifier: MIT
// Writing JSON by hand, cheaply (a training step's message, the report's data): strings with
// invalid UTF-8 replaced by U+FFFD and every control character escaped, and doubles as the
// shortest text that reads back to the same value ('.' whatever the locale).
//
// Thread-safety: pure functions.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpumon::util {

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD

/// Length of the valid UTF-8 sequence at s[i], or 0 when it is not one (overlong, surrogate,
/// beyond U+10FFFF, truncated).
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
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

/// Calls emit(sequence) for each character of `s`, U+FFFD for each invalid byte.
template <typename F>
void for_each_utf8_char(std::string_view s, F&& emit) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      emit(kReplacementChar);
      ++i;
    } else {
      emit(s.substr(i, n));
      i += n;
    }
  }
}

inline void append_u_escape(std::string& out, unsigned code) {
  constexpr char kHex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(code >> shift) & 0xF];
}

enum class JsonEscape {
  kPlain,     ///< '"', '\\' and control characters (U+0000-U+001F, U+007F)
  kHtmlSafe,  ///< also '<', '>', '&', U+2028, U+2029: safe inside <script type=...json>
};

/// Appends `s` as a quoted JSON string.
inline void append_json_string(std::string& out, std::string_view s,
                               JsonEscape mode = JsonEscape::kPlain) {
  const bool html = mode == JsonEscape::kHtmlSafe;
  out += '"';
  for_each_utf8_char(s, [&](std::string_view c) {
    if (c.size() == 1) {
      const auto ch = static_cast<unsigned char>(c[0]);
      if (ch == '"') {
        out += "\\\"";
      } else if (ch == '\\') {
        out += "\\\\";
      } else if (ch == '\n') {
        out += "\\n";
      } else if (ch == '\t') {
        out += "\\t";
      } else if (ch < 0x20 || ch == 0x7F || (html && (ch == '<' || ch == '>' || ch == '&'))) {
        append_u_escape(out, ch);
      } else {
        out += c;
      }
    } else if (html && c == "\xE2\x80\xA8") {
      out += "\\u2028";
    } else if (html && c == "\xE2\x80\xA9") {
      out += "\\u2029";
    } else {
      out += c;
    }
  });
  out += '"';
}

/// Appends `v` as the shortest text that reads back to the same double ("0.125", "1e-07"), or
/// `null` when it is NaN or infinite.
inline void append_json_double(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

inline void append_json_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

}  // namespace gpumon::util
