#include <algorithm>
#include <charconv>
#include <limits>
#include <span>

#include "base/text_table.h"
#include "hpfreeze/capacity.h"
#include "hpfreeze/encode.h"
#include "hpfreeze/report.h"

// The text and JSON forms of a Report: rendering only, the arithmetic is in build_report.cc.
namespace hpfreeze {
namespace {

// ---- text rendering ----

std::string mesh_line(const Report& r) {
  std::string out = "mesh:";
  if (r.mesh.empty()) {
    out += r.swept ? " none fixed" : " none, every axis counts as size 1";
  } else {
    Mesh fixed;  // spelled as the meshes table spells one
    for (const MeshAxis& a : r.mesh) fixed.axes.push_back(AxisSize{a.name, a.size});
    out += " " + format_mesh(fixed);
    out += r.mesh_source == MeshSource::kFlag ? " (from --mesh)" : " (from parallel_dims)";
  }
  out += '\n';
  if (r.swept && r.capacity) {
    // The per-parameter block is of one mesh; say which, since no sweep row is it unless
    // every swept axis lists size 1.
    std::string swept;
    for (const AxisSize& a : r.capacity->meshes.front().mesh.axes) {
      const bool fixed = std::any_of(r.mesh.begin(), r.mesh.end(),
                                     [&](const MeshAxis& m) { return m.name == a.axis; });
      if (!fixed) swept += (swept.empty() ? "" : ", ") + a.axis;
    }
    out += "rank 0 below: the mesh above with the swept axes (" + swept +
           ") at size 1; the meshes table has every swept mesh\n";
  }
  if (!r.axis_order.empty()) {
    out += "placement order:";
    for (std::size_t i = 0; i < r.axis_order.size(); ++i) {
      out += (i == 0 ? " " : ", ") + r.axis_order[i];
    }
    out += '\n';
  }
  return out;
}

// "[4, 8]", as shape_text spells a shape.
std::string dims_text(std::span<const std::uint64_t> dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

// "(all 5, by bytes)" or "(top 10 of 131, by bytes)".
std::string count_of(std::size_t shown, std::size_t total, std::string_view order) {
  const std::string head = shown == total
                               ? "all " + std::to_string(total)
                               : "top " + std::to_string(shown) + " of " + std::to_string(total);
  return " (" + head + ", " + std::string(order) + "):\n";
}

// Python's json.dumps(indent=2) layout, written straight into one string (the report of a
// large model is tens of megabytes: no value tree in between). Members go in the order
// written; strings are spelled as every other hpfreeze output (append_python_string).
class ReportJsonWriter {
 public:
  void reserve(std::size_t n) { out_.reserve(n); }
  ReportJsonWriter& start_object() {
    open('{');
    return *this;
  }
  void end_object() { close('}'); }
  void start_array() { open('['); }
  void end_array() { close(']'); }
  // Returns the writer, for the member's value: w.key("fqn").string(fqn).
  ReportJsonWriter& key(std::string_view k) {
    element();
    append_python_string(out_, k);
    out_ += ": ";
    after_key_ = true;
    return *this;
  }
  void string(std::string_view s) {
    element();
    append_python_string(out_, s);
  }
  void optional_string(const std::optional<std::string_view>& s) {
    if (s) {
      string(*s);
    } else {
      null();
    }
  }
  void number(std::uint64_t v) {
    element();
    char digits[24];
    out_.append(digits, std::to_chars(digits, digits + sizeof digits, v).ptr);
  }
  void boolean(bool b) {
    element();
    out_ += b ? "true" : "false";
  }
  void null() {
    element();
    out_ += "null";
  }
  void dims(std::span<const std::uint64_t> values) {
    start_array();
    for (std::uint64_t v : values) number(v);
    end_array();
  }
  std::string finish() {
    out_ += '\n';
    return std::move(out_);
  }

 private:
  // Before a value: nothing after a key; else ",\n" or "\n" and the indentation when
  // inside a container.
  void element() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (counts_.empty()) return;
    out_ += counts_.back()++ == 0 ? "\n" : ",\n";
    out_.append(2 * counts_.size(), ' ');
  }
  void open(char c) {
    element();
    out_ += c;
    counts_.push_back(0);
  }
  void close(char c) {
    const bool empty = counts_.back() == 0;
    counts_.pop_back();
    if (!empty) {
      out_ += '\n';
      out_.append(2 * counts_.size(), ' ');
    }
    out_ += c;
  }

  std::string out_;
  std::vector<std::size_t> counts_;  // members or elements written, per open container
  bool after_key_ = false;
};

void write_coordinates(ReportJsonWriter& w, const Mesh& mesh,
                       const std::vector<std::uint64_t>* at) {
  w.start_object();
  for (std::size_t i = 0; i < mesh.axes.size(); ++i) {
    w.key(mesh.axes[i].axis).number(at == nullptr ? mesh.axes[i].size : (*at)[i]);
  }
  w.end_object();
}

// One element of "meshes", the same members as render_capacity_json writes (docs/formats.md,
// "report --json").
void write_mesh(ReportJsonWriter& w, const MeshCapacity& m) {
  w.start_object();
  w.key("mesh");
  write_coordinates(w, m.mesh, nullptr);
  w.key("devices").number(m.mesh.devices);
  w.key("max_rank_bytes").number(m.max_rank_bytes);
  w.key("min_rank_bytes").number(m.min_rank_bytes);
  w.key("max_rank");
  write_coordinates(w, m.mesh, &m.max_rank);
  w.key("min_rank");
  write_coordinates(w, m.mesh, &m.min_rank);
  w.key("divisible").boolean(m.divisible());
  w.key("indivisible");
  if (m.indivisible) {
    const Indivisible& x = *m.indivisible;
    w.start_object();
    w.key("param").string(x.fqn);
    w.key("dim").number(x.dim);
    w.key("size").number(x.size);
    w.key("axis").string(x.axis);
    w.key("axis_size").number(x.axis_size);
    w.key("split_factor").number(x.split_factor);
    w.end_object();
  } else {
    w.null();
  }
  w.key("fits");
  if (m.fits) {
    w.boolean(*m.fits);
  } else {
    w.null();
  }
  w.key("over_by_bytes");
  if (m.fits) {
    w.number(m.over_by);
  } else {
    w.null();
  }
  w.end_object();
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

std::string placements_text(const ParamReport& param) {
  std::string out;
  for (const ReportAxis a : param.axes) {
    if (!out.empty()) out += ' ';
    out.append(a->axis).append("=").append(a->text);
  }
  return out;
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
                      b.fqn.empty() ? std::string("(root)") : std::string(b.fqn)});
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
      const std::string placements = placements_text(p);
      rows.push_back({format_byte_size(p.rank0_bytes), std::string(p.dtype().value_or("-")),
                      dims_text(p.shape()), dims_text(p.local_shape),
                      placements.empty() ? "-" : placements, std::string(p.fqn)});
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
      rows.push_back({format_byte_size(u.bytes), std::string(u.dtype.value_or("-")),
                      dims_text(u.shape), std::string(u.fqn)});
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
  const std::size_t np = std::min(top.value_or(r.params.size()), r.params.size());
  ReportJsonWriter w;
  w.reserve(512 + np * 420 + (r.boundaries.size() + r.uncovered.size()) * 160 +
            r.findings.size() * 256);
  w.start_object();
  w.key("mesh").start_object();
  for (const MeshAxis& a : r.mesh) {
    w.key(a.name).number(a.size);
  }
  w.end_object();
  w.key("mesh_source").string(mesh_source_name(r.mesh_source));
  w.key("placement_order").start_array();
  for (const std::string& a : r.axis_order) w.string(a);
  w.end_array();
  w.key("counts").start_object();
  w.key("planned_params").number(r.params.size());
  w.key("replicated_params").number(r.replicated_params);
  w.key("uncovered_params").number(r.uncovered.size());
  w.key("boundaries").number(r.boundaries.size());
  w.end_object();
  w.key("rank0_bytes").number(r.rank0_bytes);
  w.key("replicated_bytes").number(r.replicated_bytes);
  w.key("unsharded_bytes").number(r.unsharded_bytes);
  w.key("uncovered_bytes").number(r.uncovered_bytes);
  w.key("boundaries").start_array();
  for (const BoundaryReport& b : r.boundaries) {
    w.start_object().key("fqn").string(b.fqn);
    w.key("rank0_bytes").number(b.rank0_bytes);
    w.key("params").number(b.params);
    w.end_object();
  }
  w.end_array();
  w.key("params").start_array();
  for (std::size_t i = 0; i < np; ++i) {
    const ParamReport& p = r.params[i];
    w.start_object();
    w.key("fqn").string(p.fqn);
    w.key("shape").dims(p.shape());
    w.key("dtype").optional_string(p.dtype());
    w.key("local_shape").dims(p.local_shape);
    w.key("rank0_bytes").number(p.rank0_bytes);
    w.key("full_bytes").number(p.full_bytes);
    w.key("boundary").string(p.boundary);
    w.key("placements").start_object();
    for (const ReportAxis a : p.axes) {
      w.key(a->axis).string(a->text);
    }
    w.end_object();
    w.key("replicated").boolean(p.replicated);
    w.end_object();
  }
  w.end_array();
  w.key("uncovered").start_array();
  for (const UncoveredParam& u : r.uncovered) {
    w.start_object();
    w.key("fqn").string(u.fqn);
    w.key("shape").dims(u.shape);
    w.key("dtype").optional_string(u.dtype);
    w.key("bytes").number(u.bytes);
    w.end_object();
  }
  w.end_array();
  const CapacityResult* cap = r.capacity ? &*r.capacity : nullptr;
  w.key("optimizer");
  if (cap != nullptr) {
    w.string(optimizer_name(cap->optimizer));
  } else {
    w.null();
  }
  w.key("budget_bytes");
  if (cap != nullptr && cap->budget) {
    w.number(*cap->budget);
  } else {
    w.null();
  }
  w.key("zero").start_object();
  w.key("stage").number(static_cast<std::uint64_t>(r.capacity ? cap->zero.stage : 0));
  w.key("axis").string(cap != nullptr ? std::string_view(cap->zero.axis) : "dp");
  w.end_object();
  w.key("swept").boolean(r.swept);
  w.key("answer");
  if (const MeshCapacity* m = cap != nullptr ? capacity_answer(*cap) : nullptr) {
    w.start_object();
    w.key("mesh");
    write_coordinates(w, m->mesh, nullptr);
    w.key("devices").number(m->mesh.devices);
    w.key("max_rank_bytes").number(m->max_rank_bytes);
    w.end_object();
  } else {
    w.null();
  }
  w.key("meshes").start_array();
  if (cap != nullptr) {
    for (const MeshCapacity& m : cap->meshes) {
      if (!cap->fits_only || m.usable()) write_mesh(w, m);
    }
  }
  w.end_array();
  w.key("findings").start_array();
  for (const Diagnostic& d : r.findings) {
    w.start_object();
    w.key("severity");
    w.string(d.severity == Severity::kError     ? "error"
             : d.severity == Severity::kWarning ? "warning"
                                                : "note");
    w.key("file").string(d.file);
    w.key("pointer").string(d.pointer);
    w.key("message").string(d.message);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.finish();
}

}  // namespace hpfreeze
