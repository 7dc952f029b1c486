// SPDX-License-Identifier: MIT
#include "sampler/last_known.h"

#include <gtest/gtest.h>

namespace gpumon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const MonoClock::time_point t0{seconds(1000)};
const MonoClock::duration kHold = seconds(10);

DeviceSample with_temperature(unsigned c) {
  DeviceSample s;
  s.temperature_gpu_c = c;
  s.utilization_gpu_pct = 50u;
  return s;
}

TEST(LastKnown, HoldTimeIsThreeIntervalsButAtLeastTenSeconds) {
  EXPECT_EQ(hold_time(milliseconds(200)), seconds(10));
  EXPECT_EQ(hold_time(milliseconds(5000)), seconds(15));
}

TEST(LastKnown, FillsWhatTheNewestTickLacksUntilTheHoldRunsOut) {
  LastKnown k;
  k.update(with_temperature(61), t0, kHold);
  DeviceSample next;  // a tick where the slow group was not due
  next.utilization_gpu_pct = 70u;
  k.update(next, t0 + seconds(4), kHold);

  DeviceSample shown = next;
  k.fill(shown);
  EXPECT_EQ(shown.temperature_gpu_c.value(), 61u);
  EXPECT_EQ(shown.utilization_gpu_pct.value(), 70u);  // the newest reading wins
  EXPECT_EQ(k.value(MetricId::kTemperatureGpuC), 61.0);
  EXPECT_EQ(k.time(MetricId::kTemperatureGpuC), t0);

  k.expire(t0 + seconds(10), kHold);  // exactly the hold: still held
  EXPECT_TRUE(k.value(MetricId::kTemperatureGpuC));
  k.expire(t0 + seconds(10) + milliseconds(1), kHold);
  EXPECT_FALSE(k.value(MetricId::kTemperatureGpuC));
  shown = next;
  k.fill(shown);
  EXPECT_FALSE(shown.temperature_gpu_c);
}

TEST(LastKnown, KeepsTheReadingsMissingKind) {
  DeviceSample unsupported;
  unsupported.temperature_memory_c = Reading<unsigned>::missing(Missing::kNotSupported);
  LastKnown k;
  k.update(with_temperature(61), t0, kHold);
  k.fill(unsupported);  // never held: the newest sample's own reason stays
  EXPECT_EQ(unsupported.temperature_memory_c.why(), Missing::kNotSupported);
  EXPECT_EQ(unsupported.temperature_gpu_c.value(), 61u);
}

TEST(LastKnown, ALostOrStaleGpuDropsEverythingButLost) {
  for (bool lost : {true, false}) {
    LastKnown k;
    k.update(with_temperature(61), t0, kHold);
    DeviceSample gone;
    if (lost) {
      mark_lost(gone);
    } else {
      gone.stale = StaleCall{"nvmlDeviceGetTemperature", t0};
      set_all_missing(gone, Missing::kStale);
      gone.lost = false;
    }
    k.update(gone, t0 + seconds(1), kHold);
    EXPECT_FALSE(k.value(MetricId::kTemperatureGpuC)) << lost;
    EXPECT_EQ(k.value(MetricId::kLost), lost ? 1.0 : 0.0);
    DeviceSample shown = gone;
    k.fill(shown);  // left as it is
    EXPECT_FALSE(shown.temperature_gpu_c) << lost;

    k.update(with_temperature(62), t0 + seconds(2), kHold);  // back: held again
    EXPECT_EQ(k.value(MetricId::kTemperatureGpuC), 62.0);
  }
}

TEST(LastKnown, AMetricThatComesRarelyIsHeldForOneAndAHalfOfItsGap) {
  // PCIe throughput of many GPUs: the sampler reads each every 26 s, past the 10 s hold.
  DeviceSample pcie;
  pcie.pcie_tx_bytes_per_s = 1000.0;
  const DeviceSample tick;  // its task not due
  LastKnown k;
  k.update(pcie, t0, kHold);
  k.expire(t0 + seconds(11), kHold);
  EXPECT_FALSE(k.value(MetricId::kPcieTxBytesPerS)) << "one reading: no gap known yet";
  k.update(pcie, t0 + seconds(26), kHold);
  for (int s = 27; s <= 26 + 39; ++s) {
    k.update(tick, t0 + seconds(s), kHold);
    ASSERT_TRUE(k.value(MetricId::kPcieTxBytesPerS)) << "held " << s - 26 << " s of 39";
  }
  k.update(tick, t0 + seconds(26 + 40), kHold);
  EXPECT_FALSE(k.value(MetricId::kPcieTxBytesPerS)) << "overdue: 1.5 gaps";
  EXPECT_EQ(k.held_for(MetricId::kPcieTxBytesPerS, kHold), seconds(39));
  EXPECT_EQ(k.held_for(MetricId::kTemperatureGpuC, kHold), kHold);
}

TEST(LastKnown, AFailedReadBreaksThePeriod) {
  DeviceSample pcie;
  pcie.pcie_tx_bytes_per_s = 1000.0;
  DeviceSample failed;
  failed.pcie_tx_bytes_per_s = Reading<double>::missing(Missing::kError);
  LastKnown k;
  k.update(pcie, t0, kHold);
  k.update(failed, t0 + seconds(30), kHold);  // due, and it failed
  k.update(pcie, t0 + seconds(200), kHold);   // back after an outage: no 200 s period
  k.expire(t0 + seconds(211), kHold);
  EXPECT_FALSE(k.value(MetricId::kPcieTxBytesPerS));
}

TEST(LastKnown, AnOutageIsNotAPeriodAndALostGpuForgetsTheGaps) {
  DeviceSample pcie;
  pcie.pcie_tx_bytes_per_s = 1000.0;
  LastKnown k;
  k.update(pcie, t0, kHold);
  k.update(pcie, t0 + LastKnown::kMaxGap + seconds(1), kHold);  // an outage, not a period
  k.expire(t0 + LastKnown::kMaxGap + seconds(12), kHold);
  EXPECT_FALSE(k.value(MetricId::kPcieTxBytesPerS));
  const MonoClock::time_point t1 = t0 + seconds(1000);
  k.update(pcie, t1, kHold);
  k.update(pcie, t1 + seconds(20), kHold);  // learned: 20 s
  DeviceSample lost;
  mark_lost(lost);
  k.update(lost, t1 + seconds(21), kHold);
  k.update(pcie, t1 + seconds(22), kHold);  // back: the 20 s gap is forgotten
  k.expire(t1 + seconds(33), kHold);
  EXPECT_FALSE(k.value(MetricId::kPcieTxBytesPerS));
}

}  // namespace
}  // namespace gpumon
