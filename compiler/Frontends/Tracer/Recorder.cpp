//===- Recorder.cpp - recording, autograd, compiling and running ----------===//

#include "compiler/Frontends/Tracer/Recorder.h"

#include "compiler/Driver/Driver.h"
#include "compiler/Transforms/Autodiff.h"
#include "dialects/Tcc/IR/TccOps.h"
#include "dialects/Tcc/IR/TccShapes.h"
#include "tcc/runtime.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <dlfcn.h>

namespace m = mlir;
namespace td = mlir::tcc;

namespace tcc {
namespace detail {

//===----------------------------------------------------------------------===//
// Storage and tensors
//===----------------------------------------------------------------------===//

Storage::Storage(size_t n) : bytes(n) {
  size_t rounded = (n + 63) / 64 * 64;
  data = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!data)
    throw Error("tcc: out of memory allocating " + std::to_string(n) +
                " bytes");
}

Storage::~Storage() { std::free(data); }

static thread_local bool recorderAlive = false;

TensorImpl::TensorImpl(m::Value value, DType dtype, Shape shape)
    : value(value), dtype(dtype), shape(std::move(shape)) {
  recorder().track(this);
}

TensorImpl::~TensorImpl() {
  if (recorderAlive)
    recorder().untrack(this);
}

Compiled::~Compiled() {
  if (context)
    tcc_context_free(context);
  if (model)
    tcc_model_free(model);
  if (!path.empty()) {
    llvm::sys::fs::remove(path);
    llvm::sys::fs::remove(llvm::sys::path::parent_path(path) + "/" +
                          llvm::sys::path::stem(path) + ".h");
  }
}

size_t dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::f32:
    return 4;
  case DType::f64:
  case DType::i64:
    return 8;
  case DType::boolean:
    return 1;
  }
  return 0;
}

static int32_t runtimeDtype(DType dtype) {
  switch (dtype) {
  case DType::f32:
    return TCC_DTYPE_F32;
  case DType::f64:
    return TCC_DTYPE_F64;
  case DType::i64:
    return TCC_DTYPE_I64;
  case DType::boolean:
    return TCC_DTYPE_BOOL;
  }
  return TCC_DTYPE_INVALID;
}

static DType dtypeOf(m::Type element) {
  if (element.isF32())
    return DType::f32;
  if (element.isF64())
    return DType::f64;
  if (element.isInteger(1))
    return DType::boolean;
  if (element.isInteger(64))
    return DType::i64;
  throw Error("tcc: internal error: an op made a tensor of an unsupported "
              "element type");
}

static int64_t product(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

TensorType TensorType::of(m::Value value) {
  auto type = m::cast<m::RankedTensorType>(value.getType());
  return {dtypeOf(type.getElementType()),
          Shape(type.getShape().begin(), type.getShape().end())};
}

size_t TensorType::bytes() const {
  return static_cast<size_t>(product(shape)) * dtypeBytes(dtype);
}

//===----------------------------------------------------------------------===//
// Recorder
//===----------------------------------------------------------------------===//

Recorder &recorder() {
  struct Holder {
    Holder() : r(new Recorder) { recorderAlive = true; }
    ~Holder() {
      recorderAlive = false;
      delete r;
    }
    Recorder *r;
  };
  static thread_local Holder holder;
  return *holder.r;
}

Recorder::Recorder() : b(&ctx) {
  m::tcc::registerCompilerDialects(ctx);
  module = m::ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());
  auto fn = b.create<m::func::FuncOp>(b.getUnknownLoc(), "record",
                                      b.getFunctionType({}, {}));
  block = fn.addEntryBlock();
  b.setInsertionPointToEnd(block);
}

static constexpr size_t kMaxPooledBytes = size_t(1) << 30;

