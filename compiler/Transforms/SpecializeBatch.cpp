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

/// Whether `t` is a tensor whose leading dimension is the dynamic one.
static bool isBatched(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  return tensor && tensor.getRank() > 0 && tensor.isDynamicDim(0);
}

static bool anyBatched(TypeRange types) {
  return llvm::any_of(types, isBatched);
}

static int64_t normalizedAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
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

/// Why `op` mixes the rows of the batch (or cannot be shown not to); empty
/// when each row of its batched results depends on the same row of its
/// batched operands and on whole unbatched operands only.
static std::string mixingReason(Operation *op) {
  bool inBatched = anyBatched(op->getOperandTypes());
  bool outBatched = anyBatched(op->getResultTypes());
  if (!inBatched && !outBatched)
    return "";
  if (inBatched && !outBatched)
    return "reduces over the dynamic dimension";
  if (!inBatched)
    return "makes the dynamic dimension from no batched operand";
  if (isa<BroadcastToOp>(op))
    return ""; // Each row stretched within itself.
  auto rank = cast<RankedTensorType>(op->getResult(0).getType()).getRank();
  auto axisAt = [&](int64_t axis) {
    return normalizedAxis(axis, rank) == 0
               ? std::string("works along the dynamic dimension")
               : std::string();
  };

  if (op->hasTrait<mlir::tcc::OpTrait::BroadcastingElementwise>()) {
    // Unbatched operands of the full rank must broadcast along it.
    for (Value v : op->getOperands()) {
      auto t = cast<RankedTensorType>(v.getType());
      if (!isBatched(t) && t.getRank() == rank && t.getDimSize(0) != 1)
        return "combines batched operands with one of fixed leading size " +
               std::to_string(t.getDimSize(0));
    }
    return "";
  }
  if (auto mm = dyn_cast<MatmulOp>(op)) {
    for (Value v : {mm.getLhs(), mm.getRhs()}) {
      auto t = cast<RankedTensorType>(v.getType());
      bool rowOperand = v == mm.getLhs() && t.getRank() >= 2;
      if (isBatched(t) && !(t.getRank() >= 3 || rowOperand))
        return "contracts over the dynamic dimension";
      // (A matrix operand's leading dimension is a row or contraction one;
      // only stacks of matrices align theirs with the batch.)
      if (!isBatched(t) && rank >= 3 && t.getRank() == rank &&
          t.getDimSize(0) != 1)
        return "multiplies batched matrices by a batch of fixed size";
    }
    return "";
  }
  if (isa<ConvOp, MaxPoolOp, AvgPoolOp, BatchNormOp>(op)) {
    for (Value v : op->getOperands().drop_front())
      if (isBatched(v.getType()))
        return "takes its parameters from the batch";
    return "";
  }
  if (auto nll = dyn_cast<NllLossOp>(op))
    return nll.getReduction() == LossReduction::none
               ? ""
               : "sums or averages over the batch";
  if (auto reshape = dyn_cast<ReshapeOp>(op))
    // Rows may merge or split whole (a multiple of the batch leads the
    // result, see batchMultiples); both ends keep a dynamic leading one.
    return isBatched(reshape.getInput().getType()) &&
                   isBatched(reshape.getType())
               ? ""
               : "reshapes across the dynamic dimension";
  if (auto transpose = dyn_cast<TransposeOp>(op))
    return transpose.getPerm()[0] == 0 ? "" : "moves the dynamic dimension";
  if (auto slice = dyn_cast<SliceOp>(op))
    return slice.getOffsets()[0] == 0 && slice.getSteps()[0] == 1 &&
                   isBatched(slice.getType())
               ? ""
               : "slices the dynamic dimension";
  if (auto pad = dyn_cast<PadOp>(op))
    return pad.getLow()[0] == 0 && pad.getHigh()[0] == 0
               ? ""
               : "pads the dynamic dimension";
  if (auto gather = dyn_cast<GatherOp>(op)) {
    bool data = isBatched(gather.getData().getType());
    bool indices = isBatched(gather.getIndices().getType());
    if (data && !indices && gather.getAxis() != 0)
      return "";
    // A lookup table indexed by a batch of indices: one row per index row.
    if (!data && indices && gather.getAxis() == 0)
      return "";
    return "gathers along the dynamic dimension";
  }
  if (auto scatter = dyn_cast<ScatterOp>(op))
    return scatter.getAxis() == 0 || !isBatched(scatter.getData().getType()) ||
                   !isBatched(scatter.getIndices().getType()) ||
                   !isBatched(scatter.getUpdates().getType())
               ? "scatters along the dynamic dimension"
               : "";
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    for (Value v : concat.getInputs())
      if (!isBatched(v.getType()))
        return "joins batched and unbatched tensors";
    return axisAt(concat.getAxis());
  }
  if (auto axis =
          attrOf<SplitOp, LayerNormOp, SoftmaxOp, LogSoftmaxOp, CumsumOp,
                 CumprodOp, TopKOp>(op, [](auto o) { return o.getAxis(); }))
    return axisAt(*axis);
  int64_t inputRank =
      cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
  if (auto axis =
          attrOf<ArgMaxOp, ArgMinOp>(op, [](auto o) { return o.getAxis(); }))
    return normalizedAxis(*axis, inputRank) == 0
               ? "works along the dynamic dimension"
               : "";
  if (auto axes = attrOf<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp,
                         ReduceProdOp>(op, [](auto o) { return o.getAxes(); }))
    return llvm::any_of(
               *axes,
               [&](int64_t a) { return normalizedAxis(a, inputRank) == 0; })
               ? "reduces over the dynamic dimension"
               : "";
  return "has no rule for a dynamic dimension in tcc yet";
}

