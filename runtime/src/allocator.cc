// allocator.cc - the tcc_allocator_* C API, the host backend, the process's
// default allocator and the memory summary.
#include "caching_allocator.h"
#include "huge_pages.h"
#include "status.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__linux__)
#include <sys/mman.h>
#endif

using tcc::makeStatus;

struct tcc_allocator_t {
  tcc_allocator_t(const tcc_device_backend_t &backend,
                  const tcc_allocator_options_t &options)
      : impl(backend, options) {}
  std::atomic<int> refs{1};
  bool immortal = false; // the default allocator
  tcc::CachingAllocator impl;
};

//===----------------------------------------------------------------------===//
// The host backend
//===----------------------------------------------------------------------===//

// Page-aligned, so that segments never share a page.
constexpr size_t kHostAlignment = 4096;

#if defined(__linux__)
// Segments of at least a huge page are mapped on their own, start on a huge
// page and are offered to the kernel for transparent huge pages (a hint:
// nothing changes where THP is off). A model's workspace then takes a few
// TLB entries instead of one a 4 KiB page; see docs/runtime.md.
using tcc::kHugePage;

static bool mapsHuge(uint64_t bytes) { return bytes >= kHugePage; }

static uint64_t hugeRounded(uint64_t bytes) {
  return (bytes + kHugePage - 1) / kHugePage * kHugePage;
}

void *tcc::mapHugePages(uint64_t bytes) {
  const uint64_t rounded = hugeRounded(bytes);
  if (rounded < bytes || rounded > SIZE_MAX - kHugePage)
    return nullptr;
  // One huge page more than needed, then the ends trimmed off, so that
  // what is left starts on a huge page.
  char *raw = static_cast<char *>(mmap(nullptr, rounded + kHugePage,
                                       PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (raw == MAP_FAILED)
    return nullptr;
  const uintptr_t at = reinterpret_cast<uintptr_t>(raw);
  char *start = raw + ((kHugePage - at % kHugePage) % kHugePage);
  if (start != raw)
    munmap(raw, start - raw);
  if (char *end = start + rounded; end != raw + rounded + kHugePage)
    munmap(end, raw + rounded + kHugePage - end);
  madvise(start, rounded, MADV_HUGEPAGE);
  return start;
}
#endif

static tcc_status_t hostAllocate(void *, uint64_t bytes, tcc_stream_t,
                                 void **outPtr) {
  uint64_t rounded =
      (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  void *p = nullptr;
#if defined(__linux__)
  if (mapsHuge(bytes))
    p = tcc::mapHugePages(bytes);
  else
#endif
    p = rounded >= bytes && rounded <= SIZE_MAX
            ? std::aligned_alloc(kHostAlignment, rounded)
            : nullptr;
  if (!p)
    return makeStatus(TCC_STATUS_RESOURCE_EXHAUSTED,
                      "cannot allocate %" PRIu64 " bytes of host memory",
                      bytes);
  *outPtr = p;
  return nullptr;
}

static void hostDeallocate(void *, void *ptr, uint64_t bytes) {
#if defined(__linux__)
  if (mapsHuge(bytes)) {
    munmap(ptr, hugeRounded(bytes));
    return;
  }
#endif
  std::free(ptr);
}

static const tcc_device_backend_t kHostBackend = [] {
  tcc_device_backend_t b{};
  b.name = "host";
  b.flags = TCC_DEVICE_BACKEND_HOST_ACCESSIBLE;
  b.allocate = hostAllocate;
  b.deallocate = hostDeallocate;
  return b;
}();

//===----------------------------------------------------------------------===//
// Allocators
//===----------------------------------------------------------------------===//

tcc_status_t tcc_allocator_create(const tcc_device_backend_t *backend,
                                  const tcc_allocator_options_t *options,
                                  tcc_allocator_t **out_allocator) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!backend || !out_allocator)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "tcc_allocator_create: backend and out_allocator "
                        "must not be NULL");
    if (!backend->allocate || !backend->deallocate)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "tcc_allocator_create: backend '%s' lacks allocate "
                        "or deallocate",
                        backend->name ? backend->name : "");
    int events = !!backend->record_event + !!backend->query_event +
                 !!backend->synchronize_event + !!backend->destroy_event;
    if (events != 0 && events != 4)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "tcc_allocator_create: backend '%s' has %d of the 4 "
                        "event functions; give all or none",
                        backend->name ? backend->name : "", events);
    tcc_allocator_options_t o{};
    if (options)
      o = *options;
    *out_allocator = new tcc_allocator_t(*backend, o);
    return nullptr;
  });
}