std::shared_ptr<Storage> Recorder::allocate(size_t bytes) {
  std::unique_ptr<Storage> storage;
  auto it = pool.find(bytes);
  if (it != pool.end()) {
    storage = std::move(it->second);
    pooledBytes -= bytes;
    pool.erase(it);
  } else {
    storage = std::make_unique<Storage>(bytes);
  }
  return std::shared_ptr<Storage>(storage.release(), [](Storage *s) {
    if (recorderAlive) {
      Recorder &r = recorder();
      if (r.pooledBytes + s->bytes <= kMaxPooledBytes) {
        r.pooledBytes += s->bytes;
        r.pool.emplace(s->bytes, std::unique_ptr<Storage>(s));
        return;
      }
    }
    delete s;
  });
}

Recorder::~Recorder() {
  cache.clear();
  if (!tempDir.empty())
    llvm::sys::fs::remove_directories(tempDir);
}

m::Type Recorder::tensorType(DType dtype, const Shape &shape) {
  m::Type element;
  switch (dtype) {
  case DType::f32:
    element = b.getF32Type();
    break;
  case DType::f64:
    element = b.getF64Type();
    break;
  case DType::i64:
    element = b.getI64Type();
    break;
  case DType::boolean:
    element = b.getI1Type();
    break;
  }
  return m::RankedTensorType::get(shape, element);
}

std::shared_ptr<TensorImpl> Recorder::leaf(DType dtype, Shape shape,
                                           std::shared_ptr<Storage> data) {
  m::Value arg = block->addArgument(tensorType(dtype, shape), loc());
  known[arg] = data;
  auto impl = std::make_shared<TensorImpl>(arg, dtype, std::move(shape));
  impl->data = std::move(data);
  return impl;
}

std::shared_ptr<TensorImpl> Recorder::placeholder(DType dtype, Shape shape) {
  m::Value arg = block->addArgument(tensorType(dtype, shape), loc());
  return std::make_shared<TensorImpl>(arg, dtype, std::move(shape));
}

m::Value
Recorder::build(const char *what,
                const std::function<m::FailureOr<m::Value>()> &buildFn) {
  std::string message;
  m::FailureOr<m::Value> value;
  {
    m::ScopedDiagnosticHandler handler(&ctx, [&](m::Diagnostic &diag) {
      if (diag.getSeverity() == m::DiagnosticSeverity::Error && message.empty())
        message = diag.str();
      return m::success();
    });
    value = buildFn();
  }
  if (m::failed(value) || !message.empty())
    throw Error(std::string("tcc::") + what + ": " +
                (message.empty() ? std::string("invalid operands") : message));
  return *value;
}

std::shared_ptr<TensorImpl>
Recorder::result(m::Value value, std::vector<const TensorImpl *> inputs) {
  TensorType type = TensorType::of(value);
  auto impl = std::make_shared<TensorImpl>(value, type.dtype, type.shape);
  if (gradEnabled() && td::isDifferentiableType(value.getType()))
    for (const TensorImpl *in : inputs)
      if (in && active.contains(in->value)) {
        active.insert(value);
        break;
      }
  return impl;
}

const Storage &Recorder::dataOf(TensorImpl &impl) {
  if (!impl.data) {
    if (std::shared_ptr<Storage> d = known.lookup(impl.value))
      impl.data = d;
    else
      sync();
  }
  if (!impl.data)
    throw Error("tcc: internal error: a tensor has no data after sync()");
  return *impl.data;
}

std::string Recorder::freshPath(const char *stem, const char *ext) {
  // The configured folder (CompileConfig::cacheDir, which may change
  // between compiles), else one of this recorder's own, removed at exit.
  std::string dir = config.cacheDir;
  if (!dir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      throw Error("tcc: cannot create the cache folder '" + dir +
                  "': " + ec.message());
  } else {
    if (tempDir.empty()) {
      llvm::SmallString<128> created;
      if (std::error_code ec =
              llvm::sys::fs::createUniqueDirectory("tcc-tracer", created))
        throw Error("tcc: cannot create a temporary folder: " + ec.message());
      tempDir = created.str().str();
    }
    dir = tempDir;
  }
  return dir + "/" + stem + std::to_string(counter++) + ext;
}

