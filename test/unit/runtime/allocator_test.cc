// allocator_test.cc - the caching allocator over a fake device: rounding,
// pools, reuse, splitting and merging, streams, the memory limit and the
// out-of-memory path, statistics, the summary, and threads.
#include "fake_backend.h"
#include "test_util.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <random>
#include <thread>

#if defined(__linux__)
#include <sys/mman.h>
#endif

using tcc::testing::FakeBackend;
using tcc::testing::Result;
using tcc::testing::result;

namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

char *bytes(void *p) { return static_cast<char *>(p); }

/// An allocator over a fake device, and shorthands for the tests.
class AllocatorTest : public ::testing::Test {
protected:
  void make(FakeBackend::Options backendOptions = {},
            tcc_allocator_options_t options = {}) {
    allocator = {}; // before the backend it uses
    fake = std::make_unique<FakeBackend>(backendOptions);
    allocator = tcc::Allocator::create(fake->backend(), options);
  }
  void SetUp() override { make(); }

  void *alloc(uint64_t n, tcc_stream_t stream = 0) {
    return allocator.allocate(n, stream);
  }
  void release(void *p) { allocator.deallocate(p); }
  tcc_allocator_stats_t stats() { return allocator.stats(); }

  std::unique_ptr<FakeBackend> fake;
  tcc::Allocator allocator;
};

TEST_F(AllocatorTest, RoundsTo512Bytes) {
  void *a = alloc(1), *b = alloc(513), *c = alloc(0);
  tcc_allocator_stats_t s = stats();
  EXPECT_EQ(s.allocated_bytes[TCC_POOL_ALL].current, 512u + 1024 + 512);
  EXPECT_EQ(s.requested_bytes[TCC_POOL_ALL].current, 1u + 513 + 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 512, 0u);
  EXPECT_EQ(bytes(b), bytes(a) + 512); // carved from one segment, in order
  EXPECT_EQ(bytes(c), bytes(b) + 1024);
  release(a);
  release(b);
  release(c);
}

TEST_F(AllocatorTest, SmallAndLargePoolsHaveTheirSegmentSizes) {
  void *small = alloc(1 * MiB);     // largest small block: a 2 MiB segment
  void *huge = alloc(11 * MiB + 1); // rounded up to 2 MiB: 12 MiB
  void *large = alloc(1 * MiB + 1); // under 10 MiB: a 20 MiB segment
  EXPECT_EQ(fake->allocationSizes(),
            (std::vector<uint64_t>{2 * MiB, 12 * MiB, 20 * MiB}));
  tcc_allocator_stats_t s = stats();
  EXPECT_EQ(s.segments[TCC_POOL_SMALL].current, 1u);
  EXPECT_EQ(s.segments[TCC_POOL_LARGE].current, 2u);
  EXPECT_EQ(s.reserved_bytes[TCC_POOL_SMALL].current, 2 * MiB);
  EXPECT_EQ(s.reserved_bytes[TCC_POOL_LARGE].current, 32 * MiB);
  EXPECT_EQ(s.allocated_bytes[TCC_POOL_SMALL].current, 1 * MiB);
  for (void *p : {small, large, huge})
    release(p);
}

TEST_F(AllocatorTest, ReusesAFreedBlock) {
  void *a = alloc(4 * KiB);
  release(a);
  void *b = alloc(4 * KiB);
  EXPECT_EQ(a, b);
  tcc_allocator_stats_t s = stats();
  EXPECT_EQ(s.num_allocs, 2u);
  EXPECT_EQ(s.num_cache_hits, 1u);
  EXPECT_EQ(s.num_device_allocs, 1u);
  EXPECT_EQ(fake->allocations, 1);
  release(b);
}

TEST_F(AllocatorTest, TakesTheBestFit) {
  // Free blocks of 8 KiB and 4 KiB, kept apart by live ones.
  void *big = alloc(8 * KiB), *keep1 = alloc(512);
  void *fit = alloc(4 * KiB), *keep2 = alloc(512);
  release(big);
  release(fit);
  EXPECT_EQ(alloc(3 * KiB), fit);
  EXPECT_EQ(alloc(8 * KiB), big);
  EXPECT_EQ(fake->allocations, 1);
  for (void *p : {big, fit, keep1, keep2})
    release(p);
}

