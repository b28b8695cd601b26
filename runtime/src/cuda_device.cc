// cuda_device.cc - the CUDA services a CUDA artifact runs on
// (tcc_cuda_api_t in tcc/abi.h) over the driver API and cuBLAS.
#include "cuda_device.h"
#include "cuda_driver.h"
#include "status.h"
#include "tcc/allocator.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tcc {
struct CudaExecutor {
  CudaDriver cu;
  Cublas blas;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  cublasHandle_t handle = nullptr;
  CUmodule module = nullptr;
  std::vector<CUfunction> kernels;
  CUdeviceptr weights = 0, workspace = 0;
  std::vector<CUdeviceptr> inputs, outputs;
  std::vector<size_t> inputSizes, outputSizes;
  tcc_cuda_api_t api{};
  tcc_host_api_t host{};
  // The first failure of the calls the artifact made (they return codes
  // it does not check).
  std::string failure;
  // An artifact compiled with --cuda-arch=emulate: "device" buffers are
  // host memory, GEMMs run in reference loops, there are no launches.
  bool emulated = false;
  // Where the device buffers come from: the process's caching allocator of
  // the device (tcc_allocator_cuda_default).
  tcc_allocator_t *allocator = nullptr;
  // The run's launches and GEMMs as one CUDA graph, captured on the second
  // run on the same buffers (the first warms cuBLAS up) and replayed
  // while the run's buffers are those: the executor's own, or a caller's
  // device buffers that a run reads and writes in place. The last two
  // such graphs are kept. Off with TCC_CUDA_GRAPHS=0, and for good after
  // a capture that fails.
  struct Graph {
    std::vector<void *> buffers; // the run's inputs, then its outputs
    CUgraphExec exec = nullptr;
  };
  std::vector<Graph> graphCache;
  std::vector<void *> lastBuffers; // of the last run, and how many in a row
  int runsOnLast = 0;
  bool graphs = true;
  // Page-locked staging for the host's inputs and outputs (one block, from
  // the driver): a run copies the caller's inputs into it, then the device
  // copies from it on the stream, inside the run's CUDA graph, and back
  // into it for the outputs. Null where the driver has none to give:
  // copies from the caller's memory then, outside the graph.
  void *pinned = nullptr;
  std::vector<void *> pinnedInputs, pinnedOutputs;

  void fail(const std::string &what) {
    if (failure.empty())
      failure = what;
  }

  ~CudaExecutor() {
    if (emulated) {
      for (CUdeviceptr p : inputs)
        std::free(reinterpret_cast<void *>(p));
      for (CUdeviceptr p : outputs)
        std::free(reinterpret_cast<void *>(p));
      std::free(reinterpret_cast<void *>(workspace));
      std::free(reinterpret_cast<void *>(weights));
      return;
    }
    if (!context)
      return;
    CUcontext popped;
    cu.cuCtxPushCurrent_v2(context);
    if (stream)
      cu.cuStreamSynchronize(stream);
    for (Graph &g : graphCache)
      cu.cuGraphExecDestroy(g.exec);
    if (pinned)
      cu.cuMemFreeHost(pinned);
    // Back to the cache (still on the stream, which is idle now).
    auto release = [&](CUdeviceptr p) {
      tcc_status_free(tcc_allocator_deallocate(
          allocator, reinterpret_cast<void *>(static_cast<uintptr_t>(p))));
    };
    for (CUdeviceptr p : inputs)
      release(p);
    for (CUdeviceptr p : outputs)
      release(p);
    release(workspace);
    release(weights);
    if (handle)
      blas.cublasDestroy_v2(handle);
    if (module)
      cu.cuModuleUnload(module);
    if (stream)
      cu.cuStreamDestroy_v2(stream);
    cu.cuCtxPopCurrent_v2(&popped);
    cu.cuDevicePrimaryCtxRelease_v2(device);
  }
};
} // namespace tcc

using tcc::CudaExecutor;
using tcc::makeStatus;

