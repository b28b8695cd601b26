//===- MapToGpu.cpp - the graph's loops as GPU kernels --------------------===//
//
// After bufferization and the memory plan, a graph function is a sequence
// of linalg ops on views of the arena, the inputs, the outputs and the
// weights. Each becomes a parallel loop nest, and each parallel loop one
// gpu.launch with one thread per iteration; what else touches memory runs
// in a one-thread launch. gpu-kernel-outlining then makes the kernels.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCMAPTOGPU
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
constexpr int64_t kThreadsPerBlock = 256;

/// Whether `op` must run on the device: it reads or writes a buffer.
bool touchesMemory(Operation *op) {
  if (isa<func::CallOp, memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
          memref::ExtractAlignedPointerAsIndexOp>(op))
    return false;
  return !isMemoryEffectFree(op);
}

/// Whether a host loop holds parallel loops (and so stays on the host).
bool holdsParallelLoops(Operation *op) {
  if (op->getNumRegions() == 0)
    return false;
  bool found = false;
  op->walk([&](scf::ParallelOp) { found = true; });
  return found;
}

/// Whether a kernel can take `type` as a bare pointer: a static shape and
/// a static layout (the kernel adds the static offset itself).
bool passesAsPointer(Type type) {
  auto m = dyn_cast<MemRefType>(type);
  if (!m)
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  return m.hasStaticShape() &&
         succeeded(getStridesAndOffset(m, strides, offset)) &&
         !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic);
}

/// Views with a run-time offset (slices at a host loop's index) are made
/// inside the kernel from their static source and the index, so that every
/// buffer argument of a kernel is a bare pointer.
void sinkDynamicViews(gpu::LaunchOp launch) {
  Block &body = launch.getBody().front();
  bool changed = true;
  while (changed) {
    changed = false;
    llvm::SetVector<Value> captured;
    launch.getBody().walk([&](Operation *op) {
      for (Value v : op->getOperands())
        if (!launch.getBody().isAncestor(v.getParentRegion()))
          captured.insert(v);
    });
    for (Value v : captured) {
      Operation *def = v.getDefiningOp();
      if (passesAsPointer(v.getType()) || !def ||
          !isa<ViewLikeOpInterface>(def) || !isMemoryEffectFree(def))
        continue;
      OpBuilder b = OpBuilder::atBlockBegin(&body);
      Operation *copy = b.clone(*def);
      v.replaceUsesWithIf(copy->getResult(0), [&](OpOperand &use) {
        return launch.getBody().isAncestor(use.getOwner()->getParentRegion());
      });
      changed = true;
    }
  }
}

/// A launch of `blocks` x `threads`; `build` fills its body (before the
/// terminator) given the linear thread index.
void launch(OpBuilder &b, Location loc, Value blocks, Value threads,
            function_ref<void(OpBuilder &, Value)> build) {
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto l = b.create<gpu::LaunchOp>(loc, blocks, one, one, threads, one, one);
  OpBuilder inner = OpBuilder::atBlockBegin(&l.getBody().front());
  Value bid = l.getBlockIds().x, tid = l.getThreadIds().x;
  Value id = inner.create<arith::AddIOp>(
      loc, inner.create<arith::MulIOp>(loc, bid, l.getBlockSize().x), tid);
  build(inner, id);
  inner.create<gpu::TerminatorOp>(loc);
  sinkDynamicViews(l);
}

/// One thread per iteration of `loop`, all its dimensions as one linear
/// index (the last dimension fastest).
void launchParallel(scf::ParallelOp loop) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> trips;
  Value total = b.create<arith::ConstantIndexOp>(loc, 1);
  for (auto [lb, ub, step] : llvm::zip_equal(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value span = b.createOrFold<arith::SubIOp>(loc, ub, lb);
    Value trip = b.createOrFold<arith::CeilDivUIOp>(loc, span, step);
    trips.push_back(trip);
    total = b.createOrFold<arith::MulIOp>(loc, total, trip);
  }
  std::optional<int64_t> known = getConstantIntValue(total);
  int64_t perBlock = known ? std::clamp<int64_t>(*known, 1, kThreadsPerBlock)
                           : kThreadsPerBlock;
  Value threads = b.create<arith::ConstantIndexOp>(loc, perBlock);
  Value blocks = b.createOrFold<arith::CeilDivUIOp>(loc, total, threads);
  launch(b, loc, blocks, threads, [&](OpBuilder &ib, Value id) {
    Value inRange =
        ib.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, id, total);
    auto guard = ib.create<scf::IfOp>(loc, inRange, /*withElse=*/false);
    OpBuilder gb = guard.getThenBodyBuilder();
    IRMapping map;
    Value rest = id;
    SmallVector<Value> ivs(trips.size());
    for (int64_t d = trips.size() - 1; d >= 0; --d) {
      Value idx =
          d == 0 ? rest : gb.create<arith::RemUIOp>(loc, rest, trips[d]);
      if (d > 0)
        rest = gb.create<arith::DivUIOp>(loc, rest, trips[d]);
      ivs[d] = gb.create<arith::AddIOp>(
          loc, loop.getLowerBound()[d],
          gb.create<arith::MulIOp>(loc, idx, loop.getStep()[d]));
    }
    for (auto [iv, v] : llvm::zip_equal(loop.getInductionVars(), ivs))
      map.map(iv, v);
    for (Operation &op : loop.getBody()->without_terminator())
      gb.clone(op, map);
  });
  loop.erase();
}

