// encode_meta (freeze.h): the meta's bytes straight from the frozen plan, in the layout of
// encode_python_json (docs/formats.md, "The meta"). The param_plan tables are already in
// key order, so the writer neither sorts nor visits a tree there; every other member is
// written by the tree encoder at its depth.
#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "freeze/freeze.h"
#include "json/python_writer.h"

namespace hpfreeze {
namespace {

using namespace pyjson;

class ParamPlanWriter {
 public:
  ParamPlanWriter(OutputBuffer& out, const FrozenParamPlan& plan) : out_(out), plan_(plan) {}

  // Size of the bytes written for ASCII names without escapes: the brackets, and each
  // boundary's member.
  static constexpr std::size_t kBracketsSize = container_overhead(1);
  static std::size_t boundary_size(const FrozenParamPlan& plan, const FrozenBoundary& b) {
    std::size_t size =
        member_overhead(kModuleDepth) + b.fqn.size() + container_overhead(kModuleDepth);
    for (const JsonMember& m : b.fields) {
      size += member_overhead(kFieldDepth) + m.key.size() +
              pyjson::python_json_size(m.value, kFieldDepth);
    }
    if (!b.has_params) return size;
    size += member_overhead(kFieldDepth) + 6 + container_overhead(kFieldDepth);
    for (std::size_t p = b.first_param; p < b.first_param + b.param_count; ++p) {
      const FrozenParam& param = plan.params[p];
      size += member_overhead(kParamDepth) + param.name.size() + container_overhead(kParamDepth);
      for (std::size_t a = param.first_axis; a < param.first_axis + param.axis_count; ++a) {
        size += member_overhead(kAxisDepth) + plan.axes[a].axis.size() +
                plan.axes[a].placement.size() + 2;
      }
    }
    return size;
  }

  // The boundaries [begin, end) of the object, with its opening bracket when `begin` is
  // the first and its closing one when `end` is the last: two writers can write the two
  // halves of one object into two buffers.
  void write(std::size_t begin, std::size_t end) {
    const std::size_t count = plan_.boundaries.size();
    if (count == 0) {
      write_raw(out_, "{}");
      return;
    }
    if (begin == 0) open_bracket(out_, '{');
    for (std::size_t i = begin; i < end; ++i) {
      const FrozenBoundary& b = plan_.boundaries[i];
      write_newline(out_, kModuleDepth, i > 0);
      write_key(out_, b.fqn);
      boundary(b);
    }
    if (end == count) close_bracket(out_, '}', 1);
  }

 private:
  static constexpr std::size_t kFewFields = 16;  // the spec-field table's size

  void boundary(const FrozenBoundary& b) {
    if (b.fields.empty() && !b.has_params) {
      write_raw(out_, "{}");
      return;
    }
    // The members in key order: the fields (a few, in table order) and "params".
    std::array<const JsonMember*, kFewFields> order{};
    std::vector<const JsonMember*> many;
    const JsonMember** fields = order.data();
    if (b.fields.size() > kFewFields) {
      many.resize(b.fields.size());
      fields = many.data();
    }
    for (std::size_t i = 0; i < b.fields.size(); ++i) {
      std::size_t j = i;
      for (; j > 0 && b.fields[i].key < fields[j - 1]->key; --j) fields[j] = fields[j - 1];
      fields[j] = &b.fields[i];
    }
    open_bracket(out_, '{');
    bool comma = false;
    bool params_written = !b.has_params;
    for (std::size_t i = 0; i < b.fields.size(); ++i) {
      if (!params_written && std::string_view("params") < fields[i]->key) {
        params(b, comma);
        params_written = comma = true;
      }
      write_newline(out_, kFieldDepth, comma);
      comma = true;
      write_key(out_, fields[i]->key);
      pyjson::write_python_json(out_, fields[i]->value, kFieldDepth);
    }
    if (!params_written) params(b, comma);
    close_bracket(out_, '}', kModuleDepth);
  }

  void params(const FrozenBoundary& b, bool comma) {
    write_newline(out_, kFieldDepth, comma);
    write_raw(out_, "\"params\": ");
    if (b.param_count == 0) {
      write_raw(out_, "{}");
      return;
    }
    open_bracket(out_, '{');
    for (std::size_t p = b.first_param; p < b.first_param + b.param_count; ++p) {
      const FrozenParam& param = plan_.params[p];
      write_newline(out_, kParamDepth, p > b.first_param);
      write_key(out_, param.name);
      if (param.axis_count == 0) {
        write_raw(out_, "{}");
        continue;
      }
      open_bracket(out_, '{');
      for (std::size_t a = param.first_axis; a < param.first_axis + param.axis_count; ++a) {
        write_newline(out_, kAxisDepth, a > param.first_axis);
        write_key(out_, plan_.axes[a].axis);
        pyjson::write_string(out_, plan_.axes[a].placement);
      }
      close_bracket(out_, '}', kParamDepth);
    }
    close_bracket(out_, '}', kFieldDepth);
  }