namespace {
CudaExecutor *self(void *p) { return static_cast<CudaExecutor *>(p); }

/// Makes the context pushed by the caller current no longer when it ends.
struct PopContext {
  explicit PopContext(tcc::CudaDriver &cu) : cu(cu) {}
  PopContext(const PopContext &) = delete;
  PopContext &operator=(const PopContext &) = delete;
  tcc::CudaDriver &cu;
  ~PopContext() {
    tcc::CUcontext c;
    cu.cuCtxPopCurrent_v2(&c);
  }
};

int32_t launch(void *p, uint32_t kernel, uint32_t gx, uint32_t gy, uint32_t gz,
               uint32_t bx, uint32_t by, uint32_t bz, const uint64_t *slots,
               uint32_t count) {
  CudaExecutor *e = self(p);
  if (kernel >= e->kernels.size()) {
    e->fail("launch of kernel " + std::to_string(kernel) + " of " +
            std::to_string(e->kernels.size()));
    return 1;
  }
  std::vector<void *> params(count);
  for (uint32_t i = 0; i < count; ++i)
    params[i] = const_cast<uint64_t *>(slots + i);
  if (tcc::CUresult r =
          e->cu.cuLaunchKernel(e->kernels[kernel], gx, gy, gz, bx, by, bz, 0,
                               e->stream, params.data(), nullptr)) {
    e->fail("cuLaunchKernel (kernel " + std::to_string(kernel) +
            "): " + e->cu.error(r));
    return r;
  }
  return 0;
}

int32_t gemm(void *p, int32_t ta, int32_t tb, int64_t m, int64_t n, int64_t k,
             uint64_t a, int64_t lda, int64_t sa, uint64_t b, int64_t ldb,
             int64_t sb, uint64_t c, int64_t ldc, int64_t sc, int64_t batch,
             float beta) {
  CudaExecutor *e = self(p);
  const float one = 1.0f;
  auto ptr = [](uint64_t x) { return reinterpret_cast<float *>(x); };
  if (int r = e->blas.cublasSgemmStridedBatched(
          e->handle, ta, tb, static_cast<int>(m), static_cast<int>(n),
          static_cast<int>(k), &one, ptr(a), static_cast<int>(lda), sa, ptr(b),
          static_cast<int>(ldb), sb, &beta, ptr(c), static_cast<int>(ldc), sc,
          static_cast<int>(batch))) {
    e->fail("cublasSgemmStridedBatched failed with status " +
            std::to_string(r));
    return r;
  }
  return 0;
}

int32_t copyToDevice(void *p, void *dst, const void *src, uint64_t bytes) {
  CudaExecutor *e = self(p);
  if (tcc::CUresult r = e->cu.cuMemcpyHtoDAsync_v2(
          reinterpret_cast<tcc::CUdeviceptr>(dst), src, bytes, e->stream)) {
    e->fail("cuMemcpyHtoDAsync: " + e->cu.error(r));
    return r;
  }
  return 0;
}

// The emulated device: cuBLAS's column-major GEMM as reference loops.
int32_t hostGemm(void *, int32_t ta, int32_t tb, int64_t m, int64_t n,
                 int64_t k, uint64_t a, int64_t lda, int64_t sa, uint64_t b,
                 int64_t ldb, int64_t sb, uint64_t c, int64_t ldc, int64_t sc,
                 int64_t batch, float beta) {
  for (int64_t q = 0; q < batch; ++q) {
    const float *A = reinterpret_cast<const float *>(a) + q * sa;
    const float *B = reinterpret_cast<const float *>(b) + q * sb;
    float *C = reinterpret_cast<float *>(c) + q * sc;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += double(ta ? A[p + i * lda] : A[i + p * lda]) *
                 double(tb ? B[j + p * ldb] : B[p + j * ldb]);
        float &out = C[i + j * ldc];
        out = static_cast<float>(sum) + (beta == 0.0f ? 0.0f : beta * out);
      }
  }
  return 0;
}

int32_t hostLaunch(void *p, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                   uint32_t, uint32_t, const uint64_t *, uint32_t) {
  self(p)->fail("an emulated artifact launched a kernel");
  return 1;
}

int32_t hostCopy(void *, void *dst, const void *src, uint64_t bytes) {
  std::memcpy(dst, src, bytes);
  return 0;
}

size_t tensorBytes(const tcc_tensor_desc_t &d) {
  size_t n = tcc_dtype_size(d.dtype);
  for (int32_t i = 0; i < d.rank; ++i)
    n *= static_cast<size_t>(d.shape[i]);
  return n;
}
} // namespace

