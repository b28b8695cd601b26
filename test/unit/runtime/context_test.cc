// context_test.cc - running models: argument checks, alignment, threads.
#include "fake_backend.h"
#include "test_util.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>

using tcc::testing::FakeBackend;
using tcc::testing::iota;
using tcc::testing::Result;
using tcc::testing::result;

namespace {

class ContextTest : public ::testing::Test {
protected:
  Result run(const std::vector<const tcc_tensor_t *> &in,
             const std::vector<tcc_tensor_t *> &out) {
    return result(tcc_context_run(context.get(), in.data(), in.size(),
                                  out.data(), out.size()));
  }

  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  tcc::Context context{model, 2};
  tcc::Tensor a = iota(1), b = iota(100), sum = iota(0, 0);
};

TEST_F(ContextTest, Runs) {
  EXPECT_EQ(context.numThreads(), 2);
  Result r = run({a.get(), b.get()}, {sum.get()});
  ASSERT_EQ(r.code, TCC_STATUS_OK) << r.message;
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(sum.data<float>()[i], 101 + 2 * i);
}

// Threads of this process, other than the calling one, that the kernel
// lists as running or runnable.
int otherRunnableThreads() {
  int n = 0;
  const std::string self = std::to_string(::gettid());
  for (const auto &task :
       std::filesystem::directory_iterator("/proc/self/task")) {
    if (task.path().filename() == self)
      continue;
    std::ifstream stat(task.path() / "stat");
    std::string line;
    std::getline(stat, line);
    size_t paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() &&
        line[paren + 2] == 'R')
      ++n;
  }
  return n;
}

// tcc_context_set_idle_spin(context, 0): the workers sleep once a run ends
// rather than spin on the CPUs the caller goes on to use; -1 restores the
// pool's spinning.
TEST(ContextIdleSpin, WorkersSleepAfterARunWhenAsked) {
  if (std::thread::hardware_concurrency() < 2)
    GTEST_SKIP() << "with one CPU a pool of two threads never spins";
  ::setenv("TCC_POOL_SPIN_US", "1000000", 1); // a second, the most it takes
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  tcc::Context context(model, 2);
  ::unsetenv("TCC_POOL_SPIN_US");
  tcc::Tensor a = iota(1), b = iota(100), sum = iota(0, 0);
  auto settles = [&](double seconds) {
    context.run({a, b}, {sum});
    EXPECT_EQ(sum.data<float>()[5], 111);
    // A worker the run found asleep may wake up after the run: let it.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto until = std::chrono::steady_clock::now() +
                 std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
      if (otherRunnableThreads() == 0)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
  };
  EXPECT_FALSE(settles(0.1)) << "the worker should spin after a run";
  context.setIdleSpin(0);
  EXPECT_TRUE(settles(5.0));
  context.setIdleSpin(-1);
  EXPECT_FALSE(settles(0.1)) << "-1 should restore the pool's spinning";
  tcc_context_set_idle_spin(nullptr, 0); // tolerated, as the accessors
}

// tcc_context_set_parallel_for: the artifact's loops go to the host
// program's parallel loop, told the thread count given; NULL goes back to
// the context's pool and its count.
struct HostLoops {
  std::atomic<int> calls{0};
  std::atomic<int64_t> covered{0};
  tcc_parallel_fn_t fn = nullptr;
  static void parallelFor(void *self, int64_t n, int64_t grain,
                          tcc_parallel_fn_t fn, void *ctx) {
    auto *h = static_cast<HostLoops *>(self);
    h->calls++;
    // Two ranges, as a team of two would run them.
    const int64_t half = std::max(grain, n / 2);
    fn(ctx, 0, std::min(n, half));
    if (half < n)
      fn(ctx, half, n);
    h->covered += n;
  }
};

