// SPDX-License-Identifier: MIT
#include "cli/format_units.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <locale>

#include "gpu/gpu_types.h"

namespace gpumon::cli {
namespace {

TEST(MissingToken, NeverANumber) {
  EXPECT_EQ(missing_token(Missing::kNotAvailable), "N/A");
  EXPECT_EQ(missing_token(Missing::kNotSupported), "n/s");
  EXPECT_EQ(missing_token(Missing::kNoPermission), "denied");
  EXPECT_EQ(missing_token(Missing::kGpuLost), "lost");
  EXPECT_EQ(missing_token(Missing::kError), "err");
}

TEST(Gib, OneDecimal) {
  EXPECT_EQ(gib(0), "0.0");
  EXPECT_EQ(gib(143771ULL << 20), "140.4");  // an H200's total, as nvidia-smi's 143771 MiB
  EXPECT_EQ(gib(23ULL << 20), "0.0");
  EXPECT_EQ(gib(1ULL << 30), "1.0");
}

TEST(ShortBytes, PicksAUnit) {
  EXPECT_EQ(short_bytes(512), "512 B");
  EXPECT_EQ(short_bytes(812 * 1024), "812 KiB");
  EXPECT_EQ(short_bytes(14ULL << 20), "14 MiB");
  EXPECT_EQ(short_bytes((70ULL << 30) + (200ULL << 20)), "70.2 GiB");
  EXPECT_EQ(short_bytes(3ULL << 40), "3.0 TiB");
}

TEST(Bar, FillsProportionally) {
  EXPECT_EQ(bar(0.0, 10), "[..........]");
  EXPECT_EQ(bar(0.5, 10), "[#####.....]");
  EXPECT_EQ(bar(1.0, 10), "[##########]");
  EXPECT_EQ(bar(0.001, 10), "[..........]");  // as the percentage next to it: 0 %
  EXPECT_EQ(bar(0.999, 10), "[#########.]");  // not full never looks full
  EXPECT_EQ(bar(7.0, 4), "[####]");           // clamped
  EXPECT_EQ(bar(-1.0, 4), "[....]");
  EXPECT_EQ(bar(std::nan(""), 4), "[....]");
}

TEST(CudaVersion, MajorDotMinor) {
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(12040), "12.4");
  EXPECT_EQ(cuda_version_text(11080), "11.8");
}

TEST(Times, UtcAndLocal) {
  const auto t = std::chrono::system_clock::time_point(std::chrono::milliseconds(1796237212153LL));
  EXPECT_EQ(utc_time_text(t), "2026-12-02T18:46:52.153Z");
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  EXPECT_EQ(local_time_text(t), "2026-12-02 18:46:52 UTC");
}

TEST(ClockEventWords, InWordsWithProblemsMarked) {
  EXPECT_TRUE(clock_event_words(0).empty());
  const auto idle = clock_event_words(kClockEventGpuIdle);
  ASSERT_EQ(idle.size(), 1U);
  EXPECT_EQ(idle[0].text, "idle");
  EXPECT_FALSE(idle[0].problem);
  const auto hot = clock_event_words(kClockEventSwPowerCap | kClockEventSwThermalSlowdown);
  ASSERT_EQ(hot.size(), 2U);
  EXPECT_EQ(hot[0].text, "power cap");
  EXPECT_TRUE(hot[0].problem);
  EXPECT_EQ(hot[1].text, "thermal slowdown");
  EXPECT_TRUE(hot[1].problem);
  const auto other = clock_event_words(0x1000 | kClockEventSyncBoost);
  ASSERT_EQ(other.size(), 2U);
  EXPECT_EQ(other[0].text, "sync boost");
  EXPECT_FALSE(other[0].problem);
  EXPECT_EQ(other[1].text, "other (0x1000)");
}

// A decimal comma, as a German locale has; installable without locale data on the machine.
struct CommaDecimal : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  char do_thousands_sep() const override { return '.'; }
  std::string do_grouping() const override { return "\3"; }
};

TEST(Numbers, IgnoreTheGlobalLocale) {
  // A Python host may set a German locale; gpumon's numbers must keep their dot.
  const std::locale previous =
      std::locale::global(std::locale(std::locale::classic(), new CommaDecimal));
  EXPECT_EQ(gib(143771ULL << 20), "140.4");
  EXPECT_EQ(short_bytes((70ULL << 30) + (200ULL << 20)), "70.2 GiB");
  EXPECT_EQ(short_bytes(1234ULL << 20), "1.2 GiB");
  std::locale::global(previous);
}

}  // namespace
}  // namespace gpumon::cli
