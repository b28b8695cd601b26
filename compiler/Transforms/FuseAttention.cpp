//===- FuseAttention.cpp - the tcc-fuse-attention pass --------------------===//
//
// Merges attention's three kernels -- the scores' product, their softmax and
// the product with V -- into one "attention" group, which the lowering turns
// into one call of the attention micro-kernel (the scores never reach
// memory).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Attention.h"
#include "compiler/Transforms/Epilogue.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"

#include "dialects/Tcc/IR/TccConstants.h"
#include "dialects/Tcc/IR/TccOps.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCFUSEATTENTION
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

bool staticF32(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getElementType().isF32();
}

/// Whether `v`, a group's input, is a constant of one element.
bool scalarConstant(Value v) {
  std::optional<std::vector<float>> values = constantFloats(v);
  return values && values->size() == 1;
}

/// The matmul of a group that holds only it, the views around it (no
/// epilogue) and scalar-constant multiplies of its operands, or null.
MatmulOp onlyMatmul(FusedOp group) {
  if (group.getKind() != "contraction")
    return MatmulOp();
  Block &body = group.getBody().front();
  MatmulOp mm;
  for (Operation &op : body)
    if (auto m = dyn_cast<MatmulOp>(op)) {
      if (mm)
        return MatmulOp();
      mm = m;
    }
  if (!mm)
    return MatmulOp();
  size_t covered = 2;
  auto operand = [&](Value v) {
    Value scalar;
    v = matchScaledOperand(v, scalar);
    if (scalar) {
      auto arg = dyn_cast<BlockArgument>(scalar);
      if (!arg || !scalarConstant(group.getInputs()[arg.getArgNumber()]))
        return MatrixView();
      ++covered;
    }
    return matchMatrixView(v);
  };
  MatrixView lhs = operand(mm.getLhs());
  MatrixView rhs = operand(mm.getRhs());
  MatrixView out = matchResultView(mm.getResult());
  if (!lhs.base || !rhs.base)
    return MatmulOp();
  covered += lhs.ops.size() + rhs.ops.size() + out.ops.size();
  if (covered != body.getOperations().size() || !isa<BlockArgument>(lhs.base) ||
      !isa<BlockArgument>(rhs.base))
    return MatmulOp();
  return mm;
}

