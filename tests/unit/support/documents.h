#pragma once
// Inputs of the unit tests made in memory: documents parsed from text, the text of a small
// model dump and meta, values kept alive for what views them, and diagnostics as lines.
// Header only; every test executable includes what it uses.

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hpfreeze/base/diagnostic.h"
#include "json/json_document.h"

namespace hpfreeze::test_support {

// `text` parsed as the file `name`. A text that is not JSON fails the test, with the parse's
// message, and gives the document `null`.
inline JsonDocument parse_document(std::string text, std::string name) {
  Expected<JsonDocument> doc = parse_json_document(name, std::move(text));
  if (doc) return std::move(*doc);
  ADD_FAILURE() << "test input is not JSON: " << doc.errors().front().location_and_message();
  return std::move(*parse_json_document(std::move(name), "null"));
}

// parse_document with a file name of its own: a test file declares
// `constexpr test_support::DocumentParser parse{"plan.json"};` and calls parse(text), or
// parse(text, "other.json") for another file.
struct DocumentParser {
  std::string_view name;

  JsonDocument operator()(std::string text) const {
    return parse_document(std::move(text), std::string(name));
  }
  JsonDocument operator()(std::string text, std::string other_name) const {
    return parse_document(std::move(text), std::move(other_name));
  }
};

// `value`, kept until the test binary exits, for results that view it (a Report views its
// decoded inputs, a planner's parameter its strings).
template <class T>
T& keep(T value) {
  static std::deque<T> kept;
  return kept.emplace_back(std::move(value));
}

// "FILE[:LINE:COL]: POINTER: message" of each diagnostic, in order.
inline std::vector<std::string> diagnostic_lines(const Diagnostics& diagnostics) {
  std::vector<std::string> out;
  out.reserve(diagnostics.size());
  for (const Diagnostic& d : diagnostics) out.push_back(d.location_and_message());
  return out;
}

// A parameter of model_json.
struct ModelParam {
  std::string fqn;
  std::string shape;  // JSON array text
  const char* dtype;  // nullptr: no dtype key
};

// A model tree dump (hpfreeze.model/v1) of one module "" holding `params`, in their order.
inline std::string model_json(const std::vector<ModelParam>& params) {
  std::string out = R"j({"format": "hpfreeze.model/v1", "modules": {"": "M"}, "parameters": {)j";
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i != 0) out += ", ";
    out += "\"" + params[i].fqn + "\": {\"shape\": " + params[i].shape;
    if (params[i].dtype != nullptr) out += ", \"dtype\": \"" + std::string(params[i].dtype) + "\"";
    out += "}";
  }
  return out + "}}";
}

// A meta whose param_plan has one boundary "b" with the params object `params` (JSON text).
inline std::string plan_b(const std::string& params) {
  return R"j({"param_plan": {"b": {"params": )j" + params + "}}}";
}

}  // namespace hpfreeze::test_support