static int64_t rowSize(RankedTensorType t) {
  return std::accumulate(t.getShape().begin() + 1, t.getShape().end(),
                         int64_t(1), std::multiplies<int64_t>());
}

std::vector<func::FuncOp> mlir::tcc::graphFunctions(ModuleOp module) {
  std::vector<func::FuncOp> graphs;
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isExternal() &&
        (f.getSymName() == "main" || f.getSymName().starts_with("main_chunk")))
      graphs.push_back(f);
  return graphs;
}

/// `t` with its dynamic leading dimension fixed to `rows`.
static Type withRows(Type t, int64_t rows) {
  if (!isBatched(t))
    return t;
  auto tensor = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[0] = rows;
  return tensor.clone(shape);
}

namespace {
struct TccSpecializeBatchPass
    : mlir::tcc::impl::TccSpecializeBatchBase<TccSpecializeBatchPass> {
  using TccSpecializeBatchBase::TccSpecializeBatchBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    FunctionType type = main.getFunctionType();
    auto isDynamic = [](Type t) {
      auto tensor = dyn_cast<RankedTensorType>(t);
      return tensor && !tensor.hasStaticShape();
    };
    bool dynamic = llvm::any_of(type.getInputs(), isDynamic) ||
                   llvm::any_of(type.getResults(), isDynamic);
    if (!dynamic)
      return; // A static graph: nothing to do.
    if (failed(checkInterface(main)) || failed(checkOps(main)))
      return signalPassFailure();

    std::string name;
    int64_t lo = 1, hi = std::numeric_limits<int32_t>::max();
    if (failed(symbolOf(main, name, lo, hi)))
      return signalPassFailure();
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
    module->setAttr(
        "tcc.batch",
        b.getDictionaryAttr(
            {b.getNamedAttr("name", b.getStringAttr(name)),
             b.getNamedAttr("min", b.getI64IntegerAttr(lo)),
             b.getNamedAttr("max", b.getI64IntegerAttr(hi)),
             b.getNamedAttr("chunks", b.getDenseI64ArrayAttr(sizes)),
             b.getNamedAttr("inputs", flags(type.getInputs())),
             b.getNamedAttr("outputs", flags(type.getResults()))}));
    for (int64_t rows : sizes) {
      IRMapping map;
      auto copy = cast<func::FuncOp>(main->clone(map));
      copy.setSymName(("main_chunk" + Twine(rows)).str());
      for (auto [original, multiple] : multiples) {
        Value v = map.lookup(original);
        v.setType(withRows(v.getType(), rows * multiple));
      }
      copy.setFunctionType(b.getFunctionType(
          llvm::map_to_vector(type.getInputs(),
                              [&](Type t) { return withRows(t, rows); }),
          llvm::map_to_vector(type.getResults(),
                              [&](Type t) { return withRows(t, rows); })));
      b.insert(copy);
    }
    main.erase();
  }

