//===- Fuse.cpp - the tcc-fuse pass ---------------------------------------===//
//
// Greedy producer-into-consumer fusion on the tcc graph. Each group becomes
// a tcc.fused op; the lowering turns it into one kernel.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Epilogue.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include "dialects/Tcc/IR/TccOps.h"
#include "dialects/Tcc/IR/TccShapes.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCFUSE
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

static bool isElementwise(Operation *op) {
  return op->hasTrait<tcc::OpTrait::BroadcastingElementwise>() &&
         op->getNumResults() == 1;
}

/// The first reduced axis when `op` is a keepdims reduction over the
/// trailing axes [a, rank) of its input; -1 otherwise.
static int64_t trailingReductionStart(Operation *op) {
  auto check = [](auto reduce) -> int64_t {
    ArrayRef<int64_t> axes = reduce.getAxes();
    int64_t rank = reduce.getInput().getType().getRank();
    if (!reduce.getKeepdims() || axes.empty() || axes.back() != rank - 1)
      return -1;
    for (size_t i = 1; i < axes.size(); ++i)
      if (axes[i] != axes[i - 1] + 1)
        return -1;
    return axes.front();
  };
  return llvm::TypeSwitch<Operation *, int64_t>(op)
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp>(
          check)
      .Default([](Operation *) { return -1; });
}

/// The global average pooling of a depthwise convolution's output `out`
/// (after its epilogue): a keepdims mean over the plane axes, as a
/// squeeze-and-excitation block takes; null where there is none.
static Operation *matchPlaneMeans(Operation *op, Value out) {
  auto conv = dyn_cast<ConvOp>(op);
  if (!conv)
    return nullptr;
  auto weight = cast<RankedTensorType>(conv.getWeight().getType());
  int64_t groups = conv.getGroups();
  if (groups <= 1 || weight.getRank() != 4 || weight.getDimSize(1) != 1 ||
      weight.getDimSize(0) != groups || shapeOf(out).size() != 4 ||
      !getElementTypeOrSelf(out).isF32())
    return nullptr;
  for (Operation *user : out.getUsers())
    if (auto mean = dyn_cast<ReduceMeanOp>(user))
      if (mean.getKeepdims() && mean.getAxes() == ArrayRef<int64_t>({2, 3}))
        return mean;
  return nullptr;
}

namespace {
/// A fusion group and the iteration space its members share: the full shape
/// and, once an op with one value per row joins, where rows split.
struct Group {
  llvm::SetVector<Operation *> ops;
  SmallVector<int64_t> shape;
  int64_t split = -1;

  /// Whether `op` computes over this group's iteration space: the full
  /// shape, or one value per row for some split of the leading dimensions,
  /// the same for every op. Sets `newSplit`. Does not check uses.
  bool fits(Operation *op, int64_t &newSplit) const {
    newSplit = split;
    if (isElementwise(op)) {
      ArrayRef<int64_t> s = shapeOf(op->getResult(0));
      if (s == ArrayRef<int64_t>(shape))
        return true;
      int64_t a = shapes::rowSplit(shape, s);
      if (a < 0 || (split >= 0 && a != split))
        return false;
      newSplit = a;
      return true;
    }
    int64_t a = trailingReductionStart(op);
    if (a < 0 || shapeOf(op->getOperand(0)) != ArrayRef<int64_t>(shape))
      return false;
    // Reductions over [a, rank) give one value per row split at a, as
    // elementwise ops on that reduced shape do.
    SmallVector<int64_t> reduced(shape);
    for (size_t i = a; i < reduced.size(); ++i)
      reduced[i] = 1;
    int64_t rowA = shapes::rowSplit(shape, reduced);
    if (rowA < 0 || (split >= 0 && rowA != split))
      return false;
    newSplit = rowA;
    return true;
  }

