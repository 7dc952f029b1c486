// SPDX-License-Identifier: MIT
#include "report/text_escape.h"

#include <gtest/gtest.h>

#include <clocale>
#include <cmath>

namespace gpumon::report {
namespace {

std::string json(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string number(double v, int d) {
  std::string out;
  append_json_number(out, v, d);
  return out;
}

TEST(TextEscape, JsonCannotEndItsScriptElement) {
  const std::string j = json("</script><script>alert(1)</script><!-- & \"q\" \\");
  EXPECT_EQ(j.find('<'), std::string::npos);
  EXPECT_EQ(j.find('>'), std::string::npos);
  EXPECT_EQ(j.find('&'), std::string::npos);
  EXPECT_EQ(j,
            "\"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\\u003c!-- "
            "\\u0026 \\\"q\\\" \\\\\"");
}

TEST(TextEscape, JsonEscapesLineSeparatorsAndControls) {
  EXPECT_EQ(json("a\xE2\x80\xA8"
                 "b\xE2\x80\xA9"
                 "c"),
            "\"a\\u2028b\\u2029c\"");
  EXPECT_EQ(json(std::string("x\x01\n\t\x7Fy", 6)), "\"x\\u0001\\n\\t\\u007fy\"");
  EXPECT_EQ(json("H200 \xE2\x84\xA2 \xF0\x9F\x94\xA5"), "\"H200 \xE2\x84\xA2 \xF0\x9F\x94\xA5\"");
}

TEST(TextEscape, InvalidUtf8BecomesReplacementCharacters) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(valid_utf8("ok\xFF"), "ok" + r);
  EXPECT_EQ(valid_utf8("\xC0\x80"), r + r);                  // overlong NUL
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), r + r + r);          // a UTF-16 surrogate
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), r + r + r + r);  // beyond U+10FFFF
  EXPECT_EQ(valid_utf8("end\xE2\x82"), "end" + r + r);       // truncated
  EXPECT_EQ(valid_utf8("\xC3\xA9t\xC3\xA9"), "\xC3\xA9t\xC3\xA9");
  EXPECT_EQ(json("\xFF<"), "\"" + r + "\\u003c\"");
}

TEST(TextEscape, HtmlTextHasNoMarkup) {
  EXPECT_EQ(html_text("<img src=x onerror=\"alert('1')\"> & co"),
            "&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt; &amp; co");
  EXPECT_EQ(html_text(std::string("a\0b\x1b", 4)),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD");
  EXPECT_EQ(html_text("bad \xFE"), "bad \xEF\xBF\xBD");
}

TEST(TextEscape, NumbersAreCompactAndNeverNaN) {
  EXPECT_EQ(number(450.123, 1), "450.1");
  EXPECT_EQ(number(450.15, 3), "450.15");
  EXPECT_EQ(number(2.0, 2), "2");
  EXPECT_EQ(number(1980, 0), "1980");
  EXPECT_EQ(number(-0.0001, 2), "0");
  EXPECT_EQ(number(-3.25, 1), "-3.2");
  EXPECT_EQ(number(std::nan(""), 1), "null");
  EXPECT_EQ(number(INFINITY, 1), "null");
  EXPECT_EQ(number(-INFINITY, 1), "null");
  EXPECT_EQ(number(1e300, 1), "null");  // too long for fixed notation in the buffer
}

TEST(TextEscape, NumbersUseADotUnderAGermanLocale) {
  const char* old = std::setlocale(LC_NUMERIC, nullptr);
  const std::string saved = old ? old : "C";
  if (!std::setlocale(LC_NUMERIC, "de_DE.UTF-8")) GTEST_SKIP() << "no de_DE.UTF-8 locale";
  EXPECT_EQ(number(12.5, 1), "12.5");
  std::setlocale(LC_NUMERIC, saved.c_str());
}

}  // namespace
}  // namespace gpumon::report
