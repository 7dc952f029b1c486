// SPDX-License-Identifier: MIT
// libFuzzer target: every /proc parser and the text cleaner over arbitrary bytes. The cleaner's
// output must always be valid UTF-8 without control characters, which clean_text() of its own
// output checks (cleaning clean text changes nothing).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "host/proc_parse.h"
#include "host/text_clean.h"

// NOLINTNEXTLINE(readability-identifier-naming): the name libFuzzer calls
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)gpumon::host::parse_stat(text);
  (void)gpumon::host::parse_status(text);
  (void)gpumon::host::parse_uptime_seconds(text);
  (void)gpumon::host::parse_boot_time(text);
  (void)gpumon::host::proc_hides_other_users(text);
  const std::string clean = gpumon::host::command_line_from_proc(text, 64);
  if (clean.size() > 64 + 3) std::abort();
  const std::string once = gpumon::host::clean_text(text);
  if (gpumon::host::clean_text(once) != once) std::abort();
  return 0;
}