/// Allocates the inputs' and outputs' buffers with `allocate(bytes, &p,
/// what)`, sets up the host API over `api`, and uploads the weights.
template <typename Allocate>
static tcc_status_t
finishExecutor(CudaExecutor &e, const tcc_artifact_desc_t *desc,
               const char *origin, const tcc_cuda_api_t &api,
               Allocate &&allocate) {
  auto buffers = [&](const tcc_tensor_desc_t *tensors, uint32_t count,
                     std::vector<size_t> &sizes,
                     std::vector<tcc::CUdeviceptr> &pointers,
                     const char *what) -> tcc_status_t {
    for (uint32_t i = 0; i < count; ++i) {
      sizes.push_back(tensorBytes(tensors[i]));
      pointers.push_back(0);
      if (tcc_status_t s = allocate(sizes.back(), &pointers.back(), what))
        return s;
    }
    return nullptr;
  };
  if (tcc_status_t s = buffers(desc->inputs, desc->num_inputs, e.inputSizes,
                               e.inputs, "device memory for an input"))
    return s;
  if (tcc_status_t s = buffers(desc->outputs, desc->num_outputs, e.outputSizes,
                               e.outputs, "device memory for an output"))
    return s;
  e.api = api;
  e.host = tcc_host_api_t{};
  e.host.struct_size = sizeof(tcc_host_api_t);
  e.host.num_threads = 1;
  e.host.cuda = &e.api;
  if (int32_t rc = desc->cuda->upload_weights(
          &e.host, reinterpret_cast<void *>(static_cast<uintptr_t>(e.weights))))
    return makeStatus(TCC_STATUS_INTERNAL,
                      "%s: uploading the weights failed with code %d", origin,
                      rc);
  return nullptr;
}

/// Gives the executor page-locked staging for its inputs and outputs, each
/// at a multiple of 256 bytes in one block, zeroed; leaves it without
/// where the driver has none (a host short of page-locked memory runs
/// slower, not at all).
static void stageInPinnedMemory(CudaExecutor &e) {
  if (!e.cu.hasPinnedMemory())
    return;
  auto rounded = [](size_t bytes) { return (bytes + 255) / 256 * 256; };
  size_t total = 0;
  for (size_t bytes : e.inputSizes)
    total += rounded(bytes);
  for (size_t bytes : e.outputSizes)
    total += rounded(bytes);
  void *block = nullptr;
  if (total == 0 || e.cu.cuMemHostAlloc(&block, total, 0) || !block)
    return;
  std::memset(block, 0, total);
  e.pinned = block;
  char *at = static_cast<char *>(block);
  for (size_t bytes : e.inputSizes) {
    e.pinnedInputs.push_back(at);
    at += rounded(bytes);
  }
  for (size_t bytes : e.outputSizes) {
    e.pinnedOutputs.push_back(at);
    at += rounded(bytes);
  }
}

/// The executor of an artifact compiled with --cuda-arch=emulate.
static tcc_status_t createEmulated(const tcc_artifact_desc_t *desc,
                                   const char *origin,
                                   std::unique_ptr<CudaExecutor> e,
                                   CudaExecutor **out) {
  e->emulated = true;
  auto allocate = [&](size_t bytes, tcc::CUdeviceptr *p) -> tcc_status_t {
    size_t rounded = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
    void *block = std::aligned_alloc(256, rounded);
    if (!block)
      return makeStatus(TCC_STATUS_RESOURCE_EXHAUSTED,
                        "%s: cannot allocate %zu bytes", origin, bytes);
    std::memset(block, 0, rounded);
    *p = reinterpret_cast<uintptr_t>(block);
    return nullptr;
  };
  if (tcc_status_t s = allocate(desc->cuda->weights_bytes, &e->weights))
    return s;
  if (tcc_status_t s = allocate(desc->workspace_bytes, &e->workspace))
    return s;
  tcc_cuda_api_t api = {sizeof(tcc_cuda_api_t),
                        e.get(),
                        reinterpret_cast<void *>(e->weights),
                        hostLaunch,
                        hostGemm,
                        hostCopy};
  if (tcc_status_t s =
          finishExecutor(*e, desc, origin, api,
                         [&](size_t bytes, tcc::CUdeviceptr *p, const char *) {
                           return allocate(bytes, p);
                         }))
    return s;
  *out = e.release();
  return nullptr;
}

