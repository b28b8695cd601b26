// huge_pages.h - host memory on transparent huge pages, shared by the host
// allocator's large segments and the weights a model load moves
// (allocator.cc, model.cc).
#ifndef TCC_RUNTIME_SRC_HUGE_PAGES_H
#define TCC_RUNTIME_SRC_HUGE_PAGES_H

#include <cstdint>

namespace tcc {

constexpr uint64_t kHugePage = uint64_t(2) << 20;

#if defined(__linux__)
/// `bytes` rounded up to whole huge pages, mapped read-write on their own,
/// starting on a huge page and offered for transparent huge pages
/// (MADV_HUGEPAGE: a hint, nothing changes where THP is off); NULL when the
/// size overflows or mmap fails. munmap it with the rounded size.
void *mapHugePages(uint64_t bytes);
#endif

} // namespace tcc

#endif // TCC_RUNTIME_SRC_HUGE_PAGES_H
