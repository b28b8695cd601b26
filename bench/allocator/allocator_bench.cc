// allocator_bench.cc - allocate/free latency of libtccrt's caching allocator
// against malloc and against the same allocator with caching off, the last
// two over a fake device whose every allocation costs 1 ms (about what
// cudaMalloc of a fresh segment costs). docs/performance.md has the figures.
//
//   tcc-allocator-bench [--ops N] [--device-ms MS] [--threads T] [--json]
//
// Each workload runs the same sequence of requests (seeded) through every
// allocator:
//   pairs   allocate and immediately free one block; sizes 256 B .. 4 MiB
//   window  keep up to 32 blocks alive, free a random one when full, as the
//           tensors of a running model live and die
// and reports the mean latency of one allocate + free, the median and p99 of
// single allocate calls, and how many device allocations were made.
#include "tcc/runtime.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// A device whose allocations each take `cost` (a sleep, as a blocking
/// driver call would), backed by malloc.
struct SlowDevice {
  std::chrono::microseconds cost;
  std::atomic<uint64_t> allocations{0};

  tcc_device_backend_t backend() {
    tcc_device_backend_t b{};
    b.name = "slow-device";
    b.flags = TCC_DEVICE_BACKEND_HOST_ACCESSIBLE;
    b.self = this;
    b.allocate = [](void *self, uint64_t bytes, tcc_stream_t, void **out) {
      auto *d = static_cast<SlowDevice *>(self);
      std::this_thread::sleep_for(d->cost);
      ++d->allocations;
      *out = std::aligned_alloc(512, (bytes + 511) / 512 * 512);
      return *out ? nullptr
                  : tcc_status_create(TCC_STATUS_RESOURCE_EXHAUSTED, "oom");
    };
    b.deallocate = [](void *, void *ptr, uint64_t) { std::free(ptr); };
    return b;
  }
};

/// One allocator under test, as two functions.
struct Subject {
  std::string name;
  std::function<void *(size_t)> allocate;
  std::function<void(void *)> deallocate;
  std::function<uint64_t()> deviceAllocations; // empty for malloc
};

struct Request {
  size_t bytes;
  bool freeFirst; // window: free a random live block before allocating
  size_t victim;
};

/// Sizes as tensors come: mostly small, some up to 4 MiB, log-uniform.
std::vector<Request> makeRequests(size_t ops, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> logSize(8, 22); // 256 B .. 4 MiB
  std::vector<Request> r(ops);
  for (Request &q : r) {
    q.bytes = static_cast<size_t>(std::exp2(logSize(rng)));
    q.freeFirst = rng() % 2;
    q.victim = rng();
  }
  return r;
}

struct Result {
  double meanPairNs = 0, p50AllocNs = 0, p99AllocNs = 0;
  uint64_t deviceAllocations = 0;
  size_t ops = 0;
};

double ns(Clock::duration d) {
  return std::chrono::duration<double, std::nano>(d).count();
}

// Touches one byte per block, as a user would, so that malloc cannot skip
// work that the others do.
void touch(void *p) { static_cast<volatile char *>(p)[0] = 1; }

void runOne(const Subject &s, const std::vector<Request> &requests, bool window,
            std::vector<double> &allocNs, Clock::duration &total) {
  std::vector<void *> live;
  auto start = Clock::now();
  for (const Request &q : requests) {
    if (window && live.size() >= 32) {
      size_t k = q.victim % live.size();
      s.deallocate(live[k]);
      live[k] = live.back();
      live.pop_back();
    }
    auto t0 = Clock::now();
    void *p = s.allocate(q.bytes);
    allocNs.push_back(ns(Clock::now() - t0));
    touch(p);
    if (window)
      live.push_back(p);
    else
      s.deallocate(p);
  }
  for (void *p : live)
    s.deallocate(p);
  total += Clock::now() - start;
}

Result measure(const Subject &s, size_t ops, int threads, bool window) {
  // A warm-up pass fills caches as a long-running program's would be.
  std::vector<double> ignored;
  Clock::duration unused{};
  runOne(s, makeRequests(std::min<size_t>(ops, 200), 7), window, ignored,
         unused);
  uint64_t devBefore = s.deviceAllocations ? s.deviceAllocations() : 0;

  std::vector<std::vector<double>> allocNs(threads);
  std::vector<Clock::duration> totals(threads, Clock::duration{});
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      runOne(s, makeRequests(ops, 100 + t), window, allocNs[t], totals[t]);
    });
  for (std::thread &t : pool)
    t.join();

  Result r;
  std::vector<double> all;
  for (auto &v : allocNs)
    all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  r.ops = all.size();
  r.p50AllocNs = all[all.size() / 2];
  r.p99AllocNs = all[all.size() * 99 / 100];
  double totalNs = 0;
  for (auto d : totals)
    totalNs += ns(d);
  r.meanPairNs = totalNs / static_cast<double>(r.ops);
  if (s.deviceAllocations)
    r.deviceAllocations = s.deviceAllocations() - devBefore;
  return r;
}

