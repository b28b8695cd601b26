//===- Schedule.cpp - the tcc-schedule pass -------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCSCHEDULE
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
/// Whether `v` is live from the function's start anyway (an argument or a
/// constant) or has a use other than `op` at or after `at`.
bool liveUntil(Value v, Operation *op, Operation *at) {
  if (isa<BlockArgument>(v))
    return true;
  if (Operation *def = v.getDefiningOp();
      def && def->hasTrait<OpTrait::ConstantLike>())
    return true;
  Block *block = at->getBlock();
  return llvm::any_of(v.getUsers(), [&](Operation *user) {
    Operation *top = block->findAncestorOpInBlock(*user);
    return top && top != op && (top == at || at->isBeforeInBlock(top));
  });
}

bool movable(Operation *op) {
  return op->getNumResults() > 0 && !op->hasTrait<OpTrait::ConstantLike>() &&
         !op->hasTrait<OpTrait::IsTerminator>() && isMemoryEffectFree(op);
}

/// The ops that move with `op` to `at`: `op`, then (before it) each
/// operand's producer that only `op` uses, recursively. Empty when an
/// operand would live longer: it neither stays live until `at` anyway nor
/// moves along.
bool chain(Operation *op, Operation *at, SmallVectorImpl<Operation *> &ops,
           int depth = 0) {
  ops.push_back(op);
  for (Value operand : op->getOperands()) {
    if (liveUntil(operand, op, at))
      continue;
    Operation *def = operand.getDefiningOp();
    if (!def || depth > 16 || def->getBlock() != op->getBlock() ||
        !movable(def) ||
        llvm::any_of(def->getUsers(), [&](Operation *u) { return u != op; }) ||
        !chain(def, at, ops, depth + 1))
      return false;
  }
  return true;
}

/// Moves `op` (and the chain feeding only it) down to just before its first
/// user when that shortens its results' lives without lengthening any
/// other value's.
void sink(Operation *op) {
  if (!movable(op))
    return;
  Block *block = op->getBlock();
  Operation *first = nullptr;
  for (Value result : op->getResults())
    for (Operation *user : result.getUsers()) {
      Operation *top = block->findAncestorOpInBlock(*user);
      if (!top)
        return;
      if (!first || top->isBeforeInBlock(first))
        first = top;
    }
  if (!first || first == op->getNextNode())
    return;
  SmallVector<Operation *> ops;
  if (!chain(op, first, ops))
    return;
  // In their original order, just before `first`.
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *moved : ops)
    moved->moveBefore(first);
}

struct TccSchedulePass : mlir::tcc::impl::TccScheduleBase<TccSchedulePass> {
  void runOnOperation() override {
    for (Block &block : getOperation().getBody()) {
      SmallVector<Operation *> ops = llvm::map_to_vector(
          block.getOperations(), [](Operation &op) { return &op; });
      for (Operation *op : llvm::reverse(ops))
        sink(op);
    }
  }
};
} // namespace
