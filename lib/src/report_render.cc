#include <algorithm>
#include <limits>

#include "hpfreeze/capacity.h"
#include "hpfreeze/encode.h"
#include "hpfreeze/report_command.h"

// The text and JSON forms of a Report: rendering only, the arithmetic is in report_command.cc.
namespace hpfreeze {
namespace {

constexpr std::uint64_t kMaxMeshSize = std::numeric_limits<std::int64_t>::max();

bool is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

// ---- text rendering ----

enum class Align { kLeft, kRight };

// Columns padded to their widest cell; the last column is not padded (no trailing blanks).
std::string render_table(const std::vector<Align>& align,
                         const std::vector<std::vector<std::string>>& rows,
                         std::string_view indent) {
  std::vector<std::size_t> width(align.size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent);
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::size_t pad = width[i] - row[i].size();
      const bool last = i + 1 == row.size();
      if (i != 0) line += "  ";
      if (align[i] == Align::kRight) line.append(pad, ' ');
      line += row[i];
      if (align[i] == Align::kLeft && !last) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

std::string mesh_line(const Report& r) {
  std::string out = "mesh:";
  if (r.mesh.empty()) {
    out += " none, every axis counts as size 1";
  } else {
    for (const MeshAxis& a : r.mesh) out += " " + a.name + "=" + std::to_string(a.size);
    out += r.mesh_source == MeshSource::kFlag ? " (from --mesh)" : " (from parallel_dims)";
  }
  out += '\n';
  if (!r.axis_order.empty()) {
    out += "placement order:";
    for (std::size_t i = 0; i < r.axis_order.size(); ++i) {
      out += (i == 0 ? " " : ", ") + r.axis_order[i];
    }
    out += '\n';
  }
  return out;
}

// "(all 5, by bytes)" or "(top 10 of 131, by bytes)".
std::string count_of(std::size_t shown, std::size_t total, std::string_view order) {
  const std::string head = shown == total
                               ? "all " + std::to_string(total)
                               : "top " + std::to_string(shown) + " of " + std::to_string(total);
  return " (" + head + ", " + std::string(order) + "):\n";
}

Json coordinates_json(const Mesh& mesh, const std::vector<std::uint64_t>* at) {
  JsonObject o;
  for (std::size_t i = 0; i < mesh.axes.size(); ++i) {
    o.push_back({mesh.axes[i].axis, Json(at == nullptr ? mesh.axes[i].size : (*at)[i])});
  }
  return Json(std::move(o));
}

// One element of "meshes", the same members as render_capacity_json writes (docs/formats.md,
// "report --json").
Json mesh_json(const MeshCapacity& m) {
  Json indivisible;
  if (m.indivisible) {
    const Indivisible& x = *m.indivisible;
    indivisible = Json(JsonObject{{"param", Json(std::string_view(x.fqn))},
                                  {"dim", Json(static_cast<std::uint64_t>(x.dim))},
                                  {"size", Json(x.size)},
                                  {"axis", Json(std::string_view(x.axis))},
                                  {"axis_size", Json(x.axis_size)},
                                  {"split_factor", Json(x.split_factor)}});
  }
  return Json(JsonObject{{"mesh", coordinates_json(m.mesh, nullptr)},
                         {"devices", Json(m.mesh.devices)},
                         {"max_rank_bytes", Json(m.max_rank_bytes)},
                         {"min_rank_bytes", Json(m.min_rank_bytes)},
                         {"max_rank", coordinates_json(m.mesh, &m.max_rank)},
                         {"min_rank", coordinates_json(m.mesh, &m.min_rank)},
                         {"divisible", Json(m.divisible())},
                         {"indivisible", std::move(indivisible)},
                         {"fits", m.fits ? Json(*m.fits) : Json()},
                         {"over_by_bytes", m.fits ? Json(m.over_by) : Json()}});
}

const char* mesh_source_name(MeshSource source) {
  switch (source) {
    case MeshSource::kFlag:
      return "--mesh";
    case MeshSource::kParallelDims:
      return "parallel_dims";
    case MeshSource::kNone:
      break;
  }
  return "none";
}

}  // namespace

// The --mesh value (report_command.h): parsing beside the rendering keeps the arithmetic in
// report_command.cc.
Expected<std::vector<MeshAxis>> parse_mesh_arg(std::string_view text) {
  auto fail = [](std::string message) -> Expected<std::vector<MeshAxis>> {
    return make_error({}, {}, std::move(message));
  };
  if (text.empty()) return fail("expected AXIS=N[,AXIS=N...], got an empty value");
  std::vector<MeshAxis> axes;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty()) {
      return fail("empty item in " + quote_for_diagnostic(text) + "; expected AXIS=N[,AXIS=N...]");
    }
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return fail(quote_for_diagnostic(item) + " is not AXIS=N");
    }
    const std::string_view name = item.substr(0, eq);
    const std::string_view size = item.substr(eq + 1);
    if (name.empty() || !is_name_start(name.front()) ||
        !std::all_of(name.begin(), name.end(), is_name_char)) {
      return fail(quote_for_diagnostic(item) + ": the axis name must match [A-Za-z_][A-Za-z0-9_]*");
    }
    std::uint64_t value = 0;
    bool digits = !size.empty();
    bool too_large = false;
    for (char c : size) {
      if (c < '0' || c > '9') {
        digits = false;
        break;
      }
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, c - '0', &value) || value > kMaxMeshSize) {
        too_large = true;
      }
    }
    if (!digits || value == 0) {
      return fail(quote_for_diagnostic(item) + ": the size must be a decimal integer >= 1");
    }
    if (too_large) {
      return fail(quote_for_diagnostic(item) + ": the size is larger than 2^63-1");
    }
    for (const MeshAxis& a : axes) {
      if (a.name == name) return fail("axis " + quote_for_diagnostic(name) + " is given twice");
    }
    axes.push_back(MeshAxis{std::string(name), value});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return axes;
}

