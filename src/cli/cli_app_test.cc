// SPDX-License-Identifier: MIT
// Dispatch, options and exit codes of run_cli, in-process with string streams.
#include "cli/cli_app.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "cli/backend_open.h"
#include "cli/watch_command.h"

namespace gpumon::cli {
namespace {

struct CliRun {
  int rc = -1;
  std::string out;
  std::string err;
};

CliRun run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const Console console{out, err, -1, -1, nullptr, ""};
  CliRun r;
  r.rc = run_cli(args, console);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// Points NVML loading at a library that does not exist for the life of the object.
class NoDriver {
 public:
  NoDriver() { ::setenv("GPUMON_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1); }
  ~NoDriver() { ::unsetenv("GPUMON_NVML_LIBRARY"); }
};

TEST(CliApp, UnknownCommandIsAUsageError) {
  const CliRun r = run({"frobnicate"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "gpumon: unknown command 'frobnicate'. Commands: watch, query, dmon, pmon, record, "
            "export, report, doctor, serve, agent (run 'gpumon --help').\n");
}

TEST(CliApp, NvidiaSmiModesAreDispatched) {
  CliRun r = run({"dmon", "-s", "z"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "gpumon: dmon: -s takes letters of 'pucvmet', not 'z'.\n");
  r = run({"pmon", "--help"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_TRUE(r.out.starts_with("usage: gpumon pmon")) << r.out;
  r = run({"-L", "--format=csv"});  // -L goes to query, which refuses a format with it
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("-L/--list-gpus takes only -i and -f"), std::string::npos) << r.err;
}

TEST(CliApp, RecordAndExportAreDispatched) {
  CliRun r = run({"record", "--bogus"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("gpumon record: unknown option '--bogus'"), std::string::npos) << r.err;
  r = run({"export"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("export"), std::string::npos) << r.err;
}

TEST(CliApp, UnknownOptionIsAUsageError) {
  const CliRun r = run({"--frobnicate"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err.rfind("gpumon: ", 0), 0U);
  EXPECT_NE(r.err.find("--frobnicate"), std::string::npos);
  EXPECT_NE(r.err.find("Run 'gpumon --help' for usage."), std::string::npos);
}

TEST(CliApp, HelpListsTheSubcommands) {
  for (const char* flag : {"--help", "-h", "help"}) {
    const CliRun r = run({flag});
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("gpumon watch"), std::string::npos);
    EXPECT_NE(r.out.find("gpumon query"), std::string::npos);
    EXPECT_NE(r.out.find("--json"), std::string::npos);
    EXPECT_NE(r.out.find("Exit status"), std::string::npos);
    EXPECT_EQ(r.err, "");
  }
}

TEST(CliApp, Version) {
  const CliRun r = run({"--version"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out.rfind("gpumon 0.", 0), 0U);
  EXPECT_NE(r.out.find(" build)"), std::string::npos) << r.out;  // the build type
  EXPECT_EQ(r.out.back(), '\n');
}

TEST(CliApp, WatchOptionsAreChecked) {
  EXPECT_EQ(run({"watch", "--interval", "0.05"}).rc, 2);  // below 0.1 s
  EXPECT_EQ(run({"watch", "--interval", "soon"}).rc, 2);
  EXPECT_EQ(run({"watch", "--count", "-1"}).rc, 2);
  EXPECT_EQ(run({"watch", "extra"}).rc, 2);
  const CliRun help = run({"watch", "--help"});
  EXPECT_EQ(help.rc, 0);
  EXPECT_NE(help.out.find("--interval"), std::string::npos);
  EXPECT_EQ(run({"-w", "--help"}).rc, 0);
  EXPECT_EQ(run({"--watch", "--help"}).rc, 0);
}

TEST(CliApp, SnapshotWithoutADriverSaysSoAndHowToTrySimulatedGpus) {
  NoDriver no_driver;
  const CliRun r = run({});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("gpumon: no NVIDIA driver found (cannot load NVML "
                        "(/nonexistent/libnvidia-ml.so.1)",
                        0),
            0U)
      << r.err;
  EXPECT_NE(r.err.find("GPUMON_FAKE_SCENARIO=demo"), std::string::npos);
}

TEST(CliApp, JsonSnapshotWithoutADriverIsStillJson) {
  NoDriver no_driver;
  const CliRun r = run({"--json"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("\"error\": \"no_driver\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"gpus\": []"), std::string::npos);
  EXPECT_NE(r.err.find("no NVIDIA driver found"), std::string::npos);
}

TEST(CliApp, WatchWithoutADriver) {
  NoDriver no_driver;
  const CliRun r = run({"watch", "--count", "1"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("no NVIDIA driver found"), std::string::npos);
}

TEST(CliApp, QueryIsDispatched) {
  // Whether or not src/query is in this build, `query` never reaches the snapshot parser.
  const CliRun r = run({"query", "--help"});
  EXPECT_EQ(r.err.find("unknown command"), std::string::npos);
  EXPECT_EQ(r.err.find("The following argument was not expected"), std::string::npos);
}

TEST(OpenFailureMessage, NamesTheFakeLibraryWhenItIsBesideTheBinary) {
  NvmlOpenError e;
  e.kind = NvmlOpenError::Kind::kNoDriver;
  e.message = "cannot load NVML (libnvidia-ml.so.1): not found";
  const std::string generic = open_failure_message(e, "/nowhere/gpumon");
  EXPECT_EQ(generic,
            "gpumon: no NVIDIA driver found (cannot load NVML (libnvidia-ml.so.1): not found)\n"
            "To try gpumon on simulated GPUs (gpumon's fake NVML, scenario \"demo\"):\n"
            "  GPUMON_NVML_LIBRARY=<build>/fake-nvml/libnvidia-ml.so.1 GPUMON_FAKE_SCENARIO=demo "
            "gpumon\n(or `bash scripts/live.sh` in a gpumon checkout)\n");
  e.kind = NvmlOpenError::Kind::kInitFailed;
  e.message = "NVML initialisation failed (Insufficient Permissions): no permission";
  EXPECT_EQ(open_failure_message(e, ""),
            "gpumon: NVML initialisation failed (Insufficient Permissions): no permission\n");
}

TEST(ColorWanted, OnlyOnATerminalWithoutNoColorOrDumbTerm) {
  EXPECT_TRUE(color_wanted(true, std::nullopt, "xterm-256color"));
  EXPECT_FALSE(color_wanted(false, std::nullopt, "xterm-256color"));
  EXPECT_FALSE(color_wanted(true, "1", "xterm"));
  EXPECT_TRUE(color_wanted(true, "", "xterm"));  // no-color.org: set and non-empty
  EXPECT_FALSE(color_wanted(true, std::nullopt, "dumb"));
  EXPECT_FALSE(color_wanted(true, std::nullopt, std::nullopt));
}

TEST(UseFullScreen, NeedsATerminalThatIsNotDumb) {
  EXPECT_TRUE(use_full_screen(true, "screen-256color"));
  EXPECT_FALSE(use_full_screen(false, "xterm"));
  EXPECT_FALSE(use_full_screen(true, "dumb"));
  EXPECT_FALSE(use_full_screen(true, std::nullopt));
}

}  // namespace
}  // namespace gpumon::cli