tcc_status_t tcc::createCudaExecutor(const tcc_artifact_desc_t *desc,
                                     const char *origin, CudaExecutor **out) {
  const tcc_cuda_image_t *image = desc->cuda;
  auto e = std::make_unique<CudaExecutor>();
  if (std::strcmp(image->arch, "emulate") == 0)
    return createEmulated(desc, origin, std::move(e), out);
  CudaDriver &cu = e->cu;
  auto unavailable = [&](tcc_status_t s) {
    tcc_status_t error =
        makeStatus(tcc_status_code(s),
                   "%s: this artifact runs on an NVIDIA GPU (compiled for "
                   "%s): %s",
                   origin, image->arch, tcc_status_message(s));
    tcc_status_free(s);
    return error;
  };
  if (tcc_status_t s = openCudaDriver(cu))
    return unavailable(s);
  int count = 0;
  if (cu.cuDeviceGetCount(&count) || count == 0)
    return unavailable(
        makeStatus(TCC_STATUS_NOT_FOUND, "CUDA reports no device"));
  if (tcc_status_t s = openCublas(e->blas))
    return unavailable(s);
  auto check = [&](CUresult r, const char *what) -> tcc_status_t {
    if (!r)
      return nullptr;
    return makeStatus(r == CUDA_ERROR_OUT_OF_MEMORY
                          ? TCC_STATUS_RESOURCE_EXHAUSTED
                          : TCC_STATUS_INTERNAL,
                      "%s: %s: %s", origin, what, cu.error(r).c_str());
  };
  if (tcc_status_t s = check(cu.cuDeviceGet(&e->device, 0), "cuDeviceGet"))
    return s;
  if (tcc_status_t s = check(
          cu.cuDevicePrimaryCtxRetain(&e->context, e->device), "the context"))
    return s;
  if (tcc_status_t s = check(cu.cuCtxPushCurrent_v2(e->context), "the context"))
    return s;
  PopContext pop(cu);
  if (tcc_status_t s = check(cu.cuStreamCreate(&e->stream, 0), "a stream"))
    return s;
  // The cubin where the GPU runs it; else the driver compiles the PTX for
  // the GPU at hand.
  if (!image->cubin_bytes ||
      cu.cuModuleLoadData(&e->module, image->cubin) != CUDA_SUCCESS) {
    e->module = nullptr;
    if (tcc_status_t s = check(cu.cuModuleLoadData(&e->module, image->ptx),
                               "loading the kernels' PTX"))
      return s;
  }
  for (uint32_t i = 0; i < image->num_kernels; ++i) {
    CUfunction f;
    if (tcc_status_t s =
            check(cu.cuModuleGetFunction(&f, e->module, image->kernel_names[i]),
                  "a kernel of the PTX"))
      return s;
    e->kernels.push_back(f);
  }
  if (int r = e->blas.cublasCreate_v2(&e->handle))
    return makeStatus(TCC_STATUS_INTERNAL, "%s: cublasCreate failed (%d)",
                      origin, r);
  e->blas.cublasSetStream_v2(e->handle, e->stream);
  if (tcc_status_t s = tcc_allocator_cuda_default(0, &e->allocator))
    return unavailable(s);
  if (const char *graphs = std::getenv("TCC_CUDA_GRAPHS"))
    e->graphs = std::strcmp(graphs, "0") != 0;
  auto allocate = [&](size_t bytes, CUdeviceptr *p,
                      const char *what) -> tcc_status_t {
    void *block;
    if (tcc_status_t s = tcc_allocator_allocate(
            e->allocator, bytes, reinterpret_cast<uintptr_t>(e->stream),
            &block)) {
      tcc_status_t error = makeStatus(tcc_status_code(s), "%s: %s: %s", origin,
                                      what, tcc_status_message(s));
      tcc_status_free(s);
      return error;
    }
    *p = reinterpret_cast<uintptr_t>(block);
    return nullptr;
  };
  if (tcc_status_t s = allocate(image->weights_bytes, &e->weights,
                                "device memory for the weights"))
    return s;
  if (tcc_status_t s = allocate(desc->workspace_bytes, &e->workspace,
                                "device memory for the workspace"))
    return s;
  tcc_cuda_api_t api = {
      sizeof(tcc_cuda_api_t),
      e.get(),
      reinterpret_cast<void *>(static_cast<uintptr_t>(e->weights)),
      launch,
      gemm,
      copyToDevice};
  if (tcc_status_t s = finishExecutor(*e, desc, origin, api, allocate))
    return s;
  if (tcc_status_t s =
          check(cu.cuStreamSynchronize(e->stream), "uploading the weights"))
    return s;
  if (!e->failure.empty())
    return makeStatus(TCC_STATUS_INTERNAL, "%s: uploading the weights: %s",
                      origin, e->failure.c_str());
  stageInPinnedMemory(*e);
  *out = e.release();
  return nullptr;
}

