// What a plan change costs on one mesh (capacity_change.h).
#include "capacity/capacity_change.h"

#include <utility>

#include "capacity/capacity_json.h"
#include "json/json_stream.h"

namespace hpfreeze {
namespace {

// "(+183.4 MiB, +51.8 %)": the change from `from` to `to`, the percentage of `from` in
// tenths rounded half up (none from 0 bytes); "(no change)".
std::string change_text(std::uint64_t from, std::uint64_t to) {
  if (from == to) return "(no change)";
  const char sign = to > from ? '+' : '-';
  const std::uint64_t by = to > from ? to - from : from - to;
  std::string out = "(" + std::string(1, sign) + format_byte_size(by);
  if (from > 0) {
    __extension__ using U128 = unsigned __int128;
    // Up to 2^64 x 1000 tenths (a byte grown to 2^64-1): 128-bit, written digit by digit.
    U128 tenths = (U128{by} * 2000 + from) / (U128{from} * 2);
    std::string digits(1, static_cast<char>('0' + static_cast<int>(tenths % 10)));
    digits.insert(0, 1, '.');
    tenths /= 10;
    do {
      digits.insert(0, 1, static_cast<char>('0' + static_cast<int>(tenths % 10)));
      tenths /= 10;
    } while (tenths > 0);
    out += ", " + std::string(1, sign) + digits + " %";
  }
  return out + ")";
}

// One line: "worst rank on MESH: OLD -> NEW (CHANGE)"; a side without ranks is "none", and
// why follows instead of the change (once when both sides say the same).
void append_rank_line(std::string& out, const char* what, const std::string& on,
                      const MemoryChange& change, std::optional<std::uint64_t> MeshMemory::*bytes) {
  const MeshMemory& from = change.old_memory;
  const MeshMemory& to = change.new_memory;
  const auto value = [bytes](const MeshMemory& m) {
    return m.*bytes ? format_byte_size(*(m.*bytes)) : std::string("none");
  };
  out += std::string(what) + " rank on " + on + ": " + value(from) + " -> " + value(to) + " ";
  if (from.*bytes && to.*bytes) {
    out += change_text(*(from.*bytes), *(to.*bytes));
  } else if (!(from.*bytes) && !(to.*bytes) && from.no_ranks == to.no_ranks) {
    out += "(" + to.no_ranks + ")";
  } else {
    std::string why;
    for (const auto& [side, m] : {std::pair{"old", &from}, std::pair{"new", &to}}) {
      if (m->*bytes) continue;
      why += (why.empty() ? "" : "; ") + std::string(side) + ": " + m->no_ranks;
    }
    out += "(" + why + ")";
  }
  out += '\n';
}

void write_side(JsonStream& w, const MeshMemory& m) {
  w.start_object();
  w.key("mesh");
  write_mesh_json(w, m.mesh);
  w.key("devices").optional_number(m.devices);
  w.key("max_rank_bytes").optional_number(m.max_rank_bytes);
  w.key("min_rank_bytes").optional_number(m.min_rank_bytes);
  w.key("errors").number(m.errors);
  w.end_object();
}

}  // namespace

MeshMemory mesh_memory(const CapacityResult& result, std::vector<AxisSize> sizes,
                       std::size_t errors, const std::string& not_planned) {
  MeshMemory out;
  out.errors = errors;
  if (!result.planned()) {
    out.mesh.axes = sizes;
    out.sizes = std::move(sizes);
    out.no_ranks = not_planned;
    return out;
  }
  const MeshCapacity& m = result.meshes.front();
  out.mesh = m.mesh;
  out.sizes = std::move(sizes);
  out.devices = m.mesh.devices;
  if (m.laid_out()) {
    out.max_rank_bytes = m.max_rank_bytes;
    out.min_rank_bytes = m.min_rank_bytes;
  } else if (m.refused) {
    out.no_ranks = "not counted: " + refused_text(m);
  } else {
    out.no_ranks = "does not divide: " + indivisible_text(*m.indivisible);
  }
  return out;
}

void append_memory_change_text(std::string& out, const MemoryChange& change) {
  const MeshMemory& from = change.old_memory;
  const MeshMemory& to = change.new_memory;
  const std::string on = change.same_mesh()
                             ? format_mesh(to.mesh)
                             : format_mesh(from.mesh) + " -> " + format_mesh(to.mesh);
  append_rank_line(out, "worst", on, change, &MeshMemory::max_rank_bytes);
  append_rank_line(out, "best", on, change, &MeshMemory::min_rank_bytes);
  if (from.devices && to.devices && *from.devices != *to.devices) {
    out +=
        "devices: " + std::to_string(*from.devices) + " -> " + std::to_string(*to.devices) + '\n';
  }
}

void append_memory_change_json(std::string& out, const MemoryChange& change) {
  JsonStream w(out, JsonLayout::kOneLine);
  w.start_object();
  w.key("memory").start_object();
  w.key("mesh");
  if (change.same_mesh()) {
    write_mesh_json(w, change.new_memory.mesh);
  } else {
    w.null();
  }
  w.key("old");
  write_side(w, change.old_memory);
  w.key("new");
  write_side(w, change.new_memory);
  w.end_object();
  w.end_object();
  w.end_line();
}

}  // namespace hpfreeze
