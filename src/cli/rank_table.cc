// SPDX-License-Identifier: MIT
#include "cli/rank_table.h"

#include <fmt/format.h>

#include "cli/format_units.h"

namespace gpumon::cli {
namespace {

// Column ends: GPU, Rank, PID, Step, Step time, Data wait, Allocated, Reserved, then "updated".
constexpr std::size_t kRankEnd = 9, kPidEnd = 18, kStepEnd = 28, kStepTimeEnd = 39, kWaitEnd = 50,
                      kAllocEnd = 62, kResEnd = 73, kAge = 75;
// A rank waiting this share of its step for data is input-bound (the data_loader_stall
// diagnosis decides over many steps; this only colours the latest one).
constexpr double kWaitWarnShare = 0.1;

void right_at(StyledLine& line, std::size_t end, const std::string& text, Tone tone) {
  const std::size_t w = display_width(text);
  if (!line.empty()) line.add(" ");
  line.pad_to(end > w ? end - w : 0);
  line.add(text, tone);
}

std::string bytes_or_dash(const std::optional<std::int64_t>& b) {
  return b && *b >= 0 ? short_bytes(static_cast<std::uint64_t>(*b)) : "-";
}

std::string seconds_text(const std::optional<double>& s) {
  if (!s) return "-";
  return *s < 1 ? fmt::format("{:.1f} ms", *s * 1000) : fmt::format("{:.2f} s", *s);
}

std::string age_text(double s) {
  if (s < 60) return fmt::format("{:.1f} s ago", s);
  if (s < 3600) return fmt::format("{:.0f} min ago", s / 60);
  return fmt::format("{:.1f} h ago", s / 3600);
}

}  // namespace

std::vector<StyledLine> rank_table(const Snapshot& snap) {
  std::vector<StyledLine> out;
  if (snap.ranks.empty()) return out;
  out.emplace_back("Training ranks (attached to gpumon)", Tone::kBold);
  StyledLine head;
  head.add("GPU", Tone::kBold);
  right_at(head, kRankEnd, "Rank", Tone::kBold);
  right_at(head, kPidEnd, "PID", Tone::kBold);
  right_at(head, kStepEnd, "Step", Tone::kBold);
  right_at(head, kStepTimeEnd, "Step time", Tone::kBold);
  right_at(head, kWaitEnd, "Data wait", Tone::kBold);
  right_at(head, kAllocEnd, "Allocated", Tone::kBold);
  right_at(head, kResEnd, "Reserved", Tone::kBold);
  head.pad_to(kAge).add("Updated", Tone::kBold);
  out.push_back(std::move(head));
  for (const RankRow& r : snap.ranks) {
    StyledLine line;
    line.add_right(r.gpu ? fmt::format("{}", *r.gpu) : "-", 3);
    right_at(line, kRankEnd, r.rank ? fmt::format("{}", *r.rank) : "-", Tone::kPlain);
    right_at(line, kPidEnd, fmt::format("{}", r.pid), Tone::kPlain);
    right_at(line, kStepEnd, fmt::format("{}", r.step), Tone::kPlain);
    right_at(line, kStepTimeEnd, seconds_text(r.step_s), r.step_s ? Tone::kPlain : Tone::kDim);
    const bool waits =
        r.data_wait_s && r.step_s && *r.step_s > 0 && *r.data_wait_s >= kWaitWarnShare * *r.step_s;
    right_at(line, kWaitEnd, seconds_text(r.data_wait_s),
             !r.data_wait_s ? Tone::kDim
             : waits        ? Tone::kWarn
                            : Tone::kPlain);
    right_at(line, kAllocEnd, bytes_or_dash(r.allocated_bytes),
             r.allocated_bytes ? Tone::kPlain : Tone::kDim);
    right_at(line, kResEnd, bytes_or_dash(r.reserved_bytes),
             r.reserved_bytes ? Tone::kPlain : Tone::kDim);
    line.pad_to(kAge).add(age_text(r.age_s), r.age_s >= 10 ? Tone::kWarn : Tone::kDim);
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace gpumon::cli
