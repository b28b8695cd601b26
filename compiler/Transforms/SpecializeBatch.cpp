//===- SpecializeBatch.cpp - the tcc-specialize-batch pass ----------------===//
//
// A graph whose only dynamic dimension is a leading (batch) dimension that
// no op mixes -- row b of every result depends on row b of the inputs
// alone -- computes any batch as consecutive slabs of rows. The pass proves
// that op by op, then replaces @main by copies at fixed slab sizes
// (@main_chunk8, @main_chunk4, ...), which the rest of the pipeline
// compiles like any static graph: the micro-kernels, weight packing,
// fusion and the arena keep their static-shape speed, and the artifact's
// entry point runs a batch of n rows as the fewest slabs that add up to n.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"

#include "dialects/Tcc/IR/TccOps.h"
#include "dialects/Tcc/IR/TccTraits.h"

#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCSPECIALIZEBATCH
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

/// The dimension of `t` that holds the batch: its dynamic one (checkInterface
/// has made sure there is at most one), or -1.
static int64_t batchAxis(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  if (!tensor)
    return -1;
  for (int64_t i = 0; i < tensor.getRank(); ++i)
    if (tensor.isDynamicDim(i))
      return i;
  return -1;
}

/// Whether `t` is a tensor with the batch in one of its dimensions.
static bool isBatched(Type t) { return batchAxis(t) >= 0; }

static bool anyBatched(TypeRange types) {
  return llvm::any_of(types, isBatched);
}

static int64_t normalizedAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

static int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

/// `get(op)` for the first of `Ops` that `op` is, or nullopt.
template <typename... Ops, typename Get>
static auto attrOf(Operation *op, Get get) -> std::optional<decltype(get(
    std::declval<std::tuple_element_t<0, std::tuple<Ops...>>>()))> {
  std::optional<decltype(get(
      std::declval<std::tuple_element_t<0, std::tuple<Ops...>>>()))>
      value;
  (void)((isa<Ops>(op) ? (value = get(cast<Ops>(op)), true) : false) || ...);
  return value;
}

/// Why the broadcasting op `op` mixes rows: its batched operands must hold
/// the batch where the result does (right-aligned), and an unbatched
/// operand of that dimension must broadcast along it.
static std::string broadcastReason(Operation *op, int64_t rank, int64_t axis) {
  for (Value v : op->getOperands()) {
    auto t = cast<RankedTensorType>(v.getType());
    int64_t at = axis - (rank - t.getRank()); // The result's batch in `v`.
    if (isBatched(t) && batchAxis(t) != at)
      return "combines tensors holding the batch in different dimensions";
    if (!isBatched(t) && at >= 0 && t.getDimSize(at) != 1)
      return "combines batched operands with one of fixed size " +
             std::to_string(t.getDimSize(at)) + " along the batch";
  }
  return "";
}

