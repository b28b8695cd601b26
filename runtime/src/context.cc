// context.cc - running a model: argument checks, workspace, thread pool.
#include "cuda_device.h"
#include "model.h"
#include "status.h"
#include "tensor.h"
#include "thread_pool.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unistd.h>

using tcc::makeStatus;

namespace tcc {
/// One argument of a run: where its bytes lie.
struct Buffer {
  void *data;
  size_t bytes;
};
} // namespace tcc

struct tcc_context_t {
  tcc_model_t *model;                    // retained
  tcc_allocator_t *allocator = nullptr;  // retained
  std::shared_ptr<tcc::ThreadPool> pool; // maybe shared with other contexts
  tcc_host_api_t host;
  tcc_profiler_fn_t profiler = nullptr;
  void *profilerUser = nullptr;
  int32_t idleSpinUs = -1; // after a run; -1: the pool's own
  // The host program's parallel loop, when it runs the loops instead of
  // the pool (tcc_context_set_parallel_for).
  tcc_parallel_for_fn_t hostFor = nullptr;
  void *hostForSelf = nullptr;
  void *workspaceBlock = nullptr; // as allocated
  void *workspace = nullptr;      // aligned within it
  // Reused by every run so that a run with aligned buffers allocates nothing.
  std::vector<void *> inputData, outputData;
  std::vector<tcc::Buffer> inputBuffers, outputBuffers;
  // The byte sizes of a model without symbols (tcc_context_run_buffers).
  std::vector<size_t> inputBytes, outputBytes;
  std::atomic<bool> running{false};
  // A CUDA artifact's GPU state (its buffers live there).
  tcc::CudaExecutor *cuda = nullptr;

  ~tcc_context_t() {
    tcc::destroyCudaExecutor(cuda);
    tcc_status_free(tcc_allocator_deallocate(allocator, workspaceBlock));
    tcc_allocator_free(allocator);
    tcc::releaseModel(model);
  }
};

static void hostParallelFor(void *self, int64_t n, int64_t grain,
                            tcc_parallel_fn_t fn, void *ctx) {
  auto *context = static_cast<tcc_context_t *>(self);
  if (context->hostFor)
    context->hostFor(context->hostForSelf, n, grain, fn, ctx);
  else
    context->pool->parallelFor(n, grain, fn, ctx);
}

static void hostProfile(void *self, int64_t kernel, const char *name,
                        int32_t end) {
  auto *context = static_cast<tcc_context_t *>(self);
  if (context->profiler)
    context->profiler(context->profilerUser, kernel, name, end);
}

