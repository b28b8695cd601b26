// thread_pool.cc - tcc::ThreadPool.
#include "thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TCC_CPU_RELAX() _mm_pause()
#else
#define TCC_CPU_RELAX() std::atomic_signal_fence(std::memory_order_seq_cst)
#endif

using namespace tcc;

namespace {
int defaultSpinMicros() {
  if (const char *env = std::getenv("TCC_POOL_SPIN_US")) {
    char *end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 0 && v <= 1000000)
      return static_cast<int>(v);
  }
  return 1000;
}

/// Spins until pred() holds or `micros` pass; true if it held.
template <typename Pred> bool spinUntil(int micros, Pred pred) {
  if (micros <= 0 || pred()) // most joins find the workers done already
    return pred();
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::microseconds(micros);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (pred())
        return true;
      TCC_CPU_RELAX();
    }
    if (Clock::now() >= deadline)
      return pred();
  }
}
} // namespace

ThreadPool::ThreadPool(int numThreads, int spinMicros) {
  spinUs = spinMicros < 0 ? defaultSpinMicros() : spinMicros;
  unsigned cpus = std::thread::hardware_concurrency();
  if (cpus != 0 && numThreads > static_cast<int>(cpus))
    spinUs = 0;
  try {
    for (int i = 1; i < numThreads; ++i)
      workers.emplace_back([this] { workerLoop(); });
  } catch (...) {
    stop(); // the destructor does not run for a half-built object
    throw;
  }
}

ThreadPool::~ThreadPool() { stop(); }

void ThreadPool::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping.store(true);
  }
  wake.notify_all();
  for (std::thread &t : workers)
    t.join();
  workers.clear();
}

void ThreadPool::parallelFor(int64_t count, int64_t grain,
                             tcc_parallel_fn_t func, void *funcCtx) {
  if (count <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  std::unique_lock<std::mutex> submit(submitMutex, std::try_to_lock);
  if (workers.empty() || count <= grain || !submit.owns_lock()) {
    func(funcCtx, 0, count);
    return;
  }
  fn = func;
  ctx = funcCtx;
  n = count;
  // About four chunks a thread: small enough to balance uneven work,
  // large enough that claiming them costs nothing.
  int64_t parts = static_cast<int64_t>(numThreads()) * 4;
  chunk = std::max(grain, (count + parts - 1) / parts);
  next.store(0, std::memory_order_relaxed);
  pending.store(static_cast<int>(workers.size()), std::memory_order_relaxed);
  // Publishes the job. seq_cst, paired with the sleepers' increment: either
  // a worker about to sleep sees the new job, or this sees it asleep.
  generation.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(mutex);
    wake.notify_all();
  }
  runChunks();
  // Wait for every worker, not just every chunk: a worker still looking at
  // this job must not see the fields of the next one. The workers are awake
  // by now, so this is short; yield in case one was descheduled.
  if (!spinUntil(spinUs, [this] {
        return pending.load(std::memory_order_acquire) == 0;
      }))
    while (pending.load(std::memory_order_acquire) != 0)
      std::this_thread::yield();
}

void ThreadPool::runChunks() {
  for (;;) {
    int64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
    if (begin >= n)
      return;
    fn(ctx, begin, std::min(begin + chunk, n));
  }
}

bool ThreadPool::waitForJob(uint64_t seen) {
  auto ready = [&] {
    return generation.load(std::memory_order_acquire) != seen ||
           stopping.load(std::memory_order_relaxed);
  };
  if (!spinUntil(spinUs, ready)) {
    std::unique_lock<std::mutex> lock(mutex);
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    wake.wait(lock, ready);
    sleepers.fetch_sub(1, std::memory_order_relaxed);
  }
  return !stopping.load(std::memory_order_relaxed);
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  for (;;) {
    if (!waitForJob(seen))
      return;
    seen = generation.load(std::memory_order_acquire);
    runChunks();
    pending.fetch_sub(1, std::memory_order_release);
  }
}
