// module.cc - tcc._tcc, the Python binding of libtccrt (pybind11): load an
// artifact and call it on NumPy arrays. The package tcc/__init__.py
// re-exports it; docs/runtime.md describes it.
#include "tcc/runtime.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

// tcc.Error, made at import and never freed (exception types live as long
// as the interpreter).
PyObject *errorType = nullptr;

/// The NumPy name of a tcc dtype; bf16 has none.
const char *numpyName(int32_t dtype) {
  switch (dtype) {
  case TCC_DTYPE_F32:
    return "float32";
  case TCC_DTYPE_F64:
    return "float64";
  case TCC_DTYPE_F16:
    return "float16";
  case TCC_DTYPE_I8:
    return "int8";
  case TCC_DTYPE_I16:
    return "int16";
  case TCC_DTYPE_I32:
    return "int32";
  case TCC_DTYPE_I64:
    return "int64";
  case TCC_DTYPE_U8:
    return "uint8";
  case TCC_DTYPE_U16:
    return "uint16";
  case TCC_DTYPE_U32:
    return "uint32";
  case TCC_DTYPE_U64:
    return "uint64";
  case TCC_DTYPE_BOOL:
    return "bool";
  }
  return nullptr;
}

std::string shapeText(const int64_t *shape, size_t rank) {
  std::string s = "(";
  for (size_t i = 0; i < rank; ++i)
    s += (i ? ", " : "") +
         (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return s + (rank == 1 ? ",)" : ")");
}

// DLPack (https://dmlc.github.io/dlpack/), the ABI torch.from_dlpack reads:
// the structs of its version 0.8 header, which has not changed them since.
struct DLDevice {
  int32_t device_type; // 1: CPU
  int32_t device_id;
};
struct DLDataType {
  uint8_t code; // 0 int, 1 uint, 2 float, 4 bfloat, 6 bool
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides; // NULL: row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(DLManagedTensor *self);
};

bool dlpackType(int32_t dtype, DLDataType &t) {
  uint8_t bits = static_cast<uint8_t>(8 * tcc_dtype_size(dtype));
  switch (dtype) {
  case TCC_DTYPE_F32:
  case TCC_DTYPE_F64:
  case TCC_DTYPE_F16:
    t = {2, bits, 1};
    return true;
  case TCC_DTYPE_BF16:
    t = {4, bits, 1};
    return true;
  case TCC_DTYPE_I8:
  case TCC_DTYPE_I16:
  case TCC_DTYPE_I32:
  case TCC_DTYPE_I64:
    t = {0, bits, 1};
    return true;
  case TCC_DTYPE_U8:
  case TCC_DTYPE_U16:
  case TCC_DTYPE_U32:
  case TCC_DTYPE_U64:
    t = {1, bits, 1};
    return true;
  case TCC_DTYPE_BOOL:
    t = {6, 8, 1};
    return true;
  default:
    return false;
  }
}

/// A tensor in memory of the caching allocator, handed out through
/// DLPack: its deleter gives the block back to the cache, so that the next
/// call's outputs reuse memory already mapped instead of faulting fresh
/// pages in.
struct CachedTensor {
  DLManagedTensor managed{};
  std::vector<int64_t> shape;
  tcc::Allocator allocator;
  void *block = nullptr;

  CachedTensor() = default;
  CachedTensor(const CachedTensor &) = delete;
  CachedTensor &operator=(const CachedTensor &) = delete;
  /// Gives the block back, also when a call fails before handing it out.
  /// May run on any thread, from torch's destructors: never throws.
  ~CachedTensor() {
    if (block)
      if (tcc_status_t s = tcc_allocator_deallocate(allocator.get(), block))
        tcc_status_free(s);
  }

  static void release(DLManagedTensor *self) {
    delete static_cast<CachedTensor *>(self->manager_ctx);
  }
};

/// The capsule of a DLPack tensor: a consumer renames it "used_dltensor"
/// and owns it; one never consumed is freed here.
py::capsule dlpackCapsule(CachedTensor *t) {
  return py::capsule(&t->managed, "dltensor", [](PyObject *capsule) {
    if (PyCapsule_IsValid(capsule, "dltensor")) {
      auto *m = static_cast<DLManagedTensor *>(
          PyCapsule_GetPointer(capsule, "dltensor"));
      m->deleter(m);
    }
  });
}

/// "float32 of shape (1, 3)", as NumPy users would say it.
std::string describe(const tcc_tensor_desc_t &d) {
  const char *name = numpyName(d.dtype);
  return std::string(name ? name : tcc_dtype_name(d.dtype)) + " of shape " +
         shapeText(d.shape, d.rank);
}

std::string describe(const py::array &a) {
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  return py::str(a.dtype()).cast<std::string>() + " of shape " +
         shapeText(shape.data(), shape.size());
}

py::dtype numpyDtype(const tcc_tensor_desc_t &d, const std::string &what) {
  const char *name = numpyName(d.dtype);
  if (!name)
    throw py::type_error(what + " is " + tcc_dtype_name(d.dtype) +
                         ", which has no NumPy dtype");
  return py::dtype(name);
}

/// Describes one input or output, as Model.inputs and Model.outputs list
/// them.
struct TensorInfo {
  std::string name;
  py::object dtype; // a numpy.dtype, or the tcc name for bf16
  py::tuple shape;
};

/// A symbolic dimension is its symbol's name, as onnxruntime shows one.
TensorInfo info(const tcc_artifact_desc_t &desc, const tcc_tensor_desc_t &d) {
  const char *name = numpyName(d.dtype);
  py::tuple shape(d.rank);
  for (int32_t i = 0; i < d.rank; ++i)
    shape[i] = d.shape[i] == -1
                   ? py::object(py::str(desc.symbols[d.symbols[i]].name))
                   : py::object(py::int_(d.shape[i]));
  return {d.name,
          name ? py::object(py::dtype(name))
               : py::object(py::str(tcc_dtype_name(d.dtype))),
          shape};
}

/// A NumPy array over a tcc tensor, which it keeps alive.
py::array arrayOf(const tcc::Tensor &t, const py::dtype &dtype) {
  auto *owner = new tcc::Tensor(t);
  py::capsule base(owner,
                   [](void *p) { delete static_cast<tcc::Tensor *>(p); });
  std::vector<int64_t> dims = t.shape();
  std::vector<py::ssize_t> shape(dims.begin(), dims.end());
  return py::array(dtype, shape, t.data(), base);
}

/// A loaded artifact. Each call runs in a context taken from a pool (made
/// on demand), with the GIL released, so that Python threads can call one
/// model at once.
/// The OpenMP runtime already in the process (PyTorch's, whose intra-op
/// threads it runs), found by its symbols: loops of contexts loaded with
/// threads="openmp" run on its threads, so that tcc's kernels and the
/// framework's operators between them take turns on the same threads
/// instead of two pools spinning against each other on the same CPUs.
struct OpenMP {
  void (*parallel)(void (*fn)(void *), void *data, unsigned threads,
                   unsigned flags);
  int (*threadNum)();
  int (*numThreads)();
  int (*maxThreads)();

  /// The runtime, or nullptr when no OpenMP runtime is loaded.
  static const OpenMP *find() {
    static const OpenMP found = [] {
      OpenMP o;
      o.parallel = reinterpret_cast<decltype(o.parallel)>(
          dlsym(RTLD_DEFAULT, "GOMP_parallel"));
      o.threadNum = reinterpret_cast<decltype(o.threadNum)>(
          dlsym(RTLD_DEFAULT, "omp_get_thread_num"));
      o.numThreads = reinterpret_cast<decltype(o.numThreads)>(
          dlsym(RTLD_DEFAULT, "omp_get_num_threads"));
      o.maxThreads = reinterpret_cast<decltype(o.maxThreads)>(
          dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
      return o;
    }();
    return found.parallel && found.threadNum && found.numThreads &&
                   found.maxThreads
               ? &found
               : nullptr;
  }

  /// One loop: chunks of about a quarter of a thread's share; thread t
  /// starts on the t-th share (the same rows as in the previous kernel, as
  /// on tcc's own pool), then takes what is left of the others'.
  struct Loop {
    const OpenMP *omp;
    tcc_parallel_fn_t fn;
    void *ctx;
    int64_t n, chunk, chunks;
    int threads;
    std::atomic<int64_t> next[64];
    int64_t end[64];
  };

  static void body(void *data) {
    Loop &l = *static_cast<Loop *>(data);
    // Every share, whatever team the runtime gave (it may give fewer
    // threads than asked for): this thread's first, then the others'.
    const int self = l.omp->threadNum() % l.threads;
    for (int k = 0; k < l.threads; ++k) {
      const int t = (self + k) % l.threads;
      for (int64_t c; (c = l.next[t].fetch_add(1)) < l.end[t];)
        l.fn(l.ctx, c * l.chunk, std::min(l.n, (c + 1) * l.chunk));
    }
  }

  /// tcc_parallel_for_fn_t, `self` the thread count.
  static void parallelFor(void *self, int64_t n, int64_t grain,
                          tcc_parallel_fn_t fn, void *ctx) {
    const OpenMP *omp = find();
    const int threads = static_cast<int>(reinterpret_cast<intptr_t>(self));
    grain = std::max<int64_t>(grain, 1);
    if (n <= grain || threads <= 1 || omp->numThreads() > 1) {
      fn(ctx, 0, n); // small, or already inside a parallel region
      return;
    }
    Loop l;
    l.omp = omp;
    l.fn = fn;
    l.ctx = ctx;
    l.n = n;
    l.threads = std::min(threads, 64);
    l.chunk = std::max(grain, (n + 4 * l.threads - 1) / (4 * l.threads));
    l.chunks = (n + l.chunk - 1) / l.chunk;
    for (int t = 0; t < l.threads; ++t) {
      l.next[t].store(l.chunks * t / l.threads);
      l.end[t] = l.chunks * (t + 1) / l.threads;
    }
    omp->parallel(body, &l, static_cast<unsigned>(l.threads), 0);
  }
};

class PyModel {
public:
  PyModel(const std::string &path, int32_t numThreads, bool shareThreads,
          int32_t idleSpinUs = -1, const std::string &threadsFrom = "tcc")
      : model(tcc::Model::load(path)), path(path), numThreads(numThreads),
        shareThreads(shareThreads),
        idleSpinUs(idleSpinUs < 0 ? -1 : idleSpinUs),
        allocator(tcc::Allocator::defaultAllocator()) {
    if (numThreads < 0)
      throw py::value_error("num_threads must be >= 0, got " +
                            std::to_string(numThreads));
    if (threadsFrom == "openmp") {
      if (!OpenMP::find())
        throw py::value_error("threads_from='openmp': no OpenMP runtime is "
                              "loaded in this process");
      ompThreads = numThreads ? numThreads : OpenMP::find()->maxThreads();
      if (ompThreads > 64)
        throw py::value_error("threads_from='openmp' runs on at most 64 "
                              "threads, num_threads is " +
                              std::to_string(ompThreads));
    } else if (threadsFrom != "tcc") {
      throw py::value_error("threads_from must be 'tcc' or 'openmp', not '" +
                            threadsFrom + "'");
    }
  }

  py::list call(const py::args &args, const py::kwargs &kwargs) {
    return run(gather(args, kwargs), py::none());
  }

  py::list run(const std::vector<py::object> &inputs,
               const py::object &outputs) {
    if (!inputs.empty() &&
        std::all_of(inputs.begin(), inputs.end(), [](const py::object &x) {
          return py::hasattr(x, "__cuda_array_interface__");
        }))
      return runDevice(inputs, outputs);
    uint32_t numIn = model.numInputs(), numOut = model.numOutputs();
    if (inputs.size() != numIn)
      throw py::type_error(origin() + " takes " + count(numIn, "input") + " (" +
                           names(true) + "), got " +
                           std::to_string(inputs.size()));
    std::vector<py::array> arrays; // keep the data alive during the run
    std::vector<tcc::Tensor> in, out;
    for (uint32_t i = 0; i < numIn; ++i) {
      arrays.push_back(inputArray(i, inputs[i]));
      in.push_back(wrap(model.input(i), arrays.back()));
    }
    py::list results;
    if (outputs.is_none()) {
      // Symbolic dimensions take the sizes the inputs give.
      std::vector<const tcc_tensor_t *> ins;
      for (const tcc::Tensor &t : in)
        ins.push_back(t.get());
      std::vector<int64_t> sizes(model.numSymbols());
      if (tcc_status_t s = tcc_model_bind_inputs(model.get(), ins.data(),
                                                 ins.size(), sizes.data())) {
        std::string message = tcc_status_message(s);
        tcc_status_free(s);
        throw py::value_error(message);
      }
      for (uint32_t i = 0; i < numOut; ++i) {
        const tcc_tensor_desc_t &d = model.output(i);
        py::dtype dtype = numpyDtype(d, what("output", i));
        std::vector<int64_t> shape(d.rank);
        tcc::check(
            tcc_model_output_shape(model.get(), i, sizes.data(), shape.data()));
        out.push_back(tcc::Tensor::create(allocator, d.dtype, shape));
        results.append(arrayOf(out.back(), dtype));
      }
    } else {
      auto given = outputs.cast<std::vector<py::object>>();
      if (computesSizes())
        throw py::type_error(origin() + " computes the sizes of its outputs "
                                        "as it runs; call it without outputs");
      if (given.size() != numOut)
        throw py::type_error(origin() + " has " + count(numOut, "output") +
                             " (" + names(false) + "), got " +
                             std::to_string(given.size()) + " output arrays");
      for (uint32_t i = 0; i < numOut; ++i) {
        py::array a = outputArray(i, given[i]);
        out.push_back(wrap(model.output(i), a));
        results.append(a);
      }
    }

    Lease lease{*this, acquire()};
    {
      py::gil_scoped_release released;
      lease.context->run(in, out);
    }
    // Sizes the run computed: the outputs as it shaped them.
    if (computesSizes()) {
      results = py::list();
      for (uint32_t i = 0; i < numOut; ++i)
        results.append(
            arrayOf(out[i], numpyDtype(model.output(i), what("output", i))));
    }
    return results;
  }

  /// Whether a symbol of the model is a size its run computes.
  bool computesSizes() const {
    for (uint32_t k = 0; k < model.numSymbols(); ++k)
      if (tcc_model_symbol(model.get(), k)->flags & TCC_SYMBOL_COMPUTED)
        return true;
    return false;
  }

  /// Runs on tensors given by their data addresses, in the model's own
  /// dtypes and shapes, which the caller guarantees (tcc.torch checks them
  /// when it compiles): no NumPy, no checks, no copies.
  void runPointers(const std::vector<uintptr_t> &inputs,
                   const std::vector<uintptr_t> &outputs) {
    if (outputs.size() != model.numOutputs())
      throw py::type_error(origin() + " takes " +
                           count(model.numOutputs(), "output"));
    checkAddresses(inputs);
    runAddresses(inputs, outputs.data());
  }

  /// Runs on data addresses (as runPointers) into outputs it allocates
  /// from the caching allocator, returned as DLPack capsules, each passed
  /// through `convert` when it is not None. A model with symbolic
  /// dimensions takes the inputs' `shapes` too (their sizes bind the
  /// symbols, checked as tcc_context_run checks them).
  py::tuple
  runCached(const std::vector<uintptr_t> &inputs,
            const py::object &convert = py::none(),
            const std::vector<std::vector<int64_t>> *shapes = nullptr) {
    uint32_t numOut = model.numOutputs();
    std::vector<int64_t> sizes;
    std::vector<tcc::Tensor> in;
    if (model.numSymbols() && shapes) {
      if (inputs.size() != model.numInputs() || shapes->size() != inputs.size())
        throw py::type_error(origin() + " takes " +
                             count(model.numInputs(), "input"));
      std::vector<const tcc_tensor_t *> ins;
      for (uint32_t i = 0; i < inputs.size(); ++i) {
        const tcc_tensor_desc_t &d = model.input(i);
        size_t bytes = tcc_dtype_size(d.dtype);
        for (int64_t n : (*shapes)[i])
          bytes *= static_cast<size_t>(n);
        in.push_back(tcc::Tensor::wrap(
            d.dtype, (*shapes)[i], reinterpret_cast<void *>(inputs[i]), bytes));
        ins.push_back(in.back().get());
      }
      sizes.resize(model.numSymbols());
      if (tcc_status_t s = tcc_model_bind_inputs(model.get(), ins.data(),
                                                 ins.size(), sizes.data())) {
        std::string message = tcc_status_message(s);
        tcc_status_free(s);
        throw py::value_error(message);
      }
    } else {
      checkAddresses(inputs); // before sizing outputs by the model's shapes
    }
    std::vector<std::unique_ptr<CachedTensor>> made(numOut);
    std::vector<uintptr_t> addresses(numOut);
    std::vector<tcc::Tensor> out;
    for (uint32_t i = 0; i < numOut; ++i) {
      const tcc_tensor_desc_t &d = model.output(i);
      auto t = std::make_unique<CachedTensor>();
      DLTensor &dl = t->managed.dl_tensor;
      if (!dlpackType(d.dtype, dl.dtype))
        throw py::type_error(origin() + ": output " + std::to_string(i) +
                             " is " + tcc_dtype_name(d.dtype) +
                             ", which DLPack has no type for");
      t->allocator = tcc::Allocator::defaultAllocator();
      t->shape.assign(d.shape, d.shape + d.rank);
      if (!sizes.empty())
        tcc::check(tcc_model_output_shape(model.get(), i, sizes.data(),
                                          t->shape.data()));
      size_t bytes = tcc_dtype_size(d.dtype);
      for (int64_t n : t->shape)
        bytes *= static_cast<size_t>(n);
      if (bytes)
        t->block = t->allocator.allocate(bytes);
      dl.data = t->block;
      dl.device = {1, 0};
      dl.ndim = d.rank;
      dl.shape = t->shape.data();
      t->managed.manager_ctx = t.get();
      t->managed.deleter = CachedTensor::release;
      addresses[i] = reinterpret_cast<uintptr_t>(t->block);
      if (!sizes.empty())
        out.push_back(tcc::Tensor::wrap(d.dtype, t->shape, t->block, bytes));
      made[i] = std::move(t);
    }
    if (sizes.empty()) {
      runAddresses(inputs, addresses.data());
    } else {
      Lease lease{*this, acquire()};
      py::gil_scoped_release released;
      lease.context->run(in, out);
      // (Sizes the run computed: the shapes it gave; the rank is the same.)
      for (uint32_t i = 0; i < numOut; ++i) {
        std::vector<int64_t> shape = out[i].shape();
        std::copy(shape.begin(), shape.end(), made[i]->shape.begin());
      }
    }
    py::tuple results(numOut);
    for (uint32_t i = 0; i < numOut; ++i) {
      py::capsule c = dlpackCapsule(made[i].release());
      results[i] = convert.is_none() ? py::object(c) : convert(c);
    }
    return results;
  }

  /// runCached on the items `indices` of `args`, objects with data_ptr()
  /// (torch tensors); one that is not contiguous runs as its contiguous()
  /// copy. The attribute calls happen here rather than in a Python
  /// comprehension: a small graph's call is mostly such overhead. A model
  /// with symbolic dimensions reads the tensors' shapes too.
  py::tuple runArgs(const py::list &args, const py::sequence &indices,
                    const py::object &convert) {
    static PyObject *isContiguous = PyUnicode_InternFromString("is_contiguous");
    static PyObject *contiguous = PyUnicode_InternFromString("contiguous");
    static PyObject *dataPtr = PyUnicode_InternFromString("data_ptr");
    static PyObject *shapeName = PyUnicode_InternFromString("shape");
    auto call = [](PyObject *self, PyObject *name) {
      PyObject *r = PyObject_CallMethodNoArgs(self, name);
      if (!r)
        throw py::error_already_set();
      return py::reinterpret_steal<py::object>(r);
    };
    size_t n = py::len(indices);
    bool symbolic = model.numSymbols() != 0;
    std::vector<uintptr_t> addresses(n);
    std::vector<std::vector<int64_t>> shapes(symbolic ? n : 0);
    std::vector<py::object> copies; // alive until the run is over
    for (size_t k = 0; k < n; ++k) {
      py::object a = args[indices[k].cast<size_t>()];
      if (!call(a.ptr(), isContiguous).cast<bool>()) {
        a = call(a.ptr(), contiguous);
        copies.push_back(a);
      }
      addresses[k] = call(a.ptr(), dataPtr).cast<uintptr_t>();
      if (symbolic)
        shapes[k] = a.attr(shapeName).cast<std::vector<int64_t>>();
    }
    return runCached(addresses, convert, symbolic ? &shapes : nullptr);
  }

  std::vector<TensorInfo> infos(bool inputs) const {
    std::vector<TensorInfo> v;
    for (uint32_t i = 0; i < (inputs ? model.numInputs() : model.numOutputs());
         ++i)
      v.push_back(
          info(model.desc(), inputs ? model.input(i) : model.output(i)));
    return v;
  }

  std::string repr() const {
    return "<tcc.Model '" + model.name() + "' from '" + path +
           "': " + count(model.numInputs(), "input") + " (" + names(true) +
           "), " + count(model.numOutputs(), "output") + " (" + names(false) +
           ")>";
  }

  tcc::Model model;
  std::string path;
  int32_t numThreads;
  bool shareThreads;
  int32_t idleSpinUs;
  int32_t ompThreads = 0; // threads_from="openmp": its team size

private:
  std::string origin() const { return "model '" + model.name() + "'"; }
  static std::string count(uint32_t n, const char *noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  }
  std::string names(bool inputs) const {
    std::string s;
    uint32_t n = inputs ? model.numInputs() : model.numOutputs();
    for (uint32_t i = 0; i < n; ++i)
      s += (i ? ", " : "") +
           std::string(inputs ? model.input(i).name : model.output(i).name);
    return s;
  }
  std::string what(const char *kind, uint32_t i) const {
    const tcc_tensor_desc_t &d =
        *kind == 'i' ? model.input(i) : model.output(i);
    return origin() + ": " + kind + " " + std::to_string(i) + " '" + d.name +
           "'";
  }

  // Positional arguments first, then keywords by input name.
  std::vector<py::object> gather(const py::args &args,
                                 const py::kwargs &kwargs) const {
    std::vector<py::object> inputs;
    for (py::handle a : args)
      inputs.push_back(py::reinterpret_borrow<py::object>(a));
    if (kwargs.empty())
      return inputs;
    uint32_t numIn = model.numInputs();
    if (inputs.size() > numIn)
      return inputs; // the count check reports it
    inputs.resize(numIn);
    for (auto [key, value] : kwargs) {
      std::string name = py::str(key);
      uint32_t i = 0;
      while (i < numIn && name != model.input(i).name)
        ++i;
      if (i == numIn)
        throw py::type_error(origin() + " has no input named '" + name +
                             "'; its inputs are " + names(true));
      if (inputs[i])
        throw py::type_error(origin() + ": input " + std::to_string(i) + " '" +
                             name + "' given twice");
      inputs[i] = py::reinterpret_borrow<py::object>(value);
    }
    for (uint32_t i = 0; i < numIn; ++i)
      if (!inputs[i])
        throw py::type_error(what("input", i) + " is missing");
    return inputs;
  }

  // The input as a C-contiguous array of exactly the expected dtype and
  // shape. A NumPy array must already have the dtype (no silent casts);
  // lists and scalars, which have none of their own, are converted.
  py::array inputArray(uint32_t i, const py::object &value) const {
    const tcc_tensor_desc_t &d = model.input(i);
    py::dtype dtype = numpyDtype(d, what("input", i));
    py::module_ np = py::module_::import("numpy");
    py::array a;
    if (py::isinstance<py::array>(value)) {
      a = py::reinterpret_borrow<py::array>(value);
      if (!a.dtype().equal(dtype))
        throw py::type_error(what("input", i) + " expects " + describe(d) +
                             ", got " + describe(a));
    } else {
      try {
        a = np.attr("asarray")(value, dtype);
      } catch (py::error_already_set &e) {
        throw py::type_error(
            what("input", i) + " expects " + describe(d) + ", got a " +
            py::str(py::type::of(value).attr("__name__")).cast<std::string>() +
            " that NumPy cannot convert: " + e.what());
      }
    }
    checkShape(d, a, what("input", i));
    return np.attr("ascontiguousarray")(a);
  }

  // A caller's output array is written in place, so it must be exactly
  // right: dtype, shape, C order, writeable.
  py::array outputArray(uint32_t i, const py::object &value) const {
    const tcc_tensor_desc_t &d = model.output(i);
    py::dtype dtype = numpyDtype(d, what("output", i));
    if (!py::isinstance<py::array>(value))
      throw py::type_error(
          what("output", i) + " must be a numpy.ndarray, got " +
          py::str(py::type::of(value).attr("__name__")).cast<std::string>());
    auto a = py::reinterpret_borrow<py::array>(value);
    if (!a.dtype().equal(dtype))
      throw py::type_error(what("output", i) + " expects " + describe(d) +
                           ", got " + describe(a));
    checkShape(d, a, what("output", i));
    if (!(a.flags() & py::array::c_style))
      throw py::value_error(what("output", i) +
                            ": the array must be C-contiguous");
    if (!a.writeable())
      throw py::value_error(what("output", i) + ": the array is read-only");
    return a;
  }

  static void checkShape(const tcc_tensor_desc_t &d, const py::array &a,
                         const std::string &what) {
    bool same = a.ndim() == d.rank;
    for (int32_t k = 0; same && k < d.rank; ++k)
      same = d.shape[k] == -1 || a.shape(k) == d.shape[k];
    if (!same)
      throw py::value_error(what + " expects " + describe(d) + ", got " +
                            describe(a));
  }

  /// `a` as a tensor of `d`'s type, its symbolic dimensions sized as `a`'s
  /// (checkShape has matched the rest; np.ascontiguousarray makes a 0-d
  /// array 1-d, so the rank is `d`'s).
  static tcc::Tensor wrap(const tcc_tensor_desc_t &d, const py::array &a) {
    std::vector<int64_t> shape(d.shape, d.shape + d.rank);
    for (int32_t k = 0; k < d.rank; ++k)
      if (shape[k] == -1)
        shape[k] = a.shape(k);
    return tcc::Tensor::wrap(d.dtype, shape, const_cast<void *>(a.data()),
                             static_cast<size_t>(a.nbytes()));
  }

  /// Runs on the buffers at `inputs` and `outputs` (as many as the model
  /// has outputs), in the model's own dtypes and shapes, which the caller
  /// guarantees (tcc.torch checks them when it compiles), after
  /// checkAddresses.
  void runAddresses(const std::vector<uintptr_t> &inputs,
                    const uintptr_t *outputs) {
    static_assert(sizeof(uintptr_t) == sizeof(void *));
    Lease lease{*this, acquire()};
    py::gil_scoped_release released;
    lease.context->runBuffers(
        reinterpret_cast<const void *const *>(inputs.data()), inputs.size(),
        reinterpret_cast<void *const *>(outputs), model.numOutputs());
  }

  /// The device address of a CUDA array (__cuda_array_interface__), after
  /// checking it holds exactly `d`, densely.
  uintptr_t deviceAddress(const py::object &x, const tcc_tensor_desc_t &d,
                          const std::string &what) const {
    py::dict cai = x.attr("__cuda_array_interface__");
    auto shape = cai["shape"].cast<std::vector<int64_t>>();
    py::dtype dtype(cai["typestr"].cast<std::string>());
    bool dense = !cai.contains("strides") || cai["strides"].is_none();
    if (!dtype.equal(numpyDtype(d, what)) ||
        shape != std::vector<int64_t>(d.shape, d.shape + d.rank) || !dense)
      throw py::value_error(
          what + " must be a dense CUDA array of " + describe(d) + ", got " +
          py::str(dtype).cast<std::string>() + " of shape " +
          shapeText(shape.data(), shape.size()) + (dense ? "" : " (strided)"));
    return cai["data"].cast<py::tuple>()[0].cast<uintptr_t>();
  }

  /// Model.run / __call__ on CUDA arrays (torch CUDA tensors, anything with
  /// __cuda_array_interface__) of a CUDA artifact: tcc_context_run_device.
  /// Outputs are the given CUDA arrays, or new torch tensors on the inputs'
  /// device when the inputs are torch tensors.
  py::list runDevice(const std::vector<py::object> &inputs,
                     const py::object &outputs) {
    uint32_t numIn = model.numInputs(), numOut = model.numOutputs();
    if (inputs.size() != numIn)
      throw py::type_error(origin() + " takes " + count(numIn, "input") +
                           ", got " + std::to_string(inputs.size()));
    std::vector<uintptr_t> in, out;
    for (uint32_t i = 0; i < numIn; ++i)
      in.push_back(deviceAddress(inputs[i], model.input(i), what("input", i)));
    py::list results;
    bool torchInputs =
        py::hasattr(inputs[0], "device") && py::hasattr(inputs[0], "data_ptr");
    if (outputs.is_none()) {
      if (!torchInputs)
        throw py::type_error(origin() + ": CUDA arrays that are not torch "
                                        "tensors need their outputs given "
                                        "(Model.run(inputs, outputs))");
      py::module_ torch = py::module_::import("torch");
      for (uint32_t i = 0; i < numOut; ++i) {
        const tcc_tensor_desc_t &d = model.output(i);
        std::string name =
            numpyDtype(d, what("output", i)).attr("name").cast<std::string>();
        py::object t = torch.attr("empty")(
            py::cast(std::vector<int64_t>(d.shape, d.shape + d.rank)),
            py::arg("dtype") = torch.attr(name.c_str()),
            py::arg("device") = inputs[0].attr("device"));
        results.append(t);
      }
      // What wrote the inputs runs on torch's stream: done before the copy.
      torch.attr("cuda")
          .attr("current_stream")(inputs[0].attr("device"))
          .attr("synchronize")();
    } else {
      for (const py::handle &o : outputs)
        results.append(o);
      if (results.size() != numOut)
        throw py::type_error(origin() + " has " + count(numOut, "output") +
                             ", got " + std::to_string(results.size()));
    }
    for (uint32_t i = 0; i < numOut; ++i)
      out.push_back(
          deviceAddress(results[i], model.output(i), what("output", i)));
    Lease lease{*this, acquire()};
    {
      py::gil_scoped_release released;
      tcc::check(tcc_context_run_device(
          lease.context->get(),
          reinterpret_cast<const void *const *>(in.data()), in.size(),
          reinterpret_cast<void *const *>(out.data()), out.size()));
    }
    return results;
  }

  /// Calls by address take static models only, with every input.
  void checkAddresses(const std::vector<uintptr_t> &inputs) const {
    if (inputs.size() != model.numInputs())
      throw py::type_error(origin() + " takes " +
                           count(model.numInputs(), "input"));
    if (model.numSymbols())
      throw py::type_error(origin() + " has symbolic dimensions; run it "
                                      "with arrays (Model.run)");
  }

  /// A context of the pool for one run; back to the pool when the run is
  /// over, also a failed one (which leaves it fit for the next run).
  struct Lease {
    PyModel &self;
    std::unique_ptr<tcc::Context> context;
    ~Lease() {
      std::lock_guard<std::mutex> lock(self.mutex);
      self.idle.push_back(std::move(context));
    }
  };

  std::unique_ptr<tcc::Context> acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!idle.empty()) {
        std::unique_ptr<tcc::Context> c = std::move(idle.back());
        idle.pop_back();
        return c;
      }
    }
    std::unique_ptr<tcc::Context> c = makeContext();
    c->setIdleSpin(idleSpinUs);
    if (ompThreads)
      c->setParallelFor(ompThreads, &OpenMP::parallelFor,
                        reinterpret_cast<void *>(intptr_t{ompThreads}));
    return c;
  }

  std::unique_ptr<tcc::Context> makeContext() {
    if (ompThreads) // the loops run on OpenMP's threads: no workers
      return std::make_unique<tcc::Context>(model, allocator, 1);
    if (!shareThreads)
      return std::make_unique<tcc::Context>(model, allocator, numThreads);
    // One pool per thread count in the process, which contexts of every
    // model loaded with share_threads run on, in turn.
    static std::mutex poolsMutex;
    static std::map<int32_t, std::unique_ptr<tcc::Context>> pools;
    std::lock_guard<std::mutex> lock(poolsMutex);
    std::unique_ptr<tcc::Context> &anchor = pools[numThreads];
    if (!anchor)
      anchor = std::make_unique<tcc::Context>(model, allocator, numThreads);
    return std::make_unique<tcc::Context>(
        tcc::Context::sharingThreads(model, *anchor, allocator));
  }

  tcc::Allocator allocator;
  std::mutex mutex; // guards idle
  std::vector<std::unique_ptr<tcc::Context>> idle;
};

