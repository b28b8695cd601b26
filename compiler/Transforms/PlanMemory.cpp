//===- PlanMemory.cpp - the tcc-plan-memory pass --------------------------===//

#include "compiler/Transforms/ArenaPlanner.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <limits>

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCPLANMEMORY
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {
/// A buffer the plan may place: an alloc in the function's body and its
/// lifetime in body-op positions.
struct Buffer {
  memref::AllocOp alloc;
  int64_t bytes, first, last;
};

/// Collects every value that aliases `root` through view-like ops.
void collectAliases(Value root, SmallVectorImpl<Value> &aliases) {
  aliases.push_back(root);
  for (size_t i = 0; i < aliases.size(); ++i)
    for (Operation *user : aliases[i].getUsers())
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == aliases[i])
          llvm::append_range(aliases, user->getResults());
}

/// The position in `body` of the op (or its ancestor) that uses `v`.
int64_t positionOf(Operation *op, Block &body,
                   const DenseMap<Operation *, int64_t> &position) {
  Operation *top = body.findAncestorOpInBlock(*op);
  return top ? position.lookup(top) : -1;
}

/// The alloc `v` is, if it is one directly (not a view).
memref::AllocOp directAlloc(Value v) { return v.getDefiningOp<memref::AllocOp>(); }

