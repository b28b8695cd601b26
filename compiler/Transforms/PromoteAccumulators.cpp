//===- PromoteAccumulators.cpp - reductions accumulate in registers -------===//
//
// tcc-promote-accumulators (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCPROMOTEACCUMULATORS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {

/// Where a memref's elements lie, as far as this pass can tell: a root
/// (a function argument, an allocation) and, for a view of the root at a
/// constant byte offset, the bytes [begin, end) of it.
struct Extent {
  Value root;
  bool known = false; // begin/end hold
  int64_t begin = 0, end = 0;
};

int64_t staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      !type.getElementType().isIntOrFloat())
    return -1;
  return type.getNumElements() *
         ((type.getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

Extent extentOf(Value m) {
  // Reshapes and casts keep the elements where they are.
  while (Operation *def = m.getDefiningOp()) {
    if (auto e = dyn_cast<memref::ExpandShapeOp>(def))
      m = e.getSrc();
    else if (auto c = dyn_cast<memref::CollapseShapeOp>(def))
      m = c.getSrc();
    else if (auto c = dyn_cast<memref::CastOp>(def))
      m = c.getSource();
    else
      break;
  }
  Extent e;
  e.root = m;
  if (auto view = m.getDefiningOp<memref::ViewOp>()) {
    std::optional<int64_t> offset = getConstantIntValue(view.getByteShift());
    int64_t bytes = staticBytes(view.getType());
    e.root = view.getSource();
    if (offset && bytes >= 0 && view.getSizes().empty()) {
      e.known = true;
      e.begin = *offset;
      e.end = *offset + bytes;
    }
  }
  return e;
}

/// Whether two roots are distinct memory: function arguments (the ABI's
/// inputs, outputs and arena never overlap an output or the arena) and
/// allocations are distinct from one another.
bool distinctRoots(Value a, Value b) {
  auto separate = [](Value v) {
    return isa<BlockArgument>(v) &&
               isa<func::FuncOp>(
                   cast<BlockArgument>(v).getOwner()->getParentOp()) ||
           v.getDefiningOp<memref::AllocOp>() ||
           v.getDefiningOp<memref::AllocaOp>();
  };
  return a != b && separate(a) && separate(b);
}

/// Whether memrefs `a` (written) and `b` never share an element.
bool disjoint(Value a, Value b) {
  Extent ea = extentOf(a), eb = extentOf(b);
  if (ea.root != eb.root)
    return distinctRoots(ea.root, eb.root);
  return ea.known && eb.known && (ea.end <= eb.begin || eb.end <= ea.begin);
}

/// The memref an op reads or writes, if it is a plain load or store.
Value accessed(Operation *op) {
  if (auto l = dyn_cast<memref::LoadOp>(op))
    return l.getMemRef();
  if (auto s = dyn_cast<memref::StoreOp>(op))
    return s.getMemRef();
  return {};
}

/// A load and a store of one element of `m`, at indices fixed in `loop`,
/// the loop's only accesses of anything that may share memory with `m`.
struct Candidate {
  memref::LoadOp load;
  memref::StoreOp store;
};

std::optional<Candidate> findCandidate(scf::ForOp loop) {
  Block *body = loop.getBody();
  for (Operation &op : *body) {
    auto load = dyn_cast<memref::LoadOp>(&op);
    if (!load)
      continue;
    Value m = load.getMemRef();
    if (!llvm::all_of(
            load.getIndices(),
            [&](Value i) { return loop.isDefinedOutsideOfLoop(i); }) ||
        !loop.isDefinedOutsideOfLoop(m))
      continue;
    memref::StoreOp store;
    bool ok = true;
    // Every other memory access in the loop: the one store back to the
    // same element, or memory that never overlaps m's.
    loop.getBody()->walk([&](Operation *other) {
      if (!ok || other == load.getOperation())
        return;
      if (auto s = dyn_cast<memref::StoreOp>(other);
          s && s.getMemRef() == m &&
          llvm::equal(s.getIndices(), load.getIndices()) &&
          s->getBlock() == body && !store) {
        store = s;
        return;
      }
      if (Value v = accessed(other)) {
        ok = disjoint(m, v);
        return;
      }
      if (isMemoryEffectFree(other) || isa<scf::ForOp, scf::YieldOp>(other))
        return;
      ok = false; // a call, an alloc or anything else touching memory
    });
    if (ok && store && load->isBeforeInBlock(store))
      return Candidate{load, store};
  }
  return std::nullopt;
}

/// Loads the element once before `loop`, carries it through the loop as
/// an iteration argument and stores it once after.
scf::ForOp promote(RewriterBase &rewriter, scf::ForOp loop, Candidate c) {
  rewriter.setInsertionPoint(loop);
  Value init = rewriter.create<memref::LoadOp>(
      c.load.getLoc(), c.load.getMemRef(), c.load.getIndices());
  auto yieldValue = [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
    return SmallVector<Value>{c.store.getValueToStore()};
  };
  FailureOr<LoopLikeOpInterface> grown = loop.replaceWithAdditionalYields(
      rewriter, ValueRange{init},
      /*replaceInitOperandUsesInLoop=*/false, yieldValue);
  auto next = cast<scf::ForOp>(grown->getOperation());
  Value acc = next.getRegionIterArgs().back();
  rewriter.replaceAllUsesWith(c.load.getResult(), acc);
  rewriter.setInsertionPointAfter(next);
  rewriter.create<memref::StoreOp>(c.store.getLoc(), next.getResults().back(),
                                   c.store.getMemRef(), c.store.getIndices());
  rewriter.eraseOp(c.store);
  rewriter.eraseOp(c.load);
  return next;
}

struct TccPromoteAccumulatorsPass
    : mlir::tcc::impl::TccPromoteAccumulatorsBase<TccPromoteAccumulatorsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Innermost loops first (post-order): an element promoted out of an
    // inner loop is a load and a store in its parent's body, which may
    // then leave that loop too.
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      // A loop that may run no iteration would now read and write an
      // element it never touched (another thread's, in a parallel loop).
      std::optional<int64_t> trips = constantTripCount(
          loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
      if (!trips || *trips < 1)
        continue;
      while (std::optional<Candidate> c = findCandidate(loop))
        loop = promote(rewriter, loop, *c);
    }
  }
};

} // namespace