TEST_F(AllocatorTest, SplitsAndMergesNeighbours) {
  void *a = alloc(1 * KiB), *b = alloc(1 * KiB), *c = alloc(1 * KiB);
  ASSERT_EQ(bytes(b), bytes(a) + 1 * KiB);
  ASSERT_EQ(bytes(c), bytes(b) + 1 * KiB);
  EXPECT_EQ(fake->allocations, 1); // all three from one segment

  release(a);
  release(c);
  // Free: a (1 KiB) and c merged with the rest of the segment; b between.
  tcc_allocator_stats_t s = stats();
  EXPECT_EQ(s.cached_bytes, 2 * MiB - 1 * KiB);
  EXPECT_EQ(s.largest_cached_block, 2 * MiB - 2 * KiB);
  EXPECT_GT(s.fragmentation, 0.0);
  EXPECT_EQ(s.inactive_split_bytes[TCC_POOL_SMALL].current, 2 * MiB - 1 * KiB);

  // A request that fits neither hole before b but only the tail.
  void *d = alloc(2 * KiB);
  EXPECT_EQ(d, c);
  release(d);

  release(b); // a, b and the tail become one block: the whole segment
  s = stats();
  EXPECT_EQ(s.cached_bytes, 2 * MiB);
  EXPECT_EQ(s.largest_cached_block, 2 * MiB);
  EXPECT_EQ(s.fragmentation, 0.0);
  EXPECT_EQ(s.inactive_split_bytes[TCC_POOL_ALL].current, 0u);
  // Proof that it is one block again: two halves, in order.
  EXPECT_EQ(alloc(1 * MiB), a);
  EXPECT_EQ(bytes(alloc(1 * MiB)), bytes(a) + 1 * MiB);
}

TEST_F(AllocatorTest, LargeBlocksKeepSmallRemainders) {
  void *a = alloc(3 * MiB), *rest = alloc(2 * MiB);
  EXPECT_EQ(bytes(rest), bytes(a) + 3 * MiB); // 20 MiB split after 3 MiB
  release(a);
  // 2.5 MiB from the free 3 MiB block: 0.5 MiB would remain, which is not
  // worth a block of the large pool, so the whole 3 MiB is handed out.
  void *b = alloc(2 * MiB + 512 * KiB);
  EXPECT_EQ(b, a);
  EXPECT_EQ(stats().allocated_bytes[TCC_POOL_LARGE].current, 5 * MiB);
  release(b);
  release(rest);
}

TEST_F(AllocatorTest, BlocksAreReusedOnlyOnTheirStream) {
  void *a = alloc(4 * KiB, /*stream=*/1);
  release(a);
  void *b = alloc(4 * KiB, /*stream=*/2);
  EXPECT_NE(a, b);
  EXPECT_EQ(fake->allocations, 2); // stream 2 got a segment of its own
  void *c = alloc(4 * KiB, /*stream=*/1);
  EXPECT_EQ(a, c);
  release(b);
  release(c);
}

TEST_F(AllocatorTest, RecordedStreamsDelayReuseUntilTheirWorkIsDone) {
  make({.events = true});
  void *a = alloc(4 * KiB, 1);
  allocator.recordStream(a, 2);
  allocator.recordStream(a, 2); // once is enough
  allocator.recordStream(a, 1); // its own stream: nothing to wait for
  release(a);
  EXPECT_EQ(fake->liveEvents(), 1u);
  // Stream 2 may still be using a: not reused.
  void *b = alloc(4 * KiB, 1);
  EXPECT_NE(a, b);
  release(b);
  fake->completeEvents();
  void *c = alloc(4 * KiB, 1);
  EXPECT_EQ(a, c);
  EXPECT_EQ(fake->liveEvents(), 0u);
  release(c);
}

TEST_F(AllocatorTest, TrimWaitsForPendingStreams) {
  make({.events = true});
  void *a = alloc(4 * KiB, 1);
  allocator.recordStream(a, 7);
  release(a);
  allocator.trim();
  EXPECT_EQ(fake->synchronizations, 1);
  EXPECT_EQ(fake->liveEvents(), 0u);
  EXPECT_EQ(stats().reserved_bytes[TCC_POOL_ALL].current, 0u);
  EXPECT_EQ(fake->liveBytes(), 0u);
}

TEST_F(AllocatorTest, WithoutEventsStreamsAreSynchronous) {
  void *a = alloc(4 * KiB, 1);
  allocator.recordStream(a, 2);
  release(a);
  EXPECT_EQ(alloc(4 * KiB, 1), a);
  release(a);
}

TEST_F(AllocatorTest, RecordStreamOfAnUnknownPointerIsRefused) {
  int x;
  Result r = result(tcc_allocator_record_stream(allocator.get(), &x, 1));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
}

