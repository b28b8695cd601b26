//===- Recorder.h - where the tracer records ops (private) ------*- C++ -*-===//
//
// One Recorder per thread holds an MLIR context and a block that every
// tensor operation appends a tcc op to. A tensor is an SSA value of that
// block plus, once known, its data on the host. Leaves with data are block
// arguments. sync() compiles the ops that the live, not yet computed
// tensors need into a func.func @main, compiles that once per distinct
// graph (the printed function is the cache key) and runs it with the
// runtime. See docs/tracer.md.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_FRONTENDS_TRACER_RECORDER_H
#define TCC_COMPILER_FRONTENDS_TRACER_RECORDER_H

#include "tcc/tracer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cstdlib>
#include <map>
#include <random>
#include <unordered_map>
#include <unordered_set>

struct tcc_model_t;
struct tcc_context_t;

namespace tcc {
namespace detail {

/// Host memory of one tensor, 64-byte aligned as the runtime likes it.
struct Storage {
  explicit Storage(size_t bytes);
  ~Storage();
  Storage(const Storage &) = delete;
  Storage &operator=(const Storage &) = delete;
  void *data = nullptr;
  size_t bytes = 0;
};

/// What the runtime needs to know of a tensor besides its data.
struct TensorType {
  DType dtype;
  Shape shape;
  /// The type of a recorded value.
  static TensorType of(mlir::Value value);
  size_t bytes() const;
};

struct TensorImpl {
  TensorImpl(mlir::Value value, DType dtype, Shape shape);
  ~TensorImpl();
  mlir::Value value; ///< in the recording block
  DType dtype;
  Shape shape;
  std::shared_ptr<Storage> data; ///< set once computed
  bool requiresGrad = false;     ///< a leaf gradients accumulate into
  std::shared_ptr<TensorImpl> grad;
  TensorType type() const { return {dtype, shape}; }
};

/// A compiled graph, loaded.
struct Compiled {
  ~Compiled();
  std::string path;
  tcc_model_t *model = nullptr;
  tcc_context_t *context = nullptr;
};

class Recorder {
public:
  Recorder();
  ~Recorder();

  mlir::MLIRContext &context() { return ctx; }
  mlir::OpBuilder &builder() { return b; }
  mlir::Location loc() { return b.getUnknownLoc(); }

  /// A new leaf holding `data`.
  std::shared_ptr<TensorImpl> leaf(DType dtype, Shape shape,
                                   std::shared_ptr<Storage> data);
  /// Wraps a value just built by build(); it requires grad when one of
  /// `inputs` does (and gradients are recorded).
  std::shared_ptr<TensorImpl> result(mlir::Value value,
                                     std::vector<const TensorImpl *> inputs);
  /// Runs `build`, which builds through TccBuilder, turning its failure
  /// (and any diagnostic emitted meanwhile) into a thrown Error.
  mlir::Value build(const char *what,
                    const std::function<mlir::FailureOr<mlir::Value>()> &build);

  void track(TensorImpl *impl) { live.insert(impl); }
  void untrack(TensorImpl *impl) { live.erase(impl); }

  bool isActive(mlir::Value v) const { return active.contains(v); }
  void markActive(mlir::Value v) { active.insert(v); }
  bool gradEnabled() const { return noGradDepth == 0; }
  int noGradDepth = 0;

  void sync();
  void backward(TensorImpl &root, const TensorImpl *seed);
  /// Data of a tensor, syncing first if needed.
  const Storage &dataOf(TensorImpl &impl);

  std::mt19937_64 &rng() { return generator; }
  Stats stats;
  CompileConfig config;

  /// trace(): placeholders have no data; sync() is an error meanwhile.
  bool tracing = false;
  std::shared_ptr<TensorImpl> placeholder(DType dtype, Shape shape);

  /// Builds func.func @main in a new module computing `results` from the
  /// block arguments and known values they need; `inputs` gets the values
  /// that became arguments, in order. With `fixedInputs`, exactly those
  /// become the arguments (in that order), and any other leaf with data is
  /// baked in as a constant.
  mlir::OwningOpRef<mlir::ModuleOp>
  extract(llvm::ArrayRef<mlir::Value> results,
          llvm::SmallVectorImpl<mlir::Value> &inputs,
          const llvm::SmallVector<mlir::Value> *fixedInputs = nullptr);
  /// What extract() would compile, without building it: the ops `results`
  /// need (up to values with data), in block order, and the values they
  /// read from outside, in order of first use.
  void slice(llvm::ArrayRef<mlir::Value> results,
             std::vector<mlir::Operation *> &ops,
             llvm::SmallVectorImpl<mlir::Value> &outside,
             const llvm::DenseSet<mlir::Value> *fixed = nullptr);
  /// The structure of a slice: equal signatures compile to the same code.
  std::vector<uintptr_t> signature(llvm::ArrayRef<mlir::Operation *> ops,
                                   llvm::ArrayRef<mlir::Value> outside,
                                   llvm::ArrayRef<mlir::Value> results);
  /// Compiles a module made by extract() (a clone of it) into a .so and
  /// loads it.
  std::unique_ptr<Compiled> compile(mlir::ModuleOp module,
                                    const std::string &path);
  /// Runs a compiled graph on host buffers.
  void run(Compiled &compiled, llvm::ArrayRef<TensorType> inputTypes,
           llvm::ArrayRef<const Storage *> inputs,
           llvm::ArrayRef<TensorType> outputTypes,
           llvm::ArrayRef<Storage *> outputs);
  std::string freshPath(const char *stem, const char *ext);
  mlir::Type tensorType(DType dtype, const Shape &shape);
  /// The data of a block argument (null for a placeholder).
  std::shared_ptr<Storage> argData(mlir::Value arg) const {
    return known.lookup(arg);
  }
  /// Frees ops and arguments no live tensor needs any more.
  void collect();
  /// Host memory for a tensor's data. Freed blocks are kept for reuse (up
  /// to a cap): a training step frees and allocates the same sizes each
  /// step, and fresh pages would fault and be zeroed every time.
  std::shared_ptr<Storage> allocate(size_t bytes);

private:
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::Block *block = nullptr;
  mlir::OpBuilder b;
  std::unordered_set<TensorImpl *> live;
  /// Values whose data is known: leaf arguments, and computed results
  /// kept for their history (they still need backward()).
  llvm::DenseMap<mlir::Value, std::shared_ptr<Storage>> known;
  llvm::DenseSet<mlir::Value> active;
  /// Compiled graphs by structure: signature() of the ops, operands and
  /// types (pointers to the context's uniqued attributes and types), hashed.
  struct CacheEntry {
    std::vector<uintptr_t> signature;
    std::unique_ptr<Compiled> compiled;
  };
  std::unordered_map<uint64_t, std::vector<CacheEntry>> cache;
  std::multimap<size_t, std::unique_ptr<Storage>> pool;
  size_t pooledBytes = 0;
  std::mt19937_64 generator{0};
  std::string tempDir; ///< created on the first compile without cacheDir
  int64_t counter = 0;
};

Recorder &recorder();
size_t dtypeBytes(DType dtype);

} // namespace detail
} // namespace tcc

#endif // TCC_COMPILER_FRONTENDS_TRACER_RECORDER_H