std::string render_report_text(const Report& r, std::size_t top) {
  std::string out = mesh_line(r);
  out += '\n';
  const std::size_t planned = r.params.size();
  const std::size_t uncovered = r.uncovered.size();
  std::uint64_t total = r.rank0_bytes;
  if (__builtin_add_overflow(total, r.uncovered_bytes, &total)) {
    total = std::numeric_limits<std::uint64_t>::max();
  }
  auto row = [](std::string label, std::size_t count, std::uint64_t bytes) {
    return std::vector<std::string>{std::move(label), std::to_string(count),
                                    format_byte_size(bytes), std::to_string(bytes)};
  };
  out += render_table({Align::kLeft, Align::kRight, Align::kRight, Align::kRight},
                      {{"", "PARAMS", "BYTES", "EXACT"},
                       row("rank 0, planned params", planned, r.rank0_bytes),
                       row("  of which replicated", r.replicated_params, r.replicated_bytes),
                       row("planned params at full size", planned, r.unsharded_bytes),
                       row("uncovered params (whole on every rank)", uncovered, r.uncovered_bytes),
                       row("rank 0 total", planned + uncovered, total)},
                      "");

  if (r.capacity) {
    // The planner's view: every rank, optimizer accounting, budget (docs/capacity.md).
    out += "\nmeshes (worst and best rank over all ranks; uncovered params included):\n";
    out += render_capacity_text(*r.capacity);
  }

  const std::size_t nb = std::min(top, r.boundaries.size());
  if (nb > 0) {
    out += "\nboundaries" + count_of(nb, r.boundaries.size(), "by rank-0 bytes");
    std::vector<std::vector<std::string>> rows{{"BYTES", "PARAMS", "BOUNDARY"}};
    for (std::size_t i = 0; i < nb; ++i) {
      const BoundaryReport& b = r.boundaries[i];
      rows.push_back({format_byte_size(b.rank0_bytes), std::to_string(b.params),
                      b.fqn.empty() ? "(root)" : b.fqn});
    }
    out += render_table({Align::kRight, Align::kRight, Align::kLeft}, rows, "  ");
    if (nb < r.boundaries.size()) {
      std::uint64_t rest = 0;
      for (std::size_t i = nb; i < r.boundaries.size(); ++i) rest += r.boundaries[i].rank0_bytes;
      out += "  ... " + std::to_string(r.boundaries.size() - nb) + " more, " +
             format_byte_size(rest) + "\n";
    }
  }

  const std::size_t np = std::min(top, r.params.size());
  if (np > 0) {
    out += "\nparams" + count_of(np, r.params.size(), "by rank-0 bytes");
    std::vector<std::vector<std::string>> rows{
        {"BYTES", "DTYPE", "SHAPE", "LOCAL", "PLACEMENTS", "PARAM"}};
    for (std::size_t i = 0; i < np; ++i) {
      const ParamReport& p = r.params[i];
      rows.push_back({format_byte_size(p.rank0_bytes), p.dtype.value_or("-"), shape_text(p.shape),
                      shape_text(p.local_shape), p.placements.empty() ? "-" : p.placements, p.fqn});
    }
    out += render_table(
        {Align::kRight, Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft}, rows,
        "  ");
  }

  const std::size_t nu = std::min(top, r.uncovered.size());
  if (nu > 0) {
    out += "\nuncovered params" + count_of(nu, r.uncovered.size(), "by bytes");
    std::vector<std::vector<std::string>> rows{{"BYTES", "DTYPE", "SHAPE", "PARAM"}};
    for (std::size_t i = 0; i < nu; ++i) {
      const UncoveredParam& u = r.uncovered[i];
      rows.push_back(
          {format_byte_size(u.bytes), u.dtype.value_or("-"), shape_text(u.shape), u.fqn});
    }
    out += render_table({Align::kRight, Align::kLeft, Align::kLeft, Align::kLeft}, rows, "  ");
  }

  std::size_t counts[3] = {0, 0, 0};
  for (const Diagnostic& d : r.findings) ++counts[static_cast<int>(d.severity)];
  if (!r.findings.empty()) {
    out += "\nfindings: " + plural(counts[0], "error") + ", " + plural(counts[1], "warning") +
           ", " + plural(counts[2], "note") + " (on stderr)\n";
  }
  return out;
}

