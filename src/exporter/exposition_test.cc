// SPDX-License-Identifier: MIT
#include "exporter/exposition.h"

#include <gtest/gtest.h>

#include <clocale>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <locale>
#include <stdexcept>

namespace gpumon::exporter {
namespace {

std::string number(double v) {
  std::string s;
  append_number(s, v);
  return s;
}

std::string label(std::string_view v) {
  std::string s;
  append_label_value(s, v);
  return s;
}

TEST(Exposition, ContentTypeIsExactlyTheOnePrometheusParses) {
  // Semicolons, one space after each, no quotes: Prometheus 3 refuses anything it cannot parse.
  EXPECT_EQ(kPrometheusContentType, "text/plain; version=0.0.4; charset=utf-8");
}

TEST(Exposition, NumbersAreShortestRoundTrip) {
  EXPECT_EQ(number(0), "0");
  EXPECT_EQ(number(1), "1");
  EXPECT_EQ(number(-2.5), "-2.5");
  EXPECT_EQ(number(0.97), "0.97");
  EXPECT_EQ(number(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(number(1980e6), "1.98e+09");  // shorter than 1980000000
  EXPECT_EQ(number(150754820096.0), "150754820096");
  EXPECT_EQ(number(1e-7), "1e-07");
  for (double v : {1.0 / 3, 412345678.901, 6.02214076e23, 5e-324, 1.7976931348623157e308}) {
    EXPECT_EQ(std::strtod(number(v).c_str(), nullptr), v) << number(v);
  }
}

TEST(Exposition, SpecialValuesAreSpelledAsPrometheusWants) {
  EXPECT_EQ(number(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(number(-std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(number(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(number(-std::numeric_limits<double>::infinity()), "-Inf");
}

// A locale whose decimal point is a comma, as in de_DE: available on every machine.
struct CommaDecimal : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  char do_thousands_sep() const override { return '.'; }
  std::string do_grouping() const override { return "\3"; }
};

TEST(Exposition, NumbersKeepTheDotUnderACommaLocale) {
  const std::locale old =
      std::locale::global(std::locale(std::locale::classic(), new CommaDecimal));
  // The C locale too, where the system has a German one (printf and strtod follow it).
  const std::string old_c = std::setlocale(LC_ALL, nullptr);
  const char* german = nullptr;
  for (const char* name : {"de_DE.UTF-8", "de_DE.utf8", "de_DE", "German"}) {
    if (std::setlocale(LC_ALL, name) != nullptr) {
      german = name;
      break;
    }
  }
  const std::string text = number(1234.5) + " " + number(0.25);
  std::string body;
  ExpositionWriter w(body);
  w.family("x_ratio", "help", MetricType::kGauge);
  w.sample({{"gpu", "0"}}, 1234567.125);
  std::setlocale(LC_ALL, old_c.c_str());
  std::locale::global(old);
  EXPECT_EQ(text, "1234.5 0.25");
  EXPECT_NE(body.find("x_ratio{gpu=\"0\"} 1234567.125\n"), std::string::npos) << body;
  if (german == nullptr) std::printf("note: no German C locale here; the C++ locale was tested\n");
}

TEST(Exposition, LabelValuesEscapeBackslashQuoteAndNewline) {
  EXPECT_EQ(label("plain"), "plain");
  EXPECT_EQ(label(R"(a\b)"), R"(a\\b)");
  EXPECT_EQ(label(R"(say "hi")"), R"(say \"hi\")");
  EXPECT_EQ(label("two\nlines"), R"(two\nlines)");
  EXPECT_EQ(label("\\\"\n"), R"(\\\"\n)");
  EXPECT_EQ(label("tab\there"), "tab\there");  // allowed as is
  EXPECT_EQ(label("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(Exposition, HelpEscapesBackslashAndNewlineButNotQuotes) {
  std::string s;
  append_help_text(s, "a \"b\" c\\d\ne");
  EXPECT_EQ(s, R"(a "b" c\\d\ne)");
}

TEST(Exposition, NameValidation) {
  EXPECT_TRUE(valid_metric_name("gpumon_gpu_power_watts"));
  EXPECT_TRUE(valid_metric_name("DCGM_FI_DEV_GPU_UTIL"));
  EXPECT_TRUE(valid_metric_name("job:rule:rate5m"));
  EXPECT_TRUE(valid_metric_name("_x"));
  EXPECT_FALSE(valid_metric_name(""));
  EXPECT_FALSE(valid_metric_name("1abc"));
  EXPECT_FALSE(valid_metric_name("a-b"));
  EXPECT_FALSE(valid_metric_name("a b"));
  EXPECT_FALSE(valid_metric_name("__reserved"));
  EXPECT_FALSE(valid_metric_name("caf\xC3\xA9"));
  EXPECT_TRUE(valid_label_name("gpu"));
  EXPECT_TRUE(valid_label_name("UUID"));
  EXPECT_FALSE(valid_label_name("a:b"));
  EXPECT_FALSE(valid_label_name("__name__"));
  EXPECT_FALSE(valid_label_name("9"));
}

TEST(Exposition, WriterGroupsFamiliesAndEndsWithNewline) {
  std::string body;
  ExpositionWriter w(body);
  w.family("a_total", "First \\ help\nline", MetricType::kCounter);
  w.sample({{"gpu", "0"}}, 1);
  w.sample({{"gpu", "1"}, {"x", "q\""}}, 2.5);
  w.family("b", "No samples: nothing written", MetricType::kGauge);
  w.family("c", "Unlabelled", MetricType::kGauge);
  w.sample({}, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(body,
            "# HELP a_total First \\\\ help\\nline\n"
            "# TYPE a_total counter\n"
            "a_total{gpu=\"0\"} 1\n"
            "a_total{gpu=\"1\",x=\"q\\\"\"} 2.5\n"
            "# HELP c Unlabelled\n"
            "# TYPE c gauge\n"
            "c NaN\n");
  EXPECT_EQ(w.families_written(), 2U);
}

TEST(Exposition, SummaryWithoutQuantilesWritesSumAndCount) {
  std::string body;
  ExpositionWriter w(body);
  w.family("step_seconds", "Step time", MetricType::kSummary);
  w.sample_suffixed("_sum", {{"rank", "0"}}, 2.5);
  w.sample_suffixed("_count", {{"rank", "0"}}, 10);
  EXPECT_EQ(body,
            "# HELP step_seconds Step time\n"
            "# TYPE step_seconds summary\n"
            "step_seconds_sum{rank=\"0\"} 2.5\n"
            "step_seconds_count{rank=\"0\"} 10\n");
}

TEST(Exposition, WriterRefusesWhatWouldBreakTheFormat) {
  std::string body;
  ExpositionWriter w(body);
  EXPECT_THROW(w.sample({}, 1), std::logic_error);  // no family yet
  EXPECT_THROW(w.family("bad name", "h", MetricType::kGauge), std::invalid_argument);
  w.family("a", "h", MetricType::kGauge);
  EXPECT_THROW(w.sample({{"bad-label", "v"}}, 1), std::invalid_argument);
  w.sample({}, 1);
  w.family("b", "h", MetricType::kGauge);
  // Going back to "a" would split its group in two.
  EXPECT_THROW(w.family("a", "h", MetricType::kGauge), std::logic_error);
  EXPECT_EQ(body, "# HELP a h\n# TYPE a gauge\na 1\n");
}

}  // namespace
}  // namespace gpumon::exporter
