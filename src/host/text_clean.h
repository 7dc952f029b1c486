// SPDX-License-Identifier: MIT
// Makes bytes from /proc (and other untrusted sources: process names, user names) safe to
// print and to put in JSON: valid UTF-8, no terminal control characters.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpumon::host {

/// Returns `raw` as valid UTF-8: each invalid byte sequence (stray continuation bytes, overlong
/// forms, surrogates, code points past U+10FFFF, truncated sequences) becomes U+FFFD. Tab, CR,
/// LF, VT and FF become a space; every other control character (C0, DEL, C1) becomes U+FFFD, so
/// a process cannot move the cursor or change colours in gpumon's output.
std::string clean_text(std::string_view raw);

/// Turns the bytes of /proc/PID/cmdline (arguments separated and ended by NUL) into one line:
/// trailing NULs dropped, inner NULs become spaces, then clean_text(). The result is at most
/// `max_bytes` bytes plus "…" when it was longer (cut on a code point boundary).
std::string command_line_from_proc(std::string_view raw, std::size_t max_bytes);

/// Cuts valid UTF-8 `text` to at most `max_bytes` bytes without splitting a code point.
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

}  // namespace gpumon::host