/// The ops of the block that `roots` depend on, stopping at `isBoundary`
/// values, in block order.
static std::vector<m::Operation *>
sliceOf(llvm::ArrayRef<m::Value> roots,
        const std::function<bool(m::Value)> &isBoundary) {
  llvm::DenseSet<m::Operation *> seen;
  llvm::SmallVector<m::Value> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    m::Value v = stack.pop_back_val();
    m::Operation *def = v.getDefiningOp();
    if (!def || isBoundary(v) || !seen.insert(def).second)
      continue;
    for (m::Value operand : def->getOperands())
      stack.push_back(operand);
  }
  std::vector<m::Operation *> ops(seen.begin(), seen.end());
  std::sort(ops.begin(), ops.end(), [](m::Operation *a, m::Operation *c) {
    return a->isBeforeInBlock(c);
  });
  return ops;
}

void Recorder::slice(llvm::ArrayRef<m::Value> results,
                     std::vector<m::Operation *> &ops,
                     llvm::SmallVectorImpl<m::Value> &outside,
                     const llvm::DenseSet<m::Value> *fixed) {
  auto isBoundary = [&](m::Value v) {
    return fixed ? fixed->contains(v) : known.count(v) != 0;
  };
  ops = sliceOf(results, isBoundary);
  llvm::DenseSet<m::Operation *> inSlice(ops.begin(), ops.end());
  llvm::DenseSet<m::Value> outsideSet;
  auto noteOutside = [&](m::Value v) {
    m::Operation *def = v.getDefiningOp();
    if ((!def || !inSlice.contains(def)) && outsideSet.insert(v).second)
      outside.push_back(v);
  };
  for (m::Operation *op : ops)
    for (m::Value operand : op->getOperands())
      noteOutside(operand);
  for (m::Value r : results)
    noteOutside(r);
}

std::vector<uintptr_t> Recorder::signature(llvm::ArrayRef<m::Operation *> ops,
                                           llvm::ArrayRef<m::Value> outside,
                                           llvm::ArrayRef<m::Value> results) {
  // Attributes and types are uniqued by the context: their pointers stand
  // for their contents. Values are numbered: inputs first, then results of
  // the ops in order.
  llvm::DenseMap<m::Value, uintptr_t> number;
  std::vector<uintptr_t> sig;
  sig.reserve(ops.size() * 8 + outside.size() + results.size() + 2);
  sig.push_back(outside.size());
  for (m::Value v : outside) {
    number[v] = number.size();
    sig.push_back(
        reinterpret_cast<uintptr_t>(v.getType().getAsOpaquePointer()));
  }
  for (m::Operation *op : ops) {
    sig.push_back(
        reinterpret_cast<uintptr_t>(op->getName().getAsOpaquePointer()));
    sig.push_back(reinterpret_cast<uintptr_t>(
        op->getPropertiesAsAttribute().getAsOpaquePointer()));
    sig.push_back(reinterpret_cast<uintptr_t>(
        op->getDiscardableAttrDictionary().getAsOpaquePointer()));
    sig.push_back(op->getNumOperands());
    for (m::Value operand : op->getOperands())
      sig.push_back(number.lookup(operand));
    sig.push_back(op->getNumResults());
    for (m::Value r : op->getResults()) {
      number[r] = number.size();
      sig.push_back(
          reinterpret_cast<uintptr_t>(r.getType().getAsOpaquePointer()));
    }
  }
  sig.push_back(results.size());
  for (m::Value r : results)
    sig.push_back(number.lookup(r));
  return sig;
}

