// SPDX-License-Identifier: MIT
#include "report/report_command.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <sstream>

#include "record/recording_writer.h"
#include "record/test_support.h"
#include "report/run_report.h"
#include "report/summary.h"

namespace gpumon::report {
namespace {

using record::testing::read_file;
using record::testing::TempDir;
using record::testing::write_file;

const std::string kH200 = std::string(GPUMON_TESTDATA_DIR) + "/recordings/h200-gemm-10hz.gpumon";

struct Result {
  int rc;
  std::string out, err;
};

Result run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int rc = run_report_command(args, out, err);
  return {rc, out.str(), err.str()};
}

TEST(ReportCommand, ARealH200RecordingBecomesOnePage) {
  TempDir dir;
  const std::string html = dir.file("h200.html");
  const Result r = run({kH200, "-o", html});
  ASSERT_EQ(r.rc, kReportOk) << r.err;
  EXPECT_NE(r.out.find("wrote " + html), std::string::npos);
  // The run's length, and how long the report took named as such.
  const auto run = load_run_report(kH200);
  ASSERT_TRUE(std::holds_alternative<RunReport>(run));
  const auto length = run_totals(std::get<RunReport>(run)).duration_s;
  ASSERT_TRUE(length.has_value());
  EXPECT_NE(r.out.find("MB): a run of " + format_duration(*length) + " on 1 GPU(s), "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" GPU-samples; generated in "), std::string::npos) << r.out;
  const std::string page = read_file(html);
  EXPECT_TRUE(page.starts_with("<!doctype html>"));
  EXPECT_NE(page.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(page.find("<svg class=\"spark\""), std::string::npos);
  EXPECT_NE(page.find("python3"), std::string::npos);  // the process seen
  EXPECT_LT(page.size(), 1u << 20);
  struct stat st {};
  ASSERT_EQ(::stat(html.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U) << "the page names the host, command and processes";
}

TEST(ReportCommand, RefusesToOverwriteUnlessForced) {
  TempDir dir;
  const std::string html = dir.file("r.html");
  write_file(html, "keep me");
  Result r = run({kH200, "-o", html});
  EXPECT_EQ(r.rc, kReportFailed);
  EXPECT_NE(r.err.find(html + " already exists (use --force"), std::string::npos);
  EXPECT_EQ(read_file(html), "keep me");
  r = run({kH200, "-o", html, "--force"});
  EXPECT_EQ(r.rc, kReportOk) << r.err;
  EXPECT_TRUE(read_file(html).starts_with("<!doctype html>"));
}

TEST(ReportCommand, ACorruptRecordingGivesAClearError) {
  TempDir dir;
  const std::string bad = dir.file("corrupt.gpumon");
  write_file(bad, std::string(4096, 'x'));
  Result r = run({bad, "-o", dir.file("out.html")});
  EXPECT_EQ(r.rc, kReportFailed);
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  struct stat st {};
  EXPECT_NE(::stat(dir.file("out.html").c_str(), &st), 0) << "no page for a corrupt recording";

  // A truncated real recording.
  const std::string cut = dir.file("cut.gpumon");
  record::testing::copy_prefix(kH200, cut, 20000);
  r = run({cut, "-o", dir.file("cut.html")});
  EXPECT_EQ(r.rc, kReportFailed);
  EXPECT_NE(r.err.find(cut), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("damaged"), std::string::npos) << r.err;

  r = run({dir.file("missing.gpumon")});
  EXPECT_EQ(r.rc, kReportFailed);
  EXPECT_NE(r.err.find(dir.file("missing.gpumon")), std::string::npos) << r.err;

  r = run({kH200, "-o", dir.file("b.html"), "--baseline", bad});
  EXPECT_EQ(r.rc, kReportFailed);
  EXPECT_NE(r.err.find("baseline " + bad), std::string::npos) << r.err;
}

TEST(ReportCommand, AnEmptyRecordingSaysSo) {
  TempDir dir;
  record::RecordingOptions options;
  options.path = dir.file("empty.gpumon");
  std::string error;
  auto w = record::RecordingWriter::create(options, record::testing::test_run_info(),
                                           record::testing::make_devices(2), error);
  ASSERT_NE(w, nullptr) << error;
  w->close();
  const Result r = run({options.path});
  ASSERT_EQ(r.rc, kReportOk) << r.err;
  const std::string page = read_file(dir.file("empty.html"));  // default: beside the recording
  EXPECT_NE(page.find("No samples were recorded."), std::string::npos);
  EXPECT_NE(page.find("\"n\":0"), std::string::npos);
}

TEST(ReportCommand, AnUnwritableDestinationNamesTheFile) {
  TempDir dir;
  const std::string html = dir.file("no-such-dir/r.html");
  const Result r = run({kH200, "-o", html});
  EXPECT_EQ(r.rc, kReportFailed);
  EXPECT_NE(r.err.find("cannot write " + html + ": No such file or directory"), std::string::npos)
      << r.err;
}

TEST(ReportCommand, BadArgumentsAreUsageErrors) {
  EXPECT_EQ(run({}).rc, kReportUsage);
  EXPECT_EQ(run({kH200, "--frobnicate"}).rc, kReportUsage);
  EXPECT_EQ(run({kH200, "-o"}).rc, kReportUsage);
  EXPECT_EQ(run({kH200, "--points", "3"}).rc, kReportUsage);
  const Result help = run({"--help"});
  EXPECT_EQ(help.rc, kReportOk);
  EXPECT_NE(help.out.find("usage: gpumon report"), std::string::npos);
}

}  // namespace
}  // namespace gpumon::report
