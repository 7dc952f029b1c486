// SPDX-License-Identifier: MIT
#include "util/json_text.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>

namespace gpumon::util {
namespace {

std::string json(std::string_view s, JsonEscape mode = JsonEscape::kPlain) {
  std::string out;
  append_json_string(out, s, mode);
  return out;
}

std::string number(double v) {
  std::string out;
  append_json_double(out, v);
  return out;
}

TEST(JsonText, PlainStringsEscapeQuotesBackslashesAndControls) {
  EXPECT_EQ(json("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(json("l1\nl2\tx\r\x01\x7f"), R"("l1\nl2\tx\u000d\u0001\u007f")");
  EXPECT_EQ(json("</script>&"), R"("</script>&")");
  EXPECT_EQ(json(std::string_view("a\0b", 3)), R"("a\u0000b")");
}

TEST(JsonText, HtmlSafeStringsCannotEndAScriptElement) {
  EXPECT_EQ(json("</script>&", JsonEscape::kHtmlSafe), R"("\u003c/script\u003e\u0026")");
  EXPECT_EQ(json("\xE2\x80\xA8", JsonEscape::kHtmlSafe), R"("\u2028")");
  EXPECT_EQ(json("\xE2\x80\xA8"), "\"\xE2\x80\xA8\"");
}

TEST(JsonText, InvalidUtf8BecomesReplacementCharacters) {
  EXPECT_EQ(json("caf\xC3\xA9"), "\"caf\xC3\xA9\"");
  EXPECT_EQ(json("\xff\xC3"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT_EQ(json("\xED\xA0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // surrogate
}

TEST(JsonText, DoublesAreTheShortestRoundTripText) {
  EXPECT_EQ(number(0.125), "0.125");
  EXPECT_EQ(number(1.0), "1");
  EXPECT_EQ(number(1e-7), "1e-07");
  EXPECT_EQ(number(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(number(std::numeric_limits<double>::infinity()), "null");
  for (double v : {0.1 + 0.2, 1764446400.123456789, 5e-324, 1.7976931348623157e308}) {
    EXPECT_EQ(std::strtod(number(v).c_str(), nullptr), v) << number(v);
  }
  std::string out;
  append_json_int(out, -9223372036854775807LL - 1);
  EXPECT_EQ(out, "-9223372036854775808");
}

}  // namespace
}  // namespace gpumon::util