/// Why `op` mixes the rows of the batch (or cannot be shown not to); empty
/// when each row of its batched results depends on the same row of its
/// batched operands and on whole unbatched operands only. The batch may
/// sit in any dimension of an intermediate value (a transposition moves
/// it); each op's rule is about the dimension it holds there.
static std::string mixingReason(Operation *op) {
  bool inBatched = anyBatched(op->getOperandTypes());
  bool outBatched = anyBatched(op->getResultTypes());
  if (!inBatched && !outBatched)
    return "";
  if (inBatched && !outBatched)
    return "reduces over the dynamic dimension";
  Value result = op->getResult(0);
  int64_t rank = rankOf(result);
  int64_t outAxis = batchAxis(result.getType());
  if (auto broadcast = dyn_cast<BroadcastToOp>(op)) {
    // Each row stretched within itself; an unbatched operand is the same
    // in every row.
    if (!inBatched)
      return "";
    return broadcastReason(op, rank, outAxis);
  }
  if (!inBatched)
    return "makes the dynamic dimension from no batched operand";
  int64_t inAxis = batchAxis(op->getOperand(0).getType());
  // Whether `axis` of the first operand is the batch's.
  auto axisAt = [&](int64_t axis) {
    return normalizedAxis(axis, rankOf(op->getOperand(0))) == inAxis
               ? std::string("works along the dynamic dimension")
               : std::string();
  };

  if (op->hasTrait<mlir::tcc::OpTrait::BroadcastingElementwise>())
    return broadcastReason(op, rank, outAxis);
  if (auto mm = dyn_cast<MatmulOp>(op)) {
    auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
    auto rhs = cast<RankedTensorType>(mm.getRhs().getType());
    // The contraction is the last dimension of the lhs and the first of a
    // vector rhs, else its next to last.
    if (batchAxis(lhs) == lhs.getRank() - 1 ||
        (isBatched(rhs) &&
         batchAxis(rhs) == std::max<int64_t>(rhs.getRank() - 2, 0)))
      return "contracts over the dynamic dimension";
    // In a stack of matrices, the other operand's stack must broadcast
    // along the batch.
    if (outAxis < rank - 2)
      for (auto t : {lhs, rhs}) {
        int64_t at = outAxis - (rank - t.getRank());
        if (t.getRank() >= 3 && at >= 0 && at < t.getRank() - 2 &&
            !isBatched(t) && t.getDimSize(at) != 1)
          return "multiplies batched matrices by a batch of fixed size";
      }
    return "";
  }
  if (isa<ConvOp, MaxPoolOp, AvgPoolOp, BatchNormOp, NllLossOp>(op)) {
    if (inAxis != 0)
      return "works along the dynamic dimension";
    for (Value v : op->getOperands().drop_front())
      if (isBatched(v.getType()))
        return "takes its parameters from the batch";
    if (auto nll = dyn_cast<NllLossOp>(op))
      return nll.getReduction() == LossReduction::none
                 ? ""
                 : "sums or averages over the batch";
    return "";
  }
  if (isa<ReshapeOp>(op))
    // Rows may merge or split whole (see batchMultiples).
    return outBatched ? "" : "reshapes across the dynamic dimension";
  if (auto transpose = dyn_cast<TransposeOp>(op))
    return transpose.getPerm()[outAxis] == inAxis
               ? ""
               : "moves the dynamic dimension where its type does not say";
  if (auto slice = dyn_cast<SliceOp>(op))
    return slice.getOffsets()[inAxis] == 0 && slice.getSteps()[inAxis] == 1 &&
                   outAxis == inAxis
               ? ""
               : "slices the dynamic dimension";
  if (auto pad = dyn_cast<PadOp>(op))
    return pad.getLow()[inAxis] == 0 && pad.getHigh()[inAxis] == 0
               ? ""
               : "pads the dynamic dimension";
  if (auto gather = dyn_cast<GatherOp>(op)) {
    auto data = gather.getData().getType();
    bool dataBatched = isBatched(data);
    bool indices = isBatched(gather.getIndices().getType());
    int64_t axis = normalizedAxis(gather.getAxis(), rankOf(gather.getData()));
    if (dataBatched && !indices && axis != batchAxis(data))
      return "";
    // A lookup table indexed by a batch of indices: one row per index row.
    if (!dataBatched && indices)
      return "";
    return "gathers along the dynamic dimension";
  }
  if (auto scatter = dyn_cast<ScatterOp>(op)) {
    int64_t axis = normalizedAxis(scatter.getAxis(), rankOf(scatter.getData()));
    Type data = scatter.getData().getType();
    return axis == batchAxis(data) || !isBatched(data) ||
                   batchAxis(scatter.getIndices().getType()) !=
                       batchAxis(data) ||
                   batchAxis(scatter.getUpdates().getType()) != batchAxis(data)
               ? "scatters along the dynamic dimension"
               : "";
  }
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    for (Value v : concat.getInputs())
      if (batchAxis(v.getType()) != inAxis)
        return "joins batched and unbatched tensors";
    return axisAt(concat.getAxis());
  }
  if (auto ln = dyn_cast<LayerNormOp>(op))
    // Normalizes over [axis, rank).
    return normalizedAxis(ln.getAxis(), rank) <= inAxis
               ? "works along the dynamic dimension"
               : "";
  if (auto axis =
          attrOf<SplitOp, SoftmaxOp, LogSoftmaxOp, CumsumOp, CumprodOp, TopKOp,
                 ArgMaxOp, ArgMinOp>(op, [](auto o) { return o.getAxis(); }))
    return axisAt(*axis);
  if (auto axes = attrOf<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp,
                         ReduceProdOp>(op, [](auto o) { return o.getAxes(); }))
    return llvm::any_of(*axes,
                        [&](int64_t a) {
                          return normalizedAxis(a, rankOf(op->getOperand(0))) ==
                                 inAxis;
                        })
               ? "reduces over the dynamic dimension"
               : "";
  return "has no rule for a dynamic dimension in tcc yet";
}

