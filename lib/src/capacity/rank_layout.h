#pragma once
// The ranks of one mesh as digits, and each view of the mesh the model's steps chunk over
// (a mesh axis, a ZeRO group, the folded layout's edp and ep) as a number made of them
// (docs/capacity.md, "How it is computed").
//
// A rank is a vector of digits, most significant first, in the order ranks are numbered:
// the mesh's axes in its order (axis layout), or pp, then the dense region flattened
// (folded layout). Each view's coordinate is a mixed-radix number of terms, each term a
// digit or a slice (x / div) % mod of one. In the folded layout ep rarely cuts the dense
// region at an axis boundary: when it cuts one axis, that axis becomes two digits (its
// edp part and its ep part), so every view stays a number of whole digits; when it cuts
// across several axes they merge into one digit whose values are all enumerated.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capacity/capacity.h"

namespace hpfreeze::capacity_detail {

struct Term {
  std::uint32_t digit = 0;
  std::uint64_t div = 1;
  std::uint64_t mod = 1;  // the term's radix
  // A whole digit (div 1, mod its size) is x itself: no division on the search's hot path.
  [[nodiscard]] std::uint64_t of(std::uint64_t x) const {
    return div == 1 && x < mod ? x : (x / div) % mod;
  }
};

struct View {
  std::vector<Term> terms;  // most significant first; empty: size 1
  std::uint64_t size = 1;   // the product of the terms' radixes
};

struct RankLayout {
  std::vector<std::uint64_t> digits;  // sizes, each > 1
  std::vector<char> sliced;           // per digit: some term takes a slice of it
  std::vector<View> views;            // per model view: its axes, then its ZeRO groups
  std::vector<View> mesh_views;       // per mesh axis, the coordinate it reports
  std::optional<View> edp;            // folded: the expert view
  std::optional<View> ep;
  std::optional<Indivisible> indivisible;  // folded: ep does not divide the dense region
};

// `model_axes`: the model's axis order; `zero_views`: its ZeRO groups.
RankLayout lay_out(const Mesh& mesh, const std::vector<std::string>& model_axes,
                   const std::vector<CapacityModel::ZeroView>& zero_views, ExpertLayout layout);

// The value of `view` at the rank whose digits are `coord`.
inline std::uint64_t view_value(const View& view, const std::vector<std::uint64_t>& coord) {
  std::uint64_t v = 0;
  for (const Term& t : view.terms) v = v * t.mod + t.of(coord[t.digit]);
  return v;
}

}  // namespace hpfreeze::capacity_detail