/// The allocator a device name selects: None or "cpu" the host's, "cuda"
/// or "cuda:N" the process's allocator of that CUDA device (what CUDA
/// artifacts run on).
tcc::Allocator allocatorFor(const std::optional<std::string> &device) {
  if (!device || *device == "cpu")
    return tcc::Allocator::defaultAllocator();
  std::string name = *device;
  if (name == "cuda")
    return tcc::Allocator::cudaDefault(0);
  if (name.rfind("cuda:", 0) == 0 && name.size() > 5 &&
      name.find_first_not_of("0123456789", 5) == std::string::npos &&
      name.size() < 9)
    return tcc::Allocator::cudaDefault(std::stoi(name.substr(5)));
  throw py::value_error("unknown device '" + name +
                        "' (expected 'cpu', 'cuda' or 'cuda:N')");
}

py::dict memoryStats(const std::optional<std::string> &device) {
  tcc_allocator_stats_t s = allocatorFor(device).stats();
  py::dict d;
  const struct {
    const char *name;
    const tcc_allocator_stat_t (&stat)[TCC_POOL_COUNT];
  } stats[] = {{"allocated_bytes", s.allocated_bytes},
               {"requested_bytes", s.requested_bytes},
               {"reserved_bytes", s.reserved_bytes},
               {"inactive_split_bytes", s.inactive_split_bytes},
               {"active_blocks", s.active_blocks},
               {"segments", s.segments}};
  const char *pools[] = {"all", "small_pool", "large_pool"};
  for (const auto &stat : stats)
    for (int pool = 0; pool < TCC_POOL_COUNT; ++pool) {
      std::string prefix = std::string(stat.name) + "." + pools[pool] + ".";
      const tcc_allocator_stat_t &v = stat.stat[pool];
      d[py::str(prefix + "current")] = v.current;
      d[py::str(prefix + "peak")] = v.peak;
      d[py::str(prefix + "allocated")] = v.allocated;
      d[py::str(prefix + "freed")] = v.freed;
    }
  d["num_allocs"] = s.num_allocs;
  d["num_frees"] = s.num_frees;
  d["num_cache_hits"] = s.num_cache_hits;
  d["num_device_allocs"] = s.num_device_allocs;
  d["num_device_frees"] = s.num_device_frees;
  d["num_alloc_retries"] = s.num_alloc_retries;
  d["num_ooms"] = s.num_ooms;
  d["cached_bytes"] = s.cached_bytes;
  d["largest_cached_block"] = s.largest_cached_block;
  d["memory_limit"] = s.memory_limit;
  d["fragmentation"] = s.fragmentation;
  return d;
}

} // namespace

