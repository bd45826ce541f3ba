// Property tests: random values encoded by us and by python3's json module itself must give
// the same bytes. Values reach Python in a notation that never goes through our encoder
// (UTF-8 as hex, doubles as IEEE bit patterns, integers in decimal, trees in prefix form).

#include <gtest/gtest.h>
#include <stdlib.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "json/encode.h"
#include "json/json.h"

namespace hpfreeze {
namespace {

// Reads one value per line of argv[2]:
//   n | t | f | i<decimal> | d<16 hex digits, IEEE bits> | s<hex of UTF-8> |
//   a<count> <values...> | o<count> <s-key value>...
// and writes, for each line and each mode of argv[1] (comma separated), the decimal length
// of json.dumps' result, a newline, then the result itself.
constexpr char kScript[] = R"PY(
import json
import struct
import sys


def parse(tokens, i):
    tag, rest = tokens[i][0], tokens[i][1:]
    i += 1
    if tag == 'n':
        return None, i
    if tag == 't':
        return True, i
    if tag == 'f':
        return False, i
    if tag == 'i':
        return int(rest), i
    if tag == 'd':
        return struct.unpack('>d', bytes.fromhex(rest))[0], i
    if tag == 's':
        return bytes.fromhex(rest).decode('utf-8'), i
    if tag == 'a':
        items = []
        for _ in range(int(rest)):
            item, i = parse(tokens, i)
            items.append(item)
        return items, i
    if tag == 'o':
        members = {}
        for _ in range(int(rest)):
            key, i = parse(tokens, i)
            value, i = parse(tokens, i)
            assert isinstance(key, str) and key not in members, key
            members[key] = value
        return members, i
    raise ValueError(tokens[i - 1])


DUMPS = {
    'sorted': lambda v: json.dumps(v, indent=2, sort_keys=True),
    'plain': lambda v: json.dumps(v, indent=2),
    'compact': lambda v: json.dumps(v, separators=(',', ':')),
}
modes = [DUMPS[m] for m in sys.argv[1].split(',')]
with open(sys.argv[2], encoding='ascii') as cases, \
        open(sys.argv[3], 'w', encoding='ascii', newline='') as out:
    for line in cases:
        tokens = line.split()
        value, end = parse(tokens, 0)
        assert end == len(tokens), line
        for dumps in modes:
            text = dumps(value)
            out.write('%d\n%s' % (len(text), text))
)PY";

// A scratch directory removed with everything in it when the test ends.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "hpfreeze-encode-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Runs kScript over `lines` (one case each) and returns its outputs, cases.size() * modes
// of them, or an empty vector after recording a test failure.
std::vector<std::string> python_dumps(const std::string& modes,
                                      const std::vector<std::string>& lines) {
  TempDir dir;
  if (dir.path().empty()) {
    ADD_FAILURE() << "cannot create a temporary directory";
    return {};
  }
  const auto script = dir.path() / "dumps.py";
  const auto input = dir.path() / "cases.txt";
  const auto output = dir.path() / "out.txt";
  std::ofstream(script) << kScript;
  {
    std::ofstream in(input, std::ios::binary);
    for (const std::string& line : lines) in << line << '\n';
  }
  const std::string command = std::string("'") + HPFREEZE_PYTHON + "' '" + script.string() + "' " +
                              modes + " '" + input.string() + "' '" + output.string() + "'";
  const int status = std::system(command.c_str());
  if (status != 0) {
    ADD_FAILURE() << "python failed (status " << status << "): " << command;
    return {};
  }
  std::ifstream out(output, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  std::vector<std::string> results;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t newline = text.find('\n', pos);
    std::size_t length = 0;
    std::from_chars(text.data() + pos, text.data() + newline, length);
    results.push_back(text.substr(newline + 1, length));
    pos = newline + 1 + length;
  }
  return results;
}

std::string hex_bytes(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xF]);
  }
  return out;
}

// One token of the notation read by kScript: a tag letter, its payload, a space.
void add_token(std::string& line, char tag, std::string_view payload) {
  line += tag;
  line += payload;
  line += ' ';
}

