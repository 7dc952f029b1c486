// SPDX-License-Identifier: MIT
#include "query/argv_rewrite.h"

#include <gtest/gtest.h>

#include "query/query_options.h"

namespace gpumon::query {
namespace {

using Args = std::vector<std::string>;

TEST(ArgvRewrite, LoopMsSingleDash) {
  EXPECT_EQ(rewrite_nvidia_smi_args({"-lms", "200"}), (Args{"--loop-ms", "200"}));
  EXPECT_EQ(rewrite_nvidia_smi_args({"-lms=200"}), (Args{"--loop-ms=200"}));
  EXPECT_EQ(rewrite_nvidia_smi_args({"--loop-ms=200"}), (Args{"--loop-ms=200"}));
}

TEST(ArgvRewrite, LoopWithOptionalValue) {
  EXPECT_EQ(rewrite_nvidia_smi_args({"-l"}), (Args{"--loop=5"}));
  EXPECT_EQ(rewrite_nvidia_smi_args({"-l", "--format=csv"}), (Args{"--loop=5", "--format=csv"}));
  EXPECT_EQ(rewrite_nvidia_smi_args({"-l", "2"}), (Args{"--loop=2"}));
  EXPECT_EQ(rewrite_nvidia_smi_args({"-l2"}), (Args{"--loop=2"}));
  EXPECT_EQ(rewrite_nvidia_smi_args({"-l=0.5"}), (Args{"--loop=0.5"}));
  EXPECT_EQ(rewrite_nvidia_smi_args({"--loop", "3"}), (Args{"--loop=3"}));
  EXPECT_EQ(rewrite_nvidia_smi_args({"--loop"}), (Args{"--loop=5"}));
  EXPECT_EQ(rewrite_nvidia_smi_args({"--loop=7"}), (Args{"--loop=7"}));
  // A negative number is taken as the value, so the interval check can name it.
  EXPECT_EQ(rewrite_nvidia_smi_args({"-l", "-1"}), (Args{"--loop=-1"}));
  // Anything not an option is the value, so "abc" is reported as a bad interval.
  EXPECT_EQ(rewrite_nvidia_smi_args({"-l", "abc"}), (Args{"--loop=abc"}));
}

TEST(ArgvRewrite, ShortOptionsWithEquals) {
  EXPECT_EQ(rewrite_nvidia_smi_args({"-i=0,1"}), (Args{"-i", "0,1"}));
  EXPECT_EQ(rewrite_nvidia_smi_args({"-c=3"}), (Args{"-c", "3"}));
  EXPECT_EQ(rewrite_nvidia_smi_args({"-f=out.csv"}), (Args{"-f", "out.csv"}));
  EXPECT_EQ(rewrite_nvidia_smi_args({"-i="}), (Args{"-i", ""}));
  EXPECT_EQ(rewrite_nvidia_smi_args({"--query-gpu=", "--format=csv"}),
            (Args{"--query-gpu", "", "--format=csv"}));
}

TEST(ArgvRewrite, LeavesOtherWordsAndEverythingAfterDoubleDash) {
  const Args plain{"--query-gpu", "index,name", "--format=csv", "-i", "0", "--id=1"};
  EXPECT_EQ(rewrite_nvidia_smi_args(plain), plain);
  EXPECT_EQ(rewrite_nvidia_smi_args({"--", "-lms", "-l"}), (Args{"--", "-lms", "-l"}));
  EXPECT_EQ(rewrite_nvidia_smi_args({}), Args{});
  EXPECT_EQ(rewrite_nvidia_smi_args({""}), Args{""});
}

// The rewritten words parse with CLI11 into what nvidia-smi means.
TEST(QueryOptions, NvidiaSmiSpellingsParse) {
  auto o = parse_query_options({"--query-gpu=index", "-lms", "200", "-i", "0,1"});
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->interval, std::chrono::milliseconds(200));
  EXPECT_EQ(o->ids, "0,1");
  EXPECT_EQ(o->samples(), std::nullopt);

  o = parse_query_options({"--query-gpu", "index,name", "-l", "--format", "csv,noheader"});
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->interval, std::chrono::seconds(5));
  EXPECT_FALSE(o->format.header);
  EXPECT_EQ(o->fields, "index,name");

  o = parse_query_options({"--query-compute-apps=pid", "--id=GPU-1", "-c", "3", "-l", "1"});
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->target, QueryOptions::Target::kComputeApps);
  EXPECT_EQ(o->samples(), 3U);
  EXPECT_EQ(o->ids, "GPU-1");

  o = parse_query_options({"--query-gpu=index"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->samples(), 1U);
  EXPECT_EQ(o->format, OutputFormat{});
}

TEST(QueryOptions, UsageErrorsNameTheProblem) {
  struct Case {
    std::vector<std::string> args;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {{}, "needs --query-gpu"},
      {{"--query-gpu=index", "--query-compute-apps=pid"}, "not both"},
      {{"--query-gpu=index", "-l", "0"}, "--loop wants a positive number"},
      {{"--query-gpu=index", "-l", "-2"}, "--loop wants a positive number"},
      {{"--query-gpu=index", "-l", "abc"}, "\"abc\""},
      {{"--query-gpu=index", "-lms", "0"}, "--loop-ms wants"},
      {{"--query-gpu=index", "-lms", "1.5"}, "--loop-ms wants"},
      {{"--query-gpu=index", "-l", "1", "-lms", "5"}, "not both"},
      {{"--query-gpu=index", "-c", "0", "-l", "1"}, "--count wants"},
      {{"--query-gpu=index", "-c", "3"}, "needs -l/--loop"},
      {{"--query-gpu=index", "--format=json,noheader"}, "csv only"},
      {{"--query-gpu=index", "--bogus"}, "--bogus"},
      {{"--query-gpu=index", "stray"}, "stray"},
      {{"--query-gpu=index", "-f", ""}, "needs a file name"},
      {{"--query-gpu"}, "--query-gpu"},
  };
  for (const Case& c : cases) {
    auto o = parse_query_options(c.args);
    ASSERT_FALSE(o) << c.message_part;
    EXPECT_EQ(o.error().exit_code, 2) << c.message_part;
    EXPECT_NE(o.error().message.find(c.message_part), std::string::npos) << o.error().message;
    EXPECT_EQ(o.error().message.back(), '\n');
  }
}

TEST(QueryOptions, HelpRequests) {
  auto o = parse_query_options({"--help"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->action, QueryOptions::Action::kHelp);
  EXPECT_NE(o->help_text.find("--query-gpu"), std::string::npos);
  EXPECT_NE(o->help_text.find("--loop-ms"), std::string::npos);
  o = parse_query_options({"--help-query-gpu"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->action, QueryOptions::Action::kHelpGpuFields);
  o = parse_query_options({"--help-query-compute-apps", "--query-gpu=bogus"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->action, QueryOptions::Action::kHelpAppFields);
}

}  // namespace
}  // namespace gpumon::query
