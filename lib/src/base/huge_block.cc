#include "base/huge_block.h"

#include <new>

#include "base/huge_pages.h"

namespace hpfreeze {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::align_val_t kHugeAlignment{kHugePage};

}  // namespace

HugeBlock::HugeBlock(std::size_t size) {
  if (size < 2 * kHugePage) {
    data_ = static_cast<std::byte*>(::operator new(size == 0 ? 1 : size));
    return;
  }
  const std::size_t whole = (size + kHugePage - 1) / kHugePage * kHugePage;
  data_ = static_cast<std::byte*>(::operator new(whole, kHugeAlignment));
  aligned_ = true;
  advise_huge_pages(data_, whole);
}

void HugeBlock::release() noexcept {
  if (data_ == nullptr) return;
  if (aligned_) {
    ::operator delete(data_, kHugeAlignment);
  } else {
    ::operator delete(data_);
  }
  data_ = nullptr;
}

}  // namespace hpfreeze
