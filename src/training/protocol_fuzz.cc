// SPDX-License-Identifier: MIT
// libFuzzer target over the agent's message parser (what every training process sends): any
// bytes give a message or an error, never a crash, and a parsed step keeps its invariants.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "training/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  auto parsed = gpumon::training::parse_message(line);
  if (auto* m = std::get_if<gpumon::training::Message>(&parsed)) {
    if (auto* s = std::get_if<gpumon::training::Step>(m)) {
      const auto& r = *s;
      if (r.step < 0 || !std::isfinite(r.t_start_s) || !std::isfinite(r.t_end_s) ||
          r.t_end_s < r.t_start_s || !(r.cpu_step_s >= 0) ||
          (r.data_wait_s && !(*r.data_wait_s >= 0)) || (r.gpu_step_s && !(*r.gpu_step_s >= 0)))
        std::abort();
    }
    if (auto* h = std::get_if<gpumon::training::Hello>(m); h && h->pid <= 0) std::abort();
    if (auto* a = std::get_if<gpumon::training::Action>(m);
        a && (a->action.empty() || a->action.size() > gpumon::training::kMaxActionName ||
              (a->step && *a->step < 0)))
      std::abort();
  }
  return 0;
}