TEST_F(ContextTest, LoopsOnTheHostsThreads) {
  HostLoops host;
  context.setParallelFor(3, &HostLoops::parallelFor, &host);
  EXPECT_EQ(context.numThreads(), 3);
  Result r = run({a.get(), b.get()}, {sum.get()});
  ASSERT_EQ(r.code, TCC_STATUS_OK) << r.message;
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(sum.data<float>()[i], 101 + 2 * i);
  EXPECT_EQ(host.calls.load(), 1);
  EXPECT_EQ(host.covered.load(), 6);
  context.setParallelFor(0, nullptr, nullptr);
  EXPECT_EQ(context.numThreads(), 2);
  r = run({a.get(), b.get()}, {sum.get()});
  ASSERT_EQ(r.code, TCC_STATUS_OK) << r.message;
  EXPECT_EQ(host.calls.load(), 1);
  EXPECT_EQ(sum.data<float>()[5], 111);
}

// A profiler turns the pool's thread accounting on (and clears it), NULL
// off: the fake artifact's one loop of 6 elements splits across the two
// threads and is counted; a context on the host's loops, or none, reads
// zeros.
TEST_F(ContextTest, ThreadUsageWhileProfiling) {
  tcc_thread_usage_t u;
  tcc_context_thread_usage(context.get(), &u);
  EXPECT_EQ(u.loops, 0);
  tcc_context_set_profiler(
      context.get(), [](void *, int64_t, const char *, int32_t) {}, nullptr);
  for (int i = 0; i < 3; ++i) {
    Result r = run({a.get(), b.get()}, {sum.get()});
    ASSERT_EQ(r.code, TCC_STATUS_OK) << r.message;
  }
  tcc_context_thread_usage(context.get(), &u);
  EXPECT_EQ(u.loops, 3);
  EXPECT_GE(u.worker_busy_ns, 0);
  EXPECT_GE(u.caller_wait_ns, 0);
  tcc_context_set_profiler(context.get(), nullptr, nullptr);
  tcc_context_thread_usage(context.get(), &u);
  EXPECT_EQ(u.loops, 0);
  Result r = run({a.get(), b.get()}, {sum.get()});
  ASSERT_EQ(r.code, TCC_STATUS_OK) << r.message;
  tcc_context_thread_usage(context.get(), &u);
  EXPECT_EQ(u.loops, 0);
  tcc_context_thread_usage(nullptr, &u); // tolerated, as the accessors
  EXPECT_EQ(u.loops, 0);
  tcc_context_thread_usage(context.get(), nullptr);
}

TEST_F(ContextTest, HostLoopsArgumentErrors) {
  HostLoops host;
  Result r = result(tcc_context_set_parallel_for(
      context.get(), 0, &HostLoops::parallelFor, &host));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("num_threads is 0"), std::string::npos) << r.message;
  r = result(
      tcc_context_set_parallel_for(nullptr, 2, &HostLoops::parallelFor, &host));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("context is NULL"), std::string::npos) << r.message;
  EXPECT_EQ(context.numThreads(), 2); // unchanged by the refusals
}

TEST_F(ContextTest, WrongCounts) {
  Result r = run({a.get()}, {sum.get()});
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("expects 2 inputs and 1 outputs, got 1 and 1"),
            std::string::npos)
      << r.message;
  EXPECT_EQ(run({a.get(), b.get()}, {}).code, TCC_STATUS_INVALID_ARGUMENT);
}

TEST_F(ContextTest, NullArguments) {
  Result r = run({a.get(), nullptr}, {sum.get()});
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("input 1 'b' is NULL"), std::string::npos)
      << r.message;
  tcc_tensor_t *out[] = {sum.get()};
  r = result(tcc_context_run(context.get(), nullptr, 2, out, 1));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("the inputs array is NULL"), std::string::npos);
  r = result(tcc_context_run(nullptr, nullptr, 0, nullptr, 0));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
}

TEST_F(ContextTest, WrongShapeOrDtypeNamesTheTensor) {
  tcc::Tensor wrongShape = tcc::Tensor::create(TCC_DTYPE_F32, {3, 2});
  Result r = run({a.get(), wrongShape.get()}, {sum.get()});
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.message, std::string(TCC_FAKE_ARTIFACT) +
                           ": input 1 'b' expects f32[2x3], got f32[3x2]");

  tcc::Tensor wrongDtype = tcc::Tensor::create(TCC_DTYPE_F64, {2, 3});
  r = run({a.get(), b.get()}, {wrongDtype.get()});
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("output 0 'sum' expects f32[2x3], got f64[2x3]"),
            std::string::npos)
      << r.message;

  tcc::Tensor wrongRank = tcc::Tensor::create(TCC_DTYPE_F32, {6});
  EXPECT_EQ(run({wrongRank.get(), b.get()}, {sum.get()}).code,
            TCC_STATUS_INVALID_ARGUMENT);
}

