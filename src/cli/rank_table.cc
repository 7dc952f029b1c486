// SPDX-License-Identifier: MIT
#include "cli/rank_table.h"

#include <fmt/format.h>

#include "cli/format_units.h"

namespace gpumon::cli {
namespace {

// Column ends: GPU, Rank, PID, Step, Allocated, Reserved, then "updated".
constexpr std::size_t kRankEnd = 9, kPidEnd = 18, kStepEnd = 28, kAllocEnd = 40, kResEnd = 51,
                      kAge = 53;

void right_at(StyledLine& line, std::size_t end, const std::string& text, Tone tone) {
  const std::size_t w = display_width(text);
  if (!line.empty()) line.add(" ");
  line.pad_to(end > w ? end - w : 0);
  line.add(text, tone);
}

std::string bytes_or_dash(const std::optional<std::int64_t>& b) {
  return b && *b >= 0 ? short_bytes(static_cast<std::uint64_t>(*b)) : "-";
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
  out.emplace_back("PyTorch memory (ranks attached to gpumon)", Tone::kBold);
  StyledLine head;
  head.add("GPU", Tone::kBold);
  right_at(head, kRankEnd, "Rank", Tone::kBold);
  right_at(head, kPidEnd, "PID", Tone::kBold);
  right_at(head, kStepEnd, "Step", Tone::kBold);
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
