// thread_pool.h - the persistent worker threads behind a context's
// tcc_host_api_t::parallel_for.
#ifndef TCC_RUNTIME_SRC_THREAD_POOL_H
#define TCC_RUNTIME_SRC_THREAD_POOL_H

#include "tcc/abi.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace tcc {

/// A fixed set of worker threads that, together with the calling thread,
/// run one parallelFor at a time. Workers sleep on a condition variable
/// between jobs and claim chunks of a job from an atomic counter, so uneven
/// chunks balance themselves.
class ThreadPool {
public:
  /// Starts numThreads - 1 workers (none for numThreads <= 1). Throws
  /// std::system_error when a thread cannot be started.
  explicit ThreadPool(int numThreads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int numThreads() const { return static_cast<int>(workers.size()) + 1; }

  /// Calls fn(ctx, b, e) over disjoint ranges covering [0, n), each at least
  /// `grain` long but the last, and returns when all are done. A call made
  /// while the pool is busy (from inside fn, or from another thread) runs
  /// on its caller alone rather than waiting, so it cannot deadlock.
  void parallelFor(int64_t n, int64_t grain, tcc_parallel_fn_t fn, void *ctx);

private:
  void stop();
  void workerLoop();
  void runChunks();

  std::vector<std::thread> workers;
  std::mutex submitMutex; // held by the caller of the job in flight
  std::mutex mutex;       // guards everything below but `next`
  std::condition_variable wake;
  std::condition_variable done;
  uint64_t generation = 0; // bumped for each job
  int pending = 0;         // workers yet to finish the current job
  bool stopping = false;
  tcc_parallel_fn_t fn = nullptr;
  void *ctx = nullptr;
  int64_t n = 0;
  int64_t chunk = 0;
  std::atomic<int64_t> next{0};
};

} // namespace tcc

#endif // TCC_RUNTIME_SRC_THREAD_POOL_H
