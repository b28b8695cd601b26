// thread_pool.cc - tcc::ThreadPool.
#include "thread_pool.h"

#include <algorithm>

using namespace tcc;

ThreadPool::ThreadPool(int numThreads) {
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
    stopping = true;
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
  {
    std::lock_guard<std::mutex> lock(mutex);
    fn = func;
    ctx = funcCtx;
    n = count;
    // About four chunks a thread: small enough to balance uneven work,
    // large enough that claiming them costs nothing.
    int64_t parts = static_cast<int64_t>(numThreads()) * 4;
    chunk = std::max(grain, (count + parts - 1) / parts);
    next.store(0, std::memory_order_relaxed);
    pending = static_cast<int>(workers.size());
    ++generation;
  }
  wake.notify_all();
  runChunks();
  // Wait for every worker, not just every chunk: a worker still looking at
  // this job must not see the fields of the next one.
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [this] { return pending == 0; });
}

void ThreadPool::runChunks() {
  for (;;) {
    int64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
    if (begin >= n)
      return;
    fn(ctx, begin, std::min(begin + chunk, n));
  }
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping)
        return;
      seen = generation;
    }
    runChunks();
    std::lock_guard<std::mutex> lock(mutex);
    if (--pending == 0)
      done.notify_one();
  }
}
