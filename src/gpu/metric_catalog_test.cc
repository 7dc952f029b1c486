// SPDX-License-Identifier: MIT
// The catalog walked row by row: each row's DeviceSample field takes a value through the row and
// gives it back, merge_groups copies it exactly when its group is asked, mark_lost marks it.
#include "gpu/metric_catalog.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gpu/gpu_backend.h"

namespace gpumon {
namespace {

// A value per row that every field type holds exactly, different for every row.
double value_for(const MetricInfo& m) {
  return m.id == MetricId::kLost ? 1.0 : 10.0 + static_cast<double>(m.id);
}

std::string row(const MetricInfo& m) {
  return std::string(m.name);
}

TEST(MetricCatalog, EveryRowsFieldRoundTrips) {
  DeviceSample s;
  for (const MetricInfo& m : metric_catalog()) set_metric_value(s, m.id, value_for(m));
  // All set in one sample first: two rows sharing a field would read back the other's value.
  for (const MetricInfo& m : metric_catalog()) {
    EXPECT_EQ(metric_value(s, m.id), value_for(m)) << row(m);
    EXPECT_EQ(metric_missing(s, m.id), std::nullopt) << row(m);
  }
}

TEST(MetricCatalog, FieldConversionIsTheCatalogsUnit) {
  DeviceSample s;
  set_metric_value(s, MetricId::kEnergyJ, 12.345);
  EXPECT_EQ(s.energy_mj.value_or(0), 12345U);  // stored in mJ, reported in J
  s.energy_mj = std::uint64_t{987654321};
  EXPECT_EQ(metric_value(s, MetricId::kEnergyJ), 987654.321);
  set_metric_value(s, MetricId::kPowerDrawW, 612.4);
  EXPECT_EQ(s.power_draw_w.value_or(0), 612.4);
}

TEST(MetricCatalog, MissingReadingsKeepTheirReason) {
  for (const MetricInfo& m : metric_catalog()) {
    DeviceSample s;
    set_metric_value(s, m.id, value_for(m));
    set_metric_missing(s, m.id, Missing::kNoPermission);
    if (m.id == MetricId::kLost) {  // a flag, never missing
      EXPECT_EQ(metric_value(s, m.id), 1.0);
      EXPECT_EQ(metric_missing(s, m.id), std::nullopt);
      continue;
    }
    EXPECT_EQ(metric_value(s, m.id), std::nullopt) << row(m);
    EXPECT_EQ(metric_missing(s, m.id), Missing::kNoPermission) << row(m);
    DeviceSample copy;
    copy_metric(copy, s, m.id);
    EXPECT_EQ(metric_missing(copy, m.id), Missing::kNoPermission) << row(m);
  }
}

TEST(MetricCatalog, MergeGroupsCopiesARowExactlyWhenItsGroupIsAsked) {
  DeviceSample from;
  for (const MetricInfo& m : metric_catalog())
    if (m.id != MetricId::kLost) set_metric_value(from, m.id, value_for(m));
  for (const MetricInfo& m : metric_catalog()) {
    if (!m.group) {
      DeviceSample into;
      merge_groups(into, from, MetricSet::all());
      EXPECT_EQ(metric_value(into, m.id),
                m.id == MetricId::kLost ? std::optional(0.0) : std::nullopt)
          << row(m) << " is filled by the sampler, not by a group";
      continue;
    }
    DeviceSample asked;
    merge_groups(asked, from, *m.group);
    EXPECT_EQ(metric_value(asked, m.id), value_for(m)) << row(m);
    // Every other group together leaves it alone.
    MetricSet others;
    for (std::uint32_t bit = 1; bit != 0; bit <<= 1)
      if (bit != static_cast<std::uint32_t>(*m.group)) others |= static_cast<MetricGroup>(bit);
    DeviceSample not_asked;
    merge_groups(not_asked, from, others);
    EXPECT_EQ(metric_value(not_asked, m.id), std::nullopt) << row(m);
  }
  DeviceSample lost_from;
  lost_from.lost = true;
  DeviceSample into;
  merge_groups(into, lost_from, MetricSet());
  EXPECT_TRUE(into.lost);
}

TEST(MetricCatalog, EveryReadingGroupReadsAMetric) {
  std::set<std::uint32_t> groups;
  for (const MetricInfo& m : metric_catalog())
    if (m.group) groups.insert(static_cast<std::uint32_t>(*m.group));
  for (std::uint32_t bit = 1; bit != 0 && bit <= MetricSet::all().bits(); bit <<= 1) {
    if (static_cast<MetricGroup>(bit) == MetricGroup::kStaticDetails) continue;  // not a reading
    EXPECT_TRUE(groups.count(bit)) << "no catalog row for group bit 0x" << std::hex << bit;
  }
}

// The sampler reads the groups of all(): a group above it would never be read (JPEG and OFA
// utilization once were).
TEST(MetricCatalog, AllHasEveryGroupOfTheCatalog) {
  for (const MetricInfo& m : metric_catalog()) {
    if (m.group) {
      EXPECT_TRUE(MetricSet::all().has(*m.group)) << m.name;
    }
  }
}

TEST(MetricCatalog, MarkLostMarksEveryMetric) {
  DeviceSample s;
  s.index = 3;
  for (const MetricInfo& m : metric_catalog())
    if (m.id != MetricId::kLost) set_metric_value(s, m.id, value_for(m));
  mark_lost(s);
  EXPECT_TRUE(s.lost);
  EXPECT_EQ(s.index, 3U);
  for (const MetricInfo& m : metric_catalog()) {
    if (m.id == MetricId::kLost) {
      EXPECT_EQ(metric_value(s, m.id), 1.0);
    } else {
      EXPECT_EQ(metric_missing(s, m.id), Missing::kGpuLost) << row(m);
    }
  }
}

}  // namespace
}  // namespace gpumon
