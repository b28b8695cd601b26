// uk_test_util.h - what the micro-kernel tests share: the variant fixture,
// host APIs with 1-3 threads, random data and double-precision references.
#ifndef TCC_TEST_UNIT_UKERNELS_UK_TEST_UTIL_H
#define TCC_TEST_UNIT_UKERNELS_UK_TEST_UTIL_H

#include "uk_variants.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace uktest {

using tcc::ukvariants::Variant;

/// Names of every variant, for INSTANTIATE_TEST_SUITE_P.
inline std::vector<std::string> variantNames() {
  int count = 0;
  const Variant *const *all = tcc::ukvariants::allVariants(&count);
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i)
    names.push_back(all[i]->name);
  return names;
}

inline const Variant &variantNamed(const std::string &name) {
  int count = 0;
  const Variant *const *all = tcc::ukvariants::allVariants(&count);
  for (int i = 0; i < count; ++i)
    if (name == all[i]->name)
      return *all[i];
  ADD_FAILURE() << "no variant " << name;
  return *all[0];
}

/// Parameterised over the variants; skips those the CPU cannot run.
class VariantTest : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    v = &variantNamed(GetParam());
    if (!tcc::ukvariants::cpuSupports(*v))
      GTEST_SKIP() << "this CPU cannot run the " << v->name
                   << " kernels (needs " << v->cpuLevel << ")";
  }
  /// The ISA whose layouts the variant reads.
  int32_t isa() const { return v->isaFn(); }
  const Variant *v = nullptr;
};

/// A host API backed by real threads: parallel_for splits [0, n) into
/// chunks of at least `grain`, hands them to num_threads - 1 fresh threads
/// and the caller, and joins. Chunks are claimed from the end backwards, so
/// that any dependence on execution order shows.
class ThreadHost {
public:
  explicit ThreadHost(int threads) {
    api.struct_size = sizeof(api);
    api.num_threads = threads;
    api.self = this;
    api.parallel_for = &ThreadHost::parallelFor;
  }
  const tcc_host_api_t *get() const { return &api; }
  int calls = 0;               // parallel_for calls seen
  size_t lastParts = 0;        // ranges the last call was split into
  std::vector<size_t> parts;   // ranges of each call, in order
  std::vector<int64_t> counts; // n of each call, in order
  // Runs only the first range (on the caller) and drops the others: as if
  // every other thread arrived after the work was gone. Breaks the
  // parallel_for contract on purpose, for kernels whose tasks claim work
  // from a shared counter: they must leave nothing to the missing ones.
  bool onlyFirstRange = false;

private:
  static void parallelFor(void *self, int64_t n, int64_t grain,
                          tcc_parallel_fn_t fn, void *ctx) {
    auto *h = static_cast<ThreadHost *>(self);
    ++h->calls;
    h->counts.push_back(n);
    const int threads = h->api.num_threads;
    grain = std::max<int64_t>(grain, 1);
    int64_t chunk = std::max(grain, (n + threads - 1) / threads);
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (int64_t b = 0; b < n; b += chunk)
      ranges.push_back({b, std::min(n, b + chunk)});
    h->lastParts = ranges.size();
    h->parts.push_back(ranges.size());
    std::reverse(ranges.begin(), ranges.end());
    if (h->onlyFirstRange && !ranges.empty()) {
      fn(ctx, ranges[0].first, ranges[0].second);
      return;
    }
    std::vector<std::thread> pool;
    for (size_t i = 1; i < ranges.size(); ++i)
      pool.emplace_back([&, i] { fn(ctx, ranges[i].first, ranges[i].second); });
    if (!ranges.empty())
      fn(ctx, ranges[0].first, ranges[0].second);
    for (std::thread &t : pool)
      t.join();
  }
  tcc_host_api_t api{};
};

inline std::vector<float> randomVector(size_t n, uint32_t seed,
                                       float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// Caller-owned scratch with guard bytes after it, deliberately not
/// 64-byte aligned (the kernels must cope with 4-byte alignment).
class Scratch {
public:
  explicit Scratch(int64_t bytes) : size(bytes) {
    mem.assign(static_cast<size_t>(bytes) + kGuard + 64, kFill);
  }
  void *get() {
    return size ? static_cast<void *>(mem.data() + offset()) : nullptr;
  }
  /// Whether nothing was written into the requested bytes.
  bool untouched() const {
    for (int64_t i = 0; i < size; ++i)
      if (mem[offset() + i] != kFill)
        return false;
    return true;
  }
  /// Whether the guard bytes past the requested size are intact.
  bool guardIntact() const {
    for (size_t i = 0; i < kGuard; ++i)
      if (mem[offset() + size + i] != kFill)
        return false;
    return true;
  }

private:
  size_t offset() const {
    auto addr = reinterpret_cast<uintptr_t>(mem.data());
    return ((64 - addr % 64) % 64) + 4;
  }
  static constexpr size_t kGuard = 256;
  static constexpr unsigned char kFill = 0xA5;
  int64_t size;
  std::vector<unsigned char> mem;
};

/// Expects got to match want within the worst-case bound of a recursive
/// fp32 sum of `terms` products: |got - want| <= (terms + 3) * eps * mag,
/// where mag is the sum of the magnitudes that went into the element.
inline void expectClose(const std::vector<double> &want,
                        const std::vector<double> &mag, const float *got,
                        int64_t rows, int64_t cols, int64_t ld, int64_t terms,
                        const std::string &what) {
  int failures = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const double w = want[i * cols + j], g = got[i * ld + j];
      const double tol = (terms + 3) * FLT_EPSILON * mag[i * cols + j] + 1e-30;
      if (std::isnan(w) ? !std::isnan(g) : !(std::fabs(g - w) <= tol)) {
        if (++failures <= 5)
          ADD_FAILURE() << what << ": element (" << i << ", " << j << ") is "
                        << g << ", want " << w << " (tolerance " << tol << ")";
      }
    }
  EXPECT_EQ(failures, 0) << what;
}

/// Expects two float arrays to be bit-identical.
inline void expectIdentical(const float *a, const float *b, size_t n,
                            const std::string &what) {
  size_t i = 0;
  for (; i < n; ++i)
    if (std::memcmp(a + i, b + i, sizeof(float)) != 0)
      break;
  EXPECT_EQ(i, n) << what << ": first difference at " << i << " ("
                  << (i < n ? a[i] : 0) << " vs " << (i < n ? b[i] : 0) << ")";
}

} // namespace uktest

#endif // TCC_TEST_UNIT_UKERNELS_UK_TEST_UTIL_H