tcc_status_t tcc_allocator_create_host(const tcc_allocator_options_t *options,
                                       tcc_allocator_t **out_allocator) {
  return tcc_allocator_create(&kHostBackend, options, out_allocator);
}

tcc_status_t tcc_allocator_create_cuda(int32_t device,
                                       const tcc_allocator_options_t *options,
                                       tcc_allocator_t **out_allocator) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!out_allocator)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "tcc_allocator_create_cuda: out_allocator is NULL");
    tcc_device_backend_t backend;
    if (tcc_status_t s = tcc::createCudaBackend(device, &backend))
      return s;
    if (tcc_status_t s =
            tcc_allocator_create(&backend, options, out_allocator)) {
      backend.destroy(backend.self);
      return s;
    }
    return nullptr;
  });
}

tcc_status_t tcc_allocator_cuda_default(int32_t device,
                                        tcc_allocator_t **out_allocator) {
  return tcc::guard([&]() -> tcc_status_t {
    constexpr int32_t kDevices = 16;
    if (!out_allocator)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "tcc_allocator_cuda_default: out_allocator is NULL");
    if (device < 0 || device >= kDevices)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "CUDA device %d: default allocators exist for "
                        "devices 0 to %d",
                        device, kDevices - 1);
    static std::mutex mutex;
    static tcc_allocator_t *instances[kDevices];
    std::lock_guard<std::mutex> lock(mutex);
    if (!instances[device]) {
      tcc_allocator_t *a;
      if (tcc_status_t s = tcc_allocator_create_cuda(device, nullptr, &a))
        return s;
      a->immortal = true;
      instances[device] = a;
    }
    *out_allocator = instances[device];
    return nullptr;
  });
}

tcc_allocator_t *tcc_allocator_default(void) {
  // Never destroyed: tensors may be freed by static destructors of the
  // program after this file's would have run.
  static tcc_allocator_t *instance = [] {
    auto *a = new tcc_allocator_t(kHostBackend, tcc_allocator_options_t{});
    a->immortal = true;
    return a;
  }();
  return instance;
}

void tcc_allocator_retain(tcc_allocator_t *allocator) {
  if (allocator)
    allocator->refs.fetch_add(1, std::memory_order_relaxed);
}

void tcc_allocator_free(tcc_allocator_t *allocator) {
  if (!allocator || allocator->immortal)
    return;
  if (allocator->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
    delete allocator;
}

// Accessors tolerate NULL (see runtime.h).

const char *tcc_allocator_name(const tcc_allocator_t *allocator) {
  return allocator ? allocator->impl.name().c_str() : "";
}

int32_t tcc_allocator_host_accessible(const tcc_allocator_t *allocator) {
  return allocator && (allocator->impl.backend().flags &
                       TCC_DEVICE_BACKEND_HOST_ACCESSIBLE) != 0;
}

tcc_status_t tcc_allocator_allocate(tcc_allocator_t *allocator, uint64_t bytes,
                                    tcc_stream_t stream, void **out_ptr) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!allocator || !out_ptr)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "tcc_allocator_allocate: allocator and out_ptr must "
                        "not be NULL");
    size_t size = bytes > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(bytes);
    return allocator->impl.allocate(size, stream, out_ptr);
  });
}

tcc_status_t tcc_allocator_deallocate(tcc_allocator_t *allocator, void *ptr) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!allocator)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "tcc_allocator_deallocate: allocator is NULL");
    return allocator->impl.deallocate(ptr);
  });
}

tcc_status_t tcc_allocator_record_stream(tcc_allocator_t *allocator, void *ptr,
                                         tcc_stream_t stream) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!allocator)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "tcc_allocator_record_stream: allocator is NULL");
    return allocator->impl.recordStream(ptr, stream);
  });
}

void tcc_allocator_trim(tcc_allocator_t *allocator) {
  if (!allocator)
    return;
  tcc::guard([&]() -> tcc_status_t {
    allocator->impl.trim();
    return nullptr;
  });
}

void tcc_allocator_set_memory_limit(tcc_allocator_t *allocator,
                                    uint64_t bytes) {
  if (allocator)
    allocator->impl.setMemoryLimit(bytes);
}

uint64_t tcc_allocator_memory_limit(const tcc_allocator_t *allocator) {
  return allocator ? allocator->impl.memoryLimit() : 0;
}

