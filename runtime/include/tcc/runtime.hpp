// tcc/runtime.hpp - a header-only C++ layer over tcc/runtime.h: owning
// handles that free their object, and an exception for every error status.
// Thread-safety is that of the C objects underneath (see runtime.h).
#ifndef TCC_RUNTIME_HPP
#define TCC_RUNTIME_HPP

#include "tcc/runtime.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcc {

/// A failed tcc_status_t: its code and message.
class Error : public std::runtime_error {
public:
  Error(tcc_status_code_t code, const std::string &message)
      : std::runtime_error(message), code_(code) {}
  tcc_status_code_t code() const noexcept { return code_; }

private:
  tcc_status_code_t code_;
};

/// Throws `status` as an Error, freeing it; returns for success (NULL).
inline void check(tcc_status_t status) {
  if (!status)
    return;
  std::unique_ptr<tcc_status_s, void (*)(tcc_status_t)> owned(status,
                                                              tcc_status_free);
  throw Error(tcc_status_code(status), tcc_status_message(status));
}

namespace detail {
template <typename T, void (*Free)(T *)> struct Deleter {
  void operator()(T *p) const { Free(p); }
};
} // namespace detail

/// A shared handle on a caching allocator (tcc/allocator.h): copies refer
/// to the same allocator, which lives while any handle, tensor or context
/// made from it does.
class Allocator {
public:
  Allocator() = default;
  /// Takes ownership of one reference to `allocator`.
  explicit Allocator(tcc_allocator_t *allocator)
      : handle(allocator, tcc_allocator_free) {}

  /// A new allocator of host memory.
  static Allocator host(const tcc_allocator_options_t &options = {}) {
    tcc_allocator_t *a;
    check(tcc_allocator_create_host(&options, &a));
    return Allocator(a);
  }
  /// A new allocator over a device backend.
  static Allocator create(const tcc_device_backend_t &backend,
                          const tcc_allocator_options_t &options = {}) {
    tcc_allocator_t *a;
    check(tcc_allocator_create(&backend, &options, &a));
    return Allocator(a);
  }
  /// The process's host allocator, which tensors and contexts use unless
  /// told otherwise.
  static Allocator defaultAllocator() {
    return Allocator(tcc_allocator_default());
  }
  /// The process's allocator of CUDA device `device`, which CUDA
  /// artifacts' contexts use (tcc_allocator_cuda_default).
  static Allocator cudaDefault(int32_t device = 0) {
    tcc_allocator_t *a;
    check(tcc_allocator_cuda_default(device, &a));
    return Allocator(a);
  }
  /// Another reference to `allocator`.
  static Allocator retain(tcc_allocator_t *allocator) {
    tcc_allocator_retain(allocator);
    return Allocator(allocator);
  }

  void *allocate(uint64_t bytes, tcc_stream_t stream = 0) {
    void *p;
    check(tcc_allocator_allocate(get(), bytes, stream, &p));
    return p;
  }
  void deallocate(void *ptr) { check(tcc_allocator_deallocate(get(), ptr)); }
  void recordStream(void *ptr, tcc_stream_t stream) {
    check(tcc_allocator_record_stream(get(), ptr, stream));
  }
  void trim() { tcc_allocator_trim(get()); }
  void setMemoryLimit(uint64_t bytes) {
    tcc_allocator_set_memory_limit(get(), bytes);
  }
  uint64_t memoryLimit() const { return tcc_allocator_memory_limit(get()); }
  tcc_allocator_stats_t stats() const {
    tcc_allocator_stats_t s;
    tcc_allocator_stats(get(), &s);
    return s;
  }
  void resetPeak() { tcc_allocator_reset_peak(get()); }
  /// The table PyTorch's memory_summary would print.
  std::string summary() const {
    std::string text(tcc_allocator_summary(get(), nullptr, 0), '\0');
    tcc_allocator_summary(get(), text.data(), text.size() + 1);
    return text;
  }
  std::string name() const { return tcc_allocator_name(get()); }

  tcc_allocator_t *get() const { return handle.get(); }
  explicit operator bool() const { return handle != nullptr; }

private:
  std::shared_ptr<tcc_allocator_t> handle;
};

/// A shared handle: copies refer to the same tensor, which is freed with
/// the last of them.
class Tensor {
public:
  Tensor() = default;
  /// Takes ownership of `tensor`.
  explicit Tensor(tcc_tensor_t *tensor) : handle(tensor, tcc_tensor_free) {}

