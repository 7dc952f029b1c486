// SPDX-License-Identifier: MIT
// libFuzzer target: what a client or a command line controls before the handler runs, the
// Authorization header (base64, the user:password split, bcrypt, the cache), the request guard
// and listen addresses. Only the one right password may ever authenticate.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "http/basic_auth.h"
#include "http/listen_address.h"
#include "http/request_guard.h"

namespace {

// bcrypt of "pw" at cost 4 (the cheapest), so the fuzzer stays fast.
const char kHash[] = "$2b$04$KBCwKxOzLha2MUDgW0PjXeHeA6RFjwuQook1qJZxSCCFGf7mJ9Nk.";

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the name libFuzzer calls
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static gpumon::BasicAuth auth({{"alice", kHash}}, 4);

  const auto user = auth.check(text);
  if (user && *user != "alice") std::abort();
  if (user) {
    // Only the right password opens: the decoded credentials must be exactly alice:pw.
    const auto space = text.find(' ');
    auto encoded = text.substr(space + 1);
    while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
    while (!encoded.empty() && encoded.back() == ' ') encoded.remove_suffix(1);
    if (gpumon::detail::base64_decode(encoded) != std::optional<std::string>("alice:pw")) {
      std::abort();
    }
  }

  gpumon::GuardInput in;
  in.method = text.substr(0, size / 2);
  in.path = text.substr(size / 2);
  in.uri_bytes = in.path.size();
  in.has_range = size % 2;
  const auto refusal = gpumon::guard_request(in, 16);
  if (!refusal && (in.method != "GET" && in.method != "HEAD")) std::abort();

  gpumon::ListenAddress address;
  (void)gpumon::parse_listen_address(std::string(text), address);
  return 0;
}