TEST_F(ContextTest, OutputMustNotOverlapInputs) {
  Result r = run({a.get(), b.get()}, {b.get()});
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("output 0 'sum' overlaps input 1 'b'"),
            std::string::npos)
      << r.message;
}

// tcc_context_run_buffers: the same run on bare buffers of the declared
// shapes, with the checks that need no tensor objects.
TEST_F(ContextTest, RunsOnBareBuffers) {
  const void *in[] = {a.data<float>(), b.data<float>()};
  void *out[] = {sum.data<float>()};
  Result r = result(tcc_context_run_buffers(context.get(), in, 2, out, 1));
  ASSERT_EQ(r.code, TCC_STATUS_OK) << r.message;
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(sum.data<float>()[i], 101 + 2 * i);

  r = result(tcc_context_run_buffers(context.get(), in, 1, out, 1));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("expects 2 inputs and 1 outputs, got 1 and 1"),
            std::string::npos)
      << r.message;
  const void *withNull[] = {a.data<float>(), nullptr};
  r = result(tcc_context_run_buffers(context.get(), withNull, 2, out, 1));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("input 1 'b' is NULL"), std::string::npos)
      << r.message;
  void *intoB[] = {b.data<float>()};
  r = result(tcc_context_run_buffers(context.get(), in, 2, intoB, 1));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("output 0 'sum' overlaps input 1 'b'"),
            std::string::npos)
      << r.message;
  r = result(tcc_context_run_buffers(nullptr, in, 2, out, 1));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("tcc_context_run_buffers: context is NULL"),
            std::string::npos);
}

// The fake artifact fails with code 100 if it sees a misaligned buffer:
// bare buffers go through aligned copies as tensors do.
TEST_F(ContextTest, MisalignedBareBuffersAreCopied) {
  alignas(64) float storage[3][6 + 1];
  float *in0 = storage[0] + 1, *in1 = storage[1] + 1, *out0 = storage[2] + 1;
  for (int i = 0; i < 6; ++i) {
    in0[i] = i;
    in1[i] = 10 * i;
    out0[i] = -1;
  }
  const void *in[] = {in0, in1};
  void *out[] = {out0};
  Result r = result(tcc_context_run_buffers(context.get(), in, 2, out, 1));
  ASSERT_EQ(r.code, TCC_STATUS_OK) << r.message;
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(out0[i], 11 * i);
}

// The fake artifact fails with code 100 if it sees a misaligned buffer.
TEST_F(ContextTest, MisalignedBuffersAreCopied) {
  alignas(64) float storage[3][6 + 1];
  float *in0 = storage[0] + 1, *in1 = storage[1] + 1, *out = storage[2] + 1;
  for (int i = 0; i < 6; ++i) {
    in0[i] = i;
    in1[i] = 10 * i;
    out[i] = -1;
  }
  tcc::Tensor ta = tcc::Tensor::wrap(TCC_DTYPE_F32, {2, 3}, in0, 24);
  tcc::Tensor tb = tcc::Tensor::wrap(TCC_DTYPE_F32, {2, 3}, in1, 24);
  tcc::Tensor tout = tcc::Tensor::wrap(TCC_DTYPE_F32, {2, 3}, out, 24);
  Result r = run({ta.get(), tb.get()}, {tout.get()});
  ASSERT_EQ(r.code, TCC_STATUS_OK) << r.message;
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(out[i], 11 * i);
  EXPECT_EQ(in0[5], 5); // inputs untouched
}

TEST(Context, FailedRunIsInternal) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT_FAILS);
  tcc::Context context(model, 1);
  try {
    context.run({iota(0), iota(0)});
    FAIL() << "no exception";
  } catch (const tcc::Error &e) {
    EXPECT_EQ(e.code(), TCC_STATUS_INTERNAL);
    EXPECT_NE(std::string(e.what()).find("run failed with code 7"),
              std::string::npos)
        << e.what();
  }
}