/// The number of elements of `t` before and after its batch dimension.
static std::pair<int64_t, int64_t> aroundBatch(RankedTensorType t) {
  int64_t axis = batchAxis(t);
  ArrayRef<int64_t> shape = t.getShape();
  auto product = [](ArrayRef<int64_t> dims) {
    return std::accumulate(dims.begin(), dims.end(), int64_t(1),
                           std::multiplies<int64_t>());
  };
  return {product(shape.take_front(axis)), product(shape.drop_front(axis + 1))};
}

std::vector<func::FuncOp> mlir::tcc::graphFunctions(ModuleOp module) {
  std::vector<func::FuncOp> graphs;
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isExternal() &&
        (f.getSymName() == "main" || f.getSymName().starts_with("main_chunk") ||
         f.getSymName().starts_with("main_pad")))
      graphs.push_back(f);
  return graphs;
}

/// `t` with its dynamic dimension fixed to `rows`.
static Type withRows(Type t, int64_t rows) {
  if (!isBatched(t))
    return t;
  auto tensor = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[batchAxis(t)] = rows;
  return tensor.clone(shape);
}

namespace {
struct TccSpecializeBatchPass
    : mlir::tcc::impl::TccSpecializeBatchBase<TccSpecializeBatchPass> {
  using TccSpecializeBatchBase::TccSpecializeBatchBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // @main, or the buckets of a padded dimension (tcc-pad-dynamic-dims)
    // that still have a dynamic batch beside it: each becomes slabs.
    SmallVector<func::FuncOp> graphs;
    for (auto f : module.getOps<func::FuncOp>())
      if (!f.isExternal() &&
          (f.getSymName() == "main" || f.getSymName().starts_with("main_pad")))
        graphs.push_back(f);
    for (func::FuncOp f : graphs) {
      rows.clear();
      if (failed(specialize(module, f)))
        return signalPassFailure();
    }
  }

  LogicalResult specialize(ModuleOp module, func::FuncOp main) {
    FunctionType type = main.getFunctionType();
    auto isDynamic = [](Type t) {
      auto tensor = dyn_cast<RankedTensorType>(t);
      return tensor && !tensor.hasStaticShape();
    };
    bool dynamic = llvm::any_of(type.getInputs(), isDynamic) ||
                   llvm::any_of(type.getResults(), isDynamic);
    if (!dynamic)
      return success(); // A static graph: nothing to do.
    // (The outputs after the ops: an op that moves the batch is the error
    // to report.)
    if (failed(checkInterface(main)) || failed(checkOps(main)) ||
        failed(checkLeading(main, "output", type.getResults())))
      return failure();

    std::string name;
    int64_t lo = 1, hi = std::numeric_limits<int32_t>::max();
    if (failed(symbolOf(main, name, lo, hi)))
      return failure();
    SmallVector<int64_t> sizes;
    for (int64_t c = maxChunk; c >= 1; c /= 2)
      if (c <= hi)
        sizes.push_back(c);
    if (sizes.empty())
      sizes.push_back(1);

    OpBuilder b(main);
    auto flags = [&](TypeRange types) {
      return b.getBoolArrayAttr(llvm::map_to_vector(types, isBatched));
    };
    module->setAttr("tcc.batch", dynamicDimAttr(b, name, lo, hi, "chunks",
                                                sizes, flags(type.getInputs()),
                                                flags(type.getResults())));
    for (int64_t slab : sizes) {
      IRMapping map;
      auto copy = cast<func::FuncOp>(main->clone(map));
      copy.setSymName((main.getSymName() + "_chunk" + Twine(slab)).str());
      for (auto [original, held] : rows) {
        Value v = map.lookup(original);
        v.setType(withRows(v.getType(), held.size(slab)));
      }
      copy.setFunctionType(b.getFunctionType(
          llvm::map_to_vector(type.getInputs(),
                              [&](Type t) { return withRows(t, slab); }),
          llvm::map_to_vector(type.getResults(),
                              [&](Type t) { return withRows(t, slab); })));
      b.insert(copy);
    }
    main.erase();
    return success();
  }

