// SPDX-License-Identifier: MIT
#include "web/dashboard_asset.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "exporter/chart_history.h"
#include "gpu/metric_catalog.h"

namespace gpumon {
namespace {

bool contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

TEST(DashboardAsset, IsOneSelfContainedPageWithItsPolicy) {
  const std::string_view html = dashboard_html();
  ASSERT_GT(html.size(), 100U);
  EXPECT_TRUE(html.starts_with("<!doctype html>"));
  EXPECT_TRUE(html.ends_with("</html>\n"));
  EXPECT_EQ(html.find('\0'), std::string_view::npos);
  EXPECT_FALSE(contains(html, "@GPUMON_")) << "a template marker was left in the page";
  // The policy in the page is the header's, less frame-ancestors (meta tags cannot carry it).
  const std::string_view csp = dashboard_csp();
  ASSERT_TRUE(csp.ends_with("; frame-ancestors 'none'"));
  const std::string meta(
      csp.substr(0, csp.size() - std::string_view("; frame-ancestors 'none'").size()));
  EXPECT_TRUE(contains(html, "http-equiv=\"Content-Security-Policy\" content=\"" + meta + "\""));
  EXPECT_TRUE(meta.starts_with("default-src 'none'"));
  EXPECT_FALSE(contains(meta, "unsafe-inline"));
  EXPECT_FALSE(contains(meta, "unsafe-eval"));
  // No reference to anything off the page: no external script, style or image.
  EXPECT_FALSE(contains(html, "<script src"));
  EXPECT_FALSE(contains(html, "<link rel=\"stylesheet\""));
  EXPECT_FALSE(contains(html, "http://"));
}

TEST(DashboardAsset, CarriesUplotWithItsLicenceOrSaysHowToGetIt) {
  const std::string_view html = dashboard_html();
  if (dashboard_has_charts()) {
    EXPECT_TRUE(contains(html, "/*! https://github.com/leeoniya/uPlot (v1.6.32) */"));
    EXPECT_TRUE(contains(html, "uPlot 1.6.32 | MIT License | Copyright (c)"));
    EXPECT_TRUE(contains(html, "api/v1/current"));
    EXPECT_TRUE(contains(dashboard_csp(), "connect-src 'self'"));
  } else {
    EXPECT_TRUE(contains(html, "npm ci --prefix web"));
    EXPECT_FALSE(contains(html, "<script"));
  }
}

// The dashboard asks /api/v1/history for its charts' metrics; the server keeps an hour of
// exactly those (exporter/chart_history.h). A metric added to one list and not the other would
// be served from the sampler's shorter ticks, or kept for nothing.
TEST(DashboardAsset, ChartsDrawWhatTheChartHistoryHolds) {
  if (!dashboard_has_charts()) GTEST_SKIP() << "built without uPlot: no charts";
  const std::string_view html = dashboard_html();
  constexpr std::string_view kKey = "metric: '";
  std::set<std::string> drawn;
  for (std::size_t at = html.find(kKey); at != std::string_view::npos;
       at = html.find(kKey, at + 1)) {
    const std::size_t start = at + kKey.size();
    drawn.emplace(html.substr(start, html.find('\'', start) - start));
  }
  std::set<std::string> held;
  for (MetricId id : exporter::ChartHistory::metrics()) held.emplace(metric_info(id).name);
  EXPECT_EQ(drawn, held);
}

}  // namespace
}  // namespace gpumon
