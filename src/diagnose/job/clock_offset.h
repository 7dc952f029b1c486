// SPDX-License-Identifier: MIT
// estimate_clock_offset: how far one node's wall clock is from another's, from the training
// steps of one synchronous job. Every rank of a data-parallel job ends step N within a few ms of
// the others (each waits in the step's collective for the slowest), so the median, over the step
// numbers both nodes saw, of (this node's end of step N - the reference node's) is the offset of
// the clocks. Each node's end of step N is the median over its ranks. The spread (median absolute
// deviation of those differences) says how well the ends line up: when it is a large part of the
// step period the ranks do not move in lock step, and no offset is trusted.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "training/training_types.h"

namespace gpumon::diagnose {

struct ClockOffset {
  double offset_s = 0;             ///< this node's clock minus the reference's; 0 when not applied
  std::optional<double> spread_s;  ///< median |difference - offset| over the common steps
  std::optional<double> period_s;  ///< the reference node's usual step period
  std::int64_t common_steps = 0;   ///< step numbers both nodes saw
  bool applied = false;            ///< the node's times were moved by -offset_s
  std::string why_not;             ///< when not applied: why (empty for the reference)
};

/// The offset of `node`'s clock from `reference`'s (both: every step of their ranks).
/// `min_steps` common step numbers are needed; a spread over `max_spread_share` of the step
/// period is not lock step.
ClockOffset estimate_clock_offset(const std::vector<training::Step>& node,
                                  const std::vector<training::Step>& reference, int min_steps,
                                  double max_spread_share = 0.25);

}  // namespace gpumon::diagnose