int usage() {
  std::fprintf(stderr, "usage: tcc-allocator-bench [--ops N] [--device-ms MS] "
                       "[--threads T] [--json]\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  size_t ops = 20000;
  double deviceMs = 1.0;
  int threads = 1;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json")
      json = true;
    else if (a == "--ops" && i + 1 < argc)
      ops = std::strtoul(argv[++i], nullptr, 10);
    else if (a == "--device-ms" && i + 1 < argc)
      deviceMs = std::strtod(argv[++i], nullptr);
    else if (a == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else
      return usage();
  }
  if (!ops || threads < 1 || deviceMs < 0)
    return usage();

  try {
    auto cost =
        std::chrono::microseconds(static_cast<int64_t>(deviceMs * 1000));
    SlowDevice cachedDevice{cost}, uncachedDevice{cost};
    tcc::Allocator caching = tcc::Allocator::create(cachedDevice.backend());
    tcc_allocator_options_t noCacheOptions{};
    noCacheOptions.flags = TCC_ALLOCATOR_NO_CACHE;
    tcc::Allocator noCache =
        tcc::Allocator::create(uncachedDevice.backend(), noCacheOptions);
    tcc::Allocator host = tcc::Allocator::host();

    auto subject = [](const char *name, tcc::Allocator &a, SlowDevice *device) {
      Subject s{name,
                [&a](size_t n) { return a.allocate(n); },
                [&a](void *p) { a.deallocate(p); },
                {}};
      if (device)
        s.deviceAllocations = [device] { return device->allocations.load(); };
      return s;
    };
    std::vector<Subject> subjects = {
        {"malloc",
         [](size_t n) { return std::malloc(n); },
         [](void *p) { std::free(p); },
         {}},
        subject("caching (host)", host, nullptr),
        subject("caching (1 ms device)", caching, &cachedDevice),
        subject("no cache (1 ms device)", noCache, &uncachedDevice),
    };
    if (deviceMs != 1.0) {
      char cost[32];
      std::snprintf(cost, sizeof cost, "%g ms device)", deviceMs);
      subjects[2].name = std::string("caching (") + cost;
      subjects[3].name = std::string("no cache (") + cost;
    }

    std::string jsonOut = "[";
    if (!json)
      std::printf("%-8s %-24s %8s %14s %12s %12s %12s\n", "workload",
                  "allocator", "ops", "alloc+free ns", "alloc p50 ns",
                  "alloc p99 ns", "device allocs");
    for (bool window : {false, true}) {
      std::vector<double> meanNs;
      for (size_t k = 0; k < subjects.size(); ++k) {
        // Every allocation of the no-cache allocator costs the device's
        // latency: fewer operations say as much in less time.
        size_t n = k == 3 && deviceMs > 0 ? std::min<size_t>(ops, 300) : ops;
        Result r = measure(subjects[k], n, threads, window);
        meanNs.push_back(r.meanPairNs);
        const char *workload = window ? "window" : "pairs";
        if (json) {
          char buf[512];
          std::snprintf(
              buf, sizeof buf,
              "%s{\"workload\":\"%s\",\"allocator\":\"%s\",\"threads\":%d,"
              "\"ops\":%zu,\"mean_alloc_free_ns\":%.1f,\"p50_alloc_ns\":%.1f,"
              "\"p99_alloc_ns\":%.1f,\"device_allocs\":%llu}",
              jsonOut.size() > 1 ? "," : "", workload, subjects[k].name.c_str(),
              threads, r.ops, r.meanPairNs, r.p50AllocNs, r.p99AllocNs,
              static_cast<unsigned long long>(r.deviceAllocations));
          jsonOut += buf;
        } else {
          std::printf("%-8s %-24s %8zu %14.1f %12.1f %12.1f %12s\n", workload,
                      subjects[k].name.c_str(), r.ops, r.meanPairNs,
                      r.p50AllocNs, r.p99AllocNs,
                      subjects[k].deviceAllocations
                          ? std::to_string(r.deviceAllocations).c_str()
                          : "-");
        }
      }
      if (!json)
        std::printf(
            "%-8s caching/malloc = %.2fx   no-cache/caching = %.0fx\n\n",
            window ? "window" : "pairs", meanNs[2] / meanNs[0],
            meanNs[3] / meanNs[2]);
    }
    if (json)
      std::printf("%s]\n", jsonOut.c_str());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tcc-allocator-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