void tcc::destroyCudaExecutor(CudaExecutor *executor) { delete executor; }

/// The status of a run whose work returned `rc` (nonzero): the first CUDA
/// or cuBLAS failure it met, else the code.
static tcc_status_t runFailure(const CudaExecutor &e, const char *origin,
                               int32_t rc) {
  return e.failure.empty()
             ? makeStatus(TCC_STATUS_INTERNAL, "%s: run failed with code %d",
                          origin, rc)
             : makeStatus(TCC_STATUS_INTERNAL, "%s: %s", origin,
                          e.failure.c_str());
}

/// Queues one run's work on the stream (`work()`: the artifact's launches
/// and GEMMs, with the copies of staged inputs and outputs around them;
/// nonzero on a failure) on `buffers` (the run's inputs, then outputs):
/// directly, or as the CUDA graph of it (captured on the second run in a
/// row on these buffers, replayed while they are the run's).
template <typename Work>
static tcc_status_t runGraph(CudaExecutor &e, Work &&work,
                             const std::vector<void *> &buffers,
                             const char *origin) {
  tcc::CudaDriver &cu = e.cu;
  for (CudaExecutor::Graph &g : e.graphCache)
    if (g.buffers == buffers) {
      if (tcc::CUresult r = cu.cuGraphLaunch(g.exec, e.stream))
        return makeStatus(TCC_STATUS_INTERNAL, "%s: cuGraphLaunch: %s", origin,
                          cu.error(r).c_str());
      return nullptr;
    }
  if (buffers == e.lastBuffers) {
    e.runsOnLast = std::min(e.runsOnLast + 1, 2); // 2: capture
  } else {
    e.lastBuffers = buffers;
    e.runsOnLast = 1;
  }
  bool capture = e.graphs && e.runsOnLast >= 2 && cu.hasGraphs();
  if (capture && cu.cuStreamBeginCapture_v2(
                     e.stream, tcc::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL))
    capture = false;
  int32_t rc = work();
  if (capture) {
    tcc::CUgraph captured = nullptr;
    tcc::CUgraphExec exec = nullptr;
    tcc::CUresult r = cu.cuStreamEndCapture(e.stream, &captured);
    if (!r && !rc && e.failure.empty())
      r = cu.cuGraphInstantiateWithFlags(&exec, captured, 0);
    if (captured)
      cu.cuGraphDestroy(captured);
    if (r || rc || !e.failure.empty() || !exec) {
      // Nothing captured ran: run it as it is, and capture no more.
      e.graphs = false;
      e.failure.clear();
      rc = work();
    } else {
      if (e.graphCache.size() == 2) {
        cu.cuGraphExecDestroy(e.graphCache.front().exec);
        e.graphCache.erase(e.graphCache.begin());
      }
      e.graphCache.push_back({buffers, exec});
      if ((r = cu.cuGraphLaunch(exec, e.stream)))
        return makeStatus(TCC_STATUS_INTERNAL, "%s: cuGraphLaunch: %s", origin,
                          cu.error(r).c_str());
    }
  }
  return rc ? runFailure(e, origin, rc) : nullptr;
}

/// How a run moves its inputs and outputs: `in(i)` and `out(i)` are the
/// device copies of input and output i (driver results); `before` and
/// `after` what the host does first and last (after the stream is done).
/// `inGraph`: the device copies belong to the run's work (their addresses
/// are the same every run), so a CUDA graph holds them too.
template <typename In, typename Out, typename Before, typename After>
struct Staging {
  In in;
  Out out;
  Before before;
  After after;
  bool inGraph;
};
template <typename In, typename Out, typename Before, typename After>
static Staging<In, Out, Before, After> staging(In in, Out out, Before before,
                                               After after, bool inGraph) {
  return {in, out, before, after, inGraph};
}

