// What a plan change costs on one mesh (capacity/capacity_change.h): the figures taken from
// a planner's result, and the memory lines and object of diff --model. Expected texts are
// worked out by hand from docs/cli.md's rules (binary units, one decimal, half up).
#include "capacity/capacity_change.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hpfreeze {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

Mesh mesh(std::vector<AxisSize> axes, std::uint64_t devices) {
  return Mesh{std::move(axes), devices};
}

// A side counted on tp=4 ep=8 (32 devices).
MeshMemory counted(std::uint64_t worst, std::uint64_t best, std::uint64_t devices = 32) {
  MeshMemory m;
  m.mesh = mesh({{"tp", 4}, {"ep", 8}}, devices);
  m.sizes = {{"ep", 8}, {"tp", 4}};
  m.devices = devices;
  m.max_rank_bytes = worst;
  m.min_rank_bytes = best;
  return m;
}

std::string text(const MemoryChange& change) {
  std::string out;
  append_memory_change_text(out, change);
  return out;
}

std::string json(const MemoryChange& change) {
  std::string out;
  append_memory_change_json(out, change);
  return out;
}

// The worst-rank line's bracket for a change of the worst rank from `from` to `to` bytes.
std::string bracket(std::uint64_t from, std::uint64_t to) {
  const std::string line = text({counted(from, 0), counted(to, 0)});
  return line.substr(line.find('('), line.find('\n') - line.find('('));
}

TEST(MemoryChange, TheIssuesLine) {
  // 354.1 MiB -> 537.4 MiB: +183.3 MiB exactly in tenths, +51.76 % rounds to +51.8 %.
  const MemoryChange change{counted(3541 * kMiB / 10, 300 * kMiB),
                            counted(5374 * kMiB / 10, 300 * kMiB)};
  EXPECT_EQ(text(change),
            "worst rank on tp=4 ep=8: 354.1 MiB -> 537.4 MiB (+183.3 MiB, +51.8 %)\n"
            "best rank on tp=4 ep=8: 300.0 MiB -> 300.0 MiB (no change)\n");
}

TEST(MemoryChange, PercentagesRoundHalfUpInTenths) {
  EXPECT_EQ(bracket(3 * kMiB, 9 * kMiB / 2), "(+1.5 MiB, +50.0 %)");
  EXPECT_EQ(bracket(3, 4), "(+1 B, +33.3 %)");
  EXPECT_EQ(bracket(8, 9), "(+1 B, +12.5 %)");
  EXPECT_EQ(bracket(16, 17), "(+1 B, +6.3 %)");         // 6.25 %
  EXPECT_EQ(bracket(17, 16), "(-1 B, -5.9 %)");         // 5.88 %
  EXPECT_EQ(bracket(2000, 1), "(-2.0 KiB, -100.0 %)");  // 1999 B, 99.95 %
  EXPECT_EQ(bracket(kMiB, 0), "(-1.0 MiB, -100.0 %)");
  // From nothing there is no percentage; the largest growth keeps every digit.
  EXPECT_EQ(bracket(0, 1024), "(+1.0 KiB)");
  EXPECT_EQ(bracket(1, UINT64_MAX), "(+16.0 EiB, +1844674407370955161400.0 %)");
  EXPECT_EQ(bracket(5, 5), "(no change)");
}

TEST(MemoryChange, DevicesWhenTheyDiffer) {
  MeshMemory axis = counted(2 * kMiB, kMiB, 32);
  MeshMemory folded = counted(2 * kMiB, kMiB, 4);  // folded ep multiplies no device
  EXPECT_EQ(text({axis, folded}),
            "worst rank on tp=4 ep=8: 2.0 MiB -> 2.0 MiB (no change)\n"
            "best rank on tp=4 ep=8: 1.0 MiB -> 1.0 MiB (no change)\n"
            "devices: 32 -> 4\n");
}

TEST(MemoryChange, TwoMeshesAreBothNamed) {
  MeshMemory wider = counted(kMiB, kMiB, 64);
  wider.mesh = mesh({{"tp", 8}, {"ep", 8}}, 64);
  wider.sizes = {{"ep", 8}, {"tp", 8}};
  const MemoryChange change{counted(2 * kMiB, 2 * kMiB), wider};
  EXPECT_FALSE(change.same_mesh());
  EXPECT_EQ(text(change),
            "worst rank on tp=4 ep=8 -> tp=8 ep=8: 2.0 MiB -> 1.0 MiB (-1.0 MiB, -50.0 %)\n"
            "best rank on tp=4 ep=8 -> tp=8 ep=8: 2.0 MiB -> 1.0 MiB (-1.0 MiB, -50.0 %)\n"
            "devices: 32 -> 64\n");
  EXPECT_EQ(json(change),
            "{\"memory\":{\"mesh\":null,"
            "\"old\":{\"mesh\":{\"tp\":4,\"ep\":8},\"devices\":32,\"max_rank_bytes\":2097152,"
            "\"min_rank_bytes\":2097152,\"errors\":0},"
            "\"new\":{\"mesh\":{\"tp\":8,\"ep\":8},\"devices\":64,\"max_rank_bytes\":1048576,"
            "\"min_rank_bytes\":1048576,\"errors\":0}}}\n");
}

TEST(MemoryChange, TheSameSizesInAnotherOrderAreOneMesh) {
  MeshMemory reordered = counted(kMiB, kMiB);
  reordered.mesh = mesh({{"ep", 8}, {"tp", 4}}, 32);
  const MemoryChange change{counted(kMiB, kMiB), reordered};
  EXPECT_TRUE(change.same_mesh());
  // The new meta's order names it.
  EXPECT_EQ(text(change).substr(0, text(change).find(':')), "worst rank on ep=8 tp=4");
  EXPECT_EQ(json(change).substr(0, json(change).find(",\"old\"")),
            "{\"memory\":{\"mesh\":{\"ep\":8,\"tp\":4}");
}