  OutputBuffer& out_;
  const FrozenParamPlan& plan_;
};

std::size_t names_size(const std::vector<std::string_view>& names) {
  std::size_t size = container_overhead(1);
  for (std::string_view name : names) size += 2 + 2 * 2 + name.size() + 2;
  return size;
}

void write_names(OutputBuffer& out, const std::vector<std::string_view>& names) {
  if (names.empty()) {
    write_raw(out, "[]");
    return;
  }
  open_bracket(out, '[');
  for (std::size_t i = 0; i < names.size(); ++i) {
    write_newline(out, 2, i > 0);
    pyjson::write_string(out, names[i]);
  }
  close_bracket(out, ']', 1);
}

// A top-level member: a Json value, or one of the two tables written here.
struct TopMember {
  enum class Kind { kJson, kParamPlan, kShardedParams };
  std::string_view key;
  const Json* value = nullptr;
  Kind kind = Kind::kJson;
};

void write_meta(std::string& bytes, const FrozenPlan& frozen, const JsonObject& rest,
                Concurrency concurrency) {
  std::vector<TopMember> members;
  members.reserve(rest.size() + 7);
  for (const JsonMember& m : rest) members.push_back({m.key, &m.value});
  // The frozen fields replace what defaults and base put there (assemble_meta's order).
  const auto set = [&members](std::string_view key, const Json* value, TopMember::Kind kind) {
    for (TopMember& m : members) {
      if (m.key == key) {
        m = {key, value, kind};
        return;
      }
    }
    members.push_back({key, value, kind});
  };
  set("param_plan", nullptr, TopMember::Kind::kParamPlan);
  set("injections", &frozen.injections, TopMember::Kind::kJson);
  set("tied_pairs", &frozen.tied_pairs, TopMember::Kind::kJson);
  set("special_handlers", &frozen.special_handlers, TopMember::Kind::kJson);
  set("frozen_sharded_params", nullptr, TopMember::Kind::kShardedParams);
  set("boundary_classes", &frozen.boundary_classes, TopMember::Kind::kJson);
  set("mesh_dim_names", &frozen.mesh_dim_names, TopMember::Kind::kJson);
  std::stable_sort(members.begin(), members.end(), [](const TopMember& a, const TopMember& b) {
    return compare_names(a.key, b.key) < 0;
  });

  const FrozenParamPlan& plan = frozen.param_plan;
  const std::size_t boundaries = plan.boundaries.size();
  // The size estimate (ParamPlanWriter::boundary_size), whole and up to each member.
  std::vector<std::size_t> boundary_sizes(boundaries);
  std::vector<std::size_t> before(members.size() + 1, container_overhead(0));
  std::size_t plan_member = members.size();
  for (std::size_t i = 0; i < members.size(); ++i) {
    const TopMember& m = members[i];
    std::size_t size = member_overhead(1) + m.key.size();
    switch (m.kind) {
      case TopMember::Kind::kJson:
        size += pyjson::python_json_size(*m.value, 1);
        break;
      case TopMember::Kind::kParamPlan:
        plan_member = i;
        size += ParamPlanWriter::kBracketsSize;
        for (std::size_t b = 0; b < boundaries; ++b) {
          boundary_sizes[b] = ParamPlanWriter::boundary_size(plan, plan.boundaries[b]);
          size += boundary_sizes[b];
        }
        break;
      case TopMember::Kind::kShardedParams:
        size += names_size(frozen.frozen_sharded_params);
        break;
    }
    before[i + 1] = before[i] + size;
  }
  const std::size_t total = before.back();

  // Members [from, to), param_plan's boundaries [0, split) only.
  const auto write_members = [&](OutputBuffer& out, std::size_t from, std::size_t to,
                                 std::size_t split) {
    for (std::size_t i = from; i < to; ++i) {
      write_newline(out, 1, i > 0);
      write_key(out, members[i].key);
      switch (members[i].kind) {
        case TopMember::Kind::kJson:
          pyjson::write_python_json(out, *members[i].value, 1);
          break;
        case TopMember::Kind::kParamPlan:
          ParamPlanWriter(out, plan).write(0, split);
          break;
        case TopMember::Kind::kShardedParams:
          write_names(out, frozen.frozen_sharded_params);
          break;
      }
    }
  };

  // A large meta is written in two halves at once, split at the param_plan boundary with
  // about half the bytes before it.
  pyjson::write_in_halves(
      bytes, total, before[plan_member] + member_overhead(1) + 1, boundary_sizes, concurrency,
      [&](OutputBuffer& out) {
        open_bracket(out, '{');
        write_members(out, 0, members.size(), boundaries);
        close_bracket(out, '}', 0);
      },
      [&](OutputBuffer& out, std::size_t split) {
        open_bracket(out, '{');
        write_members(out, 0, plan_member + 1, split);
      },
      [&](OutputBuffer& out, std::size_t split) {
        ParamPlanWriter(out, plan).write(split, boundaries);
        write_members(out, plan_member + 1, members.size(), boundaries);
        close_bracket(out, '}', 0);
      });
}

}  // namespace

std::string encode_meta(const FrozenPlan& frozen, const JsonObject& defaults_and_base,
                        Concurrency concurrency) {
  std::string bytes;
  write_meta(bytes, frozen, defaults_and_base, concurrency);
  return bytes;
}

}  // namespace hpfreeze