/// One run through the executor's buffers, as `st` moves the data (the
/// artifact run as a CUDA graph where it can). Emulated: the copies are
/// the host's and so is the run.
template <typename Stage>
static tcc_status_t runStaged(CudaExecutor *e, const tcc_artifact_desc_t *desc,
                              const char *origin, int64_t *symbols, Stage &&st,
                              const void *const *inPlaceInputs = nullptr,
                              void *const *inPlaceOutputs = nullptr) {
  tcc::CudaDriver &cu = e->cu;
  std::optional<PopContext> pop;
  if (!e->emulated) {
    if (tcc::CUresult r = cu.cuCtxPushCurrent_v2(e->context))
      return makeStatus(TCC_STATUS_INTERNAL, "%s: the context: %s", origin,
                        cu.error(r).c_str());
    pop.emplace(cu);
  }
  e->failure.clear();
  st.before();
  // The buffers the artifact runs on: the executor's, or the caller's.
  std::vector<void *> in, out;
  for (size_t i = 0; i < e->inputs.size(); ++i)
    in.push_back(inPlaceInputs ? const_cast<void *>(inPlaceInputs[i])
                               : reinterpret_cast<void *>(
                                     static_cast<uintptr_t>(e->inputs[i])));
  for (size_t i = 0; i < e->outputs.size(); ++i)
    out.push_back(inPlaceOutputs ? inPlaceOutputs[i]
                                 : reinterpret_cast<void *>(
                                       static_cast<uintptr_t>(e->outputs[i])));
  tcc_run_args_t args{
      in.data(), out.data(),
      reinterpret_cast<void *>(static_cast<uintptr_t>(e->workspace)), &e->host,
      symbols};
  // The copies' failures are the run's: the first one is kept.
  auto copies = [&](bool inputs) -> int32_t {
    size_t count = inputs ? e->inputs.size() : e->outputs.size();
    for (size_t i = 0; i < count; ++i)
      if (tcc::CUresult r = inputs ? st.in(i) : st.out(i)) {
        e->fail(std::string("copying ") + (inputs ? "input " : "output ") +
                std::to_string(i) + ": " + cu.error(r));
        return r;
      }
    return 0;
  };
  auto work = [&]() -> int32_t {
    if (st.inGraph)
      if (int32_t rc = copies(true))
        return rc;
    if (int32_t rc = desc->run(&args))
      return rc;
    return st.inGraph ? copies(false) : 0;
  };
  if (!st.inGraph && copies(true))
    return makeStatus(TCC_STATUS_INTERNAL, "%s: %s", origin,
                      e->failure.c_str());
  if (e->emulated) {
    if (int32_t rc = work())
      return runFailure(*e, origin, rc);
  } else if (tcc_status_t s = [&] {
               std::vector<void *> buffers = in;
               buffers.insert(buffers.end(), out.begin(), out.end());
               return runGraph(*e, work, buffers, origin);
             }()) {
    return s;
  }
  if (!st.inGraph && copies(false))
    return makeStatus(TCC_STATUS_INTERNAL, "%s: %s", origin,
                      e->failure.c_str());
  if (!e->emulated)
    if (tcc::CUresult r = cu.cuStreamSynchronize(e->stream))
      return makeStatus(TCC_STATUS_INTERNAL, "%s: the run on the GPU: %s",
                        origin, cu.error(r).c_str());
  if (!e->failure.empty())
    return makeStatus(TCC_STATUS_INTERNAL, "%s: %s", origin,
                      e->failure.c_str());
  st.after();
  return nullptr;
}

static void *hostAddress(tcc::CUdeviceptr p) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(p));
}

