// SPDX-License-Identifier: MIT
// OpenMetrics negotiation and the rewrite of a text-format body (the real Prometheus parses the
// result in serve_prometheus_e2e_test.py, which scrapes with Prometheus's own Accept header).
#include "exporter/openmetrics.h"

#include <gtest/gtest.h>

namespace gpumon::exporter {
namespace {

TEST(OpenMetrics, NegotiatesAsPrometheusAsks) {
  // Prometheus 2.x and 3.x scrape headers.
  EXPECT_TRUE(prefers_openmetrics(
      "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
      "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"));
  EXPECT_TRUE(prefers_openmetrics(
      "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;"
      "version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"));
  EXPECT_TRUE(prefers_openmetrics("application/openmetrics-text"));
  // curl, a browser, a scraper configured for the text format, nothing: the text format.
  EXPECT_FALSE(prefers_openmetrics("*/*"));
  EXPECT_FALSE(prefers_openmetrics("text/html,application/xhtml+xml,*/*;q=0.8"));
  EXPECT_FALSE(prefers_openmetrics("text/plain;version=0.0.4"));
  EXPECT_FALSE(prefers_openmetrics(""));
  EXPECT_FALSE(prefers_openmetrics("application/openmetrics-text;q=0"));
  EXPECT_FALSE(prefers_openmetrics("application/openmetrics-text;q=0.2, text/plain"));
}

TEST(OpenMetrics, RewritesOnlyTheMetadata) {
  const std::string text =
      "# HELP gpumon_up 1 when \"sampling\"\n"
      "# TYPE gpumon_up gauge\n"
      "gpumon_up 1\n"
      "# HELP gpumon_gpu_xid_errors_total XIDs, a \\\\ and a \\n\n"
      "# TYPE gpumon_gpu_xid_errors_total counter\n"
      "gpumon_gpu_xid_errors_total{gpu=\"0\",xid=\"79\"} 2\n"
      "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error\n"
      "# TYPE DCGM_FI_DEV_XID_ERRORS counter\n"
      "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\"} 79\n"
      "# HELP x Untyped\n"
      "# TYPE x untyped\n"
      "x 3\n"
      "# HELP s Step time\n"
      "# TYPE s histogram\n"
      "s_bucket{le=\"0.5\"} 1\n"
      "s_bucket{le=\"+Inf\"} 2\n"
      "s_sum 1.5\n"
      "s_count 2\n";
  EXPECT_EQ(to_openmetrics(text),
            "# HELP gpumon_up 1 when \\\"sampling\\\"\n"
            "# TYPE gpumon_up gauge\n"
            "gpumon_up 1\n"
            "# HELP gpumon_gpu_xid_errors XIDs, a \\\\ and a \\n\n"
            "# TYPE gpumon_gpu_xid_errors counter\n"
            "gpumon_gpu_xid_errors_total{gpu=\"0\",xid=\"79\"} 2\n"
            "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error\n"
            "# TYPE DCGM_FI_DEV_XID_ERRORS unknown\n"
            "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\"} 79\n"
            "# HELP x Untyped\n"
            "# TYPE x unknown\n"
            "x 3\n"
            "# HELP s Step time\n"
            "# TYPE s histogram\n"
            "s_bucket{le=\"0.5\"} 1\n"
            "s_bucket{le=\"+Inf\"} 2\n"
            "s_sum 1.5\n"
            "s_count 2\n"
            "# EOF\n");
  EXPECT_EQ(to_openmetrics(""), "# EOF\n");
}

}  // namespace
}  // namespace gpumon::exporter