PYBIND11_MODULE(_tcc, m) {
  m.doc() = "The native part of the tcc package: libtccrt's loader, runner "
            "and caching allocator. Use it through `import tcc`.";

  errorType = PyErr_NewExceptionWithDoc(
      "tcc.Error",
      "An error reported by the tcc runtime. `code` names its kind: "
      "'INVALID_ARGUMENT', 'FAILED_PRECONDITION', 'RESOURCE_EXHAUSTED', "
      "'INTERNAL' or 'UNIMPLEMENTED'.",
      PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::handle(errorType);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const tcc::Error &e) {
      if (e.code() == TCC_STATUS_NOT_FOUND) {
        PyErr_SetString(PyExc_FileNotFoundError, e.what());
        return;
      }
      py::object error = py::handle(errorType)(e.what());
      error.attr("code") = tcc_status_code_name(e.code());
      PyErr_SetObject(errorType, error.ptr());
    }
  });

  py::class_<TensorInfo>(m, "TensorInfo",
                         "The name, dtype and shape of a model's input or "
                         "output.")
      .def_readonly("name", &TensorInfo::name, "The tensor's name (str).")
      .def_readonly("dtype", &TensorInfo::dtype,
                    "Its numpy.dtype ('bf16', a str, for bfloat16).")
      .def_readonly("shape", &TensorInfo::shape, "Its shape (tuple of int).")
      .def("__repr__", [](const TensorInfo &t) {
        return "TensorInfo(name='" + t.name +
               "', dtype=" + py::str(t.dtype).cast<std::string>() +
               ", shape=" + py::repr(t.shape).cast<std::string>() + ")";
      });

  py::class_<PyModel>(m, "Model", R"(A compiled tcc artifact, loaded.

Call it with one NumPy array per input, positionally or by input name; it
returns a list of new arrays, one per output:

    m = tcc.load("model.so")
    outs = m(x)              # or m(input=x)

Arrays must have the input's exact dtype (TypeError otherwise: nothing is
cast silently) and shape (ValueError otherwise); Python lists and scalars
are converted to the input's dtype. A model may be called from several
threads at once: each call runs in a context of its own, without the GIL.)")
      .def("__call__", &PyModel::call,
           R"(Runs the model: model(x0, x1, ...) or model(name=x, ...).

Returns a list of NumPy arrays, one per output, in the model's order.
Raises TypeError for a wrong number of inputs or a wrong dtype, ValueError
for a wrong shape, and tcc.Error when the run fails.)")
      .def("_run_pointers", &PyModel::runPointers, py::arg("inputs"),
           py::arg("outputs"),
           "Runs on data addresses of tensors of exactly the model's dtypes "
           "and shapes (unchecked: for tcc.torch).")
      .def(
          "_run_cached",
          [](PyModel &self, const std::vector<uintptr_t> &inputs,
             const py::object &convert) {
            return self.runCached(inputs, convert);
          },
          py::arg("inputs"), py::arg("convert") = py::none(),
          "Runs on data addresses of the inputs (unchecked: for tcc.torch) "
          "into outputs of the caching allocator; returns them as DLPack "
          "capsules, or what `convert` makes of each.")
      .def("_run_args", &PyModel::runArgs, py::arg("args"), py::arg("indices"),
           py::arg("convert"),
           "_run_cached on the tensors args[i] for i in indices (their "
           "data_ptr(); contiguous() copies of those that are not).")
      .def("run", &PyModel::run, py::arg("inputs"),
           py::arg("outputs") = py::none(),
           R"(Runs the model on a sequence of inputs.

With `outputs` (a sequence of C-contiguous, writeable arrays of the output
dtypes and shapes) the results are written into them and they are
returned; without, new arrays are returned.)")
      .def_property_readonly(
          "inputs", [](const PyModel &p) { return p.infos(true); },
          "The inputs: a list of TensorInfo(name, dtype, shape).")
      .def_property_readonly(
          "outputs", [](const PyModel &p) { return p.infos(false); },
          "The outputs: a list of TensorInfo(name, dtype, shape).")
      .def_property_readonly(
          "name", [](const PyModel &p) { return p.model.name(); },
          "The model's name, as the artifact states it.")
      .def_property_readonly(
          "target", [](const PyModel &p) { return p.model.target(); },
          "What it was compiled for: '<llvm triple>:<cpu>'.")
      .def_property_readonly(
          "version", [](const PyModel &p) { return p.model.version(); },
          "The version of tcc that compiled it.")
      .def_property_readonly(
          "workspace_bytes",
          [](const PyModel &p) { return p.model.workspaceBytes(); },
          "Scratch memory one run needs (the compiler's memory plan).")
      .def_readonly("path", &PyModel::path, "The file it was loaded from.")
      .def_readonly("num_threads", &PyModel::numThreads,
                    "Threads per call; 0 means one per online CPU.")
      .def("__repr__", &PyModel::repr);

  m.def(
      "load",
      [](const std::string &path, int32_t numThreads, bool shareThreads,
         int32_t idleSpinUs, const std::string &threadsFrom) {
        return std::make_unique<PyModel>(path, numThreads, shareThreads,
                                         idleSpinUs, threadsFrom);
      },
      py::arg("path"), py::arg("num_threads") = 0,
      py::arg("share_threads") = false, py::arg("idle_spin_us") = -1,
      py::arg("threads_from") = "tcc",
      R"(Loads a tcc artifact (a .so made by `tcc model.onnx -o model.so`).

`num_threads` is how many threads each call may use, the calling one
included; 0 (the default) means one per online CPU. `idle_spin_us` is how
long the worker threads may spin after a call before they sleep: -1 (the
default) the pool's own time, which suits calls that follow each other; 0
when the program does other work between calls on the same CPUs.
`threads_from` is whose threads run the calls: 'tcc' (the default), a pool
of the runtime's own, or 'openmp', the OpenMP runtime already loaded in the
process (PyTorch's intra-op threads; `num_threads` 0 then takes its
omp_get_max_threads()), so that tcc and the framework share one set of
threads; ValueError when none is loaded. Raises
FileNotFoundError for a missing file and tcc.Error for a file that is no
tcc artifact or was built for another ABI version.)");

  m.def("memory_stats", &memoryStats, py::arg("device") = py::none(),
        R"(The statistics of the runtime's caching allocator, as a dict:
the host's (device None or 'cpu'), or with device='cuda' ('cuda:N') the
one CUDA artifacts' device memory comes from (FileNotFoundError without
CUDA).

