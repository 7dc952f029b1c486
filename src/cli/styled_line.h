// SPDX-License-Identifier: MIT
// StyledLine: one line of terminal output as spans of text with a tone. Formatters build
// lines without caring whether colour is on; render() cuts a line to the terminal width
// (counting display columns, not bytes) and adds escape codes only when asked.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpumon::cli {

/// What a span means; the renderer decides how it looks.
enum class Tone : unsigned char {
  kPlain,
  kDim,     ///< missing values, hints
  kBold,    ///< headings
  kGood,    ///< green
  kWarn,    ///< yellow: worth a look
  kBad,     ///< red: a problem (thermal slowdown, uncorrected ECC, GPU lost)
  kBanner,  ///< reverse video: the SIMULATED label, the live view's title bar
};

/// How tones become escape codes. `color`: SGR colours; `attributes`: bold, dim and reverse
/// video (the live view keeps them under NO_COLOR, which is about colour only).
struct RenderStyle {
  bool color = false;
  bool attributes = false;
};

/// Display columns of valid UTF-8 text: 2 for East Asian wide characters and emoji, 0 for
/// combining marks, 1 otherwise.
std::size_t display_width(std::string_view text);

/// The longest prefix of `text` that fits in `columns` display columns.
std::string_view fit_width(std::string_view text, std::size_t columns);

class StyledLine {
 public:
  StyledLine() = default;
  explicit StyledLine(std::string_view text, Tone tone = Tone::kPlain) { add(text, tone); }

  StyledLine& add(std::string_view text, Tone tone = Tone::kPlain);
  /// Appends spaces until the line is `column` columns wide (nothing if it is already).
  StyledLine& pad_to(std::size_t column);
  /// Appends `text` right-aligned in a field of `width` columns.
  StyledLine& add_right(std::string_view text, std::size_t width, Tone tone = Tone::kPlain);
  StyledLine& append(const StyledLine& other);
  /// The same text with every span in `tone` (the live view's selected row).
  StyledLine with_tone(Tone tone) const;

  std::size_t width() const;
  bool empty() const { return spans_.empty(); }

  /// The text, cut to `max_columns` (0: no limit) with "…" as its last column when cut, with
  /// escape codes per `style`.
  std::string render(RenderStyle style, std::size_t max_columns = 0) const;
  /// The text without escape codes or cutting.
  std::string plain() const;

 private:
  struct Span {
    std::string text;
    Tone tone;
  };
  std::vector<Span> spans_;
};

}  // namespace gpumon::cli
