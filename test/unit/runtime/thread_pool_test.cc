// thread_pool_test.cc - tcc::ThreadPool::parallelFor.
#include "thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

/// Counts how often each index is visited and checks the ranges' grain.
struct Coverage {
  explicit Coverage(int64_t n, int64_t grain)
      : hits(new std::atomic<int>[n]()), n(n), grain(grain) {}
  static void visit(void *self, int64_t begin, int64_t end) {
    auto *c = static_cast<Coverage *>(self);
    if (begin < 0 || end > c->n || begin >= end ||
        (end - begin < c->grain && end != c->n))
      ++c->badRanges;
    for (int64_t i = begin; i < end; ++i)
      ++c->hits[i];
  }
  void expectEachOnce() const {
    EXPECT_EQ(badRanges.load(), 0);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << n;
  }

  std::unique_ptr<std::atomic<int>[]> hits;
  int64_t n, grain;
  std::atomic<int> badRanges{0};
};

TEST(ThreadPool, CoversEachIndexOnce) {
  for (int threads : {1, 2, 3, 8}) {
    tcc::ThreadPool pool(threads);
    EXPECT_EQ(pool.numThreads(), threads);
    for (int64_t n : {1, 2, 7, 64, 1000, 100003})
      for (int64_t grain : {0, 1, 5, 4096}) {
        SCOPED_TRACE(::testing::Message()
                     << threads << " threads, n " << n << ", grain " << grain);
        Coverage c(n, grain);
        pool.parallelFor(n, grain, Coverage::visit, &c);
        c.expectEachOnce();
      }
  }
}

TEST(ThreadPool, EmptyRangeCallsNothing) {
  tcc::ThreadPool pool(4);
  Coverage c(1, 1);
  pool.parallelFor(0, 1, Coverage::visit, &c);
  pool.parallelFor(-5, 1, Coverage::visit, &c);
  EXPECT_EQ(c.hits[0].load(), 0);
}

TEST(ThreadPool, UsesSeveralThreads) {
  tcc::ThreadPool pool(4);
  struct Seen {
    std::mutex mutex;
    std::set<std::thread::id> ids;
  } seen;
  // Enough slow chunks that every worker wakes in time to claim some.
  for (int attempt = 0; attempt < 20 && seen.ids.size() < 2; ++attempt)
    pool.parallelFor(
        64, 1,
        [](void *self, int64_t, int64_t) {
          auto *s = static_cast<Seen *>(self);
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          std::lock_guard<std::mutex> lock(s->mutex);
          s->ids.insert(std::this_thread::get_id());
        },
        &seen);
  EXPECT_GE(seen.ids.size(), 2u);
}

// Chunk t of a job with a chunk a thread runs on thread t, job after job
// (the caller takes chunk 0): kernels split the same way then find what
// the previous one wrote in their own core's cache. Every chunk waits until
// all have started, so none can be taken by a thread done with its own;
// a thread that ran two (or a pool that ran them on one) times out. (A
// pool with more threads than the machine has CPUs never spins, so on a
// two-CPU machine both passes have sleeping workers.)
TEST(ThreadPool, EachThreadRunsItsOwnShareFirst) {
  for (int spin : {1000, 0}) { // spinning and sleeping workers
    SCOPED_TRACE(spin ? "spinning workers" : "sleeping workers");
    constexpr int kThreads = 4;
    tcc::ThreadPool pool(kThreads, spin);
    struct Job {
      std::atomic<int> started{0};
      std::atomic<bool> timedOut{false};
      std::thread::id ran[kThreads];
    };
    std::thread::id first[kThreads];
    for (int rep = 0; rep < 20; ++rep) {
      Job job;
      pool.parallelFor(
          kThreads, 1,
          [](void *self, int64_t begin, int64_t end) {
            auto *j = static_cast<Job *>(self);
            for (int64_t i = begin; i < end; ++i) {
              j->ran[i] = std::this_thread::get_id();
              ++j->started;
              const auto deadline =
                  std::chrono::steady_clock::now() + std::chrono::seconds(5);
              while (j->started.load() < kThreads)
                if (std::chrono::steady_clock::now() > deadline) {
                  j->timedOut = true;
                  break;
                }
            }
          },
          &job);
      ASSERT_FALSE(job.timedOut.load()) << "repetition " << rep;
      EXPECT_EQ(job.ran[0], std::this_thread::get_id());
      std::set<std::thread::id> distinct(job.ran, job.ran + kThreads);
      EXPECT_EQ(distinct.size(), static_cast<size_t>(kThreads));
      for (int t = 0; t < kThreads; ++t) {
        if (rep == 0)
          first[t] = job.ran[t];
        EXPECT_EQ(job.ran[t], first[t]) << "chunk " << t << ", rep " << rep;
      }
    }
  }
}