void tcc_allocator_stats(tcc_allocator_t *allocator,
                         tcc_allocator_stats_t *out_stats) {
  if (out_stats)
    *out_stats = allocator ? allocator->impl.stats() : tcc_allocator_stats_t{};
}

void tcc_allocator_reset_peak(tcc_allocator_t *allocator) {
  if (allocator)
    allocator->impl.resetPeak();
}

size_t tcc_allocator_summary(tcc_allocator_t *allocator, char *buffer,
                             size_t capacity) {
  if (!allocator) {
    if (capacity && buffer)
      buffer[0] = '\0';
    return 0;
  }
  std::string text;
  try {
    text = tcc::formatSummary(allocator->impl.name(), allocator->impl.stats());
  } catch (const std::bad_alloc &) {
    text = "out of memory\n";
  }
  if (capacity && buffer) {
    size_t n = std::min(capacity - 1, text.size());
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
  }
  return text.size();
}

//===----------------------------------------------------------------------===//
// The summary
//===----------------------------------------------------------------------===//

namespace {

// The table is 77 characters wide, as PyTorch's memory_summary.
constexpr int kWidth = 77;

void rule(std::string &out, char c) {
  out += '|';
  out.append(kWidth - 2, c);
  out += "|\n";
}

void line(std::string &out, const std::string &text) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "| %-*s |\n", kWidth - 4, text.c_str());
  out += buf;
}

void row(std::string &out, const char *metric, const tcc_allocator_stat_t &stat,
         bool bytes) {
  auto cell = [&](uint64_t v) {
    return bytes ? tcc::formatBytes(v) : std::to_string(v);
  };
  char buf[160];
  std::snprintf(buf, sizeof buf, "| %-21s | %10s | %10s | %10s | %10s |\n",
                metric, cell(stat.current).c_str(), cell(stat.peak).c_str(),
                cell(stat.allocated).c_str(), cell(stat.freed).c_str());
  out += buf;
}

void rows(std::string &out, const char *metric,
          const tcc_allocator_stat_t (&stat)[TCC_POOL_COUNT], bool bytes) {
  row(out, metric, stat[TCC_POOL_ALL], bytes);
  row(out, "      from large pool", stat[TCC_POOL_LARGE], bytes);
  row(out, "      from small pool", stat[TCC_POOL_SMALL], bytes);
}

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
  char buf[256];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

} // namespace

std::string tcc::formatSummary(const std::string &name,
                               const tcc_allocator_stats_t &s) {
  std::string out;
  rule(out, '=');
  line(out, format("tcc caching allocator summary: %s", name.c_str()));
  rule(out, '-');
  double hitRate = s.num_allocs ? 100.0 * s.num_cache_hits / s.num_allocs : 0;
  line(out, format("allocations %" PRIu64 ", frees %" PRIu64
                   ", cache hits %" PRIu64 " (%.1f%%)",
                   s.num_allocs, s.num_frees, s.num_cache_hits, hitRate));
  line(out, format("device allocations %" PRIu64 ", device frees %" PRIu64
                   ", retries %" PRIu64 ", out of memory %" PRIu64,
                   s.num_device_allocs, s.num_device_frees, s.num_alloc_retries,
                   s.num_ooms));
  line(out, format("cached %s, largest cached block %s, fragmentation %.1f%%",
                   formatBytes(s.cached_bytes).c_str(),
                   formatBytes(s.largest_cached_block).c_str(),
                   100 * s.fragmentation));
  line(out,
       format("memory limit %s",
              s.memory_limit ? formatBytes(s.memory_limit).c_str() : "none"));
  rule(out, '=');
  out += "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | "
         "Tot Freed  |\n";
  rule(out, '-');
  const struct {
    const char *metric;
    const tcc_allocator_stat_t (&stat)[TCC_POOL_COUNT];
    bool bytes;
  } groups[] = {{"Allocated memory", s.allocated_bytes, true},
                {"Requested memory", s.requested_bytes, true},
                {"Reserved memory", s.reserved_bytes, true},
                {"Non-releasable memory", s.inactive_split_bytes, true},
                {"Allocations", s.active_blocks, false},
                {"Segments", s.segments, false}};
  for (const auto &g : groups) {
    rows(out, g.metric, g.stat, g.bytes);
    rule(out, &g == std::end(groups) - 1 ? '=' : '-');
  }
  return out;
}