TEST_F(AllocatorTest, OutOfDeviceMemoryFreesTheCacheAndRetries) {
  make({.capacity = 24 * MiB});
  release(alloc(12 * MiB)); // cached: 12 MiB of the device's 24
  void *b = alloc(16 * MiB);
  ASSERT_NE(b, nullptr);
  tcc_allocator_stats_t s = stats();
  EXPECT_EQ(s.num_alloc_retries, 1u);
  EXPECT_EQ(s.num_ooms, 0u);
  EXPECT_EQ(s.num_device_frees, 1u);
  EXPECT_EQ(fake->failures, 1);
  EXPECT_EQ(s.reserved_bytes[TCC_POOL_ALL].current, 16 * MiB);
  release(b);
}

TEST_F(AllocatorTest, OutOfMemoryIsAClearError) {
  make({.capacity = 8 * MiB});
  // No room for a 20 MiB segment: one of just the request.
  void *held = alloc(6 * MiB);
  void *p = nullptr;
  Result r = result(tcc_allocator_allocate(allocator.get(), 4 * MiB, 3, &p));
  EXPECT_EQ(r.code, TCC_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(r.message,
            "fake: out of memory: cannot allocate 4.00 MiB (4194304 bytes) "
            "on stream 3; 6.00 MiB allocated, 6.00 MiB reserved (0 B cached "
            "or awaiting streams), memory limit none; the device said: fake "
            "device out of memory (4194304 bytes asked, 6291456 in use)");
  tcc_allocator_stats_t s = stats();
  EXPECT_EQ(s.num_ooms, 1u);
  EXPECT_EQ(s.num_alloc_retries, 1u);
  // A request that fits still succeeds.
  release(alloc(1 * MiB));
  release(held);
}

TEST_F(AllocatorTest, MemoryLimitIsRespected) {
  make({}, {.memory_limit = 4 * MiB});
  void *a = alloc(1 * MiB); // small pool: a 2 MiB segment
  // A 20 MiB segment would pass the limit: a segment of just the request.
  void *b = alloc(1 * MiB + 512 * KiB);
  EXPECT_EQ(fake->allocationSizes(),
            (std::vector<uint64_t>{2 * MiB, 1 * MiB + 512 * KiB}));
  void *c = alloc(1 * MiB); // the rest of the small segment
  EXPECT_EQ(stats().num_cache_hits, 1u);

  void *p = nullptr;
  Result r = result(tcc_allocator_allocate(allocator.get(), 2 * MiB, 0, &p));
  EXPECT_EQ(r.code, TCC_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_TRUE(contains(r.message, "cannot allocate 2.00 MiB (2097152 bytes)"))
      << r.message;
  EXPECT_TRUE(contains(r.message, "3.50 MiB allocated, 3.50 MiB reserved"))
      << r.message;
  EXPECT_TRUE(contains(r.message, "memory limit 4.00 MiB")) << r.message;
  EXPECT_EQ(fake->failures, 0); // refused before asking the device
  EXPECT_LE(fake->peakLiveBytes(), 4 * MiB);
  EXPECT_EQ(stats().memory_limit, 4 * MiB);
  for (void *q : {a, b, c})
    release(q);
}

TEST_F(AllocatorTest, MemoryLimitFreesTheCacheFirst) {
  make({}, {.memory_limit = 24 * MiB});
  release(alloc(12 * MiB));
  void *b = alloc(16 * MiB);
  tcc_allocator_stats_t s = stats();
  EXPECT_EQ(s.num_alloc_retries, 1u);
  EXPECT_EQ(s.num_ooms, 0u);
  EXPECT_EQ(fake->failures, 0);
  EXPECT_EQ(s.reserved_bytes[TCC_POOL_ALL].current, 16 * MiB);
  release(b);
}

TEST_F(AllocatorTest, MemoryLimitCanChange) {
  EXPECT_EQ(allocator.memoryLimit(), 0u);
  allocator.setMemoryLimit(1 * MiB);
  EXPECT_EQ(allocator.memoryLimit(), 1 * MiB);
  void *p = nullptr;
  EXPECT_EQ(
      result(tcc_allocator_allocate(allocator.get(), 2 * MiB, 0, &p)).code,
      TCC_STATUS_RESOURCE_EXHAUSTED);
  allocator.setMemoryLimit(0);
  release(alloc(2 * MiB));
}

TEST_F(AllocatorTest, AbsurdRequestsAreOutOfMemory) {
  void *p = nullptr;
  Result r = result(tcc_allocator_allocate(allocator.get(), UINT64_MAX, 0, &p));
  EXPECT_EQ(r.code, TCC_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_TRUE(contains(r.message, "out of memory")) << r.message;
}

TEST_F(AllocatorTest, StatisticsCountEverything) {
  void *a = alloc(1000), *b = alloc(3 * MiB);
  release(a);
  void *c = alloc(1000);
  tcc_allocator_stats_t s = stats();
  EXPECT_EQ(s.num_allocs, 3u);
  EXPECT_EQ(s.num_frees, 1u);
  EXPECT_EQ(s.num_cache_hits, 1u);
  EXPECT_EQ(s.num_device_allocs, 2u);
  EXPECT_EQ(s.active_blocks[TCC_POOL_ALL].current, 2u);
  EXPECT_EQ(s.active_blocks[TCC_POOL_ALL].peak, 2u);
  EXPECT_EQ(s.active_blocks[TCC_POOL_ALL].allocated, 3u);
  EXPECT_EQ(s.active_blocks[TCC_POOL_ALL].freed, 1u);
  EXPECT_EQ(s.allocated_bytes[TCC_POOL_ALL].current, 1024 + 3 * MiB);
  EXPECT_EQ(s.allocated_bytes[TCC_POOL_SMALL].allocated, 2048u);
  EXPECT_EQ(s.requested_bytes[TCC_POOL_ALL].current, 1000 + 3 * MiB);
  EXPECT_EQ(s.reserved_bytes[TCC_POOL_ALL].current, 22 * MiB);

  release(b);
  release(c);
  s = stats();
  EXPECT_EQ(s.allocated_bytes[TCC_POOL_ALL].current, 0u);
  EXPECT_EQ(s.allocated_bytes[TCC_POOL_ALL].peak, 1024 + 3 * MiB);
  EXPECT_EQ(s.cached_bytes, 22 * MiB);
  allocator.resetPeak();
  EXPECT_EQ(stats().allocated_bytes[TCC_POOL_ALL].peak, 0u);
  EXPECT_EQ(stats().reserved_bytes[TCC_POOL_ALL].peak, 22 * MiB);

  allocator.trim();
  s = stats();
  EXPECT_EQ(s.reserved_bytes[TCC_POOL_ALL].current, 0u);
  EXPECT_EQ(s.reserved_bytes[TCC_POOL_ALL].freed, 22 * MiB);
  EXPECT_EQ(s.num_device_frees, 2u);
  EXPECT_EQ(fake->liveBytes(), 0u);
}

TEST_F(AllocatorTest, TrimKeepsSegmentsInUse) {
  void *keep = alloc(4 * KiB);
  release(alloc(12 * MiB));
  allocator.trim();
  tcc_allocator_stats_t s = stats();
  EXPECT_EQ(s.num_device_frees, 1u);
  EXPECT_EQ(s.reserved_bytes[TCC_POOL_ALL].current, 2 * MiB);
  EXPECT_EQ(s.inactive_split_bytes[TCC_POOL_ALL].current, 2 * MiB - 4 * KiB);
  release(keep);
  allocator.trim();
  EXPECT_EQ(fake->liveBytes(), 0u);
}

TEST_F(AllocatorTest, SummaryIsATable) {
  void *a = alloc(1000);
  release(alloc(3 * MiB));
  std::string text = allocator.summary();
  EXPECT_TRUE(contains(text, "tcc caching allocator summary: fake")) << text;
  EXPECT_TRUE(contains(text, "allocations 2, frees 1, cache hits 0 (0.0%)"))
      << text;
  EXPECT_TRUE(contains(text, "| Allocated memory      |   1.00 KiB |")) << text;
  EXPECT_TRUE(contains(text, "| Reserved memory       |  22.00 MiB |")) << text;
  EXPECT_TRUE(contains(text, "|       from large pool |")) << text;
  EXPECT_TRUE(contains(text, "memory limit none")) << text;
  size_t width = text.find('\n');
  for (size_t at = 0; at < text.size(); at = text.find('\n', at) + 1)
    EXPECT_EQ(text.find('\n', at) - at, width) << text.substr(at, 80);

  // snprintf-like: cut, NUL-terminated, full length returned.
  char small[16];
  EXPECT_EQ(tcc_allocator_summary(allocator.get(), small, sizeof small),
            text.size());
  EXPECT_EQ(std::string(small), text.substr(0, 15));
  release(a);
}

TEST_F(AllocatorTest, BadFreesAreRefused) {
  void *a = alloc(100);
  int local;
  Result r = result(tcc_allocator_deallocate(allocator.get(), &local));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(r.message, "did not allocate it, or it was freed "
                                  "already"))
      << r.message;
  release(a);
  EXPECT_EQ(result(tcc_allocator_deallocate(allocator.get(), a)).code,
            TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(result(tcc_allocator_deallocate(allocator.get(), nullptr)).code,
            TCC_STATUS_OK);
  EXPECT_EQ(stats().num_frees, 1u);
}

TEST_F(AllocatorTest, NoCacheModeGoesToTheDeviceEveryTime) {
  make({}, {.flags = TCC_ALLOCATOR_NO_CACHE});
  void *a = alloc(1000);
  release(a);
  void *b = alloc(3 * MiB);
  release(b);
  EXPECT_EQ(fake->allocationSizes(), (std::vector<uint64_t>{1024, 3 * MiB}));
  EXPECT_EQ(fake->deallocations, 2);
  tcc_allocator_stats_t s = stats();
  EXPECT_EQ(s.num_cache_hits, 0u);
  EXPECT_EQ(s.reserved_bytes[TCC_POOL_ALL].current, 0u);
}

TEST_F(AllocatorTest, DestroyingReturnsEverySegment) {
  alloc(100);
  alloc(5 * MiB);
  release(alloc(1 * KiB));
  allocator = {};
  EXPECT_TRUE(fake->destroyed);
  EXPECT_EQ(fake->liveBytes(), 0u);
  EXPECT_EQ(fake->badDeallocations, 0);
}

TEST_F(AllocatorTest, BackendIsCalledWithoutTheLock) {
  make({.capacity = 16 * MiB, .events = true});
  // Inside each device call another thread reads the statistics, which
  // takes the allocator's lock: it finishes only if the lock is free.
  std::atomic<int> calls{0}, blocked{0};
  fake->onCall = [&] {
    ++calls;
    auto done = std::async(std::launch::async, [&] { allocator.stats(); });
    if (done.wait_for(std::chrono::seconds(5)) != std::future_status::ready)
      ++blocked;
  };
  void *a = alloc(4 * KiB, 1); // allocate
  allocator.recordStream(a, 2);
  release(a);                 // record_event
  release(alloc(4 * KiB, 1)); // query_event, destroy_event
  void *p = nullptr;
  tcc_status_free(tcc_allocator_allocate(allocator.get(), 32 * MiB, 1, &p));
  allocator.trim(); // deallocate
  fake->onCall = nullptr;
  EXPECT_GE(calls, 6);
  EXPECT_EQ(blocked, 0);
}

// Eight threads allocate, write, check and free blocks of many sizes on
// three streams; any two live blocks that overlapped would corrupt each
// other's pattern.
void hammer(tcc::Allocator &allocator, int thread, int iterations,
            std::atomic<int> &corrupt, std::atomic<int> &ooms) {
  std::mt19937 rng(thread);
  struct Live {
    unsigned char *p;
    size_t n;
    unsigned char tag;
  };
  std::vector<Live> live;
  auto check = [&](const Live &l) {
    if (l.p[0] != l.tag || l.p[l.n - 1] != l.tag || l.p[l.n / 2] != l.tag)
      ++corrupt;
  };
  for (int i = 0; i < iterations; ++i) {
    if (live.size() > 16 || (!live.empty() && rng() % 2)) {
      size_t k = rng() % live.size();
      check(live[k]);
      allocator.deallocate(live[k].p);
      live.erase(live.begin() + k);
      continue;
    }
    size_t n = rng() % 8 == 0 ? 1 * MiB + rng() % (3 * MiB) : 1 + rng() % 8192;
    void *p = nullptr;
    tcc_status_t s = tcc_allocator_allocate(allocator.get(), n, rng() % 3, &p);
    if (s) {
      if (tcc_status_code(s) == TCC_STATUS_RESOURCE_EXHAUSTED)
        ++ooms;
      else
        ++corrupt;
      tcc_status_free(s);
      continue;
    }
    Live l{static_cast<unsigned char *>(p), n,
           static_cast<unsigned char>(thread * 31 + i)};
    l.p[0] = l.p[n - 1] = l.p[n / 2] = l.tag;
    live.push_back(l);
    if (i % 64 == 0)
      allocator.trim();
  }
  for (const Live &l : live) {
    check(l);
    allocator.deallocate(l.p);
  }
}

void hammerWithEightThreads(tcc::Allocator &allocator, int iterations,
                            std::atomic<int> &corrupt, std::atomic<int> &ooms) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back(hammer, std::ref(allocator), t, iterations,
                         std::ref(corrupt), std::ref(ooms));
  // And a ninth that watches, as a monitoring thread would.
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done) {
      tcc_allocator_stats_t s = allocator.stats();
      if (s.allocated_bytes[TCC_POOL_ALL].current >
          s.reserved_bytes[TCC_POOL_ALL].current)
        ++corrupt;
      allocator.summary();
    }
  });
  for (std::thread &t : threads)
    t.join();
  done = true;
  watcher.join();
}