struct TccFuseAttentionPass
    : mlir::tcc::impl::TccFuseAttentionBase<TccFuseAttentionPass> {
  void runOnOperation() override {
    SmallVector<FusedOp> rows;
    getOperation().walk([&](FusedOp op) {
      if (op.getKind() == "rows")
        rows.push_back(op);
    });
    for (FusedOp softmax : rows)
      tryMerge(softmax);
  }

  /// softmax's scores made by a product alone (with its views) and used
  /// only by it; its result used only as the left operand of another
  /// product, unviewed: the three become one "attention" group.
  void tryMerge(FusedOp softmax) {
    Block &body = softmax.getBody().front();
    if (softmax.getNumResults() != 1 || !softmax.getResult(0).hasOneUse())
      return;
    auto yield = cast<YieldOp>(body.getTerminator());
    std::optional<SoftmaxChain> chain;
    BlockArgument scoresArg;
    for (BlockArgument arg : body.getArguments()) {
      chain = matchSoftmaxChain(arg);
      if (chain && chain->ops.size() + 1 == body.getOperations().size() &&
          yield.getOperand(0) == chain->result->getResult(0)) {
        scoresArg = arg;
        break;
      }
      chain.reset();
    }
    if (!chain)
      return;
    Value scores = softmax.getInputs()[scoresArg.getArgNumber()];
    bool outlined = false;
    if (auto plain = scores.getDefiningOp<MatmulOp>();
        plain && scores.hasOneUse()) {
      scores = outlineProduct(plain);
      outlined = true;
    }
    auto first = scores.getDefiningOp<FusedOp>();
    auto second = dyn_cast<FusedOp>(*softmax.getResult(0).getUsers().begin());
    if (!first || !second || !scores.hasOneUse() ||
        first->getBlock() != softmax->getBlock() ||
        second->getBlock() != softmax->getBlock())
      return;
    // A product outlined above goes back where it was unless it merges.
    bool merged = false;
    auto restore = llvm::make_scope_exit([&] {
      if (outlined && !merged)
        inlineGroup(first);
    });
    MatmulOp qk = onlyMatmul(first), pv = onlyMatmul(second);
    if (!qk || !pv || !staticF32(qk.getResult()) ||
        !staticF32(pv.getResult()) ||
        first.getBody().front().getTerminator()->getOperand(0) !=
            qk.getResult())
      return;
    // P is the second product's left operand as it is.
    auto pArg = dyn_cast<BlockArgument>(pv.getLhs());
    if (!pArg ||
        second.getInputs()[pArg.getArgNumber()] != softmax.getResult(0))
      return;
    for (Operation *op : {qk.getOperation(), pv.getOperation()})
      for (Value operand : op->getOperands())
        if (!staticF32(operand))
          return;
    // Constants the kernel takes as numbers; a mask it reads as it lies.
    auto outside = [&](Value v) {
      return softmax.getInputs()[cast<BlockArgument>(v).getArgNumber()];
    };
    if ((chain->scale && !scalarConstant(outside(chain->scale))) ||
        (chain->fill && !scalarConstant(outside(chain->fill))))
      return;
    if (chain->mask) {
      auto maskType = dyn_cast<RankedTensorType>(chain->mask.getType());
      int64_t ld, stride;
      if (!isa<BlockArgument>(chain->mask) || !maskType ||
          !maskType.hasStaticShape() ||
          !(chain->fill ? maskType.getElementType().isInteger(1)
                        : maskType.getElementType().isF32()) ||
          !attentionMaskStrides(
              maskType.getShape(),
              cast<RankedTensorType>(scoresArg.getType()).getShape(), ld,
              stride))
        return;
    }
    merged = true;
    merge(first, softmax, scoresArg, second, pArg);
  }

  /// Puts a group's ops back in its place.
  static void inlineGroup(FusedOp group) {
    OpBuilder b(group);
    Block &body = group.getBody().front();
    IRMapping map;
    for (BlockArgument arg : body.getArguments())
      map.map(arg, group.getInputs()[arg.getArgNumber()]);
    for (Operation &op : body.without_terminator())
      b.clone(op, map);
    for (auto [result, v] :
         llvm::zip(group.getResults(), body.getTerminator()->getOperands()))
      result.replaceAllUsesWith(map.lookup(v));
    group->erase();
  }

  /// A product left out of any group (its operands scaled by constants,
  /// which tcc-fuse does not take) as a "contraction" group of its own with
  /// those multiplies and the views before them; returns its result.
  Value outlineProduct(MatmulOp mm) {
    llvm::SetVector<Operation *> ops;
    for (Value v : {mm.getLhs(), mm.getRhs()}) {
      Value scalar;
      Value x = matchScaledOperand(v, scalar);
      if (scalar)
        ops.insert(v.getDefiningOp());
      for (Operation *view : matchMatrixView(x).ops)
        ops.insert(view);
    }
    ops.insert(mm);
    return outlineFusedGroup(ops.getArrayRef(), mm, "contraction")
        ->getResult(0);
  }

  /// One group in place of the three, its body theirs in order.
  void merge(FusedOp first, FusedOp softmax, BlockArgument scoresArg,
             FusedOp second, BlockArgument pArg) {
    llvm::SetVector<Value> inputs;
    inputs.insert(first.getInputs().begin(), first.getInputs().end());
    for (auto [i, v] : llvm::enumerate(softmax.getInputs()))
      if (i != scoresArg.getArgNumber())
        inputs.insert(v);
    for (auto [i, v] : llvm::enumerate(second.getInputs()))
      if (i != pArg.getArgNumber())
        inputs.insert(v);
    OpBuilder b(second);
    auto fused = b.create<FusedOp>(second.getLoc(), second.getResultTypes(),
                                   "attention", inputs.getArrayRef());
    Block *block = b.createBlock(&fused.getBody());
    DenseMap<Value, Value> args;
    for (Value v : inputs)
      args[v] = block->addArgument(v.getType(), v.getLoc());
    IRMapping map;
    auto cloneBody = [&](FusedOp group, int64_t skip, Value skipped) {
      Block &body = group.getBody().front();
      for (BlockArgument arg : body.getArguments())
        map.map(arg, static_cast<int64_t>(arg.getArgNumber()) == skip
                         ? skipped
                         : args.lookup(group.getInputs()[arg.getArgNumber()]));
      for (Operation &op : body.without_terminator())
        b.clone(op, map);
      return map.lookup(body.getTerminator()->getOperand(0));
    };
    Value scores = cloneBody(first, -1, Value());
    Value probs = cloneBody(softmax, scoresArg.getArgNumber(), scores);
    Value out = cloneBody(second, pArg.getArgNumber(), probs);
    b.create<YieldOp>(second.getLoc(), ValueRange{out});
    second->replaceAllUsesWith(fused->getResults());
    second->erase();
    softmax->erase();
    first->erase();
  }
};
} // namespace
