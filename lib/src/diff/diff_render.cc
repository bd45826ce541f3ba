// The two renderings of one difference: the text lines and the JSON lines of `hpfreeze
// diff` (docs/cli.md, "hpfreeze diff").
#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "diff/diff.h"
#include "json/encode.h"
#include "json/json_stream.h"
#include "json/output_name.h"
#include "spec/placement.h"

namespace hpfreeze {
namespace {

bool printable_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7F; });
}

void append_value(std::string& out, const Json& value, DiffSubject subject) {
  if (subject == DiffSubject::kPlacement && value.is_string() &&
      printable_ascii(value.as_string()) && parse_placement(value.as_string()).ok()) {
    out += value.as_string();
    return;
  }
  out += encode_compact_json(value);
}

}  // namespace

std::string_view diff_op_name(DiffOp op) {
  constexpr std::array<std::string_view, 3> kNames{"remove", "add", "change"};  // enum order
  return kNames[static_cast<std::size_t>(op)];
}

void append_diff_text(std::string& out, const MetaDifference& d) {
  const bool whole = d.subject == DiffSubject::kBoundary || d.subject == DiffSubject::kInjection;
  const std::string_view what = d.subject == DiffSubject::kBoundary ? "boundary" : "injection";
  if (d.op == DiffOp::kChange) {
    out += "~ " + output_name(d.pointer) + ": ";
    append_value(out, *d.old_value, d.subject);
    out += " -> ";
    append_value(out, *d.new_value, d.subject);
  } else {
    const bool added = d.op == DiffOp::kAdd;
    out += (added ? "+ " : "- ") + output_name(d.pointer) + ": ";
    if (whole) {
      out += std::string(what) + (added ? " added" : " removed");
    } else {
      append_value(out, added ? *d.new_value : *d.old_value, d.subject);
    }
  }
  out += '\n';
}

void append_diff_json_line(std::string& out, const MetaDifference& d) {
  JsonStream w(out, JsonLayout::kOneLine);
  w.start_object();
  w.key("op").string(diff_op_name(d.op));
  w.key("pointer").string(d.pointer);
  if (d.old_value != nullptr) {
    w.key("old").value(*d.old_value);
  }
  if (d.new_value != nullptr) {
    w.key("new").value(*d.new_value);
  }
  w.end_object();
  w.end_line();
}

}  // namespace hpfreeze