/// tcc_context_create, on `shared`'s pool when it is not NULL.
static tcc_status_t createContext(const char *api, tcc_model_t *model,
                                  const tcc_context_options_t *options,
                                  const tcc_context_t *shared,
                                  tcc_context_t **out_context) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!model || !out_context)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: model and out_context must not be NULL", api);
    int threads = options ? options->num_threads : 0;
    if (threads < 0)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT, "%s: num_threads is %d",
                        api, threads);
    if (shared && threads != 0 && threads != shared->host.num_threads)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: num_threads is %d, the pool shared has %d "
                        "threads (0 takes its count)",
                        api, threads, shared->host.num_threads);
    if (shared)
      threads = shared->host.num_threads;
    if (threads == 0)
      threads = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));

    tcc_allocator_t *allocator = options && options->allocator
                                     ? options->allocator
                                     : tcc_allocator_default();
    if (!tcc_allocator_host_accessible(allocator))
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: allocator '%s' is not host accessible; contexts "
                        "run on the host",
                        api, tcc_allocator_name(allocator));

    const tcc_artifact_desc_t *desc = model->desc;
    auto context = std::make_unique<tcc_context_t>();
    context->model = model;
    tcc::retainModel(model);
    context->allocator = allocator;
    tcc_allocator_retain(allocator);
    if (desc->cuda) {
      if (tcc_status_t s = tcc::createCudaExecutor(desc, model->origin.c_str(),
                                                   &context->cuda))
        return s;
    } else if (uint64_t bytes = desc->workspace_bytes) {
      size_t align = std::max<uint64_t>(desc->workspace_align, tcc::kAlignment);
      tcc_status_t s =
          bytes > SIZE_MAX
              ? makeStatus(TCC_STATUS_RESOURCE_EXHAUSTED, "too large")
              : tcc::allocateAligned(allocator, bytes, align,
                                     &context->workspaceBlock,
                                     &context->workspace);
      if (s) {
        tcc_status_t error = makeStatus(
            tcc_status_code(s),
            "%s: cannot allocate a workspace of %llu bytes: %s",
            model->origin.c_str(), static_cast<unsigned long long>(bytes),
            tcc_status_message(s));
        tcc_status_free(s);
        return error;
      }
    }
    try {
      context->pool =
          shared ? shared->pool : std::make_shared<tcc::ThreadPool>(threads);
    } catch (const std::system_error &e) {
      return makeStatus(TCC_STATUS_RESOURCE_EXHAUSTED,
                        "cannot start %d threads: %s", threads, e.what());
    }
    context->host = {sizeof(tcc_host_api_t), threads,     context.get(),
                     hostParallelFor,        hostProfile, nullptr};
    context->inputData.resize(desc->num_inputs);
    context->outputData.resize(desc->num_outputs);
    context->inputBuffers.resize(desc->num_inputs);
    context->outputBuffers.resize(desc->num_outputs);
    if (!desc->num_symbols) {
      auto bytes = [](const tcc_tensor_desc_t &d) {
        size_t n = tcc_dtype_size(d.dtype);
        for (int32_t k = 0; k < d.rank; ++k)
          n *= static_cast<size_t>(d.shape[k]);
        return n;
      };
      for (uint32_t i = 0; i < desc->num_inputs; ++i)
        context->inputBytes.push_back(bytes(desc->inputs[i]));
      for (uint32_t i = 0; i < desc->num_outputs; ++i)
        context->outputBytes.push_back(bytes(desc->outputs[i]));
    }
    *out_context = context.release();
    return nullptr;
  });
}

tcc_status_t tcc_context_create(tcc_model_t *model,
                                const tcc_context_options_t *options,
                                tcc_context_t **out_context) {
  return createContext("tcc_context_create", model, options, nullptr,
                       out_context);
}

tcc_status_t tcc_context_create_sharing_threads(
    tcc_model_t *model, const tcc_context_options_t *options,
    const tcc_context_t *threads_of, tcc_context_t **out_context) {
  if (!threads_of)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "tcc_context_create_sharing_threads: threads_of must "
                      "not be NULL");
  return createContext("tcc_context_create_sharing_threads", model, options,
                       threads_of, out_context);
}

void tcc_context_free(tcc_context_t *context) { delete context; }

// Accessors tolerate NULL (see runtime.h).

const tcc_model_t *tcc_context_model(const tcc_context_t *context) {
  return context ? context->model : nullptr;
}

int32_t tcc_context_num_threads(const tcc_context_t *context) {
  return context ? context->host.num_threads : 0;
}

void tcc_context_set_profiler(tcc_context_t *context, tcc_profiler_fn_t fn,
                              void *user) {
  if (!context)
    return;
  context->profiler = fn;
  context->profilerUser = user;
  if (context->pool)
    context->pool->setAccounting(fn != nullptr);
}

void tcc_context_thread_usage(const tcc_context_t *context,
                              tcc_thread_usage_t *out) {
  if (!out)
    return;
  *out = tcc_thread_usage_t{};
  if (!context || !context->pool)
    return;
  const tcc::ThreadPool::Usage u = context->pool->usage();
  out->worker_busy_ns = u.workerBusyNs;
  out->caller_wait_ns = u.callerWaitNs;
  out->loops = u.loops;
}

