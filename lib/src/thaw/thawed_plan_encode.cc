// encode_thawed_plan (thaw_draft.h): the plan dump's bytes in encode_plain_json's layout,
// written from the draft and the meta's decoded params. A large meta has hundreds of
// thousands of placements: as a tree each is an object of two to four members, built,
// walked once and freed; here each distinct placement is encoded once and copied.
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "json/python_writer.h"
#include "spec/placement.h"
#include "thaw/thaw_draft.h"

namespace hpfreeze {

Json thawed_params(const MetaBoundary& b) {
  JsonObject out;
  out.reserve(b.params.size());
  for (const MetaParam& p : b.params) {
    JsonObject axes;
    axes.reserve(p.axes.size());
    for (const MetaAxisPlacement& a : p.axes)
      axes.push_back({a.axis, placement_to_dump(a.placement)});
    out.push_back({p.name, Json(std::move(axes))});
  }
  return Json(std::move(out));
}

namespace {

using namespace pyjson;

// Each distinct placement spelling's bytes as an axis value (placement_to_dump written at
// kAxisDepth). Filled before writing; read-only, and so shared by two writers, after.
class PlacementBytes {
 public:
  void add(const MetaAxisPlacement& a) {
    if (find(a.text) != nullptr) return;
    std::string bytes;
    {
      OutputBuffer out(bytes);
      pyjson::write_plain_json(out, placement_to_dump(a.placement), kAxisDepth);
    }
    if (few_.size() < kFew) {
      few_.emplace_back(a.text, std::move(bytes));
    } else {
      many_.emplace(a.text, std::move(bytes));
    }
  }

  // The bytes of a spelling add() has seen.
  [[nodiscard]] const std::string* find(std::string_view text) const {
    for (const auto& [spelling, bytes] : few_) {
      if (spelling == text) return &bytes;
    }
    auto it = many_.find(text);
    return it == many_.end() ? nullptr : &it->second;
  }

 private:
  // A meta holds a handful of spellings: a short scan beats hashing each of its axes.
  static constexpr std::size_t kFew = 32;
  std::vector<std::pair<std::string_view, std::string>> few_;
  std::unordered_map<std::string_view, std::string> many_;
};

class ThawedPlanWriter {
 public:
  ThawedPlanWriter(const ThawDraft& draft, const PlacementBytes& placements)
      : draft_(draft), placements_(placements) {}

  // Size of the bytes written for ASCII names without escapes (and numbers at their
  // widest); collects the placements' bytes on the way.
  static std::size_t module_size(const ModuleDraft& m, PlacementBytes& placements) {
    std::size_t size =
        member_overhead(kModuleDepth) + m.fqn.size() + container_overhead(kModuleDepth);
    for (std::size_t f = 0; f < kSpecFields.size(); ++f) {
      if (!m.fields[f]) continue;
      size += member_overhead(kFieldDepth) + kSpecFields[f].attribute.size() +
              pyjson::python_json_size(*m.fields[f], kFieldDepth);
    }
    if (m.params == nullptr) return size;
    size += member_overhead(kFieldDepth) + kSpecFields[kParamsField].attribute.size() +
            container_overhead(kFieldDepth);
    for (const MetaParam& p : m.params->params) {
      size += member_overhead(kParamDepth) + p.name.size() + container_overhead(kParamDepth);
      for (const MetaAxisPlacement& a : p.axes) {
        placements.add(a);
        size += member_overhead(kAxisDepth) + a.axis.size() + placements.find(a.text)->size();
      }
    }
    return size;
  }

  // The head members and the opening of "modules".
  void head(OutputBuffer& out) const {
    open_bracket(out, '{');
    for (std::size_t i = 0; i < draft_.head.size(); ++i) {
      write_newline(out, 1, i > 0);
      write_key(out, draft_.head[i].key);
      pyjson::write_plain_json(out, draft_.head[i].value, 1);
    }
    write_newline(out, 1, !draft_.head.empty());
    write_key(out, "modules");
    write_raw(out, draft_.modules.empty() ? "{}" : "{");
  }

  // The modules [begin, end), and the closing brackets when `end` is the last.
  void modules(OutputBuffer& out, std::size_t begin, std::size_t end) const {
    for (std::size_t i = begin; i < end; ++i) {
      write_newline(out, kModuleDepth, i > 0);
      write_key(out, draft_.modules[i].fqn);
      module(out, draft_.modules[i]);
    }
    if (end < draft_.modules.size()) return;
    if (end > 0) close_bracket(out, '}', 1);
    close_bracket(out, '}', 0);
  }

 private:
  void module(OutputBuffer& out, const ModuleDraft& m) const {
    bool comma = false;
    for (std::size_t f = 0; f < kSpecFields.size(); ++f) {
      const bool from_params = f == kParamsField && m.params != nullptr;
      if (!from_params && !m.fields[f]) continue;
      if (!comma) open_bracket(out, '{');
      write_newline(out, kFieldDepth, comma);
      comma = true;
      write_key(out, kSpecFields[f].attribute);
      if (from_params) {
        params(out, *m.params);
      } else {
        pyjson::write_plain_json(out, *m.fields[f], kFieldDepth);
      }
    }
    if (comma) {
      close_bracket(out, '}', kModuleDepth);
    } else {
      write_raw(out, "{}");
    }
  }

  void params(OutputBuffer& out, const MetaBoundary& b) const {
    if (b.params.empty()) {
      write_raw(out, "{}");
      return;
    }
    open_bracket(out, '{');
    for (std::size_t p = 0; p < b.params.size(); ++p) {
      const MetaParam& param = b.params[p];
      write_newline(out, kParamDepth, p > 0);
      write_key(out, param.name);
      if (param.axes.empty()) {
        write_raw(out, "{}");
        continue;
      }
      open_bracket(out, '{');
      for (std::size_t a = 0; a < param.axes.size(); ++a) {
        write_newline(out, kAxisDepth, a > 0);
        write_key(out, param.axes[a].axis);
        write_raw(out, *placements_.find(param.axes[a].text));
      }
      close_bracket(out, '}', kParamDepth);
    }
    close_bracket(out, '}', kFieldDepth);
  }

  const ThawDraft& draft_;
  const PlacementBytes& placements_;
};

}  // namespace

std::string encode_thawed_plan(const ThawDraft& draft, Concurrency concurrency) {
  PlacementBytes placements;
  const std::size_t count = draft.modules.size();
  std::vector<std::size_t> sizes(count);
  std::size_t head = container_overhead(0) + member_overhead(1) + 7 + container_overhead(1);
  for (const JsonMember& m : draft.head) {
    head += member_overhead(1) + m.key.size() + pyjson::python_json_size(m.value, 1);
  }
  std::size_t total = head;
  for (std::size_t i = 0; i < count; ++i) {
    sizes[i] = ThawedPlanWriter::module_size(draft.modules[i], placements);
    total += sizes[i];
  }
  const ThawedPlanWriter writer(draft, placements);

  // A large dump is written in two halves at once, split at the module with about half
  // the bytes before it.
  std::string bytes;
  pyjson::write_in_halves(
      bytes, total, head, sizes, concurrency,
      [&](OutputBuffer& out) {
        writer.head(out);
        writer.modules(out, 0, count);
      },
      [&](OutputBuffer& out, std::size_t split) {
        writer.head(out);
        writer.modules(out, 0, split);
      },
      [&](OutputBuffer& out, std::size_t split) { writer.modules(out, split, count); });
  return bytes;
}

}  // namespace hpfreeze