  bool usesAllInside(Operation *op) const {
    return llvm::all_of(op->getUsers(),
                        [&](Operation *u) { return ops.contains(u); });
  }
};

struct TccFusePass : mlir::tcc::impl::TccFuseBase<TccFusePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    DenseSet<Operation *> grouped;
    SmallVector<Operation *> body;
    for (Operation &op : func.getBody().front())
      body.push_back(&op);
    // Contractions first, with the ops their kernels do on the way: the
    // epilogue, and for matmuls the transposes and reshapes around them.
    for (Operation *op : body) {
      if (grouped.contains(op) || !isa<ConvOp, MatmulOp>(op) ||
          !getElementTypeOrSelf(op->getResult(0)).isF32() ||
          (isa<ConvOp>(op) && shapeOf(op->getResult(0)).size() != 4))
        continue;
      Group group;
      group.ops.insert(op);
      Operation *root = op;
      // A matmul reads and writes through transposes and reshapes itself.
      if (auto mm = dyn_cast<MatmulOp>(op))
        for (Value operand : {mm.getLhs(), mm.getRhs()})
          for (Operation *view : matchMatrixView(operand).ops)
            if (!grouped.contains(view))
              group.ops.insert(view);
      SmallVector<Operation *> chain;
      Epilogue epilogue = matchEpilogue(op, chain);
      group.ops.insert(chain.begin(), chain.end());
      if (!chain.empty())
        root = chain.back();
      else if (isa<MatmulOp>(op))
        for (Operation *view : matchResultView(op->getResult(0)).ops)
          group.ops.insert(root = view);
      // A depthwise convolution takes the 1x1 convolution after it (one
      // kernel: the depthwise output goes to its scratch, not to memory
      // planned for a tensor), and a convolution with one group (an
      // expanding 1x1, a stem) takes such a pair after it (one kernel, a
      // band of rows at a time). The
      // lowering splits the group again where the kernels do not gain.
      Operation *dw = op;
      Epilogue dwEpilogue = epilogue;
      SmallVector<Operation *> dwChain = chain;
      if (Operation *next = matchDepthwiseAfterExpansion(op, epilogue, chain)) {
        SmallVector<Operation *> nextChain;
        Epilogue nextEpilogue = matchEpilogue(next, nextChain);
        if (matchPointwiseAfterDepthwise(next, nextEpilogue, nextChain)) {
          dw = next, dwEpilogue = nextEpilogue, dwChain = nextChain;
          group.ops.insert(dw);
          group.ops.insert(dwChain.begin(), dwChain.end());
        }
      }
      if (Operation *pw =
              matchPointwiseAfterDepthwise(dw, dwEpilogue, dwChain)) {
        SmallVector<Operation *> pwChain;
        matchEpilogue(pw, pwChain);
        group.ops.insert(pw);
        group.ops.insert(pwChain.begin(), pwChain.end());
        root = pwChain.empty() ? pw : pwChain.back();
      } else if (Operation *pool = matchMaxPoolAfter(op, epilogue, chain)) {
        // A small CNN's 2x2 pooling: pooled in registers where the kernel
        // can (the lowering splits the group again where not).
        group.ops.insert(pool);
        root = pool;
      }
      // A 1x1 convolution alone (no pair, block or pooling) reads its
      // input through a per-channel scale, shift and ReLU before it (a
      // BatchNorm and ReLU), which its kernel applies as it packs the
      // input: that tensor is never written.
      SmallVector<Operation *> prologue;
      if (group.ops.size() == 1 + chain.size() && matchPrologue(op, prologue) &&
          llvm::none_of(prologue,
                        [&](Operation *p) { return grouped.contains(p); }))
        group.ops.insert(prologue.begin(), prologue.end());
      // A depthwise convolution alone whose output a global average pooling
      // reads (a squeeze-and-excitation block) yields the plane means too:
      // its kernel sums each plane as it finishes it, in cache, where a
      // kernel of their own read the whole output again.
      Operation *mean = group.ops.size() == 1 + chain.size()
                            ? matchPlaneMeans(op, root->getResult(0))
                            : nullptr;
      SmallVector<Operation *> means;
      if (mean && !grouped.contains(mean)) {
        group.ops.insert(mean);
        means.push_back(mean);
      }
      if (group.ops.size() < 2)
        continue;
      grouped.insert(group.ops.begin(), group.ops.end());
      outlineFusedGroup(group.ops.getArrayRef(), root, "contraction", means);
    }
    for (Operation *root : llvm::reverse(body)) {
      if (grouped.contains(root) || !isElementwise(root))
        continue;
      Group group;
      group.shape.assign(shapeOf(root->getResult(0)).begin(),
                         shapeOf(root->getResult(0)).end());
      group.ops.insert(root);
      grow(group, grouped, root->getBlock());
      if (group.ops.size() < 2)
        continue;
      for (Operation *op : group.ops)
        grouped.insert(op);
      outlineFusedGroup(group.ops.getArrayRef(), root,
                        group.split >= 0 ? "rows" : "elementwise");
    }
  }

  /// Adds producers until nothing more fits; a producer rejected because the
  /// split was not known yet may fit once a reduction has joined.
  void grow(Group &group, const DenseSet<Operation *> &grouped, Block *block) {
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < group.ops.size(); ++i)
        for (Value operand : group.ops[i]->getOperands()) {
          Operation *p = operand.getDefiningOp();
          int64_t split;
          if (!p || p->getBlock() != block || group.ops.contains(p) ||
              grouped.contains(p) || !group.usesAllInside(p) ||
              !group.fits(p, split))
            continue;
          group.split = split;
          group.ops.insert(p);
          changed = true;
        }
    }
  }
};
} // namespace

Operation *mlir::tcc::outlineFusedGroup(ArrayRef<Operation *> ops,
                                        Operation *root, StringRef kind,
                                        ArrayRef<Operation *> moreRoots) {
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  SmallVector<Operation *> sorted(ops.begin(), ops.end());
  llvm::sort(sorted,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  llvm::SetVector<Value> inputs;
  for (Operation *op : sorted)
    for (Value v : op->getOperands())
      if (!members.contains(v.getDefiningOp()))
        inputs.insert(v);

  SmallVector<Value> results(root->getResults());
  for (Operation *r : moreRoots)
    results.append(r->result_begin(), r->result_end());
  OpBuilder b(root);
  auto fused = b.create<FusedOp>(
      root->getLoc(),
      llvm::map_to_vector(results, [](Value v) { return v.getType(); }), kind,
      inputs.getArrayRef());
  Block *block = b.createBlock(&fused.getBody());
  IRMapping map;
  for (Value v : inputs)
    map.map(v, block->addArgument(v.getType(), v.getLoc()));
  for (Operation *op : sorted)
    b.clone(*op, map);
  b.create<YieldOp>(root->getLoc(), llvm::map_to_vector(results, [&](Value v) {
                      return map.lookup(v);
                    }));
  for (auto [v, r] : llvm::zip(results, fused.getResults()))
    v.replaceAllUsesWith(r);
  for (Operation *op : llvm::reverse(sorted))
    op->erase();
  return fused;
}