Keys as PyTorch's torch.cuda.memory_stats names them:
'allocated_bytes.all.current', 'reserved_bytes.large_pool.peak', ...
(for allocated_bytes, requested_bytes, reserved_bytes,
inactive_split_bytes, active_blocks and segments; pools all, small_pool,
large_pool; current, peak, allocated, freed), and num_allocs, num_frees,
num_cache_hits, num_device_allocs, num_device_frees, num_alloc_retries,
num_ooms, cached_bytes, largest_cached_block, memory_limit and
fragmentation.)");
  m.def(
      "memory_summary",
      [](const std::optional<std::string> &device) {
        return allocatorFor(device).summary();
      },
      py::arg("device") = py::none(),
      "A table of the allocator's statistics, as torch.cuda.memory_summary "
      "prints it (device as for memory_stats).");
  m.def(
      "empty_cache",
      [](const std::optional<std::string> &device) {
        allocatorFor(device).trim();
      },
      py::arg("device") = py::none(),
      "Returns the allocator's cached memory that no array uses to the "
      "system (device as for memory_stats).");
  m.def(
      "reset_peak_memory_stats",
      [](const std::optional<std::string> &device) {
        allocatorFor(device).resetPeak();
      },
      py::arg("device") = py::none(),
      "Sets every peak statistic to its current value (device as for "
      "memory_stats).");
  m.def(
      "set_memory_limit",
      [](uint64_t bytes) {
        tcc::Allocator::defaultAllocator().setMemoryLimit(bytes);
      },
      py::arg("bytes"),
      "Caps the memory the allocator may hold (0: no cap). Past it, "
      "allocations free the cache and then raise tcc.Error with code "
      "'RESOURCE_EXHAUSTED'.");
}
