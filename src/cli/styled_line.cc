// SPDX-License-Identifier: MIT
#include "cli/styled_line.h"

#include <cstdint>

namespace gpumon::cli {
namespace {

struct CodePoint {
  std::uint32_t value = 0;
  std::size_t bytes = 1;
};

// Decodes the code point at s[i]; a malformed byte counts as one column-1 character.
CodePoint decode(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<std::uint8_t>(s[i]);
  std::size_t len = b0 < 0x80           ? 1
                    : (b0 >> 5) == 0x6  ? 2
                    : (b0 >> 4) == 0xE  ? 3
                    : (b0 >> 3) == 0x1E ? 4
                                        : 0;
  if (len == 0 || i + len > s.size()) return {b0, 1};
  std::uint32_t cp = len == 1   ? b0
                     : len == 2 ? (b0 & 0x1FU)
                     : len == 3 ? (b0 & 0x0FU)
                                : (b0 & 0x07U);
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<std::uint8_t>(s[i + k]);
    if ((b & 0xC0U) != 0x80U) return {b0, 1};
    cp = (cp << 6) | (b & 0x3FU);
  }
  return {cp, len};
}

std::size_t columns_of(std::uint32_t cp) {
  if ((cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x200B && cp <= 0x200F) ||
      (cp >= 0xFE00 && cp <= 0xFE0F)) {
    return 0;  // combining marks, zero-width spaces, variation selectors
  }
  const bool wide = (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
                    (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
                    (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
                    (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
                    (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD);
  return wide ? 2 : 1;
}

std::string_view sgr(Tone tone, RenderStyle style) {
  if (style.color) {
    switch (tone) {
      case Tone::kPlain: return "";
      case Tone::kDim: return "\x1b[2m";
      case Tone::kBold: return "\x1b[1m";
      case Tone::kGood: return "\x1b[32m";
      case Tone::kWarn: return "\x1b[33m";
      case Tone::kBad: return "\x1b[1;31m";
      case Tone::kBanner: return "\x1b[1;7;33m";
    }
  }
  if (style.attributes) {
    switch (tone) {
      case Tone::kDim: return "\x1b[2m";
      case Tone::kBold:
      case Tone::kBad: return "\x1b[1m";
      case Tone::kBanner: return "\x1b[1;7m";
      default: return "";
    }
  }
  return "";
}

constexpr std::string_view kReset = "\x1b[0m";
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";

}  // namespace

std::size_t display_width(std::string_view text) {
  std::size_t columns = 0;
  for (std::size_t i = 0; i < text.size();) {
    const CodePoint cp = decode(text, i);
    columns += columns_of(cp.value);
    i += cp.bytes;
  }
  return columns;
}

std::string_view fit_width(std::string_view text, std::size_t columns) {
  std::size_t used = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    const CodePoint cp = decode(text, i);
    const std::size_t w = columns_of(cp.value);
    if (used + w > columns) break;
    used += w;
    i += cp.bytes;
  }
  return text.substr(0, i);
}

StyledLine& StyledLine::add(std::string_view text, Tone tone) {
  if (text.empty()) return *this;
  if (!spans_.empty() && spans_.back().tone == tone) {
    spans_.back().text += text;
  } else {
    spans_.push_back(Span{std::string(text), tone});
  }
  return *this;
}

StyledLine& StyledLine::pad_to(std::size_t column) {
  const std::size_t w = width();
  if (w < column) add(std::string(column - w, ' '));
  return *this;
}

StyledLine& StyledLine::add_right(std::string_view text, std::size_t width, Tone tone) {
  const std::size_t w = display_width(text);
  if (w < width) add(std::string(width - w, ' '));
  return add(text, tone);
}

StyledLine StyledLine::with_tone(Tone tone) const {
  StyledLine out;
  for (const Span& s : spans_) out.spans_.push_back({s.text, tone});
  return out;
}

StyledLine& StyledLine::append(const StyledLine& other) {
  for (const Span& s : other.spans_) add(s.text, s.tone);
  return *this;
}

std::size_t StyledLine::width() const {
  std::size_t w = 0;
  for (const Span& s : spans_) w += display_width(s.text);
  return w;
}

std::string StyledLine::plain() const {
  std::string out;
  for (const Span& s : spans_) out += s.text;
  return out;
}

std::string StyledLine::render(RenderStyle style, std::size_t max_columns) const {
  const bool cut = max_columns > 0 && width() > max_columns;
  std::size_t budget = cut ? max_columns - 1 : 0;  // the last column holds "…"
  std::string out;
  for (const Span& s : spans_) {
    std::string_view text = s.text;
    if (cut) {
      text = fit_width(text, budget);
      budget -= display_width(text);
    }
    const std::string_view on = sgr(s.tone, style);
    if (!text.empty()) {
      out += on;
      out += text;
      if (!on.empty()) out += kReset;
    }
    if (cut && text.size() < s.text.size()) break;
  }
  if (cut) out += kEllipsis;
  return out;
}

}  // namespace gpumon::cli
