#pragma once
// A hint for large buffers that are filled right away (inputs as they are read, the parsed
// DOM, the encoded meta): back them with transparent huge pages, so that filling one costs
// a page fault per 2 MiB instead of per 4 KiB. With 4 KiB pages, faulting in fresh memory
// took about as long as parsing.

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hpfreeze {

// Advises the whole 2 MiB pages inside [begin, begin + size), which must lie in one
// allocation not written yet. Without THP support, for small ranges, or when the kernel
// declines, nothing changes: the advice never alters the memory's contents.
inline void advise_huge_pages(const void* begin, std::size_t size) {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  if (begin == nullptr || size < 2 * kHugePage) return;
  const auto base = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t first = (base + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t last = (base + size) & ~(kHugePage - 1);
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)begin;
  (void)size;
#endif
}

// The part of buf's allocation past its size.
inline void advise_huge_pages(std::string& buf) {
  advise_huge_pages(buf.data() + buf.size(), buf.capacity() - buf.size());
}

// The part of a vector's allocation past its size (call it right after reserve()).
template <class T>
void advise_huge_pages(std::vector<T>& items) {
  advise_huge_pages(items.data() + items.size(), (items.capacity() - items.size()) * sizeof(T));
}

}  // namespace hpfreeze