  /// Zero-filled, 64-byte aligned.
  static Tensor create(int32_t dtype, const std::vector<int64_t> &shape) {
    tcc_tensor_t *t;
    check(tcc_tensor_create(dtype, static_cast<int32_t>(shape.size()),
                            shape.data(), &t));
    return Tensor(t);
  }
  /// Zero-filled, from `allocator`.
  static Tensor create(const Allocator &allocator, int32_t dtype,
                       const std::vector<int64_t> &shape) {
    tcc_tensor_t *t;
    check(tcc_tensor_create_in(allocator.get(), dtype,
                               static_cast<int32_t>(shape.size()), shape.data(),
                               &t));
    return Tensor(t);
  }
  /// Over caller memory that must outlive the tensor.
  static Tensor wrap(int32_t dtype, const std::vector<int64_t> &shape,
                     void *data, size_t byteSize) {
    tcc_tensor_t *t;
    check(tcc_tensor_wrap(dtype, static_cast<int32_t>(shape.size()),
                          shape.data(), data, byteSize, &t));
    return Tensor(t);
  }
  /// A .pb or .npy file.
  /// Reads a .pb or .npy file of at most `maxFileBytes` (0: the default
  /// cap, TCC_TENSOR_FILE_MAX_BYTES).
  static Tensor load(const std::string &path, uint64_t maxFileBytes = 0) {
    tcc_tensor_t *t;
    tcc_tensor_load_options_t options{maxFileBytes};
    check(tcc_tensor_load_file_with_options(path.c_str(), &options, &t));
    return Tensor(t);
  }
  void save(const std::string &path) const {
    check(tcc_tensor_save_file(get(), path.c_str()));
  }

  int32_t dtype() const { return tcc_tensor_dtype(get()); }
  int32_t rank() const { return tcc_tensor_rank(get()); }
  std::vector<int64_t> shape() const {
    const int64_t *s = tcc_tensor_shape(get());
    return std::vector<int64_t>(s, s + rank());
  }
  template <typename T = void> T *data() const {
    return static_cast<T *>(tcc_tensor_data(get()));
  }
  size_t byteSize() const { return tcc_tensor_byte_size(get()); }
  int64_t elementCount() const { return tcc_tensor_element_count(get()); }
  std::string name() const { return tcc_tensor_name(get()); }
  void setName(const std::string &name) {
    check(tcc_tensor_set_name(get(), name.c_str()));
  }

  tcc_tensor_t *get() const { return handle.get(); }
  explicit operator bool() const { return handle != nullptr; }

private:
  std::shared_ptr<tcc_tensor_t> handle;
};

class Model {
public:
  Model() = default;
  /// Takes ownership of `model`.
  explicit Model(tcc_model_t *model) : handle(model) {}

  static Model load(const std::string &path) {
    tcc_model_t *m;
    check(tcc_model_load(path.c_str(), &m));
    return Model(m);
  }
  /// An artifact linked into the program.
  static Model wrap(const tcc_artifact_desc_t *desc) {
    tcc_model_t *m;
    check(tcc_model_wrap(desc, &m));
    return Model(m);
  }

  uint32_t numInputs() const { return tcc_model_num_inputs(get()); }
  uint32_t numOutputs() const { return tcc_model_num_outputs(get()); }
  /// Throws std::out_of_range for a bad index.
  const tcc_tensor_desc_t &input(uint32_t i) const {
    return checked(tcc_model_input(get(), i));
  }
  const tcc_tensor_desc_t &output(uint32_t i) const {
    return checked(tcc_model_output(get(), i));
  }
  std::string name() const { return tcc_model_name(get()); }
  std::string target() const { return tcc_model_target(get()); }
  std::string version() const { return tcc_model_version(get()); }
  uint64_t workspaceBytes() const { return tcc_model_workspace_bytes(get()); }
  uint32_t numSymbols() const { return tcc_model_num_symbols(get()); }
  const tcc_symbol_desc_t &symbol(uint32_t i) const {
    const tcc_symbol_desc_t *s = tcc_model_symbol(get(), i);
    if (!s)
      throw std::out_of_range("tcc::Model: symbol index out of range");
    return *s;
  }
  const tcc_artifact_desc_t &desc() const { return *tcc_model_desc(get()); }

  tcc_model_t *get() const { return handle.get(); }
  explicit operator bool() const { return handle != nullptr; }

private:
  static const tcc_tensor_desc_t &checked(const tcc_tensor_desc_t *d) {
    if (!d)
      throw std::out_of_range("tcc::Model: tensor index out of range");
    return *d;
  }