// Buffers in GPU memory are for CUDA artifacts only.
TEST(Context, DeviceRunOfACpuArtifactIsRefused) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  tcc::Context context(model, 1);
  float x[2 * 3] = {}, y[2 * 3] = {};
  const void *inputs[] = {x, x};
  void *outputs[] = {y};
  Result r =
      result(tcc_context_run_device(context.get(), inputs, 2, outputs, 1));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("runs on the CPU; tcc_context_run_device takes "
                           "CUDA artifacts"),
            std::string::npos)
      << r.message;
}

TEST(Context, NegativeThreadsRefused) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  tcc_context_options_t options{};
  options.num_threads = -2;
  tcc_context_t *context = nullptr;
  EXPECT_EQ(result(tcc_context_create(model.get(), &options, &context)).code,
            TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(context, nullptr);
}

TEST(Context, DefaultOptionsUseEveryCpu) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  tcc_context_t *context = nullptr;
  ASSERT_TCC_OK(tcc_context_create(model.get(), nullptr, &context));
  EXPECT_EQ(tcc_context_num_threads(context),
            std::max<long>(1, sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_EQ(tcc_context_model(context), model.get());
  tcc_context_free(context);
}

TEST(Context, OutlivesItsModelHandle) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  tcc::Context context(model, 1);
  model = tcc::Model(); // the artifact must stay loaded for the context
  std::vector<tcc::Tensor> out = context.run({iota(1), iota(2)});
  EXPECT_EQ(out[0].data<float>()[0], 3);
}

/// Runs the fake artifact 300 times on inputs made from `t`; the wrong
/// elements of the sums.
int wrongSums(tcc::Context &context, int t) {
  tcc::Tensor a = iota(t), b = iota(1000 * t, t);
  int wrong = 0;
  for (int iter = 0; iter < 300; ++iter) {
    std::vector<tcc::Tensor> out = context.run({a, b});
    for (int i = 0; i < 6; ++i)
      wrong += out[0].data<float>()[i] != t + i + 1000 * t + t * i;
  }
  return wrong;
}

TEST(Context, EightThreadsShareOneModel) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      try {
        tcc::Context context(model, 2);
        failures += wrongSums(context, t);
      } catch (const std::exception &e) {
        ADD_FAILURE() << e.what();
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
}

// A descriptor whose run notes the threads its parallel loop ran on. The
// calling thread's range waits (up to 10 s) until another thread has run
// one, so that the pool's worker always takes part.
std::mutex seenMutex;
std::set<std::thread::id> seenThreads;
std::thread::id callerThread;
void noteThread(void *, int64_t, int64_t) {
  const std::thread::id self = std::this_thread::get_id();
  {
    std::lock_guard<std::mutex> lock(seenMutex);
    seenThreads.insert(self);
  }
  for (int wait = 0; self == callerThread && wait < 100000; ++wait) {
    {
      std::lock_guard<std::mutex> lock(seenMutex);
      if (seenThreads.size() > 1)
        return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}
int32_t noteThreadsRun(const tcc_run_args_t *args) {
  args->host->parallel_for(args->host->self, 2, 1, noteThread, nullptr);
  return 0;
}
std::set<std::thread::id> threadsOfARun(tcc::Context &context) {
  {
    std::lock_guard<std::mutex> lock(seenMutex);
    seenThreads.clear();
    callerThread = std::this_thread::get_id();
  }
  context.run({}, {});
  std::lock_guard<std::mutex> lock(seenMutex);
  std::set<std::thread::id> seen = seenThreads;
  seen.erase(std::this_thread::get_id());
  return seen;
}

TEST(Context, SharesAnotherContextsThreads) {
  tcc_artifact_desc_t desc = {TCC_ABI_VERSION, 0, "", "",
                              "threads",       0, 0,  nullptr,
                              nullptr,         0, 0,  noteThreadsRun};
  tcc::Model model = tcc::Model::wrap(&desc);
  auto owner = std::make_unique<tcc::Context>(model, 2);
  tcc::Context own(model, 2);
  tcc::Context shared = tcc::Context::sharingThreads(
      model, *owner, tcc::Allocator::defaultAllocator());
  EXPECT_EQ(shared.numThreads(), 2);
  const std::set<std::thread::id> worker = threadsOfARun(*owner);
  ASSERT_EQ(worker.size(), 1u);
  EXPECT_EQ(threadsOfARun(shared), worker);
  const std::set<std::thread::id> other = threadsOfARun(own);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_NE(other, worker) << "a context of its own has its own pool";
  owner.reset(); // the pool lives on with the context sharing it
  EXPECT_EQ(threadsOfARun(shared), worker);
}

TEST(Context, SharingThreadsChecksItsArguments) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  tcc::Context owner(model, 2);
  tcc_context_options_t options{};
  options.num_threads = 3;
  tcc_context_t *c = nullptr;
  Result r = result(tcc_context_create_sharing_threads(model.get(), &options,
                                                       owner.get(), &c));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("num_threads is 3, the pool shared has 2"),
            std::string::npos)
      << r.message;
  EXPECT_EQ(c, nullptr);
  r = result(
      tcc_context_create_sharing_threads(model.get(), nullptr, nullptr, &c));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("threads_of must not be NULL"), std::string::npos);
  options.num_threads = 2;
  ASSERT_EQ(result(tcc_context_create_sharing_threads(model.get(), &options,
                                                      owner.get(), &c))
                .code,
            TCC_STATUS_OK);
  tcc_context_free(c);
}