std::string render_report_json(const Report& r, std::optional<std::size_t> top) {
  auto shape_json = [](const std::vector<std::uint64_t>& shape) {
    JsonArray a;
    for (std::uint64_t d : shape) a.emplace_back(d);
    return Json(std::move(a));
  };
  auto placements_json = [](const ParamReport& p) {
    JsonObject o;
    for (const auto& [axis, text] : p.axes) {
      o.push_back({std::string_view(axis), Json(std::string_view(text))});
    }
    return Json(std::move(o));
  };
  JsonObject mesh;
  for (const MeshAxis& a : r.mesh) mesh.push_back({a.name, Json(a.size)});
  JsonArray boundaries;
  for (const BoundaryReport& b : r.boundaries) {
    boundaries.emplace_back(JsonObject{{"fqn", Json(std::string_view(b.fqn))},
                                       {"rank0_bytes", Json(b.rank0_bytes)},
                                       {"params", Json(static_cast<std::uint64_t>(b.params))}});
  }
  JsonArray params;
  const std::size_t np = std::min(top.value_or(r.params.size()), r.params.size());
  for (std::size_t i = 0; i < np; ++i) {
    const ParamReport& p = r.params[i];
    params.emplace_back(JsonObject{{"fqn", Json(std::string_view(p.fqn))},
                                   {"shape", shape_json(p.shape)},
                                   {"dtype", p.dtype ? Json(std::string_view(*p.dtype)) : Json()},
                                   {"local_shape", shape_json(p.local_shape)},
                                   {"rank0_bytes", Json(p.rank0_bytes)},
                                   {"full_bytes", Json(p.full_bytes)},
                                   {"boundary", Json(std::string_view(p.boundary))},
                                   {"placements", placements_json(p)},
                                   {"replicated", Json(p.replicated)}});
  }
  JsonArray uncovered;
  for (const UncoveredParam& u : r.uncovered) {
    uncovered.emplace_back(
        JsonObject{{"fqn", Json(std::string_view(u.fqn))},
                   {"shape", shape_json(u.shape)},
                   {"dtype", u.dtype ? Json(std::string_view(*u.dtype)) : Json()},
                   {"bytes", Json(u.bytes)}});
  }
  JsonArray order;
  for (const std::string& a : r.axis_order) order.emplace_back(std::string_view(a));
  JsonArray meshes;
  if (r.capacity) {
    for (const MeshCapacity& m : r.capacity->meshes) meshes.push_back(mesh_json(m));
  }
  JsonArray findings;
  for (const Diagnostic& d : r.findings) {
    const char* severity = d.severity == Severity::kError     ? "error"
                           : d.severity == Severity::kWarning ? "warning"
                                                              : "note";
    findings.emplace_back(JsonObject{{"severity", Json(severity)},
                                     {"file", Json(std::string_view(d.file))},
                                     {"pointer", Json(std::string_view(d.pointer))},
                                     {"message", Json(std::string_view(d.message))}});
  }
  const auto count = [](std::size_t n) { return Json(static_cast<std::uint64_t>(n)); };
  const CapacityResult* cap = r.capacity ? &*r.capacity : nullptr;
  const Json doc(
      JsonObject{{"mesh", Json(std::move(mesh))},
                 {"mesh_source", Json(mesh_source_name(r.mesh_source))},
                 {"placement_order", Json(std::move(order))},
                 {"counts", Json(JsonObject{{"planned_params", count(r.params.size())},
                                            {"replicated_params", count(r.replicated_params)},
                                            {"uncovered_params", count(r.uncovered.size())},
                                            {"boundaries", count(r.boundaries.size())}})},
                 {"rank0_bytes", Json(r.rank0_bytes)},
                 {"replicated_bytes", Json(r.replicated_bytes)},
                 {"unsharded_bytes", Json(r.unsharded_bytes)},
                 {"uncovered_bytes", Json(r.uncovered_bytes)},
                 {"boundaries", Json(std::move(boundaries))},
                 {"params", Json(std::move(params))},
                 {"uncovered", Json(std::move(uncovered))},
                 {"optimizer", cap != nullptr ? Json(optimizer_name(cap->optimizer)) : Json()},
                 {"budget_bytes", cap != nullptr && cap->budget ? Json(*cap->budget) : Json()},
                 {"swept", Json(r.swept)},
                 {"meshes", Json(std::move(meshes))},
                 {"findings", Json(std::move(findings))}});
  return encode_plain_json(doc) + "\n";
}

}  // namespace hpfreeze