// With accounting on, the pool sums the workers' time in chunks and the
// caller's wait for them at a loop's end: a chunk that the worker runs for
// 40 ms after the caller's own chunk is done shows in both; off, nothing
// is summed, and turning it on again clears the sums.
TEST(ThreadPool, AccountsWorkerTimeAndTheCallersWait) {
  tcc::ThreadPool pool(2, 1000);
  struct Job {
    std::atomic<bool> workerStarted{false}, timedOut{false};
  } job;
  auto uneven = [](void *self, int64_t begin, int64_t end) {
    auto *j = static_cast<Job *>(self);
    for (int64_t i = begin; i < end; ++i) {
      if (i == 1) { // the worker's run
        j->workerStarted = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(40));
        continue;
      }
      // The caller's chunk ends once the worker holds its own, so the
      // caller cannot take it and must wait.
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (!j->workerStarted.load())
        if (std::chrono::steady_clock::now() > deadline) {
          j->timedOut = true;
          break;
        }
    }
  };
  pool.parallelFor(2, 1, uneven, &job);
  EXPECT_EQ(pool.usage().loops, 0); // off by default
  EXPECT_EQ(pool.usage().workerBusyNs, 0);

  pool.setAccounting(true);
  job.workerStarted = false;
  pool.parallelFor(2, 1, uneven, &job);
  ASSERT_FALSE(job.timedOut.load());
  tcc::ThreadPool::Usage u = pool.usage();
  EXPECT_EQ(u.loops, 1);
  EXPECT_GE(u.workerBusyNs, 35'000'000);
  EXPECT_GE(u.callerWaitNs, 30'000'000);
  // No tighter bound above: after its spin the caller yields, and a loaded
  // machine may run it again well after the worker is done.
  EXPECT_LT(u.callerWaitNs, 5'000'000'000);

  pool.parallelFor(1, 1, uneven, &job); // one chunk: on the caller, unsplit
  EXPECT_EQ(pool.usage().loops, 1);

  pool.setAccounting(true);
  u = pool.usage();
  EXPECT_EQ(u.loops, 0);
  EXPECT_EQ(u.workerBusyNs, 0);
  EXPECT_EQ(u.callerWaitNs, 0);
  pool.setAccounting(false);
  job.workerStarted = false;
  pool.parallelFor(2, 1, uneven, &job);
  EXPECT_EQ(pool.usage().loops, 0);
}

// A worker held back before it enters a job (as a descheduled thread would
// be) does not hold up the job: the caller runs every chunk and returns,
// and the worker, released, skips the closed job and takes the next ones.
TEST(ThreadPool, AWorkerThatMissesAJobDoesNotDelayIt) {
  for (int spin : {1000, 0}) {
    SCOPED_TRACE(spin ? "spinning workers" : "sleeping workers");
    tcc::ThreadPool pool(2, spin);
    struct Gate {
      std::atomic<bool> hold{true}, held{false}, timedOut{false};
    } gate;
    pool.setPauseHookForTesting(
        [](void *ctx, int) {
          auto *g = static_cast<Gate *>(ctx);
          if (!g->hold.load())
            return;
          g->held = true;
          // A pool that waits for this worker returns only after this
          // deadline, which the test then sees.
          const auto deadline =
              std::chrono::steady_clock::now() + std::chrono::seconds(3);
          while (g->hold.load())
            if (std::chrono::steady_clock::now() > deadline) {
              g->timedOut = true;
              return;
            } else {
              std::this_thread::yield();
            }
        },
        &gate);
    struct Job {
      std::thread::id ran[8];
    } job;
    auto record = [](void *self, int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        static_cast<Job *>(self)->ran[i] = std::this_thread::get_id();
    };
    pool.parallelFor(8, 1, record, &job);
    // Returned while the worker is (or is about to be) held: the caller ran
    // every chunk.
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(job.ran[i], std::this_thread::get_id()) << "chunk " << i;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!gate.held.load() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    EXPECT_TRUE(gate.held.load());
    EXPECT_FALSE(gate.timedOut.load()) << "the job waited for the held worker";
    gate.hold = false;
    pool.setPauseHookForTesting(nullptr, nullptr);
    // The next jobs still cover every index once, the worker taking part.
    bool workerRan = false;
    for (int rep = 0; rep < 200 && !workerRan; ++rep) {
      Coverage c(64, 1);
      pool.parallelFor(c.n, c.grain, Coverage::visit, &c);
      c.expectEachOnce();
      Job seen; // chunks long enough for a sleeping worker to wake
      pool.parallelFor(
          8, 1,
          [](void *self, int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
              static_cast<Job *>(self)->ran[i] = std::this_thread::get_id();
              std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
          },
          &seen);
      for (int i = 0; i < 8; ++i)
        workerRan |= seen.ran[i] != std::this_thread::get_id();
    }
    EXPECT_TRUE(workerRan);
  }
}