TEST(MemoryChange, ASideWithoutRanksSaysWhy) {
  MeshMemory none = counted(0, 0);
  none.max_rank_bytes.reset();
  none.min_rank_bytes.reset();
  none.no_ranks = "does not divide: the dense region tp (4 ranks) by ep=8";
  none.errors = 2;
  EXPECT_EQ(text({counted(3 * kMiB, kMiB), none}),
            "worst rank on tp=4 ep=8: 3.0 MiB -> none (new: does not divide: the dense region tp "
            "(4 ranks) by ep=8)\n"
            "best rank on tp=4 ep=8: 1.0 MiB -> none (new: does not divide: the dense region tp "
            "(4 ranks) by ep=8)\n");
  EXPECT_EQ(text({none, none}),
            "worst rank on tp=4 ep=8: none -> none (does not divide: the dense region tp (4 "
            "ranks) by ep=8)\n"
            "best rank on tp=4 ep=8: none -> none (does not divide: the dense region tp (4 "
            "ranks) by ep=8)\n");
  MeshMemory other = none;
  other.no_ranks = "not counted: the ranks of mesh tp=4 ep=8 fall into too many classes";
  EXPECT_EQ(text({other, none}).substr(0, text({other, none}).find('\n')),
            "worst rank on tp=4 ep=8: none -> none (old: not counted: the ranks of mesh tp=4 ep=8 "
            "fall into too many classes; new: does not divide: the dense region tp (4 ranks) by "
            "ep=8)");
  EXPECT_EQ(json({counted(3, 1), none}),
            "{\"memory\":{\"mesh\":{\"tp\":4,\"ep\":8},"
            "\"old\":{\"mesh\":{\"tp\":4,\"ep\":8},\"devices\":32,\"max_rank_bytes\":3,"
            "\"min_rank_bytes\":1,\"errors\":0},"
            "\"new\":{\"mesh\":{\"tp\":4,\"ep\":8},\"devices\":32,\"max_rank_bytes\":null,"
            "\"min_rank_bytes\":null,\"errors\":2}}}\n");
}

// mesh_memory: what report --json's meshes[0] says, in the planner's axis order.
TEST(MeshMemory, FromThePlannersOneMesh) {
  CapacityResult result;
  MeshCapacity m;
  m.mesh = mesh({{"tp", 2}, {"dp", 4}}, 8);
  m.max_rank_bytes = 700;
  m.min_rank_bytes = 600;
  result.meshes.push_back(m);
  const std::vector<AxisSize> sizes{{"dp", 4}, {"tp", 2}};
  MeshMemory counted_mesh = mesh_memory(result, sizes, 1, "unused");
  EXPECT_EQ(counted_mesh.mesh.axes, m.mesh.axes);
  EXPECT_EQ(counted_mesh.sizes, sizes);
  EXPECT_EQ(counted_mesh.devices, std::optional<std::uint64_t>(8));
  EXPECT_EQ(counted_mesh.max_rank_bytes, std::optional<std::uint64_t>(700));
  EXPECT_EQ(counted_mesh.min_rank_bytes, std::optional<std::uint64_t>(600));
  EXPECT_EQ(counted_mesh.errors, 1U);
  EXPECT_EQ(counted_mesh.no_ranks, "");

  // A divisibility failure of a parameter leaves the ranks counted (torch.chunk's geometry).
  Indivisible shard;
  shard.fqn = "m.w";
  shard.size = 3;
  shard.axis = "tp";
  shard.axis_size = 2;
  result.meshes.front().indivisible = shard;
  EXPECT_EQ(mesh_memory(result, sizes, 1, "").max_rank_bytes, std::optional<std::uint64_t>(700));

  Indivisible dense;
  dense.size = 8;
  dense.axis = "ep";
  dense.axis_size = 3;
  dense.dense_axes = {"tp", "dp"};
  result.meshes.front().indivisible = dense;
  MeshMemory none = mesh_memory(result, sizes, 0, "");
  EXPECT_EQ(none.max_rank_bytes, std::nullopt);
  EXPECT_EQ(none.min_rank_bytes, std::nullopt);
  EXPECT_EQ(none.devices, std::optional<std::uint64_t>(8));
  EXPECT_EQ(none.no_ranks, "does not divide: the dense region tp x dp (8 ranks) by ep=3");

  result.meshes.front().indivisible.reset();
  result.meshes.front().refused = "fall into more than 4194304 classes of distinct sizes";
  EXPECT_EQ(mesh_memory(result, sizes, 0, "").no_ranks,
            "not counted: the ranks of mesh tp=2 dp=4 fall into more than 4194304 classes of "
            "distinct sizes; too many to compare exactly");

  // The planner did not run: the report's sizes, no devices, and the reason given.
  MeshMemory not_planned = mesh_memory(CapacityResult{}, sizes, 3, "not counted: why");
  EXPECT_EQ(not_planned.mesh.axes, sizes);
  EXPECT_EQ(not_planned.devices, std::nullopt);
  EXPECT_EQ(not_planned.max_rank_bytes, std::nullopt);
  EXPECT_EQ(not_planned.no_ranks, "not counted: why");
  EXPECT_EQ(not_planned.errors, 3U);
}

}  // namespace
}  // namespace hpfreeze