TEST_F(AllocatorTest, EightThreadsHammerIt) {
  std::atomic<int> corrupt{0}, ooms{0};
  hammerWithEightThreads(allocator, 3000, corrupt, ooms);
  EXPECT_EQ(corrupt, 0);
  EXPECT_EQ(ooms, 0);
  tcc_allocator_stats_t s = stats();
  EXPECT_EQ(s.allocated_bytes[TCC_POOL_ALL].current, 0u);
  EXPECT_EQ(s.requested_bytes[TCC_POOL_ALL].current, 0u);
  EXPECT_EQ(s.active_blocks[TCC_POOL_ALL].current, 0u);
  EXPECT_EQ(s.num_allocs, s.num_frees);
  EXPECT_EQ(s.inactive_split_bytes[TCC_POOL_ALL].current, 0u);
  EXPECT_GT(s.num_cache_hits, s.num_allocs / 2);
  EXPECT_EQ(s.cached_bytes, s.reserved_bytes[TCC_POOL_ALL].current);
  allocator.trim();
  EXPECT_EQ(stats().reserved_bytes[TCC_POOL_ALL].current, 0u);
  EXPECT_EQ(fake->liveBytes(), 0u);
  EXPECT_EQ(fake->badDeallocations, 0);
}

TEST_F(AllocatorTest, EightThreadsHammerItUnderALimit) {
  make({.capacity = 96 * MiB}, {.memory_limit = 64 * MiB});
  std::atomic<int> corrupt{0}, ooms{0};
  hammerWithEightThreads(allocator, 2000, corrupt, ooms);
  EXPECT_EQ(corrupt, 0);
  EXPECT_LE(fake->peakLiveBytes(), 64 * MiB);
  EXPECT_EQ(fake->failures, 0);
  tcc_allocator_stats_t s = stats();
  EXPECT_EQ(s.allocated_bytes[TCC_POOL_ALL].current, 0u);
  EXPECT_EQ(s.num_ooms, static_cast<uint64_t>(ooms.load()));
  allocator.trim();
  EXPECT_EQ(fake->liveBytes(), 0u);
  EXPECT_EQ(fake->badDeallocations, 0);
}