void tcc_context_set_idle_spin(tcc_context_t *context, int32_t micros) {
  if (context)
    context->idleSpinUs = micros < 0 ? -1 : micros;
}

tcc_status_t tcc_context_set_parallel_for(tcc_context_t *context,
                                          int32_t num_threads,
                                          tcc_parallel_for_fn_t parallel_for,
                                          void *self) {
  if (!context)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "tcc_context_set_parallel_for: context is NULL");
  if (parallel_for && num_threads < 1)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "tcc_context_set_parallel_for: num_threads is %d",
                      num_threads);
  context->hostFor = parallel_for;
  context->hostForSelf = self;
  context->host.num_threads =
      parallel_for ? num_threads : context->pool->numThreads();
  return nullptr;
}

tcc_allocator_t *tcc_context_allocator(const tcc_context_t *context) {
  return context ? context->allocator : nullptr;
}

// Checks one run argument against its descriptor, with the symbols'
// sizes `values`.
static tcc_status_t checkArgument(const tcc_model_t *model, const char *kind,
                                  uint32_t index, const tcc_tensor_desc_t &desc,
                                  const tcc_tensor_t *tensor,
                                  const int64_t *values) {
  if (!tensor)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT, "%s: %s %u '%s' is NULL",
                      model->origin.c_str(), kind, index, desc.name);
  bool same = tensor->dtype == desc.dtype &&
              tensor->shape.size() == static_cast<size_t>(desc.rank);
  // An output sized by a computed symbol may hold any size of it (a
  // tensor a previous run trimmed) if its buffer holds the bound's.
  bool computed = false;
  for (int32_t k = 0; same && k < desc.rank; ++k) {
    bool byRun = tcc::sizedByRun(*model->desc, desc, k);
    computed |= byRun;
    same = byRun ||
           tensor->shape[k] ==
               (desc.shape[k] == -1 ? values[desc.symbols[k]] : desc.shape[k]);
  }
  if (same && computed) {
    std::vector<int64_t> bound = tcc::concreteShape(desc, values);
    size_t bytes = tcc_dtype_size(desc.dtype);
    for (int64_t d : bound)
      bytes *= static_cast<size_t>(d);
    same = tensor->bufferBytes() >= bytes;
  }
  if (same)
    return nullptr;
  std::vector<int64_t> shape = tcc::concreteShape(desc, values);
  return makeStatus(
      TCC_STATUS_INVALID_ARGUMENT, "%s: %s %u '%s' expects %s, got %s",
      model->origin.c_str(), kind, index, desc.name,
      tcc::describeType(desc.dtype, desc.rank, shape.data()).c_str(),
      tcc::describeType(*tensor).c_str());
  return nullptr;
}

static bool overlap(const tcc::Buffer &a, const tcc::Buffer &b) {
  auto *pa = static_cast<const char *>(a.data);
  auto *pb = static_cast<const char *>(b.data);
  return a.bytes && b.bytes && pa < pb + b.bytes && pb < pa + a.bytes;
}

static bool aligned(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % tcc::kAlignment == 0;
}