  std::unique_ptr<tcc_model_t, detail::Deleter<tcc_model_t, tcc_model_free>>
      handle;
};

/// One run at a time; give each thread its own Context.
class Context {
public:
  Context() = default;
  /// numThreads 0: one per online CPU. The context keeps the model's
  /// artifact loaded even if `model` is destroyed first.
  explicit Context(const Model &model, int32_t numThreads = 0) {
    tcc_context_options_t options{};
    options.num_threads = numThreads;
    create(model, options);
  }
  /// Memory from `allocator`, which the context keeps alive.
  Context(const Model &model, const Allocator &allocator,
          int32_t numThreads = 0) {
    tcc_context_options_t options{};
    options.num_threads = numThreads;
    options.allocator = allocator.get();
    create(model, options);
  }

  /// Runs on the thread pool of `threadsOf` (see
  /// tcc_context_create_sharing_threads); memory from `allocator`.
  static Context sharingThreads(const Model &model, const Context &threadsOf,
                                const Allocator &allocator) {
    tcc_context_options_t options{};
    options.allocator = allocator.get();
    tcc_context_t *c;
    check(tcc_context_create_sharing_threads(model.get(), &options,
                                             threadsOf.get(), &c));
    Context context;
    context.handle.reset(c);
    return context;
  }

  int32_t numThreads() const { return tcc_context_num_threads(get()); }
  /// See tcc_context_set_idle_spin: -1 the pool's own, 0 sleep at once.
  void setIdleSpin(int32_t micros) { tcc_context_set_idle_spin(get(), micros); }
  /// See tcc_context_set_parallel_for: the context's loops on the caller's
  /// threads (nullptr: back on its own pool).
  void setParallelFor(int32_t numThreads, tcc_parallel_for_fn_t parallelFor,
                      void *self) {
    check(tcc_context_set_parallel_for(get(), numThreads, parallelFor, self));
  }
  Allocator allocator() const {
    return Allocator::retain(tcc_context_allocator(get()));
  }

  /// Runs into caller-made outputs, which are written through their handles.
  void run(const std::vector<Tensor> &inputs,
           const std::vector<Tensor> &outputs) {
    std::vector<const tcc_tensor_t *> in;
    std::vector<tcc_tensor_t *> out;
    for (const Tensor &t : inputs)
      in.push_back(t.get());
    for (const Tensor &t : outputs)
      out.push_back(t.get());
    check(tcc_context_run(get(), in.data(), in.size(), out.data(), out.size()));
  }
  /// Runs a model without symbolic dimensions on bare buffers of the
  /// shapes it declares (tcc_context_run_buffers).
  void runBuffers(const void *const *inputs, size_t numInputs,
                  void *const *outputs, size_t numOutputs) {
    check(
        tcc_context_run_buffers(get(), inputs, numInputs, outputs, numOutputs));
  }
  /// Runs into new outputs shaped as the model describes (symbolic
  /// dimensions sized by the inputs), made from the context's allocator.
  std::vector<Tensor> run(const std::vector<Tensor> &inputs) {
    const tcc_model_t *model = tcc_context_model(get());
    Allocator memory = allocator();
    std::vector<const tcc_tensor_t *> in;
    for (const Tensor &t : inputs)
      in.push_back(t.get());
    std::vector<int64_t> sizes(tcc_model_num_symbols(model));
    check(tcc_model_bind_inputs(model, in.data(), in.size(), sizes.data()));
    std::vector<Tensor> outputs;
    for (uint32_t i = 0; i < tcc_model_num_outputs(model); ++i) {
      const tcc_tensor_desc_t *d = tcc_model_output(model, i);
      std::vector<int64_t> shape(d->rank);
      check(tcc_model_output_shape(model, i, sizes.data(), shape.data()));
      outputs.push_back(Tensor::create(memory, d->dtype, shape));
    }
    run(inputs, outputs);
    return outputs;
  }

  tcc_context_t *get() const { return handle.get(); }
  explicit operator bool() const { return handle != nullptr; }

private:
  void create(const Model &model, const tcc_context_options_t &options) {
    tcc_context_t *c;
    check(tcc_context_create(model.get(), &options, &c));
    handle.reset(c);
  }

  std::unique_ptr<tcc_context_t,
                  detail::Deleter<tcc_context_t, tcc_context_free>>
      handle;
};

} // namespace tcc

#endif // TCC_RUNTIME_HPP
