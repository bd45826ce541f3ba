#include "hpfreeze/base/diagnostic.h"

#include <gtest/gtest.h>

namespace hpfreeze {
namespace {

TEST(Diagnostic, LocationParts) {
  Diagnostic d = make_error("plan.json", "/modules/a", "bad");
  EXPECT_EQ(d.location_and_message(), "plan.json: /modules/a: bad");
  d.line = 3;
  EXPECT_EQ(d.location_and_message(), "plan.json:3: /modules/a: bad");
  d.column = 7;
  EXPECT_EQ(d.location_and_message(), "plan.json:3:7: /modules/a: bad");
  EXPECT_EQ(make_error("", "", "bad").location_and_message(), "bad");
  EXPECT_EQ(make_error("f", "", "bad").location_and_message(), "f: bad");
  EXPECT_EQ(make_io_error("f", "cannot open").error_class, ErrorClass::kIo);
  EXPECT_EQ(make_warning("f", "", "w").severity, Severity::kWarning);
}

TEST(Diagnostic, AlwaysOneLine) {
  // Keys may hold any character; a diagnostic must still be a single line.
  Diagnostic d = make_error("a\nb.json", "/modules/c\nd\re\x01", "x\ty\x7f");
  EXPECT_EQ(d.location_and_message(), "a\\nb.json: /modules/c\\nd\\re\\x01: x\\ty\\x7f");
}

TEST(Diagnostic, PointerEscaping) {
  EXPECT_EQ(pointer_join("/modules", "a/b~c"), "/modules/a~1b~0c");
  EXPECT_EQ(pointer_join("", ""), "/");
  std::string p;
  append_pointer_token(p, "~1");
  EXPECT_EQ(p, "/~01");
}

TEST(Diagnostic, QuoteForDiagnostic) {
  EXPECT_EQ(quote_for_diagnostic("S(0)"), "'S(0)'");
  EXPECT_EQ(quote_for_diagnostic("it's"), "'it\\'s'");
  EXPECT_EQ(quote_for_diagnostic("a\\b"), "'a\\\\b'");
  EXPECT_EQ(quote_for_diagnostic("\n\t\r\x01\xff"), "'\\n\\t\\r\\x01\\xff'");
}

TEST(Diagnostic, LongTextsAreShortened) {
  EXPECT_EQ(shorten_for_diagnostic("abcdef", 6), "abcdef");
  EXPECT_EQ(shorten_for_diagnostic("abcdefghij", 6), "abcd...[4 characters left out]...ij");
  EXPECT_EQ(shorten_for_diagnostic("abcdefg", 6), "abcd...[1 character left out]...fg");
  // Cuts move off the middle of a UTF-8 sequence; characters, not bytes, are counted.
  EXPECT_EQ(shorten_for_diagnostic("ab\xc3\xa9\xc3\xa9\xc3\xa9xy", 6),
            "ab\xc3\xa9...[2 characters left out]...xy");
  EXPECT_EQ(shorten_for_diagnostic("a\xc3\xa9\xc3\xa9\xc3\xa9xy", 6),
            "a\xc3\xa9...[2 characters left out]...xy");
  const std::string name(1000, 'n');
  const std::string quoted = quote_for_diagnostic(name);
  EXPECT_EQ(quoted, "'" + std::string(106, 'n') + "...[840 characters left out]..." +
                        std::string(54, 'n') + "'");
  Diagnostic d = make_error("f", "/" + name, "m");
  EXPECT_EQ(d.location_and_message(), "f: /" + std::string(105, 'n') +
                                          "...[841 characters left out]..." + std::string(54, 'n') +
                                          ": m");
}

}  // namespace
}  // namespace hpfreeze