TEST_F(AllocatorTest, EightThreadsWithStreamsAndEvents) {
  make({.events = true});
  std::atomic<bool> stop{false};
  // The "device" finishes stream work now and then.
  std::thread device([&] {
    while (!stop) {
      fake->completeEvents();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        void *p = nullptr;
        tcc_stream_t stream = t % 3;
        if (tcc_status_t s = tcc_allocator_allocate(
                allocator.get(), 512 * (1 + i % 7), stream, &p)) {
          tcc_status_free(s);
          ++errors;
          continue;
        }
        if (i % 3 == 0)
          allocator.recordStream(p, stream + 1);
        allocator.deallocate(p);
      }
    });
  for (std::thread &t : threads)
    t.join();
  stop = true;
  device.join();
  EXPECT_EQ(errors, 0);
  allocator.trim();
  EXPECT_EQ(fake->liveEvents(), 0u);
  EXPECT_EQ(fake->liveBytes(), 0u);
  EXPECT_EQ(stats().allocated_bytes[TCC_POOL_ALL].current, 0u);
}

TEST(Allocator, CreateChecksTheBackend) {
  tcc_device_backend_t backend{};
  tcc_allocator_t *a = nullptr;
  Result r = result(tcc_allocator_create(&backend, nullptr, &a));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(r.message, "lacks allocate or deallocate")) << r.message;

  tcc::testing::FakeBackend fake({.events = true});
  backend = fake.backend();
  backend.query_event = nullptr;
  r = result(tcc_allocator_create(&backend, nullptr, &a));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(r.message, "3 of the 4 event functions")) << r.message;
  EXPECT_EQ(a, nullptr);
  EXPECT_FALSE(fake.destroyed);
}