  /// One dynamic dimension a tensor, anywhere in the graph; the leading
  /// one of the inputs (which, as the outputs, run as slabs of rows).
  LogicalResult checkInterface(func::FuncOp main) {
    WalkResult result = main.walk([&](Operation *op) {
      for (Type t :
           llvm::concat<const Type>(SmallVector<Type>(op->getOperandTypes()),
                                    SmallVector<Type>(op->getResultTypes()))) {
        auto tensor = dyn_cast<RankedTensorType>(t);
        if (!tensor || tensor.getNumDynamicDims() < 2)
          continue;
        op->emitError() << tensor
                        << " has several dynamic dimensions; tcc compiles "
                           "one dynamic dimension (a batch); fix the others "
                           "with --input-shape";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    return checkLeading(main, "input", main.getFunctionType().getInputs());
  }

  /// The batch leads each of `types` (the inputs or outputs).
  LogicalResult checkLeading(func::FuncOp main, StringRef kind,
                             TypeRange types) {
    for (auto [k, t] : llvm::enumerate(types))
      if (isBatched(t) && batchAxis(t) != 0)
        return main.emitError()
               << "dimension " << batchAxis(t) << " of " << kind << " " << k
               << " (" << t
               << ") is dynamic; tcc compiles one dynamic leading (batch) "
                  "dimension; fix the others with --input-shape";
    return success();
  }

  /// Proves op by op that rows stay apart, and finds how each batched
  /// value's dynamic dimension holds the batch: `outer` blocks of the batch,
  /// each row repeated as `inner` consecutive entries (a reshape of
  /// [B, S, D] to [B*S, D] makes inner S; back to [B, S, D], 1; one of
  /// [S, B, D] to [S*B, D] makes outer S). Values of one op must agree on
  /// it; inputs and outputs have 1 and 1.
  LogicalResult checkOps(func::FuncOp main) {
    for (BlockArgument arg : main.getArguments())
      if (isBatched(arg.getType()))
        rows[arg] = {1, 1};
    WalkResult result = main.walk([&](Operation *op) {
      if (isa<func::FuncOp>(op))
        return WalkResult::advance();
      std::string reason = isa<func::ReturnOp>(op) ? "" : mixingReason(op);
      if (reason.empty())
        reason = batchRows(op);
      if (reason.empty())
        return WalkResult::advance();
      op->emitError() << "'" << op->getName().getStringRef() << "' " << reason
                      << ", so the batch cannot vary: fix it with "
                         "--input-shape";
      return WalkResult::interrupt();
    });
    return failure(result.wasInterrupted());
  }

  /// How a dynamic dimension holds the batch: its size is outer * B * inner.
  struct Rows {
    int64_t outer = 0, inner = 0;
    bool known() const { return inner != 0; }
    bool operator!=(const Rows &o) const {
      return outer != o.outer || inner != o.inner;
    }
    int64_t size(int64_t batch) const { return outer * batch * inner; }
    std::string str() const {
      return (outer > 1 ? std::to_string(outer) + " blocks of " : "") +
             std::to_string(inner) + " rows a batch row";
    }
  };

  /// Sets the rows of `op`'s batched results from its operands'.
  std::string batchRows(Operation *op) {
    Rows common;
    for (Value v : op->getOperands()) {
      if (!isBatched(v.getType()))
        continue;
      Rows r = rows.lookup(v);
      if (!r.known())
        return "reads a batched value from outside the graph's body";
      if (common.known() && r != common)
        return "combines tensors with " + common.str() + " and " + r.str();
      common = r;
    }
    if (isa<func::ReturnOp>(op))
      return common.known() && common != Rows{1, 1}
                 ? "returns " + common.str() +
                       " (outputs must keep the batch as their leading "
                       "dimension)"
                 : "";
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      // Whole rows: as many blocks of the batch as before, each row's
      // elements after it in whole multiples of the result's.
      auto [outerIn, innerIn] =
          aroundBatch(cast<RankedTensorType>(reshape.getInput().getType()));
      auto [outerOut, innerOut] =
          aroundBatch(cast<RankedTensorType>(reshape.getType()));
      int64_t blocks = outerIn * common.outer;
      int64_t elements = common.inner * innerIn;
      if (outerOut == 0 || blocks % outerOut != 0 || innerOut == 0 ||
          elements % innerOut != 0)
        return std::string("reshapes across the dynamic dimension");
      common = {blocks / outerOut, elements / innerOut};
    }
    if (!common.known() && isa<BroadcastToOp>(op))
      common = {1, 1}; // From an unbatched operand: the batch itself.
    for (Value r : op->getResults())
      if (isBatched(r.getType()))
        rows[r] = common;
    return "";
  }

  DenseMap<Value, Rows> rows;

  /// The dynamic dimension's name (the importer's `tcc.dims`; one name for
  /// all inputs) and bounds (the module's `tcc.dim_bounds`).
  LogicalResult symbolOf(func::FuncOp main, std::string &name, int64_t &lo,
                         int64_t &hi) {
    for (unsigned i = 0; i < main.getNumArguments(); ++i) {
      if (!isBatched(main.getArgumentTypes()[i]))
        continue;
      auto dims = main.getArgAttrOfType<ArrayAttr>(i, "tcc.dims");
      auto dim =
          dims && !dims.empty() ? dyn_cast<StringAttr>(dims[0]) : StringAttr();
      if (!dim || dim.getValue().empty())
        continue;
      if (!name.empty() && name != dim.getValue())
        return main.emitError()
               << "inputs name their dynamic leading dimensions '" << name
               << "' and '" << dim.getValue()
               << "'; tcc compiles one dynamic dimension, shared by every "
                  "batched input";
      name = dim.getValue().str();
    }
    if (name.empty())
      name = "batch";
    auto bounds =
        main->getParentOfType<ModuleOp>()->getAttrOfType<DictionaryAttr>(
            "tcc.dim_bounds");
    auto padded =
        main->getParentOfType<ModuleOp>()->getAttrOfType<DictionaryAttr>(
            "tcc.padded");
    auto paddedName = padded ? padded.getAs<StringAttr>("name") : StringAttr();
    if (bounds)
      for (NamedAttribute entry : bounds) {
        if (paddedName && entry.getName() == paddedName)
          continue; // tcc-pad-dynamic-dims's.
        auto range = dyn_cast<DenseI64ArrayAttr>(entry.getValue());
        if (!range || range.size() != 2)
          return main.emitError() << "tcc.dim_bounds entry '" << entry.getName()
                                  << "' is not [min, max]";
        if (entry.getName() != name)
          return main.emitError()
                 << "--dim " << entry.getName().getValue()
                 << " names no dynamic dimension of the model (it has '" << name
                 << "')";
        lo = range[0], hi = range[1];
      }
    return success();
  }
};
} // namespace

bool mlir::tcc::batchRunsAsSlabs(func::FuncOp main) {
  // The pass's own checks, their diagnostics dropped.
  ScopedDiagnosticHandler quiet(main.getContext(),
                                [](Diagnostic &) { return success(); });
  TccSpecializeBatchPass check;
  return succeeded(check.checkInterface(main)) &&
         succeeded(check.checkOps(main)) &&
         succeeded(check.checkLeading(main, "output",
                                      main.getFunctionType().getResults()));
}

DictionaryAttr mlir::tcc::dynamicDimAttr(Builder &b, StringRef name, int64_t lo,
                                         int64_t hi, StringRef sizesKey,
                                         ArrayRef<int64_t> sizes,
                                         ArrayAttr inputs, ArrayAttr outputs) {
  return b.getDictionaryAttr(
      {b.getNamedAttr("name", b.getStringAttr(name)),
       b.getNamedAttr("min", b.getI64IntegerAttr(lo)),
       b.getNamedAttr("max", b.getI64IntegerAttr(hi)),
       b.getNamedAttr(sizesKey, b.getDenseI64ArrayAttr(sizes)),
       b.getNamedAttr("inputs", inputs), b.getNamedAttr("outputs", outputs)});
}
