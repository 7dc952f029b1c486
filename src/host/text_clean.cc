// SPDX-License-Identifier: MIT
#include "host/text_clean.h"

#include <cstdint>

namespace gpumon::host {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence starting at s[i] (1-4), or 0 if it is invalid there.
std::size_t valid_sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(s[i + k]); };
  const std::uint8_t b0 = byte(0);
  if (b0 < 0x80) return 1;
  std::size_t len = 0;
  std::uint32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    cp = b0 & 0x1FU;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    cp = b0 & 0x0FU;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    cp = b0 & 0x07U;
  } else {
    return 0;  // continuation byte, C0/C1 overlong lead, or F5-FF
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(k) & 0xC0U) != 0x80U) return 0;
    cp = (cp << 6) | (byte(k) & 0x3FU);
  }
  if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
  if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
  return len;
}

bool is_c1_control(std::string_view s, std::size_t i, std::size_t len) {
  return len == 2 && static_cast<std::uint8_t>(s[i]) == 0xC2 &&
         static_cast<std::uint8_t>(s[i + 1]) < 0xA0;
}

}  // namespace

std::string clean_text(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  std::size_t i = 0;
  while (i < raw.size()) {
    const std::size_t len = valid_sequence_length(raw, i);
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (len == 1) {
      const char c = raw[i];
      if (c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
        out += ' ';
      } else if (static_cast<std::uint8_t>(c) < 0x20 || c == 0x7F) {
        out += kReplacement;
      } else {
        out += c;
      }
    } else if (is_c1_control(raw, i, len)) {
      out += kReplacement;
    } else {
      out.append(raw.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  // Step back over continuation bytes so the cut lands on the start of a code point.
  while (cut > 0 && (static_cast<std::uint8_t>(text[cut]) & 0xC0U) == 0x80U) --cut;
  return text.substr(0, cut);
}

std::string command_line_from_proc(std::string_view raw, std::size_t max_bytes) {
  while (!raw.empty() && raw.back() == '\0') raw.remove_suffix(1);
  std::string joined(raw);
  for (char& c : joined) {
    if (c == '\0') c = ' ';
  }
  std::string clean = clean_text(joined);
  if (clean.size() <= max_bytes) return clean;
  std::string out(utf8_prefix(clean, max_bytes));
  out += "\xE2\x80\xA6";  // "…"
  return out;
}

}  // namespace gpumon::host
