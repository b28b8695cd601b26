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

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
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
  runs.reset(new Run[std::max(numThreads, 1)]);
  try {
    for (int i = 1; i < numThreads; ++i)
      workers.emplace_back([this, i] { workerLoop(i); });
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
  // large enough that claiming them costs nothing. Thread t's run is the
  // t-th of `threads` equal shares, so a split into a task a thread keeps
  // each task on its thread (see the class comment).
  int64_t parts = static_cast<int64_t>(numThreads()) * 4;
  chunk = std::max(grain, (count + parts - 1) / parts);
  const int64_t chunks = (count + chunk - 1) / chunk;
  const int threads = numThreads();
  for (int t = 0; t < threads; ++t) {
    runs[t].next.store(chunks * t / threads, std::memory_order_relaxed);
    runs[t].end = chunks * (t + 1) / threads;
  }
  // Publishes the job. seq_cst, paired with the sleepers' increment: either
  // a worker about to sleep sees the new job, or this sees it asleep.
  sleepAfter.store(INT64_MAX, std::memory_order_relaxed);
  const uint64_t job = generation.fetch_add(1, std::memory_order_seq_cst) + 1;
  if (sleepers.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(mutex);
    wake.notify_all();
  }
  const bool account = accounting.load(std::memory_order_relaxed);
  runChunks(0);
  const int64_t doneAt = account ? nowNs() : 0;
  // Every chunk has been claimed. Close the job, then wait for the workers
  // inside it (one may still run a chunk, or be looking at the runs), not
  // for the others: a worker that has not entered yet (descheduled, or
  // still waking) finds the job closed and skips it, so it cannot hold up
  // this return, and will not see the next job's fields half written.
  // seq_cst on both sides (closed, then inJob here; inJob, then closed in
  // the worker): either this sees the worker inside, or it sees the job
  // closed.
  closed.store(job, std::memory_order_seq_cst);
  auto idle = [this] { return inJob.load(std::memory_order_seq_cst) == 0; };
  if (!spinUntil(spinUs, idle))
    while (!idle())
      std::this_thread::yield();
  if (account) {
    callerWaitNs.fetch_add(nowNs() - doneAt, std::memory_order_relaxed);
    loops.fetch_add(1, std::memory_order_relaxed);
  }
}

void ThreadPool::setAccounting(bool on) {
  workerBusyNs.store(0, std::memory_order_relaxed);
  callerWaitNs.store(0, std::memory_order_relaxed);
  loops.store(0, std::memory_order_relaxed);
  accounting.store(on, std::memory_order_release);
}

ThreadPool::Usage ThreadPool::usage() const {
  Usage u;
  u.workerBusyNs = workerBusyNs.load(std::memory_order_relaxed);
  u.callerWaitNs = callerWaitNs.load(std::memory_order_relaxed);
  u.loops = loops.load(std::memory_order_relaxed);
  return u;
}

void ThreadPool::runChunks(int self) {
  const int threads = numThreads();
  for (int i = 0; i < threads; ++i) {
    Run &run = runs[(self + i) % threads];
    for (;;) {
      const int64_t c = run.next.fetch_add(1, std::memory_order_relaxed);
      if (c >= run.end)
        break;
      const int64_t begin = c * chunk;
      fn(ctx, begin, std::min(begin + chunk, n));
    }
  }
}

void ThreadPool::settle(int micros) {
  using Clock = std::chrono::steady_clock;
  sleepAfter.store(
      (Clock::now() + std::chrono::microseconds(std::max(micros, 0)))
          .time_since_epoch()
          .count(),
      std::memory_order_relaxed);
}

bool ThreadPool::waitForJob(uint64_t seen) {
  auto ready = [&] {
    return generation.load(std::memory_order_acquire) != seen ||
           stopping.load(std::memory_order_relaxed);
  };
  // Spins for spinUs, or until a settle() says to stop sooner.
  using Clock = std::chrono::steady_clock;
  bool got = false;
  if (spinUs > 0) {
    const int64_t deadline = (Clock::now() + std::chrono::microseconds(spinUs))
                                 .time_since_epoch()
                                 .count();
    for (;;) {
      for (int i = 0; i < 64 && !(got = ready()); ++i)
        TCC_CPU_RELAX();
      if (got)
        break;
      const int64_t now = Clock::now().time_since_epoch().count();
      if (now >= deadline || now >= sleepAfter.load(std::memory_order_relaxed))
        break;
    }
  }
  if (!got && !ready()) {
    std::unique_lock<std::mutex> lock(mutex);
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    wake.wait(lock, ready);
    sleepers.fetch_sub(1, std::memory_order_relaxed);
  }
  return !stopping.load(std::memory_order_relaxed);
}

void ThreadPool::workerLoop(int self) {
  uint64_t seen = 0;
  for (;;) {
    if (!waitForJob(seen))
      return;
    const uint64_t job = generation.load(std::memory_order_acquire);
    seen = job;
    if (PauseHook hook = pauseHook.load(std::memory_order_acquire))
      hook(pauseContext, self);
    inJob.fetch_add(1, std::memory_order_seq_cst);
    if (closed.load(std::memory_order_seq_cst) < job) {
      if (accounting.load(std::memory_order_relaxed)) {
        const int64_t start = nowNs();
        runChunks(self);
        workerBusyNs.fetch_add(nowNs() - start, std::memory_order_relaxed);
      } else {
        runChunks(self);
      }
    }
    inJob.fetch_sub(1, std::memory_order_release);
  }
}