/// The ops from `first` to `last` (one block) on one thread; values they
/// define are used only among them.
void launchSerial(Operation *first, Operation *last) {
  OpBuilder b(first);
  Location loc = first->getLoc();
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  SmallVector<Operation *> ops;
  for (Operation *op = first;; op = op->getNextNode()) {
    ops.push_back(op);
    if (op == last)
      break;
  }
  launch(b, loc, one, one, [&](OpBuilder &ib, Value) {
    IRMapping map;
    for (Operation *op : ops)
      ib.clone(*op, map);
  });
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

/// The last op of `op`'s block that uses a value `op` or an op up to it
/// defines (following uses transitively); `op` when nothing does.
Operation *lastUser(Operation *op) {
  Operation *last = op;
  for (Operation *at = op; at && at != last->getNextNode();
       at = at->getNextNode()) {
    for (Value v : at->getResults())
      for (Operation *user : v.getUsers()) {
        Operation *inBlock = op->getBlock()->findAncestorOpInBlock(*user);
        if (inBlock && last->isBeforeInBlock(inBlock))
          last = inBlock;
      }
  }
  return last;
}

struct TccMapToGpuPass : tcc::impl::TccMapToGpuBase<TccMapToGpuPass> {
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (f.isExternal())
      return;
    // Every copy and linalg op becomes loops: parallel ones where the op's
    // iterators allow.
    IRRewriter rewriter(&getContext());
    SmallVector<memref::CopyOp> copies;
    f.walk([&](memref::CopyOp c) { copies.push_back(c); });
    for (memref::CopyOp c : copies) {
      rewriter.setInsertionPoint(c);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(c, c.getSource(),
                                                  c.getTarget());
    }
    SmallVector<linalg::LinalgOp> ops;
    f.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::linalgOpToParallelLoops(rewriter, op))) {
        op.emitError("cannot lower this op to loops for the GPU");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
    WalkResult planned = f.walk([&](memref::AllocOp alloc) {
      alloc.emitError("a buffer outside the memory plan: CUDA artifacts "
                      "need every intermediate in the arena");
      return WalkResult::interrupt();
    });
    if (planned.wasInterrupted())
      return signalPassFailure();
    mapBlock(f.getBody().front());
    if (failedAny)
      signalPassFailure();
  }

  bool failedAny = false;

  void mapBlock(Block &block) {
    for (Operation *op = block.empty() ? nullptr : &block.front(); op;) {
      Operation *next = op->getNextNode();
      if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        launchParallel(loop);
      } else if (isa<gpu::LaunchOp>(op)) {
      } else if (holdsParallelLoops(op)) {
        for (Region &r : op->getRegions())
          for (Block &inner : r)
            mapBlock(inner);
      } else if (touchesMemory(op)) {
        // A read and the ops that use what it read (a 0-d copy's load and
        // store) run together on one thread.
        Operation *last = lastUser(op);
        bool hostOnly = op->getBlock()->getTerminator() == last;
        for (Operation *at = op; !hostOnly && at != last->getNextNode();
             at = at->getNextNode())
          hostOnly = isa<scf::ParallelOp, func::CallOp, memref::AllocOp,
                         memref::AllocaOp>(at) ||
                     holdsParallelLoops(at);
        if (hostOnly) {
          op->emitError("the host would need a value read from device "
                        "memory, which CUDA artifacts do not do yet");
          failedAny = true;
        } else {
          next = last->getNextNode();
          launchSerial(op, last);
        }
      }
      op = next;
    }
  }
};
} // namespace

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCGPULAUNCHESTOLOOPS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tcc

namespace {
struct TccGpuLaunchesToLoopsPass
    : tcc::impl::TccGpuLaunchesToLoopsBase<TccGpuLaunchesToLoopsPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp l) { launches.push_back(l); });
    for (gpu::LaunchOp l : launches) {
      auto one = [](Value v) {
        std::optional<int64_t> c = getConstantIntValue(v);
        return c && *c == 1;
      };
      if (!one(l.getGridSizeY()) || !one(l.getGridSizeZ()) ||
          !one(l.getBlockSizeY()) || !one(l.getBlockSizeZ()) ||
          l.getAsyncToken() || !l.getWorkgroupAttributions().empty() ||
          !l.getPrivateAttributions().empty()) {
        l.emitError("only one-dimensional launches without shared memory "
                    "can be emulated");
        return signalPassFailure();
      }
      bool synchronizes = false;
      l.walk([&](gpu::BarrierOp) { synchronizes = true; });
      if (synchronizes) {
        l.emitError("a kernel that synchronizes its threads cannot be "
                    "emulated");
        return signalPassFailure();
      }
      OpBuilder b(l);
      Location loc = l.getLoc();
      Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
      Value step = b.create<arith::ConstantIndexOp>(loc, 1);
      auto blocks = b.create<scf::ForOp>(loc, zero, l.getGridSizeX(), step);
      OpBuilder bb = OpBuilder::atBlockBegin(blocks.getBody());
      auto threads = bb.create<scf::ForOp>(loc, zero, l.getBlockSizeX(), step);
      OpBuilder tb = OpBuilder::atBlockBegin(threads.getBody());
      IRMapping map;
      gpu::KernelDim3 bid = l.getBlockIds(), tid = l.getThreadIds(),
                      grid = l.getGridSize(), size = l.getBlockSize();
      map.map(bid.x, blocks.getInductionVar());
      map.map(tid.x, threads.getInductionVar());
      for (Value v : {bid.y, bid.z, tid.y, tid.z})
        map.map(v, zero);
      map.map(grid.x, l.getGridSizeX());
      map.map(size.x, l.getBlockSizeX());
      for (Value v : {grid.y, grid.z, size.y, size.z})
        map.map(v, step);
      for (Operation &op : l.getBody().front().without_terminator())
        tb.clone(op, map);
      l.erase();
    }
  }
};
} // namespace