TEST(Allocator, HostAllocatorWorks) {
  tcc::Allocator host = tcc::Allocator::host();
  EXPECT_EQ(host.name(), "host");
  EXPECT_TRUE(tcc_allocator_host_accessible(host.get()));
  char *p = static_cast<char *>(host.allocate(100000));
  std::memset(p, 7, 100000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 512, 0u);
  host.deallocate(p);
  EXPECT_EQ(host.allocate(100000), p);
  host.deallocate(p);
}

#if defined(__linux__)
/// The VmFlags line of the mapping holding `p` in /proc/self/smaps.
static std::string vmFlagsOf(const void *p) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 &&
        line.find('-') < line.find(' '))
      inside = lo <= at && at < hi;
    else if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}

// Host segments of 2 MiB and more are mappings of their own that start on
// a huge page and ask for transparent huge pages; trimming unmaps them.
TEST(Allocator, LargeHostSegmentsAskForHugePages) {
  tcc::Allocator host = tcc::Allocator::host();
  const size_t bytes = size_t(5) << 20;
  char *p = static_cast<char *>(host.allocate(bytes));
  ASSERT_NE(p, nullptr);
  std::memset(p, 7, bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (uintptr_t(2) << 20), 0u);
  if (std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"))
    EXPECT_NE(vmFlagsOf(p).find(" hg"), std::string::npos) << vmFlagsOf(p);
  else
    std::printf("no transparent huge pages in this kernel: the hint is not "
                "checked\n");
  host.deallocate(p);
  host.trim();
  EXPECT_EQ(msync(p, 4096, MS_ASYNC), -1) << "the segment is still mapped";
  EXPECT_EQ(errno, ENOMEM);
}
#endif

TEST(Allocator, TheDefaultAllocatorServesTensors) {
  tcc_allocator_t *def = tcc_allocator_default();
  EXPECT_EQ(def, tcc_allocator_default());
  tcc_allocator_stats_t before, after;
  tcc_allocator_stats(def, &before);
  {
    tcc::Tensor t = tcc::Tensor::create(TCC_DTYPE_F32, {100});
  }
  tcc_allocator_stats(def, &after);
  EXPECT_EQ(after.num_allocs, before.num_allocs + 1);
  EXPECT_EQ(after.num_frees, before.num_frees + 1);
  tcc_allocator_free(def); // ignored: it lives as long as the process
  EXPECT_EQ(tcc_allocator_default(), def);
}

TEST(Allocator, TensorsKeepTheirAllocatorAlive) {
  FakeBackend fake;
  tcc::Allocator allocator = tcc::Allocator::create(fake.backend());
  tcc::Tensor t = tcc::Tensor::create(allocator, TCC_DTYPE_I64, {2, 3});
  EXPECT_EQ(t.data<int64_t>()[5], 0); // zero-filled
  EXPECT_EQ(allocator.stats().requested_bytes[TCC_POOL_ALL].current, 48u);
  allocator = {};
  EXPECT_FALSE(fake.destroyed);
  t = {};
  EXPECT_TRUE(fake.destroyed);
}

TEST(Allocator, TensorsNeedHostMemory) {
  FakeBackend fake({.hostAccessible = false});
  tcc::Allocator device = tcc::Allocator::create(fake.backend());
  tcc_tensor_t *t = nullptr;
  int64_t shape[] = {4};
  Result r =
      result(tcc_tensor_create_in(device.get(), TCC_DTYPE_F32, 1, shape, &t));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.message, "tensor: allocator 'fake' is not host accessible; "
                       "tensors live in host memory");
}

