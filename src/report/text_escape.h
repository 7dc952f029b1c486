// SPDX-License-Identifier: MIT
// Escaping for the report page: text from a recording (process and GPU names, host names,
// commands) may hold anything, including `</script>` and invalid UTF-8. Every function here
// replaces invalid UTF-8 with U+FFFD and produces text that cannot end the element it is
// written into.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace gpumon::report {

/// `s` with every invalid UTF-8 sequence (overlong, surrogate, beyond U+10FFFF, truncated)
/// replaced by U+FFFD.
std::string valid_utf8(std::string_view s);

/// Appends `s` as a JSON string (quoted) that is also safe inside an HTML
/// `<script type="application/json">`: `<`, `>`, `&`, U+2028 and U+2029 are \u escapes.
void append_json_string(std::string& out, std::string_view s);

/// Appends `s` as HTML text or attribute value: & < > " ' are character references; control
/// characters other than tab and newline become U+FFFD.
void append_html_text(std::string& out, std::string_view s);
std::string html_text(std::string_view s);

/// Appends `v` with at most `decimals` decimals (trailing zeros dropped, '.' whatever the
/// locale, never an exponent), or `null` when it is NaN or infinite.
void append_json_number(std::string& out, double v, int decimals);

}  // namespace gpumon::report