m::OwningOpRef<m::ModuleOp>
Recorder::extract(llvm::ArrayRef<m::Value> results,
                  llvm::SmallVectorImpl<m::Value> &inputs,
                  const llvm::SmallVector<m::Value> *fixedInputs) {
  llvm::DenseSet<m::Value> fixed;
  if (fixedInputs)
    fixed.insert(fixedInputs->begin(), fixedInputs->end());
  std::vector<m::Operation *> ops;
  llvm::SmallVector<m::Value> outside;
  slice(results, ops, outside, fixedInputs ? &fixed : nullptr);

  if (fixedInputs)
    inputs.assign(fixedInputs->begin(), fixedInputs->end());
  else
    inputs.assign(outside.begin(), outside.end());

  m::OpBuilder mb(&ctx);
  m::OwningOpRef<m::ModuleOp> out = m::ModuleOp::create(mb.getUnknownLoc());
  mb.setInsertionPointToEnd(out->getBody());
  llvm::SmallVector<m::Type> argTypes, resultTypes;
  for (m::Value v : inputs)
    argTypes.push_back(v.getType());
  for (m::Value v : results)
    resultTypes.push_back(v.getType());
  auto fn = mb.create<m::func::FuncOp>(
      mb.getUnknownLoc(), "main", mb.getFunctionType(argTypes, resultTypes));
  m::Block *body = fn.addEntryBlock();
  mb.setInsertionPointToEnd(body);
  m::IRMapping mapping;
  for (auto [v, arg] : llvm::zip(inputs, body->getArguments()))
    mapping.map(v, arg);
  // In a trace, other leaves with data become constants.
  for (m::Value v : outside) {
    if (mapping.contains(v))
      continue;
    std::shared_ptr<Storage> data = known.lookup(v);
    if (!data)
      throw Error("tcc: a traced function reads a tensor that is neither an "
                  "input, state, nor computed before tracing began");
    auto type = m::cast<m::RankedTensorType>(v.getType());
    m::DenseElementsAttr attr;
    if (type.getElementType().isInteger(1)) {
      const auto *p = static_cast<const uint8_t *>(data->data);
      llvm::SmallVector<bool> bits(p, p + data->bytes);
      attr = m::DenseElementsAttr::get(type, bits);
    } else {
      attr = m::DenseElementsAttr::getFromRawBuffer(
          type, llvm::ArrayRef<char>(static_cast<const char *>(data->data),
                                     data->bytes));
    }
    mapping.map(
        v,
        mb.create<td::ConstantOp>(mb.getUnknownLoc(), type, attr).getResult());
  }
  for (m::Operation *op : ops)
    mb.clone(*op, mapping);
  llvm::SmallVector<m::Value> mapped;
  for (m::Value r : results)
    mapped.push_back(mapping.lookup(r));
  mb.create<m::func::ReturnOp>(mb.getUnknownLoc(), mapped);
  return out;
}

/// Where what compiled graphs link in (the micro-kernels, the runtime) is:
/// $TCC_LIB_DIR; else found from the file this code is in: beside an
/// installed libtcc_tracer.so (<prefix>/lib/tcc), beside the build's
/// (lib/), or, for a program of the build that links the tracer
/// statically (bin/), in ../lib.
static std::string libraryDir() {
  const char *env = std::getenv("TCC_LIB_DIR");
  if (env && *env)
    return env;
  // The shared library this code is in; for a program that links it
  // statically dladdr names the program as it was started (maybe found on
  // PATH, with no folder), so the running executable's own path too.
  llvm::SmallVector<std::string, 2> dirs;
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&libraryDir), &info) && info.dli_fname &&
      llvm::StringRef(info.dli_fname).contains('/'))
    dirs.push_back(llvm::sys::path::parent_path(info.dli_fname).str());
  std::string self = llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&libraryDir));
  if (!self.empty())
    dirs.push_back(llvm::sys::path::parent_path(self).str());
  for (const std::string &dir : dirs) {
    for (const char *sub : {"tcc", "", "../lib"}) {
      llvm::SmallString<256> candidate(dir);
      llvm::sys::path::append(candidate, sub);
      llvm::SmallString<256> object(candidate);
      llvm::sys::path::append(object, "tcc_ukernels_generic.o");
      if (llvm::sys::fs::exists(object))
        return candidate.str().str();
    }
  }
  return "lib"; // a clear "cannot read lib/tcc_ukernels_..." later
}