/// Runs the artifact on the buffers of context->inputBuffers and
/// outputBuffers, whose types have been checked, with the symbols' sizes
/// `values` (NULL: none).
static tcc_status_t runBuffers(tcc_context_t *context, int64_t *values) {
  const tcc_model_t *model = context->model;
  const tcc_artifact_desc_t *desc = model->desc;
  const char *origin = model->origin.c_str();
  const std::vector<tcc::Buffer> &inputs = context->inputBuffers;
  const std::vector<tcc::Buffer> &outputs = context->outputBuffers;
  // The artifact may write an output before it has read every input.
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = 0; j < inputs.size(); ++j)
      if (overlap(outputs[i], inputs[j]))
        return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                          "%s: output %zu '%s' overlaps input %zu '%s'", origin,
                          i, desc->outputs[i].name, j, desc->inputs[j].name);
    for (size_t j = 0; j < i; ++j)
      if (overlap(outputs[i], outputs[j]))
        return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                          "%s: output %zu '%s' overlaps output %zu '%s'",
                          origin, i, desc->outputs[i].name, j,
                          desc->outputs[j].name);
  }

  if (context->cuda) {
    std::vector<const void *> in;
    std::vector<void *> out;
    std::vector<size_t> inBytes, outBytes;
    for (const tcc::Buffer &b : inputs) {
      in.push_back(b.data);
      inBytes.push_back(b.bytes);
    }
    for (const tcc::Buffer &b : outputs) {
      out.push_back(b.data);
      outBytes.push_back(b.bytes);
    }
    return tcc::runCuda(context->cuda, desc, origin, in.data(), inBytes.data(),
                        out.data(), outBytes.data(), values);
  }

  // The ABI promises the artifact 64-byte aligned buffers; a misaligned one
  // goes through an aligned copy from the context's allocator.
  struct Copies {
    tcc_allocator_t *allocator;
    std::vector<void *> blocks;
    ~Copies() {
      for (void *b : blocks)
        tcc_status_free(tcc_allocator_deallocate(allocator, b));
    }
  } copies{context->allocator, {}};
  auto alignedCopy = [&](const tcc::Buffer &t, const char *kind, size_t i,
                         void **out) -> tcc_status_t {
    void *block;
    if (tcc_status_t s = tcc::allocateAligned(context->allocator, t.bytes,
                                              tcc::kAlignment, &block, out)) {
      tcc_status_t error =
          makeStatus(tcc_status_code(s),
                     "%s: cannot allocate %zu bytes to align %s %zu: %s",
                     origin, t.bytes, kind, i, tcc_status_message(s));
      tcc_status_free(s);
      return error;
    }
    copies.blocks.push_back(block);
    return nullptr;
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    void *data = inputs[i].data;
    if (!aligned(data)) {
      if (tcc_status_t s = alignedCopy(inputs[i], "input", i, &data))
        return s;
      std::memcpy(data, inputs[i].data, inputs[i].bytes);
    }
    context->inputData[i] = data;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    void *data = outputs[i].data;
    if (!aligned(data))
      if (tcc_status_t s = alignedCopy(outputs[i], "output", i, &data))
        return s;
    context->outputData[i] = data;
  }

  tcc_run_args_t args{context->inputData.data(), context->outputData.data(),
                      context->workspace, &context->host, values};
  if (int32_t rc = desc->run(&args)) {
    // 3: a size the run computed (abi.md) is past its bound: the one the
    // run reported outside its bounds (else the first).
    uint32_t named = desc->num_symbols;
    for (uint32_t k = 0; rc == 3 && k < desc->num_symbols; ++k)
      if (desc->symbols[k].flags & TCC_SYMBOL_COMPUTED) {
        if (named == desc->num_symbols)
          named = k;
        if (values[k] < desc->symbols[k].min ||
            values[k] > desc->symbols[k].max) {
          named = k;
          break;
        }
      }
    if (rc == 3 && named < desc->num_symbols) {
      const tcc_symbol_desc_t &sym = desc->symbols[named];
      long long size = values[named];
      if (size < sym.min) // (a count below zero: no valid size at all)
        return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                          "%s: the size %s the run computed from its inputs "
                          "is %lld: the inputs give it no valid size",
                          origin, sym.name, size);
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: the size %s the run computed from its inputs "
                        "is %lld, outside %lld..%lld (compile with a larger "
                        "--dim %s=MAX)",
                        origin, sym.name, size, static_cast<long long>(sym.min),
                        static_cast<long long>(sym.max), sym.name);
    }
    return makeStatus(TCC_STATUS_INTERNAL, "%s: run failed with code %d",
                      origin, rc);
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (context->outputData[i] != outputs[i].data)
      std::memcpy(outputs[i].data, context->outputData[i], outputs[i].bytes);
  return nullptr;
}