tcc_status_t tcc::runCuda(CudaExecutor *e, const tcc_artifact_desc_t *desc,
                          const char *origin, const void *const *inputs,
                          const size_t *inputBytes, void *const *outputs,
                          const size_t *outputBytes, int64_t *symbols) {
  CudaDriver &cu = e->cu;
  auto inBytes = [&](size_t i) {
    return std::min(inputBytes[i], e->inputSizes[i]);
  };
  auto outBytes = [&](size_t i) {
    return std::min(outputBytes[i], e->outputSizes[i]);
  };
  auto nothing = [] {};
  if (e->emulated)
    return runStaged(
        e, desc, origin, symbols,
        staging(
            [&](size_t i) -> CUresult {
              std::memcpy(hostAddress(e->inputs[i]), inputs[i], inBytes(i));
              return CUDA_SUCCESS;
            },
            [&](size_t i) -> CUresult {
              std::memcpy(outputs[i], hostAddress(e->outputs[i]), outBytes(i));
              return CUDA_SUCCESS;
            },
            nothing, nothing, false));
  if (e->pinned)
    return runStaged(
        e, desc, origin, symbols,
        staging(
            [&](size_t i) {
              return cu.cuMemcpyHtoDAsync_v2(e->inputs[i], e->pinnedInputs[i],
                                             e->inputSizes[i], e->stream);
            },
            [&](size_t i) {
              return cu.cuMemcpyDtoHAsync_v2(e->pinnedOutputs[i], e->outputs[i],
                                             e->outputSizes[i], e->stream);
            },
            [&] {
              for (size_t i = 0; i < e->inputs.size(); ++i)
                std::memcpy(e->pinnedInputs[i], inputs[i], inBytes(i));
            },
            [&] {
              for (size_t i = 0; i < e->outputs.size(); ++i)
                std::memcpy(outputs[i], e->pinnedOutputs[i], outBytes(i));
            },
            true));
  return runStaged(e, desc, origin, symbols,
                   staging(
                       [&](size_t i) {
                         return cu.cuMemcpyHtoDAsync_v2(e->inputs[i], inputs[i],
                                                        inBytes(i), e->stream);
                       },
                       [&](size_t i) {
                         return cu.cuMemcpyDtoHAsync_v2(
                             outputs[i], e->outputs[i], outBytes(i), e->stream);
                       },
                       nothing, nothing, false));
}

/// Whether a run on the caller's device buffers can read and write them
/// in place: each 256-byte aligned, as the executor's own are (what the
/// kernels' loads may assume), and no output overlapping an input or
/// another output (a kernel would read what another had written). Else
/// the run copies them on the device.
static bool runsInPlace(const CudaExecutor &e, const void *const *inputs,
                        void *const *outputs) {
  struct Span {
    uintptr_t begin, end;
    bool output;
  };
  std::vector<Span> spans;
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    uintptr_t p = reinterpret_cast<uintptr_t>(inputs[i]);
    spans.push_back({p, p + e.inputSizes[i], false});
  }
  for (size_t i = 0; i < e.outputs.size(); ++i) {
    uintptr_t p = reinterpret_cast<uintptr_t>(outputs[i]);
    spans.push_back({p, p + e.outputSizes[i], true});
  }
  for (size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].begin % 256)
      return false;
    for (size_t j = 0; j < i; ++j)
      if ((spans[i].output || spans[j].output) &&
          spans[i].begin < spans[j].end && spans[j].begin < spans[i].end)
        return false;
  }
  return true;
}

tcc_status_t tcc::runCudaOnDevice(CudaExecutor *e,
                                  const tcc_artifact_desc_t *desc,
                                  const char *origin, const void *const *inputs,
                                  void *const *outputs) {
  if (e->emulated) // the emulated device's memory is the host's
    return runCuda(e, desc, origin, inputs, e->inputSizes.data(), outputs,
                   e->outputSizes.data(), nullptr);
  CudaDriver &cu = e->cu;
  auto device = [](const void *p) {
    return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
  };
  auto nothing = [] {};
  if (runsInPlace(*e, inputs, outputs)) {
    auto none = [](size_t) { return CUDA_SUCCESS; };
    return runStaged(e, desc, origin, nullptr,
                     staging(none, none, nothing, nothing, false), inputs,
                     outputs);
  }
  return runStaged(
      e, desc, origin, nullptr,
      staging(
          [&](size_t i) {
            return cu.cuMemcpyDtoDAsync_v2(e->inputs[i], device(inputs[i]),
                                           e->inputSizes[i], e->stream);
          },
          [&](size_t i) {
            return cu.cuMemcpyDtoDAsync_v2(device(outputs[i]), e->outputs[i],
                                           e->outputSizes[i], e->stream);
          },
          nothing, nothing, false));
}