// Two contexts on one pool run at once from two threads: one's loops run
// on its caller alone while the other's use the pool; both are right.
TEST(Context, ContextsSharingThreadsRunAtOnce) {
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  tcc::Context owner(model, 2);
  tcc::Context shared = tcc::Context::sharingThreads(
      model, owner, tcc::Allocator::defaultAllocator());
  int firstWrong = -1;
  std::thread first([&] { firstWrong = wrongSums(owner, 1); });
  const int secondWrong = wrongSums(shared, 2);
  first.join();
  EXPECT_EQ(firstWrong, 0);
  EXPECT_EQ(secondWrong, 0);
}

// A descriptor whose run blocks until released, to catch a context being
// used by two threads at once.
std::atomic<bool> blockedRunStarted{false}, releaseBlockedRun{false};
int32_t blockingRun(const tcc_run_args_t *) {
  blockedRunStarted = true;
  while (!releaseBlockedRun)
    std::this_thread::yield();
  return 0;
}

TEST(Context, ConcurrentRunsOnOneContextAreRefused) {
  tcc_artifact_desc_t desc = {TCC_ABI_VERSION, 0, "", "",
                              "blocking",      0, 0,  nullptr,
                              nullptr,         0, 0,  blockingRun};
  tcc::Model model = tcc::Model::wrap(&desc);
  tcc::Context context(model, 1);
  std::thread first([&] { context.run({}, {}); });
  while (!blockedRunStarted)
    std::this_thread::yield();
  Result r = result(tcc_context_run(context.get(), nullptr, 0, nullptr, 0));
  releaseBlockedRun = true;
  first.join();
  EXPECT_EQ(r.code, TCC_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(r.message.find("already running"), std::string::npos);
  EXPECT_NO_THROW(context.run({}, {})); // free again
}

TEST(Context, WorkspaceAndCopiesComeFromItsAllocator) {
  FakeBackend fake;
  tcc::Allocator allocator = tcc::Allocator::create(fake.backend());
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  {
    tcc::Context context(model, allocator, 1);
    EXPECT_EQ(context.allocator().get(), allocator.get());
    tcc_allocator_stats_t s = allocator.stats();
    EXPECT_EQ(s.requested_bytes[TCC_POOL_ALL].current, 24u); // 6 floats
    EXPECT_EQ(s.active_blocks[TCC_POOL_ALL].current, 1u);

    // Outputs made by run() come from the context's allocator too; the
    // misaligned wrapped input goes through an aligned copy from it.
    alignas(64) float storage[7] = {0, 1, 2, 3, 4, 5, 6};
    tcc::Tensor misaligned =
        tcc::Tensor::wrap(TCC_DTYPE_F32, {2, 3}, storage + 1, 24);
    std::vector<tcc::Tensor> out = context.run({misaligned, iota(10)});
    EXPECT_EQ(out[0].data<float>()[5], 6 + 15);
    s = allocator.stats();
    EXPECT_EQ(s.num_allocs, 3u); // workspace, the copy, the output
    EXPECT_EQ(s.num_frees, 1u);  // the copy
  }
  EXPECT_EQ(allocator.stats().active_blocks[TCC_POOL_ALL].current, 0u);
}

TEST(Context, KeepsItsAllocatorAlive) {
  FakeBackend fake;
  tcc::Allocator allocator = tcc::Allocator::create(fake.backend());
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  auto context = std::make_unique<tcc::Context>(model, allocator, 1);
  allocator = {};
  EXPECT_FALSE(fake.destroyed);
  std::vector<tcc::Tensor> out = context->run({iota(1), iota(2)});
  context.reset();
  EXPECT_FALSE(fake.destroyed); // the output still holds it
  out.clear();
  EXPECT_TRUE(fake.destroyed);
  EXPECT_EQ(fake.liveBytes(), 0u);
}

TEST(Context, NeedsAHostAllocator) {
  FakeBackend fake({.hostAccessible = false});
  tcc::Allocator device = tcc::Allocator::create(fake.backend());
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  tcc_context_options_t options{};
  options.allocator = device.get();
  tcc_context_t *context = nullptr;
  Result r = result(tcc_context_create(model.get(), &options, &context));
  EXPECT_EQ(r.code, TCC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.message, "tcc_context_create: allocator 'fake' is not host "
                       "accessible; contexts run on the host");
}

TEST(Context, WorkspaceOutOfMemoryIsResourceExhausted) {
  FakeBackend fake({.capacity = 256});
  tcc::Allocator allocator = tcc::Allocator::create(fake.backend());
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  try {
    tcc::Context context(model, allocator, 1);
    FAIL() << "no exception";
  } catch (const tcc::Error &e) {
    EXPECT_EQ(e.code(), TCC_STATUS_RESOURCE_EXHAUSTED);
    EXPECT_NE(std::string(e.what()).find("cannot allocate a workspace of 24 "
                                         "bytes: fake: out of memory"),
              std::string::npos)
        << e.what();
  }
}

// Workspace alignments past the allocator's 512 bytes are honoured too.
int32_t checkWorkspaceAlignment(const tcc_run_args_t *args) {
  return reinterpret_cast<uintptr_t>(args->workspace) % 8192 ? 1 : 0;
}

TEST(Context, WorkspaceAlignmentBeyondTheAllocators) {
  tcc_artifact_desc_t desc = {
      TCC_ABI_VERSION, 0,   "",   "",
      "aligned",       0,   0,    nullptr,
      nullptr,         100, 8192, checkWorkspaceAlignment};
  tcc::Model model = tcc::Model::wrap(&desc);
  for (int i = 0; i < 4; ++i) {
    tcc::Context context(model, 1);
    EXPECT_NO_THROW(context.run({}, {}));
  }
}

TEST(Context, EightThreadsShareOneModelAndOneAllocator) {
  FakeBackend fake;
  tcc::Allocator allocator = tcc::Allocator::create(fake.backend());
  tcc::Model model = tcc::Model::load(TCC_FAKE_ARTIFACT);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int round = 0; round < 10; ++round) {
          tcc::Context context(model, allocator, 2);
          tcc::Tensor a = tcc::Tensor::create(allocator, TCC_DTYPE_F32, {2, 3});
          for (int i = 0; i < 6; ++i)
            a.data<float>()[i] = t + i;
          for (int iter = 0; iter < 30; ++iter) {
            std::vector<tcc::Tensor> out = context.run({a, a});
            for (int i = 0; i < 6; ++i)
              if (out[0].data<float>()[i] != 2 * (t + i))
                ++failures;
          }
        }
      } catch (const std::exception &e) {
        ADD_FAILURE() << e.what();
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
  tcc_allocator_stats_t s = allocator.stats();
  EXPECT_EQ(s.active_blocks[TCC_POOL_ALL].current, 0u);
  // The threads share the cache: every request after the first segments is
  // a cache hit. The allocator calls the device without its lock, so threads
  // that miss at the same moment each make a segment: at most one per
  // thread, never one per request.
  EXPECT_LE(s.num_device_allocs, 8u) << allocator.summary();
  EXPECT_EQ(s.num_cache_hits + s.num_device_allocs, s.num_allocs)
      << allocator.summary();
}

} // namespace