// A parallelFor inside another runs inline instead of deadlocking.
TEST(ThreadPool, NestedCallsRunInline) {
  tcc::ThreadPool pool(3);
  struct Outer {
    tcc::ThreadPool *pool;
    Coverage inner{100 * 50, 1};
  } outer{&pool};
  pool.parallelFor(
      100, 1,
      [](void *self, int64_t begin, int64_t end) {
        auto *o = static_cast<Outer *>(self);
        for (int64_t i = begin; i < end; ++i) {
          struct Shifted {
            Coverage *c;
            int64_t offset;
          } shifted{&o->inner, i * 50};
          o->pool->parallelFor(
              50, 1,
              [](void *s, int64_t b, int64_t e) {
                auto *sh = static_cast<Shifted *>(s);
                Coverage::visit(sh->c, sh->offset + b, sh->offset + e);
              },
              &shifted);
        }
      },
      &outer);
  outer.inner.expectEachOnce();
}

TEST(ThreadPool, ConcurrentCallersAllFinish) {
  tcc::ThreadPool pool(4);
  std::vector<std::unique_ptr<Coverage>> coverages;
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    coverages.push_back(std::make_unique<Coverage>(20000, 16));
    callers.emplace_back([&pool, c = coverages.back().get()] {
      pool.parallelFor(c->n, c->grain, Coverage::visit, c);
    });
  }
  for (std::thread &t : callers)
    t.join();
  for (auto &c : coverages)
    c->expectEachOnce();
}

// Workers that spin between jobs and workers that sleep (spin 0, or a long
// pause past the spin time) both pick up every job.
TEST(ThreadPool, SpinningAndSleepingWorkersFinishEveryJob) {
  for (int spin : {0, 50, 100000}) {
    tcc::ThreadPool pool(2, spin);
    SCOPED_TRACE(::testing::Message() << "spin " << spin << " us");
    for (int job = 0; job < 200; ++job) {
      Coverage c(97, 1);
      pool.parallelFor(c.n, c.grain, Coverage::visit, &c);
      c.expectEachOnce();
      if (job % 50 == 0) // let the workers give up spinning and sleep
        std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  }
}

// Polls up to `seconds` for the pool's one worker to be asleep.
bool workerFallsAsleep(const tcc::ThreadPool &pool, double seconds) {
  auto until =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (pool.sleepingWorkers() == 1)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// settle() ends the idle workers' spinning now instead of after the spin
// time, until the next job, after which they spin again.
TEST(ThreadPool, SettleSendsIdleWorkersToSleepUntilTheNextJob) {
  if (std::thread::hardware_concurrency() < 2)
    GTEST_SKIP() << "with one CPU a pool of two threads never spins";
  tcc::ThreadPool pool(2, 60 * 1000 * 1000); // a minute of spinning
  Coverage first(97, 1);
  pool.parallelFor(first.n, first.grain, Coverage::visit, &first);
  first.expectEachOnce();
  EXPECT_FALSE(workerFallsAsleep(pool, 0.05)) << "the worker should spin";
  pool.settle(0);
  EXPECT_TRUE(workerFallsAsleep(pool, 5.0));
  Coverage second(97, 1);
  pool.parallelFor(second.n, second.grain, Coverage::visit, &second);
  second.expectEachOnce();
  // The caller may have run every chunk before the worker woke up: give
  // it time to wake, then it should spin.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(workerFallsAsleep(pool, 0.05))
      << "after a new job the worker should spin again";
  pool.settle(20 * 1000); // 20 ms more
  EXPECT_TRUE(workerFallsAsleep(pool, 5.0));
}

TEST(ThreadPool, SpinTimeFromOptionEnvironmentAndCpuCount) {
  unsigned cpus = std::thread::hardware_concurrency();
  if (cpus >= 2) {
    EXPECT_EQ(tcc::ThreadPool(2, 123).spinMicros(), 123);
    ::setenv("TCC_POOL_SPIN_US", "77", 1);
    EXPECT_EQ(tcc::ThreadPool(2).spinMicros(), 77);
    ::setenv("TCC_POOL_SPIN_US", "junk", 1);
    EXPECT_EQ(tcc::ThreadPool(2).spinMicros(), 1000);
    ::unsetenv("TCC_POOL_SPIN_US");
    EXPECT_EQ(tcc::ThreadPool(2).spinMicros(), 1000);
  }
  // More threads than CPUs: a spinning thread would starve a working one.
  if (cpus > 0) {
    EXPECT_EQ(tcc::ThreadPool(static_cast<int>(cpus) + 1, 500).spinMicros(), 0);
  }
}

} // namespace