std::unique_ptr<Compiled> Recorder::compile(m::ModuleOp module,
                                            const std::string &path) {
  auto start = std::chrono::steady_clock::now();
  m::OwningOpRef<m::ModuleOp> copy(m::cast<m::ModuleOp>(module->clone()));
  m::tcc::CompileOptions options;
  options.inputPath = "traced";
  options.outputPath = path;
  options.emit = m::tcc::EmitKind::Library;
  options.mcpu = config.mcpu;
  options.ukernels = config.ukernels;
  options.libDir = libraryDir();
  std::string message;
  m::LogicalResult status = m::failure();
  {
    m::ScopedDiagnosticHandler handler(&ctx, [&](m::Diagnostic &diag) {
      if (diag.getSeverity() == m::DiagnosticSeverity::Error) {
        if (!message.empty())
          message += "\n";
        message += diag.str();
      }
      return m::success();
    });
    status = m::tcc::compileModule(*copy, options);
  }
  if (m::failed(status))
    throw Error("tcc: compiling the recorded graph failed: " +
                (message.empty() ? std::string("(no diagnostic)") : message));
  auto compiled = std::make_unique<Compiled>();
  compiled->path = path;
  if (tcc_status_t s = tcc_model_load(path.c_str(), &compiled->model)) {
    std::string msg = tcc_status_message(s);
    tcc_status_free(s);
    throw Error("tcc: loading the compiled graph failed: " + msg);
  }
  tcc_context_options_t contextOptions{};
  contextOptions.num_threads = config.numThreads;
  if (tcc_status_t s = tcc_context_create(compiled->model, &contextOptions,
                                          &compiled->context)) {
    std::string msg = tcc_status_message(s);
    tcc_status_free(s);
    throw Error("tcc: creating a context failed: " + msg);
  }
  ++stats.compiles;
  stats.compileSeconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return compiled;
}

void Recorder::run(Compiled &compiled, llvm::ArrayRef<TensorType> inputTypes,
                   llvm::ArrayRef<const Storage *> inputs,
                   llvm::ArrayRef<TensorType> outputTypes,
                   llvm::ArrayRef<Storage *> outputs) {
  std::vector<tcc_tensor_t *> ins, outs;
  auto release = [&] {
    for (tcc_tensor_t *t : ins)
      tcc_tensor_free(t);
    for (tcc_tensor_t *t : outs)
      tcc_tensor_free(t);
  };
  auto wrap = [&](const TensorType &type, const Storage *data,
                  std::vector<tcc_tensor_t *> &into) {
    tcc_tensor_t *t = nullptr;
    if (tcc_status_t s = tcc_tensor_wrap(
            runtimeDtype(type.dtype), static_cast<int32_t>(type.shape.size()),
            type.shape.data(), data->data, data->bytes, &t)) {
      std::string msg = tcc_status_message(s);
      tcc_status_free(s);
      release();
      throw Error("tcc: " + msg);
    }
    into.push_back(t);
  };
  for (size_t i = 0; i < inputs.size(); ++i)
    wrap(inputTypes[i], inputs[i], ins);
  for (size_t i = 0; i < outputs.size(); ++i)
    wrap(outputTypes[i], outputs[i], outs);
  tcc_status_t s = tcc_context_run(compiled.context, ins.data(), ins.size(),
                                   outs.data(), outs.size());
  release();
  if (s) {
    std::string msg = tcc_status_message(s);
    tcc_status_free(s);
    throw Error("tcc: running the compiled graph failed: " + msg);
  }
  ++stats.runs;
}