void append_utf8(std::string& out, std::uint32_t cp) {
  const auto byte = [&out](std::uint32_t b) { out.push_back(static_cast<char>(b)); };
  if (cp < 0x80) {
    byte(cp);
  } else if (cp < 0x800) {
    byte(0xC0 | (cp >> 6));
    byte(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    byte(0xE0 | (cp >> 12));
    byte(0x80 | ((cp >> 6) & 0x3F));
    byte(0x80 | (cp & 0x3F));
  } else {
    byte(0xF0 | (cp >> 18));
    byte(0x80 | ((cp >> 12) & 0x3F));
    byte(0x80 | ((cp >> 6) & 0x3F));
    byte(0x80 | (cp & 0x3F));
  }
}

// Random values, each paired with its line for the Python side. Strings live in the arena.
class CaseGenerator {
 public:
  std::uint64_t bits() { return rng_(); }
  std::uint64_t below(std::uint64_t n) { return rng_() % n; }

  double random_bit_pattern() {
    for (;;) {
      const double d = std::bit_cast<double>(rng_());
      if (std::isfinite(d)) return d;
    }
  }

  // Exponent near 1.0 so that the fixed layout and both of its borders get exercised.
  double random_moderate() {
    const std::uint64_t exponent = 1023 - 30 + below(90);
    const std::uint64_t sign = below(2) << 63;
    return std::bit_cast<double>(sign | (exponent << 52) | (rng_() >> 12));
  }

  // Short decimals as people write them: 1..17 significant digits times a power of ten.
  double random_nice() {
    const int digits = 1 + static_cast<int>(below(17));
    std::string text;
    if (below(4) == 0) text.push_back('-');
    text.push_back(static_cast<char>('1' + below(9)));
    for (int i = 1; i < digits; ++i) text.push_back(static_cast<char>('0' + below(10)));
    text += 'e';
    text += std::to_string(static_cast<int>(below(60)) - 30);
    double d = 0;
    std::from_chars(text.data(), text.data() + text.size(), d);
    return d;
  }

  std::uint32_t random_code_point() {
    static constexpr std::uint32_t kBorders[] = {
        0x00,   0x1F,   0x20,   0x7E,   0x7F,   0x80,   0x9F,    0xA0,    0xFF,     0x7FF,  0x800,
        0xD7FF, 0xE000, 0xFEFF, 0xFFFD, 0xFFFE, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF, 0x2028, 0x2029};
    static constexpr char kSpecial[] = "\"\\/\b\f\n\r\t\x7f";
    switch (below(10)) {
      case 0:
      case 1:
      case 2:
        return static_cast<std::uint32_t>(0x20 + below(0x5F));
      case 3:
        return static_cast<std::uint8_t>(kSpecial[below(sizeof kSpecial - 1)]);
      case 4:
        return static_cast<std::uint32_t>(below(0x20));
      case 5:
        return static_cast<std::uint32_t>(0x80 + below(0x780));
      case 6:
      case 7: {
        std::uint32_t cp = 0;
        do cp = static_cast<std::uint32_t>(0x800 + below(0x10000 - 0x800));
        while (cp >= 0xD800 && cp <= 0xDFFF);
        return cp;
      }
      case 8:
        return static_cast<std::uint32_t>(0x10000 + below(0x100000));
      default:
        return kBorders[below(std::size(kBorders))];
    }
  }

  std::string random_utf8(std::size_t max_length) {
    std::string s;
    const std::size_t length = below(max_length + 1);
    for (std::size_t i = 0; i < length; ++i) append_utf8(s, random_code_point());
    return s;
  }

  std::string_view store(std::string s) { return arena_.store(std::move(s)); }

  // Keys that collide on prefixes, case and encoding length, plus random ones.
  std::string random_key() {
    static constexpr std::string_view kPool[] = {"",
                                                 "a",
                                                 "A",
                                                 "b",
                                                 "B",
                                                 "a.b",
                                                 "a0",
                                                 "a-b",
                                                 "a_b",
                                                 "ab",
                                                 "~",
                                                 "\x7f",
                                                 "\xc3\xa9",
                                                 "\xee\x80\x80",
                                                 "\xef\xbf\xbf",
                                                 "\xf0\x9f\x98\x80",
                                                 "model.layers.0",
                                                 "model.layers.10"};
    if (below(2) == 0) return std::string(kPool[below(std::size(kPool))]);
    return random_utf8(6);
  }

  Json scalar(std::string& line) {
    switch (below(8)) {
      case 0:
        add_token(line, 'n', "");
        return Json();
      case 1: {
        const bool b = below(2) == 0;
        add_token(line, b ? 't' : 'f', "");
        return Json(b);
      }
      case 2: {
        const auto i = static_cast<std::int64_t>(rng_() >> below(64));
        add_token(line, 'i', std::to_string(i));
        return Json(i);
      }
      case 3: {
        const std::uint64_t u = rng_() | (std::uint64_t{1} << 63);
        add_token(line, 'i', std::to_string(u));
        return Json(u);
      }
      case 4:
      case 5:
        return number(below(2) == 0 ? random_nice() : random_bit_pattern(), line);
      default:
        return string(random_utf8(12), line);
    }
  }

  Json number(double d, std::string& line) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx",
                  static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(d)));
    add_token(line, 'd', buf);
    return Json(d);
  }

  Json string(std::string s, std::string& line) {
    add_token(line, 's', hex_bytes(s));
    return Json(store(std::move(s)));
  }

  Json object(std::size_t max_members, int depth, std::string& line) {
    const std::size_t count = below(max_members + 1);
    std::set<std::string> seen;
    JsonObject members;
    std::string body;
    for (std::size_t i = 0; i < count; ++i) {
      std::string key = random_key();
      if (!seen.insert(key).second) continue;
      add_token(body, 's', hex_bytes(key));
      Json value = tree(depth + 1, body);
      members.push_back(JsonMember{store(std::move(key)), std::move(value)});
    }
    add_token(line, 'o', std::to_string(members.size()));
    line += body;
    return Json(std::move(members));
  }

  // The root is always a container; below it, one value in three is a container, down to
  // depth 6.
  Json tree(int depth, std::string& line) {
    if (depth > 0 && (depth >= 6 || below(3) != 0)) return scalar(line);
    if (below(2) == 0) return object(6, depth, line);
    const std::size_t count = below(6);
    JsonArray elements;
    std::string body;
    for (std::size_t i = 0; i < count; ++i) elements.push_back(tree(depth + 1, body));
    add_token(line, 'a', std::to_string(count));
    line += body;
    return Json(std::move(elements));
  }

 private:
  std::mt19937_64 rng_{42};
  StringArena arena_;
};