  /// Only leading dimensions are dynamic, anywhere in the graph.
  LogicalResult checkInterface(func::FuncOp main) {
    WalkResult result = main.walk([&](Operation *op) {
      for (Type t :
           llvm::concat<const Type>(SmallVector<Type>(op->getOperandTypes()),
                                    SmallVector<Type>(op->getResultTypes()))) {
        auto tensor = dyn_cast<RankedTensorType>(t);
        if (!tensor)
          continue;
        for (int64_t i = 1; i < tensor.getRank(); ++i)
          if (tensor.isDynamicDim(i)) {
            op->emitError() << "dimension " << i << " of " << tensor
                            << " is dynamic; tcc compiles one dynamic "
                               "leading (batch) dimension; fix the others "
                               "with --input-shape";
            return WalkResult::interrupt();
          }
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    for (BlockArgument arg : main.getArguments()) {
      auto tensor = dyn_cast<RankedTensorType>(arg.getType());
      if (tensor && tensor.getRank() > 0)
        for (int64_t i = 1; i < tensor.getRank(); ++i)
          if (tensor.isDynamicDim(i))
            return main.emitError()
                   << "dimension " << i << " of input " << arg.getArgNumber()
                   << " (" << tensor
                   << ") is dynamic; tcc compiles one dynamic leading "
                      "(batch) dimension; fix the others with --input-shape";
    }
    return success();
  }

  /// Proves op by op that rows stay apart, and finds each batched value's
  /// multiple of the batch: its leading dimension is `multiple` rows a
  /// batch row (a reshape of [B, S, D] to [B*S, D] makes S; back to
  /// [B, S, D], 1). Values of one op must agree on it; inputs and outputs
  /// have 1.
  LogicalResult checkOps(func::FuncOp main) {
    for (BlockArgument arg : main.getArguments())
      if (isBatched(arg.getType()))
        multiples[arg] = 1;
    WalkResult result = main.walk([&](Operation *op) {
      if (isa<func::FuncOp>(op))
        return WalkResult::advance();
      std::string reason = isa<func::ReturnOp>(op) ? "" : mixingReason(op);
      if (reason.empty())
        reason = batchMultiples(op);
      if (reason.empty())
        return WalkResult::advance();
      op->emitError() << "'" << op->getName().getStringRef() << "' " << reason
                      << ", so the batch cannot vary: fix it with "
                         "--input-shape";
      return WalkResult::interrupt();
    });
    return failure(result.wasInterrupted());
  }

  /// Sets the multiples of `op`'s batched results from its operands'.
  std::string batchMultiples(Operation *op) {
    int64_t multiple = 0;
    for (Value v : op->getOperands()) {
      if (!isBatched(v.getType()))
        continue;
      int64_t m = multiples.lookup(v);
      if (!m)
        return "reads a batched value from outside the graph's body";
      if (multiple && m != multiple)
        return "combines tensors with " + std::to_string(multiple) + " and " +
               std::to_string(m) + " rows a batch row";
      multiple = m;
    }
    if (isa<func::ReturnOp>(op))
      return multiple > 1 ? "returns " + std::to_string(multiple) +
                                " rows a batch row (outputs must keep the "
                                "batch as their leading dimension)"
                          : "";
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      auto in = cast<RankedTensorType>(reshape.getInput().getType());
      auto out = cast<RankedTensorType>(reshape.getType());
      int64_t elements = multiple * rowSize(in);
      if (rowSize(out) == 0 || elements % rowSize(out) != 0)
        return std::string("reshapes across the dynamic dimension");
      multiple = elements / rowSize(out);
    }
    for (Value r : op->getResults())
      if (isBatched(r.getType()))
        multiples[r] = multiple;
    return "";
  }

  DenseMap<Value, int64_t> multiples;

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
    if (bounds)
      for (NamedAttribute entry : bounds) {
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
