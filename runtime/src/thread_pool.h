// thread_pool.h - the persistent worker threads behind a context's
// tcc_host_api_t::parallel_for.
#ifndef TCC_RUNTIME_SRC_THREAD_POOL_H
#define TCC_RUNTIME_SRC_THREAD_POOL_H

#include "tcc/abi.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tcc {

/// A fixed set of worker threads that, together with the calling thread,
/// run one parallelFor at a time. The chunks of a job are dealt out in
/// contiguous runs, one a thread (the caller's first): a thread claims the
/// chunks of its own run and then those left in the others', so uneven
/// chunks and a late thread still balance themselves, while chunk i runs
/// on the same thread from one job to the next whenever the threads keep
/// pace. That matters between kernels: a GEMM split into a task a thread
/// by columns writes each thread's columns into its own core's cache, and
/// the next kernel split the same way reads them there.
///
/// A job returns once its chunks are done and the workers inside it have
/// left; a worker that had not entered it by the time the caller took the
/// last chunk skips it. So a worker the OS has descheduled between jobs (a
/// competing process on its CPU, or in a virtual machine the host) costs
/// a job nothing: the caller runs its chunks. Waiting for every worker to
/// look at every job had cost a 2-thread mlp run 4 ms instead of 0.2 in
/// the first 100 ms beside such a process.
///
/// Between jobs a worker first spins on the job counter for a while
/// (`spinMicros`) and only then sleeps on a condition variable: a model
/// run is a sequence of short parallel loops and kernels, and waking a
/// sleeping thread (a futex call, and in a virtual machine an inter-processor
/// interrupt) costs tens of microseconds each time, which is what OpenMP
/// runtimes and ONNX Runtime's pool avoid the same way. A pool with more
/// threads than the machine has CPUs never spins: a spinning thread would
/// take the CPU from one with work.
class ThreadPool {
public:
  /// Starts numThreads - 1 workers (none for numThreads <= 1). Throws
  /// std::system_error when a thread cannot be started. spinMicros < 0
  /// means the default (TCC_POOL_SPIN_US in the environment, else 1000).
  explicit ThreadPool(int numThreads, int spinMicros = -1);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int numThreads() const { return static_cast<int>(workers.size()) + 1; }
  /// How long idle workers spin before they sleep (0: never spin).
  int spinMicros() const { return spinUs; }

  /// Calls fn(ctx, b, e) over disjoint ranges covering [0, n), each at least
  /// `grain` long but the last, and returns when all are done. A call made
  /// while the pool is busy (from inside fn, or from another thread) runs
  /// on its caller alone rather than waiting, so it cannot deadlock.
  void parallelFor(int64_t n, int64_t grain, tcc_parallel_fn_t fn, void *ctx);

  /// Idle workers spin at most `micros` more (0: none) before they sleep,
  /// until the next job; called when a run ends by a context whose caller
  /// goes on to other work (a framework's own operators between compiled
  /// graphs), which workers spinning on its CPUs would slow down.
  void settle(int micros);

  /// What the threads did in the pool's parallel loops since accounting was
  /// last turned on: the workers' time running chunks, and the caller's
  /// time waiting at the end of a loop for the workers to finish theirs.
  /// A kernel's threads were busy (wall - callerWait + workerBusy) of its
  /// (threads x wall): what `tcc-run --profile` reports per kernel.
  struct Usage {
    int64_t workerBusyNs = 0;
    int64_t callerWaitNs = 0;
    int64_t loops = 0; ///< loops split across threads
  };
  /// Turns accounting on (reading the clock twice a loop and a worker's
  /// entry) and clears the sums, or off. Not while a job runs.
  void setAccounting(bool on);
  Usage usage() const;
  /// For tests: how many workers sleep (or are about to).
  int sleepingWorkers() const {
    return sleepers.load(std::memory_order_relaxed);
  }

  /// For tests: `hook(ctx, worker)` runs on a worker each time it has seen
  /// a new job, before it enters the job (so a test can hold one back, as
  /// a descheduled thread would be). Set or clear it while no job runs.
  using PauseHook = void (*)(void *ctx, int worker);
  void setPauseHookForTesting(PauseHook hook, void *ctx) {
    pauseContext = ctx;
    pauseHook.store(hook, std::memory_order_release);
  }

private:
  void stop();
  void workerLoop(int self);
  /// Runs chunks until none is left, its own run first.
  void runChunks(int self);
  /// Waits, spinning first, until the job counter differs from `seen`;
  /// returns false when the pool stops.
  bool waitForJob(uint64_t seen);

  std::vector<std::thread> workers;
  int spinUs = 0;
  std::mutex submitMutex; // held by the caller of the job in flight
  std::mutex mutex;       // for sleeping and waking only
  std::condition_variable wake;
  std::atomic<uint64_t> generation{0}; // bumped for each job
  std::atomic<int> sleepers{0};        // workers asleep (or about to be)
  std::atomic<uint64_t> closed{0};     // the last job no worker may enter
  std::atomic<int> inJob{0};           // workers inside the current job
  std::atomic<bool> stopping{false};
  /// steady_clock ticks from which idle workers stop spinning (settle);
  /// the maximum while jobs come.
  std::atomic<int64_t> sleepAfter{INT64_MAX};
  // The job: written by the caller before it bumps `generation`, read by
  // the workers after they see the new value.
  tcc_parallel_fn_t fn = nullptr;
  void *ctx = nullptr;
  int64_t n = 0;
  int64_t chunk = 0;
  /// Thread t's run: chunks [next, end) (next may pass end).
  struct alignas(64) Run {
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };
  std::unique_ptr<Run[]> runs;
  std::atomic<PauseHook> pauseHook{nullptr};
  std::atomic<bool> accounting{false};
  std::atomic<int64_t> workerBusyNs{0}, callerWaitNs{0}, loops{0};
  void *pauseContext = nullptr;
};

} // namespace tcc

#endif // TCC_RUNTIME_SRC_THREAD_POOL_H
