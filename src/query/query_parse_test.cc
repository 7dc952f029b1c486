// SPDX-License-Identifier: MIT
#include "query/query_parse.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>

#include "query/field_help.h"
#include "query/gpu_fields.h"

namespace gpumon::query {
namespace {

using Kind = OutputFormat::Kind;

TEST(ParseFormat, CsvVariants) {
  EXPECT_EQ(*parse_format("csv"), (OutputFormat{Kind::kCsv, true, true}));
  EXPECT_EQ(*parse_format("csv,noheader"), (OutputFormat{Kind::kCsv, false, true}));
  EXPECT_EQ(*parse_format("csv,nounits"), (OutputFormat{Kind::kCsv, true, false}));
  EXPECT_EQ(*parse_format("csv,noheader,nounits"), (OutputFormat{Kind::kCsv, false, false}));
  EXPECT_EQ(*parse_format("nounits,csv"), (OutputFormat{Kind::kCsv, true, false}));
  EXPECT_EQ(*parse_format("noheader"), (OutputFormat{Kind::kCsv, false, true}));
  EXPECT_EQ(*parse_format(" csv , noheader "), (OutputFormat{Kind::kCsv, false, true}));
}

TEST(ParseFormat, JsonVariants) {
  EXPECT_EQ(parse_format("json")->kind, Kind::kJson);
  EXPECT_EQ(parse_format("jsonl")->kind, Kind::kJsonLines);
  EXPECT_FALSE(parse_format("json")->flat);
  EXPECT_EQ(*parse_format("json-flat"), (OutputFormat{Kind::kJson, true, true, true}));
  EXPECT_EQ(*parse_format("jsonl-flat"), (OutputFormat{Kind::kJsonLines, true, true, true}));
}

TEST(ParseFormat, Errors) {
  auto bad = parse_format("csv,xml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().exit_code, 2);
  // nvidia-smi's line first, then which word was wrong.
  EXPECT_EQ(bad.error().message.rfind("Format modifier is not recognized.\n", 0), 0U);
  EXPECT_NE(bad.error().message.find("\"xml\""), std::string::npos);
  for (const char* text : {"", ",", "json,csv", "json,jsonl", "json,noheader", "jsonl,nounits",
                           "json-flat,noheader", "json-flat,jsonl"}) {
    auto r = parse_format(text);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().exit_code, 2) << text;
    EXPECT_EQ(r.error().message.rfind("gpumon: ", 0), 0U) << text;
  }
}

TEST(SplitList, TrimsAndSkipsEmptyItems) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_list("index, name ,,uuid,"), (V{"index", "name", "uuid"}));
  EXPECT_EQ(split_list(""), V{});
  EXPECT_EQ(split_list(" , ,"), V{});
  EXPECT_EQ(split_list("a"), V{"a"});
}

TEST(ParseLoop, Seconds) {
  EXPECT_EQ(*parse_loop_seconds("5"), std::chrono::seconds(5));
  EXPECT_EQ(*parse_loop_seconds("0.25"), std::chrono::milliseconds(250));
  EXPECT_EQ(*parse_loop_seconds("604800"), kMaxInterval);
  for (const char* text :
       {"", "0", "-1", "abc", "1s", "nan", "inf", "0.0001", "604801", "1e300", " 1"}) {
    auto r = parse_loop_seconds(text);
    EXPECT_FALSE(r) << text;
    if (!r) {
      EXPECT_EQ(r.error().exit_code, 2);
    }
  }
}

TEST(ParseLoop, Milliseconds) {
  EXPECT_EQ(*parse_loop_ms("200"), std::chrono::milliseconds(200));
  EXPECT_EQ(*parse_loop_ms("1"), std::chrono::milliseconds(1));
  for (const char* text :
       {"", "0", "-5", "+5", "2.5", "abc", "604800001", "99999999999999999999"}) {
    EXPECT_FALSE(parse_loop_ms(text)) << text;
  }
}

TEST(ParseCount, WholeNumbersFromOne) {
  EXPECT_EQ(*parse_count("1"), 1U);
  EXPECT_EQ(*parse_count("18446744073709551615"), UINT64_MAX);
  for (const char* text : {"", "0", "-1", "1.0", "x", "18446744073709551616"}) {
    EXPECT_FALSE(parse_count(text)) << text;
  }
}

TEST(ResolveFields, AliasesDuplicatesAndErrors) {
  auto r = resolve_fields(gpu_fields(), "gpu_name,name,clocks.sm, memory.used", "--query-gpu");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->size(), 4U);
  EXPECT_EQ((*r)[0], (*r)[1]);  // alias and canonical name are one field, printed twice
  EXPECT_EQ((*r)[0]->info.name, "name");
  EXPECT_EQ((*r)[2]->info.name, "clocks.current.sm");
  EXPECT_EQ(csv_header((*r)[2]->info), "clocks.current.sm [MHz]");

  auto bad = resolve_fields(gpu_fields(), "index,bogus.field", "--query-gpu");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "Field \"bogus.field\" is not a valid field to query.\n\n");
  EXPECT_EQ(bad.error().exit_code, 2);

  auto empty = resolve_fields(gpu_fields(), " , ", "--query-gpu");
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("--help-query-gpu"), std::string::npos);
}

// Every registered name (canonical or alias) must be unique, or lookups would be ambiguous.
TEST(Registry, NamesAreUniqueAndDescribed) {
  std::set<std::string_view> seen;
  for (const GpuField& f : gpu_fields()) {
    EXPECT_TRUE(seen.insert(f.info.name).second) << f.info.name;
    for (auto alias : f.info.aliases) EXPECT_TRUE(seen.insert(alias).second) << alias;
    EXPECT_FALSE(f.info.description.empty()) << f.info.name;
    EXPECT_NE(f.extract, nullptr) << f.info.name;
  }
  EXPECT_GE(seen.size(), 45U);
}

// docs/query.md pastes both help texts; they must stay what the command prints.
TEST(Registry, DocsCarryTheCurrentFieldLists) {
  std::ifstream in(std::string(GPUMON_SOURCE_DIR) + "/docs/query.md");
  ASSERT_TRUE(in);
  const std::string docs((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(docs.find(gpu_fields_help()), std::string::npos)
      << "docs/query.md: paste the output of gpumon query --help-query-gpu";
  EXPECT_NE(docs.find(app_fields_help()), std::string::npos)
      << "docs/query.md: paste the output of gpumon query --help-query-compute-apps";
}

}  // namespace
}  // namespace gpumon::query