struct TccPlanMemoryPass
    : mlir::tcc::impl::TccPlanMemoryBase<TccPlanMemoryPass> {
  using TccPlanMemoryBase::TccPlanMemoryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (main && !main.isExternal() && failed(planFunction(main)))
      signalPassFailure();
  }

  /// Lets an elementwise op write its output into an input buffer that dies
  /// at that op (same type, identity maps, nobody else reads it there).
  void reuseInPlace(func::FuncOp func,
                    const DenseMap<Operation *, int64_t> &position,
                    DenseMap<Operation *, int64_t> &lastUse) {
    func.walk([&](linalg::GenericOp op) {
      if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0 ||
          op->getParentOp() != func)
        return;
      OpOperand *init = op.getDpsInitOperand(0);
      memref::AllocOp out = directAlloc(init->get());
      if (!out || !op.getMatchingIndexingMap(init).isIdentity() ||
          op.payloadUsesValueFromOperand(init))
        return;
      int64_t here = position.lookup(op);
      // The output buffer must start its life at this op: an earlier writer
      // (a bias fill, say) would clobber the input.
      for (Operation *user : out->getUsers())
        if (user != op && !isa<memref::DeallocOp>(user) &&
            positionOf(user, func.front(), position) <= here)
          return;
      for (OpOperand *in : op.getDpsInputOperands()) {
        memref::AllocOp src = directAlloc(in->get());
        if (!src || src == out || src.getType() != out.getType() ||
            !op.getMatchingIndexingMap(in).isIdentity() ||
            lastUse.lookup(src) != here)
          continue;
        // Every operand reading that buffer must read it element for element.
        bool safe = llvm::all_of(op->getOpOperands(), [&](OpOperand &o) {
          return directAlloc(o.get()) != src ||
                 op.getMatchingIndexingMap(&o).isIdentity();
        });
        if (!safe)
          continue;
        lastUse[src] = lastUse.lookup(out);
        lastUse.erase(out);
        SmallVector<Operation *> deallocs;
        for (Operation *user : out->getUsers())
          if (isa<memref::DeallocOp>(user))
            deallocs.push_back(user);
        for (Operation *d : deallocs)
          d->erase();
        out.getResult().replaceAllUsesWith(src.getResult());
        out.erase();
        return;
      }
    });
  }

  LogicalResult planFunction(func::FuncOp func) {
    Block &body = func.front();
    DenseMap<Operation *, int64_t> position;
    for (auto [i, op] : llvm::enumerate(body))
      position[&op] = i;

    // Lifetimes: from the first op that reads or writes the buffer (through
    // any view; views and the alloc itself touch no memory, and
    // bufferization places allocs well before their writers) to the last.
    DenseMap<Operation *, int64_t> firstUse, lastUse;
    SmallVector<memref::AllocOp> allocs;
    for (auto alloc : body.getOps<memref::AllocOp>()) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          !type.getElementType().isIntOrFloat())
        continue;
      SmallVector<Value> aliases;
      collectAliases(alloc, aliases);
      int64_t last = position.lookup(alloc);
      int64_t first = std::numeric_limits<int64_t>::max();
      bool escapes = false;
      for (Value v : aliases)
        for (Operation *user : v.getUsers()) {
          escapes |= isa<func::ReturnOp, func::CallOp>(user);
          int64_t at = positionOf(user, body, position);
          last = std::max(last, at);
          auto view = dyn_cast<ViewLikeOpInterface>(user);
          if (!isa<memref::DeallocOp>(user) &&
              !(view && view.getViewSource() == v))
            first = std::min(first, at);
        }
      if (escapes)
        continue;
      allocs.push_back(alloc);
      firstUse[alloc] = first == std::numeric_limits<int64_t>::max()
                            ? position.lookup(alloc)
                            : first;
      lastUse[alloc] = last;
    }
    reuseInPlace(func, position, lastUse);

    std::vector<Buffer> buffers;
    std::vector<BufferRequest> requests;
    for (memref::AllocOp alloc : allocs) {
      if (!lastUse.count(alloc))
        continue; // Merged into another buffer in place.
      MemRefType type = alloc.getType();
      int64_t bytes = type.getNumElements() *
                      ((type.getElementTypeBitWidth() + 7) / 8);
      buffers.push_back({alloc, bytes, firstUse.lookup(alloc),
                         lastUse.lookup(alloc)});
      requests.push_back({bytes, buffers.back().first, buffers.back().last});
    }
    ArenaPlan plan = planArena(requests, alignment);

    MLIRContext *ctx = func.getContext();
    Builder b(ctx);
    SmallVector<Attribute> entries;
    for (auto [buffer, offset] : llvm::zip_equal(buffers, plan.offsets))
      entries.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("bytes", b.getI64IntegerAttr(buffer.bytes)),
           b.getNamedAttr("first", b.getI64IntegerAttr(buffer.first)),
           b.getNamedAttr("last", b.getI64IntegerAttr(buffer.last)),
           b.getNamedAttr("offset", b.getI64IntegerAttr(offset)),
           b.getNamedAttr("type", TypeAttr::get(buffer.alloc.getType()))}));
    ModuleOp module = getOperation();
    module->setAttr("tcc.memory_plan",
                    b.getDictionaryAttr(
                        {b.getNamedAttr("buffers", b.getArrayAttr(entries)),
                         b.getNamedAttr("arena_bytes",
                                        b.getI64IntegerAttr(plan.arenaBytes)),
                         b.getNamedAttr("naive_bytes",
                                        b.getI64IntegerAttr(plan.naiveBytes)),
                         b.getNamedAttr("peak_live_bytes",
                                        b.getI64IntegerAttr(
                                            plan.peakLiveBytes))}));
    module->setAttr("tcc.workspace_bytes",
                    b.getI64IntegerAttr(plan.arenaBytes));
    if (buffers.empty())
      return success();

    // The arena is a new last argument; each buffer a view into it.
    auto arenaType =
        MemRefType::get({plan.arenaBytes}, IntegerType::get(ctx, 8));
    func.insertArgument(func.getNumArguments(), arenaType, {}, func.getLoc());
    Value arena = body.getArguments().back();
    for (auto [buffer, offset] : llvm::zip_equal(buffers, plan.offsets)) {
      OpBuilder ob(buffer.alloc);
      Value at = ob.create<arith::ConstantIndexOp>(buffer.alloc.getLoc(),
                                                   offset);
      Value view = ob.create<memref::ViewOp>(
          buffer.alloc.getLoc(), buffer.alloc.getType(), arena, at,
          ValueRange{});
      if (buffer.alloc->hasAttr(kRowTemporaryAttrName))
        view.getDefiningOp()->setAttr(kRowTemporaryAttrName, ob.getUnitAttr());
      SmallVector<Operation *> deallocs;
      for (Operation *user : buffer.alloc->getUsers())
        if (isa<memref::DeallocOp>(user))
          deallocs.push_back(user);
      for (Operation *d : deallocs)
        d->erase();
      buffer.alloc.getResult().replaceAllUsesWith(view);
      buffer.alloc.erase();
    }
    return success();
  }
};
} // namespace