void Recorder::sync() {
  if (tracing)
    throw Error("tcc: a value was read while tracing; a traced function "
                "must not depend on its data (compute it outside trace())");
  // Every live tensor not computed yet, once per value, in block order.
  llvm::SmallVector<m::Value> targets;
  llvm::DenseMap<m::Value, std::vector<TensorImpl *>> holders;
  for (TensorImpl *impl : live) {
    if (impl->data)
      continue;
    if (std::shared_ptr<Storage> d = known.lookup(impl->value)) {
      impl->data = d;
      continue;
    }
    if (!impl->value.getDefiningOp())
      throw Error("tcc: a tensor made while tracing outlived the trace; it "
                  "has no value");
    auto &list = holders[impl->value];
    if (list.empty())
      targets.push_back(impl->value);
    list.push_back(impl);
  }
  if (targets.empty())
    return;
  std::sort(targets.begin(), targets.end(), [](m::Value a, m::Value c) {
    m::Operation *x = a.getDefiningOp(), *y = c.getDefiningOp();
    if (x == y)
      return m::cast<m::OpResult>(a).getResultNumber() <
             m::cast<m::OpResult>(c).getResultNumber();
    return x->isBeforeInBlock(y);
  });

  // The same structure as a graph compiled before: reuse it. Otherwise
  // build the graph and compile it.
  std::vector<m::Operation *> sliceOps;
  llvm::SmallVector<m::Value> inputs;
  slice(targets, sliceOps, inputs);
  std::vector<uintptr_t> sig = signature(sliceOps, inputs, targets);
  uint64_t hash = llvm::hash_combine_range(sig.begin(), sig.end());
  std::vector<CacheEntry> &bucket = cache[hash];
  Compiled *compiled = nullptr;
  for (CacheEntry &entry : bucket)
    if (entry.signature == sig)
      compiled = entry.compiled.get();
  if (compiled) {
    ++stats.cacheHits;
  } else {
    llvm::SmallVector<m::Value> graphInputs;
    m::OwningOpRef<m::ModuleOp> graph = extract(targets, graphInputs);
    if (graphInputs != inputs)
      throw Error("tcc: internal error: a graph's inputs changed order");
    std::string path = freshPath("graph", ".so");
    // TCC_TRACER_DUMP=DIR keeps the tcc IR of every graph compiled.
    if (const char *dump = std::getenv("TCC_TRACER_DUMP"); dump && *dump) {
      std::error_code ec;
      llvm::raw_fd_ostream os(std::string(dump) + "/" +
                                  llvm::sys::path::stem(path).str() + ".mlir",
                              ec);
      if (!ec)
        graph->print(os);
    }
    bucket.push_back({std::move(sig), compile(*graph, path)});
    compiled = bucket.back().compiled.get();
  }

  std::vector<TensorType> inTypes, outTypes;
  std::vector<const Storage *> inPtrs;
  for (m::Value v : inputs) {
    const Storage *d = known.lookup(v).get();
    if (!d)
      throw Error("tcc: internal error: an input of the graph has no data");
    inPtrs.push_back(d);
    inTypes.push_back(TensorType::of(v));
  }
  std::vector<std::shared_ptr<Storage>> outData;
  std::vector<Storage *> outPtrs;
  for (m::Value v : targets) {
    outTypes.push_back(TensorType::of(v));
    outData.push_back(allocate(outTypes.back().bytes()));
    outPtrs.push_back(outData.back().get());
  }
  run(*compiled, inTypes, inPtrs, outTypes, outPtrs);

  // Computed values become leaves (block arguments with data), except the
  // results that gradients still flow through: they keep their history.
  for (auto [v, data] : llvm::zip(targets, outData)) {
    std::vector<TensorImpl *> &list = holders[v];
    bool keepHistory = false;
    for (TensorImpl *impl : list)
      keepHistory |= active.contains(v) && !impl->requiresGrad;
    for (TensorImpl *impl : list)
      impl->data = data;
    if (keepHistory) {
      known[v] = data;
      continue;
    }
    m::Value arg = block->addArgument(v.getType(), loc());
    known[arg] = data;
    if (active.contains(v))
      active.insert(arg);
    v.replaceAllUsesWith(arg);
    for (TensorImpl *impl : list)
      impl->value = arg;
  }
  collect();
}