static tcc_status_t checkCounts(const tcc_model_t *model, size_t numInputs,
                                size_t numOutputs) {
  const tcc_artifact_desc_t *desc = model->desc;
  if (numInputs != desc->num_inputs || numOutputs != desc->num_outputs)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "%s: expects %u inputs and %u outputs, got %zu and %zu",
                      model->origin.c_str(), desc->num_inputs,
                      desc->num_outputs, numInputs, numOutputs);
  return nullptr;
}

static tcc_status_t run(tcc_context_t *context,
                        const tcc_tensor_t *const *inputs, size_t numInputs,
                        tcc_tensor_t *const *outputs, size_t numOutputs) {
  const tcc_model_t *model = context->model;
  const tcc_artifact_desc_t *desc = model->desc;
  const char *origin = model->origin.c_str();
  if (tcc_status_t s = checkCounts(model, numInputs, numOutputs))
    return s;
  if ((numInputs && !inputs) || (numOutputs && !outputs))
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT, "%s: the %s array is NULL",
                      origin, numInputs && !inputs ? "inputs" : "outputs");
  // The symbols' sizes, from the inputs' shapes.
  std::vector<int64_t> values(desc->num_symbols);
  if (desc->num_symbols) {
    std::vector<tcc::ShapeRef> shapes;
    for (uint32_t i = 0; i < numInputs; ++i) {
      if (!inputs[i])
        return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                          "%s: input %u '%s' is NULL", origin, i,
                          desc->inputs[i].name);
      shapes.push_back({inputs[i]->dtype,
                        static_cast<int32_t>(inputs[i]->shape.size()),
                        inputs[i]->shape.data()});
    }
    if (tcc_status_t s = tcc::bindSymbols(model, shapes, values.data()))
      return s;
  }
  for (uint32_t i = 0; i < numInputs; ++i) {
    if (tcc_status_t s = checkArgument(model, "input", i, desc->inputs[i],
                                       inputs[i], values.data()))
      return s;
    context->inputBuffers[i] = {inputs[i]->data, inputs[i]->byteSize};
  }
  for (uint32_t i = 0; i < numOutputs; ++i) {
    if (tcc_status_t s = checkArgument(model, "output", i, desc->outputs[i],
                                       outputs[i], values.data()))
      return s;
    context->outputBuffers[i] = {outputs[i]->data, outputs[i]->bufferBytes()};
  }
  if (tcc_status_t s =
          runBuffers(context, values.empty() ? nullptr : values.data()))
    return s;
  // Sizes the run computed: the outputs they size take them (their buffers
  // keep the bound's bytes for the next run).
  for (uint32_t i = 0; i < numOutputs; ++i) {
    const tcc_tensor_desc_t &d = desc->outputs[i];
    if (!tcc::sizedByRun(*desc, d))
      continue;
    tcc_tensor_t *t = outputs[i];
    t->capacity = t->bufferBytes();
    t->shape = tcc::concreteShape(d, values.data());
    t->elementCount = 1;
    for (int64_t n : t->shape)
      t->elementCount *= n;
    t->byteSize =
        static_cast<size_t>(t->elementCount) * tcc_dtype_size(d.dtype);
  }
  return nullptr;
}

