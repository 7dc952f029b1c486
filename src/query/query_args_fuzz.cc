// SPDX-License-Identifier: MIT
// libFuzzer target over everything in `gpumon query` that parses user input: the nvidia-smi argv
// rewriter and CLI11 option parsing, --format, the field lists, the interval and count values,
// and -i lists matched against a fixed set of GPUs. None may crash, hang or throw, and every
// error must come with an exit code and a message ending in a newline.
//
// Input: words separated by NUL bytes, used as the arguments after `gpumon query`.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "query/app_fields.h"
#include "query/argv_rewrite.h"
#include "query/device_select.h"
#include "query/gpu_fields.h"
#include "query/query_options.h"
#include "query/query_parse.h"

namespace {

using namespace gpumon;
using namespace gpumon::query;

void check_error(const QueryError& e) {
  if (e.message.empty() || e.message.back() != '\n') std::abort();
  if (e.exit_code != kExitUsage && e.exit_code != kExitNoDevice) std::abort();
}

template <typename T>
void check(const Expected<T>& r) {
  if (!r) check_error(r.error());
}

const std::vector<DeviceStatic>& devices() {
  static const std::vector<DeviceStatic> kDevices = [] {
    std::vector<DeviceStatic> d(3);
    const char* buses[] = {"00000000:18:00.0", "00000000:3B:00.0", "00000001:AF:1F.7"};
    for (unsigned i = 0; i < 3; ++i) {
      d[i].index = i;
      d[i].uuid = "GPU-5ca1ab1e-0000-4000-8000-00000000000" + std::to_string(i);
      d[i].serial = "165000000000" + std::to_string(i);
      d[i].pci_bus_id = std::string(buses[i]);
    }
    d[1].uuid = Reading<std::string>::missing(Missing::kGpuLost);
    return d;
  }();
  return kDevices;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= input.size(); ++i) {
    if (i == input.size() || input[i] == '\0') {
      args.emplace_back(input.substr(start, i - start));
      start = i + 1;
    }
  }

  // The whole command line, as run_query_command parses it.
  auto options = parse_query_options(args);
  check(options);
  if (options && options->action == QueryOptions::Action::kQuery) {
    if (options->target == QueryOptions::Target::kGpus) {
      check(resolve_fields(gpu_fields(), options->fields, "--query-gpu"));
    } else {
      check(resolve_fields(app_fields(), options->fields, "--query-compute-apps"));
    }
    if (options->ids) check(select_devices(*options->ids, devices()));
    if (options->interval &&
        (options->interval->count() <= 0 || *options->interval > kMaxInterval)) {
      std::abort();
    }
    if (options->count && *options->count == 0) std::abort();
  }
  const std::vector<std::string> rewritten = rewrite_nvidia_smi_args(args);
  if (rewritten.size() > 2 * args.size()) std::abort();  // a word becomes at most two

  // Each parser on its own, over every word.
  for (const std::string& word : args) {
    check(parse_format(word));
    check(parse_loop_seconds(word));
    check(parse_loop_ms(word));
    check(parse_count(word));
    check(resolve_fields(gpu_fields(), word, "--query-gpu"));
    check(select_devices(word, devices()));
    (void)parse_pci_bus_id(word);
    (void)quote_for_message(word);
  }
  return 0;
}