void Recorder::collect() {
  llvm::DenseSet<m::Operation *> keep;
  llvm::DenseSet<m::Value> keepArgs;
  llvm::SmallVector<m::Value> stack;
  for (TensorImpl *impl : live)
    stack.push_back(impl->value);
  while (!stack.empty()) {
    m::Value v = stack.pop_back_val();
    if (m::Operation *def = v.getDefiningOp()) {
      if (def->getBlock() != block || !keep.insert(def).second)
        continue;
      for (m::Value operand : def->getOperands())
        stack.push_back(operand);
    } else {
      keepArgs.insert(v);
    }
  }
  for (m::Operation &op : llvm::make_early_inc_range(llvm::reverse(*block))) {
    if (keep.contains(&op))
      continue;
    for (m::Value r : op.getResults()) {
      known.erase(r);
      active.erase(r);
    }
    op.erase();
  }
  llvm::BitVector dead(block->getNumArguments());
  for (m::BlockArgument arg : block->getArguments())
    if (!keepArgs.contains(arg)) {
      dead.set(arg.getArgNumber());
      known.erase(arg);
      active.erase(arg);
    }
  block->eraseArguments(dead);
}

void Recorder::backward(TensorImpl &root, const TensorImpl *seed) {
  if (!active.contains(root.value))
    throw Error("tcc::backward: the tensor (" +
                std::string(dtypeName(root.dtype)) +
                ") does not require grad: no leaf it depends on has "
                "requiresGrad_(), or it was computed under NoGradGuard");
  if (!seed && product(root.shape) != 1) {
    std::string shape;
    for (int64_t d : root.shape)
      shape += (shape.empty() ? "" : "x") + std::to_string(d);
    throw Error("tcc::backward: a gradient can be implied only for a tensor "
                "of one element; this one is " +
                std::string(dtypeName(root.dtype)) + "[" + shape +
                "]: pass backward(gradient)");
  }
  if (seed && (seed->shape != root.shape || seed->dtype != root.dtype))
    throw Error("tcc::backward: the gradient's type differs from the "
                "tensor's");
  llvm::DenseSet<m::Value> leaves;
  for (TensorImpl *impl : live)
    if (impl->requiresGrad)
      leaves.insert(impl->value);
  std::vector<m::Operation *> ops = sliceOf({root.value}, [&](m::Value v) {
    return leaves.contains(v) || !active.contains(v);
  });

  llvm::DenseMap<m::Value, m::Value> cotangents;
  m::Value seedValue;
  if (seed) {
    seedValue = seed->value;
  } else {
    auto type = m::cast<m::RankedTensorType>(root.value.getType());
    m::Attribute one = b.getFloatAttr(type.getElementType(), 1.0);
    seedValue = b.create<td::ConstantOp>(loc(), type,
                                         m::DenseElementsAttr::get(type, one));
  }
  cotangents[root.value] = seedValue;
  std::string message;
  {
    m::ScopedDiagnosticHandler handler(&ctx, [&](m::Diagnostic &diag) {
      if (diag.getSeverity() == m::DiagnosticSeverity::Error && message.empty())
        message = diag.str();
      return m::success();
    });
    if (m::failed(td::backpropagate(
            b, ops, cotangents,
            [&](m::Value v) { return active.contains(v); })) ||
        !message.empty())
      throw Error("tcc::backward: " + (message.empty()
                                           ? std::string("no gradient rule")
                                           : message));
  }
  // Each leaf's gradient adds to what it had.
  llvm::DenseMap<m::Value, std::shared_ptr<TensorImpl>> byValue;
  std::vector<TensorImpl *> targets;
  for (TensorImpl *impl : live)
    if (impl->requiresGrad && cotangents.count(impl->value))
      targets.push_back(impl);
  for (TensorImpl *impl : targets) {
    m::Value g = cotangents.lookup(impl->value);
    if (impl->grad) {
      g = b.create<td::AddOp>(loc(), impl->grad->value, g);
    }
    impl->grad = std::make_shared<TensorImpl>(g, impl->dtype, impl->shape);
  }
}

} // namespace detail
} // namespace tcc
