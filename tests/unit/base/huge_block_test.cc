// HugeBlock and BlockArena: large blocks on 2 MiB boundaries, runs that never move.
#include "base/huge_block.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

namespace hpfreeze {
namespace {

TEST(HugeBlock, LargeBlocksStartOnA2MiBBoundaryAndSmallOnesAnywhere) {
  const HugeBlock large(std::size_t{5} << 20);
  ASSERT_NE(large.get(), nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large.get()) % (std::uintptr_t{2} << 20), 0u);
  // The whole block is usable: written end to end (ASan checks the bounds).
  std::fill_n(large.get(), std::size_t{5} << 20, std::byte{1});
  HugeBlock small(100);
  ASSERT_NE(small.get(), nullptr);
  std::fill_n(small.get(), 100, std::byte{2});
  HugeBlock moved(std::move(small));
  EXPECT_EQ(small.get(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state
  EXPECT_EQ(moved.get()[99], std::byte{2});
  moved = HugeBlock(std::size_t{4} << 20);  // frees the small block, takes a large one
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(moved.get()) % (std::uintptr_t{2} << 20), 0u);
}

TEST(BlockArena, RunsKeepTheirPlaceThroughGrowthMovesAndAbsorb) {
  BlockArena<std::uint64_t> arena;
  arena.reserve(10);
  std::vector<std::span<std::uint64_t>> runs;
  std::uint64_t next = 0;
  // Past the reservation, past the first blocks, and one run larger than any block.
  for (std::size_t count : {3u, 7u, 5000u, 1u, 0u, 70000u, 3000000u, 2u}) {
    std::span<std::uint64_t> run = arena.allocate(count);
    ASSERT_EQ(run.size(), count);
    for (std::uint64_t& v : run) {
      EXPECT_EQ(v, 0u);  // value-initialized
      v = next++;
    }
    runs.push_back(run);
  }
  BlockArena<std::uint64_t> other;
  std::span<std::uint64_t> other_run = other.allocate(4);
  std::iota(other_run.begin(), other_run.end(), std::uint64_t{1000});
  arena.absorb(std::move(other));
  BlockArena<std::uint64_t> moved = std::move(arena);
  // The last block stays the one being filled: the next run follows the last one.
  std::span<std::uint64_t> after = moved.allocate(1);
  EXPECT_EQ(after.data(), runs.back().data() + runs.back().size());
  std::uint64_t expected = 0;
  for (const std::span<std::uint64_t>& run : runs) {
    for (std::uint64_t v : run) EXPECT_EQ(v, expected++);
  }
  EXPECT_EQ(other_run[3], 1003u);
}

}  // namespace
}  // namespace hpfreeze
