#pragma once
// Memory for a large block that is filled soon after it is allocated (the blocks of the
// arenas that hold a plan's axes and a freeze's strings).

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace hpfreeze {

// From 4 MiB on, a block starts on a 2 MiB boundary and spans whole 2 MiB pages, all of
// them advised for transparent huge pages: a block malloc places has up to 2 MiB at
// either end that no huge page can cover, filled 4 KiB page by page. Smaller blocks come
// from operator new as usual. The contents start out indeterminate.
class HugeBlock {
 public:
  HugeBlock() = default;
  explicit HugeBlock(std::size_t size);
  HugeBlock(HugeBlock&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), aligned_(other.aligned_) {}
  HugeBlock& operator=(HugeBlock&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      aligned_ = other.aligned_;
    }
    return *this;
  }
  HugeBlock(const HugeBlock&) = delete;
  HugeBlock& operator=(const HugeBlock&) = delete;
  ~HugeBlock() { release(); }

  [[nodiscard]] std::byte* get() const { return data_; }

 private:
  void release() noexcept;

  std::byte* data_ = nullptr;
  bool aligned_ = false;  // allocated on a 2 MiB boundary
};

// Room for many small runs of T (a plan's axes, a model's shapes), in large blocks that
// never move: one allocation per few thousand runs instead of a vector per run, each
// block twice the last up to a cap, so that a large dump's runs lie in a few huge pages.
// A run is contiguous. Moving the arena keeps every span valid.
template <class T>
class BlockArena {
  static_assert(std::is_trivially_destructible_v<T>,
                "blocks are freed without destroying their entries");

 public:
  // `count` entries, value-initialized (the first touch of their pages).
  std::span<T> allocate(std::size_t count) {
    constexpr std::size_t kFirstBlock = 4096;
    constexpr std::size_t kLargestBlock = (std::size_t{16} << 20) / sizeof(T);
    if (count == 0) return {};
    if (size_ - used_ < count) {
      reserve(std::max(count, blocks_.empty() ? kFirstBlock : std::min(2 * size_, kLargestBlock)));
    }
    T* const first = reinterpret_cast<T*>(blocks_.back().get()) + used_;
    std::uninitialized_value_construct_n(first, count);
    used_ += count;
    return {std::launder(first), count};
  }
  // Room for `count` more entries in one block (an estimate: later allocations may go
  // beyond it).
  void reserve(std::size_t count) {
    if (size_ - used_ >= count) return;
    size_ = count;
    blocks_.emplace_back(size_ * sizeof(T));
    used_ = 0;
  }
  // Takes over the blocks of `other` (its spans stay valid), which is left empty.
  void absorb(BlockArena&& other) {
    if (other.blocks_.empty()) return;
    // The last block stays last: allocate() goes on filling it.
    blocks_.insert(blocks_.begin(), std::make_move_iterator(other.blocks_.begin()),
                   std::make_move_iterator(other.blocks_.end()));
    if (size_ == 0) {
      used_ = other.used_;
      size_ = other.size_;
    }
    other.blocks_.clear();
    other.used_ = 0;
    other.size_ = 0;
  }

 private:
  // Raw bytes: an entry is constructed when allocate() hands it out.
  std::vector<HugeBlock> blocks_;
  std::size_t used_ = 0;  // in the last block
  std::size_t size_ = 0;  // of the last block
};

}  // namespace hpfreeze