static tcc_status_t runBuffersOf(tcc_context_t *context,
                                 const void *const *inputs, size_t numInputs,
                                 void *const *outputs, size_t numOutputs) {
  const tcc_model_t *model = context->model;
  const char *origin = model->origin.c_str();
  if (model->desc->num_symbols)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "%s: has symbolic dimensions; their sizes come from "
                      "tensors (tcc_context_run), not from buffers",
                      origin);
  if (tcc_status_t s = checkCounts(model, numInputs, numOutputs))
    return s;
  if ((numInputs && !inputs) || (numOutputs && !outputs))
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT, "%s: the %s array is NULL",
                      origin, numInputs && !inputs ? "inputs" : "outputs");
  // A tensor of no elements may have no buffer: the artifact reads none.
  alignas(tcc::kAlignment) static char none[tcc::kAlignment];
  auto buffer = [&](const void *data, size_t bytes, const char *kind, size_t i,
                    const char *name, tcc::Buffer *out) {
    if (!data && bytes)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT, "%s: %s %zu '%s' is NULL",
                        origin, kind, i, name);
    *out = {data ? const_cast<void *>(data) : none, bytes};
    return tcc_status_t(nullptr);
  };
  for (size_t i = 0; i < numInputs; ++i)
    if (tcc_status_t s =
            buffer(inputs[i], context->inputBytes[i], "input", i,
                   model->desc->inputs[i].name, &context->inputBuffers[i]))
      return s;
  for (size_t i = 0; i < numOutputs; ++i)
    if (tcc_status_t s =
            buffer(outputs[i], context->outputBytes[i], "output", i,
                   model->desc->outputs[i].name, &context->outputBuffers[i]))
      return s;
  return runBuffers(context, nullptr);
}

/// One run of `context` by `body`: one thread at a time, the pool settled
/// after it.
template <typename Body>
static tcc_status_t runGuarded(tcc_context_t *context, const char *api,
                               Body body) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!context)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT, "%s: context is NULL",
                        api);
    if (context->running.exchange(true, std::memory_order_acquire))
      return makeStatus(TCC_STATUS_FAILED_PRECONDITION,
                        "%s: this context is already running on another "
                        "thread; give each thread its own context",
                        context->model->origin.c_str());
    struct Finish {
      std::atomic<bool> &running;
      ~Finish() { running.store(false, std::memory_order_release); }
    } finish{context->running};
    tcc_status_t status = body();
    if (context->idleSpinUs >= 0)
      if (!context->hostFor)
        context->pool->settle(context->idleSpinUs);
    return status;
  });
}

tcc_status_t tcc_context_run(tcc_context_t *context,
                             const tcc_tensor_t *const *inputs,
                             size_t num_inputs, tcc_tensor_t *const *outputs,
                             size_t num_outputs) {
  return runGuarded(context, "tcc_context_run", [&] {
    return run(context, inputs, num_inputs, outputs, num_outputs);
  });
}

tcc_status_t tcc_context_run_device(tcc_context_t *context,
                                    const void *const *inputs,
                                    size_t num_inputs, void *const *outputs,
                                    size_t num_outputs) {
  return runGuarded(context, "tcc_context_run_device", [&]() -> tcc_status_t {
    const tcc_model_t *model = context->model;
    const char *origin = model->origin.c_str();
    if (!context->cuda)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: runs on the CPU; tcc_context_run_device takes "
                        "CUDA artifacts (tcc --target=cuda)",
                        origin);
    if (tcc_status_t s = checkCounts(model, num_inputs, num_outputs))
      return s;
    for (size_t i = 0; i < num_inputs; ++i)
      if (!inputs || !inputs[i])
        return makeStatus(TCC_STATUS_INVALID_ARGUMENT, "%s: input %zu is NULL",
                          origin, i);
    for (size_t i = 0; i < num_outputs; ++i)
      if (!outputs || !outputs[i])
        return makeStatus(TCC_STATUS_INVALID_ARGUMENT, "%s: output %zu is NULL",
                          origin, i);
    return tcc::runCudaOnDevice(context->cuda, model->desc, origin, inputs,
                                outputs);
  });
}

tcc_status_t tcc_context_run_buffers(tcc_context_t *context,
                                     const void *const *inputs,
                                     size_t num_inputs, void *const *outputs,
                                     size_t num_outputs) {
  return runGuarded(context, "tcc_context_run_buffers", [&] {
    return runBuffersOf(context, inputs, num_inputs, outputs, num_outputs);
  });
}
