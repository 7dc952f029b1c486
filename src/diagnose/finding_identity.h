// SPDX-License-Identifier: MIT
// The identity of a live finding from one evaluation to the next, defined once for the live
// diagnoser (compare_findings, live/live_diagnoser.h) and the Python package's on_finding
// (python/src, over the compact findings the agent pushes): a finding is the same one when it
// has the same id and shares a GPU, a rank or a pid with it (or neither has any). A second GPU
// joining a throttled finding changes its subjects; it neither clears nor appears.
//
// Header-only over any type with `id`, `gpus`, `ranks` and `pids`, so the Python module
// compiles it in without the diagnosis library.
//
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace gpumon::diagnose {

namespace detail {
template <typename A, typename B>
bool overlap(const A& a, const B& b) {
  for (const auto& x : a)
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  return false;
}

template <typename F>
bool no_subjects(const F& f) {
  return f.gpus.empty() && f.ranks.empty() && f.pids.empty();
}
}  // namespace detail

template <typename F>
bool same_finding(const F& a, const F& b) {
  if (a.id != b.id) return false;
  if (detail::no_subjects(a) || detail::no_subjects(b))
    return detail::no_subjects(a) && detail::no_subjects(b);
  return detail::overlap(a.gpus, b.gpus) || detail::overlap(a.ranks, b.ranks) ||
         detail::overlap(a.pids, b.pids);
}

/// Indices of what changed from `before` to `after`: `appeared` and `changed` (still there, on
/// other GPUs / ranks / pids) index `after`, `cleared` indexes `before`; each in list order.
struct FindingMatch {
  std::vector<std::size_t> appeared, cleared, changed;
};

template <typename F>
FindingMatch match_findings(const std::vector<F>& before, const std::vector<F>& after) {
  FindingMatch m;
  std::vector<bool> matched(before.size(), false);
  for (std::size_t j = 0; j < after.size(); ++j) {
    const F& now = after[j];
    bool found = false;
    for (std::size_t i = 0; i < before.size(); ++i) {
      const F& then = before[i];
      if (!same_finding(then, now)) continue;
      if (!found && (then.gpus != now.gpus || then.ranks != now.ranks || then.pids != now.pids))
        m.changed.push_back(j);
      found = true;
      matched[i] = true;
    }
    if (!found) m.appeared.push_back(j);
  }
  for (std::size_t i = 0; i < before.size(); ++i)
    if (!matched[i]) m.cleared.push_back(i);
  return m;
}

}  // namespace gpumon::diagnose