TEST(Allocator, TensorOutOfMemoryNamesTheTensor) {
  FakeBackend fake;
  tcc::Allocator allocator =
      tcc::Allocator::create(fake.backend(), {.memory_limit = 1 * MiB});
  tcc_tensor_t *t = nullptr;
  int64_t shape[] = {1024, 1024};
  Result r = result(
      tcc_tensor_create_in(allocator.get(), TCC_DTYPE_F32, 2, shape, &t));
  EXPECT_EQ(r.code, TCC_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_TRUE(contains(r.message, "tensor: cannot allocate f32[1024x1024]: "
                                  "fake: out of memory"))
      << r.message;
}

//===----------------------------------------------------------------------===//
// CUDA: only the failure paths can run without a GPU.
//===----------------------------------------------------------------------===//

/// Sets an environment variable for one test.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      saved = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (saved.empty())
      unsetenv(name);
    else
      setenv(name, saved.c_str(), 1);
  }

private:
  const char *name;
  std::string saved;
};

TEST(CudaAllocator, MissingDriverIsNotFound) {
  ScopedEnv env("TCC_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  tcc_allocator_t *a = nullptr;
  Result r = result(tcc_allocator_create_cuda(0, nullptr, &a));
  EXPECT_EQ(r.code, TCC_STATUS_NOT_FOUND);
  EXPECT_TRUE(contains(r.message, "CUDA is not available: cannot load the "
                                  "driver library /nonexistent/libcuda.so.1"))
      << r.message;
  EXPECT_EQ(a, nullptr);
}

TEST(CudaAllocator, ALibraryThatIsNoDriverIsNotFound) {
  ScopedEnv env("TCC_CUDA_DRIVER", "libm.so.6");
  tcc_allocator_t *a = nullptr;
  Result r = result(tcc_allocator_create_cuda(0, nullptr, &a));
  EXPECT_EQ(r.code, TCC_STATUS_NOT_FOUND);
  EXPECT_TRUE(contains(r.message, "libm.so.6 does not export cuInit"))
      << r.message;
}

TEST(CudaAllocator, NegativeDeviceIsInvalid) {
  tcc_allocator_t *a = nullptr;
  EXPECT_EQ(result(tcc_allocator_create_cuda(-1, nullptr, &a)).code,
            TCC_STATUS_INVALID_ARGUMENT);
}

// The toolkit's stub libcuda exports everything and fails every call, as a
// machine with the toolkit but no driver would.
TEST(CudaAllocator, TheToolkitStubIsNotFound) {
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  for (const char *candidate : {"/usr/local/cuda/lib64/stubs/libcuda.so",
                                "/usr/local/cuda-13.0/lib/stubs/libcuda.so"})
    if (std::filesystem::exists(candidate))
      stub = candidate;
  if (!std::filesystem::exists(stub))
    GTEST_SKIP() << "no CUDA toolkit stub library here";
  ScopedEnv env("TCC_CUDA_DRIVER", stub);
  tcc_allocator_t *a = nullptr;
  Result r = result(tcc_allocator_create_cuda(0, nullptr, &a));
  EXPECT_EQ(r.code, TCC_STATUS_NOT_FOUND);
  EXPECT_TRUE(contains(r.message, "CUDA is not available: cuInit failed"))
      << r.message;
}

// On this machine: NOT_FOUND without a GPU; with one, a working allocator.
TEST(CudaAllocator, TheSystemDriverWorksOrFailsCleanly) {
  tcc_allocator_t *a = nullptr;
  Result r = result(tcc_allocator_create_cuda(0, nullptr, &a));
  if (r.code == TCC_STATUS_NOT_FOUND) {
    EXPECT_TRUE(contains(r.message, "CUDA")) << r.message;
    return;
  }
  ASSERT_EQ(r.code, TCC_STATUS_OK) << r.message;
  tcc::Allocator cuda(a);
  EXPECT_EQ(cuda.name(), "cuda:0");
  EXPECT_FALSE(tcc_allocator_host_accessible(a));
  void *p = cuda.allocate(1000);
  cuda.recordStream(p, 0);
  cuda.deallocate(p);
  EXPECT_EQ(cuda.allocate(1000), p);
  cuda.deallocate(p);
  cuda.trim();
  EXPECT_EQ(cuda.stats().reserved_bytes[TCC_POOL_ALL].current, 0u);
}

// The process's CUDA allocator: an error that makes nothing without a
// driver, then (the fake driver, test/unit/runtime/fake_cuda.c) one
// allocator, the same on every call, that frees do not destroy.
TEST(CudaAllocator, TheDefaultOneIsMadeOnceADriverLoads) {
  tcc_allocator_t *a = nullptr;
  {
    ScopedEnv env("TCC_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
    EXPECT_EQ(result(tcc_allocator_cuda_default(0, &a)).code,
              TCC_STATUS_NOT_FOUND);
    EXPECT_EQ(a, nullptr);
  }
  EXPECT_EQ(result(tcc_allocator_cuda_default(16, &a)).code,
            TCC_STATUS_INVALID_ARGUMENT);
  ScopedEnv env("TCC_CUDA_DRIVER", TCC_FAKE_CUDA);
  ASSERT_EQ(result(tcc_allocator_cuda_default(0, &a)).code, TCC_STATUS_OK);
  tcc_allocator_t *again = nullptr;
  ASSERT_EQ(result(tcc_allocator_cuda_default(0, &again)).code, TCC_STATUS_OK);
  EXPECT_EQ(a, again);
  EXPECT_EQ(std::string(tcc_allocator_name(a)), "cuda:0");
  tcc_allocator_free(a); // immortal: still usable
  void *p = nullptr;
  ASSERT_EQ(result(tcc_allocator_allocate(a, 1000, 0, &p)).code, TCC_STATUS_OK);
  tcc_allocator_stats_t stats;
  tcc_allocator_stats(a, &stats);
  EXPECT_EQ(stats.num_allocs, 1u);
  EXPECT_EQ(result(tcc_allocator_deallocate(a, p)).code, TCC_STATUS_OK);
}

} // namespace