// Compares case by case; reports the first few mismatches in full and counts the rest.
void expect_same(const std::vector<std::string>& ours, const std::vector<std::string>& python,
                 const std::vector<std::string>& lines) {
  ASSERT_EQ(ours.size(), python.size());
  ASSERT_FALSE(lines.empty());
  const std::size_t per_case = ours.size() / lines.size();  // outputs (layouts) per case
  int mismatches = 0;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    if (ours[i] == python[i]) continue;
    if (++mismatches <= 10) {
      EXPECT_EQ(ours[i], python[i]) << "case " << i / per_case << ": " << lines[i / per_case];
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(EncodeMatchesPython, Doubles) {
  CaseGenerator gen;
  std::vector<double> values;
  for (int i = 0; i < 20000; ++i) values.push_back(gen.random_bit_pattern());
  for (int i = 0; i < 5000; ++i) values.push_back(gen.random_moderate());
  for (int i = 0; i < 5000; ++i) values.push_back(gen.random_nice());
  // Powers of ten and their neighbours straddle every layout border.
  for (int e = -325; e <= 308; ++e) {
    const double p = std::pow(10.0, e);
    for (const double d : {p, std::nextafter(p, 0.0), std::nextafter(p, HUGE_VAL)}) {
      values.push_back(d);
      values.push_back(-d);
    }
  }
  for (const double d : {0.0, -0.0, 5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
                         1.7976931348623157e308, 9007199254740992.0, 9007199254740993.0,
                         9999999999999998.0, 1e16, 0.0001, 0.00009999999999999999}) {
    values.push_back(d);
  }

  std::vector<std::string> lines;
  std::vector<std::string> ours;
  for (const double d : values) {
    std::string line;
    const Json value = gen.number(d, line);
    lines.push_back(line);
    ours.push_back(encode_python_json(value));
  }
  ASSERT_GE(values.size(), 20000u);
  expect_same(ours, python_dumps("sorted", lines), lines);
}

TEST(EncodeMatchesPython, Integers) {
  CaseGenerator gen;
  std::vector<std::string> lines;
  std::vector<std::string> ours;
  const auto add = [&](Json value, std::string text) {
    lines.push_back('i' + text);
    ours.push_back(encode_python_json(value));
  };
  add(Json(std::numeric_limits<std::int64_t>::min()), "-9223372036854775808");
  add(Json(std::numeric_limits<std::uint64_t>::max()), "18446744073709551615");
  for (int i = 0; i < 2000; ++i) {
    const auto v = static_cast<std::int64_t>(gen.bits() >> gen.below(64));
    const std::int64_t w =
        gen.below(2) == 0 || v == std::numeric_limits<std::int64_t>::min() ? v : -v;
    add(Json(w), std::to_string(w));
  }
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t u = gen.bits() | (std::uint64_t{1} << 63);
    add(Json(u), std::to_string(u));
  }
  expect_same(ours, python_dumps("sorted", lines), lines);
}

TEST(EncodeMatchesPython, Strings) {
  CaseGenerator gen;
  std::vector<std::string> lines;
  std::vector<std::string> ours;
  for (int i = 0; i < 5000; ++i) {
    std::string line;
    // Mostly short, some long enough to cross the encoder's 4 KiB escaping chunks.
    const std::size_t max_code_points = i % 500 == 0 ? 3000 : (i % 20 == 0 ? 400 : 40);
    const Json value = gen.string(gen.random_utf8(max_code_points), line);
    lines.push_back(line);
    ours.push_back(encode_python_json(value));
  }
  expect_same(ours, python_dumps("sorted", lines), lines);
}

TEST(EncodeMatchesPython, TreesInAllThreeLayouts) {
  CaseGenerator gen;
  std::vector<std::string> lines;
  std::vector<std::string> ours;
  for (int i = 0; i < 600; ++i) {
    std::string line;
    const Json value = gen.tree(0, line);
    lines.push_back(line);
    ours.push_back(encode_python_json(value));
    ours.push_back(encode_plain_json(value));
    ours.push_back(encode_compact_json(value));
  }
  expect_same(ours, python_dumps("sorted,plain,compact", lines), lines);
}

TEST(EncodeMatchesPython, WideObjectsSortKeys) {
  CaseGenerator gen;
  std::vector<std::string> lines;
  std::vector<std::string> ours;
  for (int i = 0; i < 300; ++i) {
    std::string line;
    const Json value = gen.object(40, 5, line);
    lines.push_back(line);
    ours.push_back(encode_python_json(value));
  }
  expect_same(ours, python_dumps("sorted", lines), lines);
}

}  // namespace
}  // namespace hpfreeze
