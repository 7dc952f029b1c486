// SPDX-License-Identifier: MIT
// The findings section, the health score cell and the charts' markers, from hand-made findings.
#include "report/report_findings.h"

#include <gtest/gtest.h>

namespace gpumon::report {
namespace {

ReportDiagnosis sample() {
  ReportDiagnosis d;
  d.health_score = 72;
  d.deductions = {{"data_loader_stall", 20, "GPUs idle waiting for data"},
                  {"thermal_throttle", 8, "</script><b>hot</b>"}};
  ReportFinding f;
  f.id = "data_loader_stall";
  f.severity = "critical";
  f.confidence = 0.9;
  f.title = "Data loader stall <img src=x onerror=alert(1)>";
  f.summary = "38 % of step time waiting on data";
  f.evidence = {{"data_wait_share", "0.38", true, "waiting on data 38 % of the step time"},
                {"gpu3_cause", "power_cap", false, "GPU 3 throttled mostly by the power cap"}};
  f.advice = "Raise num_workers & pin_memory";
  f.start_ms = 1764446400000;
  f.end_ms = 1764446460000;
  f.gpus = {0, 3};
  f.ranks = {0};
  f.deduction = 20;
  d.findings.push_back(f);
  ReportFinding timeless;
  timeless.id = "no_time";
  timeless.severity = "info";
  timeless.title = "run-wide";
  timeless.pids = {1744, 1767};
  d.findings.push_back(timeless);
  return d;
}

TEST(ReportFindings, HealthTextListsTheDeductions) {
  EXPECT_EQ(health_text(sample()), "72 / 100 (-20 data_loader_stall, -8 thermal_throttle)");
  EXPECT_EQ(health_text(ReportDiagnosis{}), "100 / 100 (no deductions)");
}

TEST(ReportFindings, WhatCouldNotBeJudgedAndTheMachinesFindingsAreSaid) {
  ReportDiagnosis d;
  d.not_judged = {{"memory_leak, fragmentation", "no allocator stats <none>"}};
  std::string html;
  write_findings(html, d);  // no findings: the list still shows
  EXPECT_NE(html.find("The diagnosis found nothing wrong."), std::string::npos);
  EXPECT_NE(html.find("<code>memory_leak, fragmentation</code>: no allocator stats &lt;none&gt;"),
            std::string::npos)
      << html;
  ReportFinding other;
  other.id = "throttled";
  other.severity = "warning";
  other.machine = true;
  other.gpus = {1};
  d.findings.push_back(other);
  std::string with;
  write_findings(with, d);
  EXPECT_NE(with.find("the machine, not this run"), std::string::npos);
  EXPECT_NE(with.find("Not judged"), std::string::npos);
}

TEST(ReportFindings, SectionShowsEvidenceAndAdviceEscaped) {
  std::string html;
  write_findings(html, sample());
  EXPECT_NE(html.find("&middot; pid 1744, 1767"), std::string::npos) << "no rank: by pid";
  // In words; the key only as the item's data-key.
  EXPECT_NE(
      html.find("<li data-key=\"data_wait_share\">waiting on data 38 % of the step time</li>"),
      std::string::npos);
  EXPECT_EQ(html.find(">data_wait_share"), std::string::npos);
  EXPECT_NE(html.find("Raise num_workers &amp; pin_memory"), std::string::npos);
  EXPECT_NE(html.find("confidence 90 %"), std::string::npos);
  EXPECT_NE(html.find("GPU 0, 3"), std::string::npos);
  EXPECT_NE(html.find("2025-11-29T20:00:00.000Z"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("</script>"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  std::string none;
  write_findings(none, ReportDiagnosis{});
  EXPECT_NE(none.find("found nothing wrong"), std::string::npos);
}

TEST(ReportFindings, JsonKeepsTheEvidenceKeysAndTimesOnlyWhereKnown) {
  std::string json;
  append_findings_json(json, sample());
  EXPECT_EQ(json,
            "[{\"id\":\"data_loader_stall\",\"severity\":\"critical\",\"title\":\"Data loader "
            "stall \\u003cimg src=x onerror=alert(1)\\u003e\",\"start\":1764446400,\"end\":"
            "1764446460,\"gpus\":[0,3],\"ranks\":[0],\"evidence\":{\"data_wait_share\":0.38,"
            "\"gpu3_cause\":\"power_cap\"}},{\"id\":\"no_time\",\"severity\":\"info\",\"title\":"
            "\"run-wide\",\"start\":null,\"end\":null,\"gpus\":[],\"ranks\":[],\"evidence\":{}}]");
}

}  // namespace
}  // namespace gpumon::report
