//===- PlanMemory.cpp - the tcc-plan-memory pass --------------------------===//

#include "compiler/Transforms/ArenaPlanner.h"
#include "compiler/Transforms/Locations.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Tcc/IR/TccOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
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
  std::string writer; ///< describeWriter of its first user
};

/// Whether `user`'s memref results alias its operand `v`: a view-like op of
/// it, or any other op without memory effects that makes a memref of one
/// (memref.cast and memref.transpose are not ViewLikeOpInterface, yet their
/// results are the same memory).
bool makesAlias(Operation *user, Value v) {
  if (auto view = dyn_cast<ViewLikeOpInterface>(user))
    return view.getViewSource() == v;
  return isMemoryEffectFree(user) &&
         llvm::any_of(user->getResultTypes(),
                      [](Type t) { return isa<BaseMemRefType>(t); });
}

/// Collects every value that aliases `root` through views.
void collectAliases(Value root, SmallVectorImpl<Value> &aliases) {
  aliases.push_back(root);
  for (size_t i = 0; i < aliases.size(); ++i)
    for (Operation *user : aliases[i].getUsers())
      if (makesAlias(user, aliases[i]))
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()) &&
              !llvm::is_contained(aliases, result))
            aliases.push_back(result);
}

/// The position in `body` of the op (or its ancestor) that uses `v`.
int64_t positionOf(Operation *op, Block &body,
                   const DenseMap<Operation *, int64_t> &position) {
  Operation *top = body.findAncestorOpInBlock(*op);
  return top ? position.lookup(top) : -1;
}

/// What the memory report says made a buffer: the model nodes (their
/// names and op types, from the locations the importer gave) of the op
/// that first writes it, or that op's name; a kernel's scratch and a rows
/// loop's temporaries say so.
std::string describeWriter(Operation *op, Value buffer) {
  std::string what = describeNodes(op->getLoc());
  if (what.empty()) {
    what = op->getName().getStringRef().str();
    if (auto kernel = dyn_cast<UkernelOp>(op))
      what += " \"" + kernel.getName().str() + "\"";
  }
  if (auto kernel = dyn_cast<UkernelOp>(op)) {
    // Its results come first: the output, and a depthwise convolution's
    // plane means (has_means); then its scratch.
    auto means =
        dyn_cast_or_null<IntegerAttr>(kernel.getParams().get("has_means"));
    size_t results = means && means.getInt() ? 2 : 1;
    if (llvm::is_contained(llvm::drop_begin(kernel.getOutputs(), results),
                           buffer))
      return "scratch of " + what;
  }
  if (buffer.getDefiningOp() &&
      buffer.getDefiningOp()->hasAttr(kRowTemporaryAttrName))
    return "row temporary of " + what;
  return what;
}

/// Bytes of a statically shaped buffer.
int64_t bufferBytes(MemRefType type) {
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}

/// Replaces every use of `alloc` by `with` and erases it and its deallocs.
void replaceAlloc(memref::AllocOp alloc, Value with) {
  SmallVector<Operation *> deallocs;
  for (Operation *user : alloc->getUsers())
    if (isa<memref::DeallocOp>(user))
      deallocs.push_back(user);
  for (Operation *d : deallocs)
    d->erase();
  alloc.getResult().replaceAllUsesWith(with);
  alloc.erase();
}

/// The alloc `v` is, if it is one directly (not a view).
memref::AllocOp directAlloc(Value v) {
  return v.getDefiningOp<memref::AllocOp>();
}

struct TccPlanMemoryPass
    : mlir::tcc::impl::TccPlanMemoryBase<TccPlanMemoryPass> {
  using TccPlanMemoryBase::TccPlanMemoryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The graph: @main, or its copies at fixed batch sizes
    // (tcc-specialize-batch), largest first. They run one at a time, so
    // they share the workspace; the report shows the largest's plan.
    std::vector<func::FuncOp> graphs = tcc::graphFunctions(module);
    DictionaryAttr firstPlan;
    int64_t workspace = 0;
    for (func::FuncOp f : graphs) {
      if (failed(planFunction(f)))
        return signalPassFailure();
      if (!firstPlan)
        firstPlan = module->getAttrOfType<DictionaryAttr>("tcc.memory_plan");
      if (auto bytes =
              module->getAttrOfType<IntegerAttr>("tcc.workspace_bytes"))
        workspace = std::max(workspace, bytes.getInt());
    }
    if (graphs.size() > 1) {
      Builder b(module.getContext());
      module->setAttr("tcc.memory_plan", firstPlan);
      module->setAttr("tcc.workspace_bytes", b.getI64IntegerAttr(workspace));
    }
  }

  /// Lifetimes and positions of the buffers the plan places.
  struct Liveness {
    DenseMap<Operation *, int64_t> position, lastUse;
    std::vector<Operation *> ops; ///< By position.
    Block *body;
    /// Bytes of the buffers merged into others (they count as naive).
    int64_t mergedBytes = 0;
    int64_t at(Operation *op) const { return positionOf(op, *body, position); }
  };

  /// Whether `out` first holds data at `op`: no user of it but deallocs
  /// (and `op` itself) sits at or before `op`'s position. An earlier writer
  /// (a bias fill, say) would clobber the input merged into it.
  static bool startsAt(memref::AllocOp out, Operation *op,
                       const Liveness &live) {
    int64_t here = live.at(op);
    SmallVector<Value> aliases;
    collectAliases(out, aliases);
    for (Value v : aliases)
      for (Operation *user : v.getUsers()) {
        if (isa<memref::DeallocOp>(user) || makesAlias(user, v) ||
            live.body->findAncestorOpInBlock(*user) == op)
          continue;
        if (live.at(user) <= here)
          return false;
      }
    return true;
  }

  /// `out` becomes `src`: one buffer living as long as both.
  static void merge(memref::AllocOp out, memref::AllocOp src, Liveness &live) {
    live.lastUse[src] = live.lastUse.lookup(out);
    live.lastUse.erase(out);
    live.mergedBytes += bufferBytes(out.getType());
    replaceAlloc(out, src);
  }

  /// Whether `src` may take `out`'s place at `op`: a placed buffer of the
  /// same type that dies at `op`.
  static bool candidate(memref::AllocOp src, memref::AllocOp out, Operation *op,
                        const Liveness &live) {
    return src && out && src != out && src.getType() == out.getType() &&
           live.lastUse.count(src) && live.lastUse.count(out) &&
           live.lastUse.lookup(src) == live.at(op);
  }

  /// Lets an elementwise op write its output into an input buffer that dies
  /// at that op (same type, identity maps, nobody else reads it there).
  static void elementwiseInPlace(linalg::GenericOp op, Liveness &live) {
    if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0 ||
        op->getBlock() != live.body)
      return;
    OpOperand *init = op.getDpsInitOperand(0);
    memref::AllocOp out = directAlloc(init->get());
    if (!out || !op.getMatchingIndexingMap(init).isIdentity() ||
        op.payloadUsesValueFromOperand(init) || !startsAt(out, op, live))
      return;
    for (OpOperand *in : op.getDpsInputOperands()) {
      memref::AllocOp src = directAlloc(in->get());
      if (!candidate(src, out, op, live) ||
          !op.getMatchingIndexingMap(in).isIdentity())
        continue;
      // Every operand reading that buffer must read it element for element:
      // directly, with an identity map; a view of it (a reshape, a
      // transpose, a slice) reads other elements than the one written.
      SmallVector<Value> views;
      collectAliases(src, views);
      bool safe = llvm::all_of(op->getOpOperands(), [&](OpOperand &o) {
        if (o.get() == src.getResult())
          return op.getMatchingIndexingMap(&o).isIdentity();
        return !llvm::is_contained(views, o.get());
      });
      if (safe)
        return merge(out, src, live);
    }
  }

  /// The subviews through which `loop` uses `buffer`; false if it uses the
  /// buffer in any other way (a view made outside the loop among them).
  static bool subviewsIn(Value buffer, scf::ForOp loop,
                         SmallVectorImpl<memref::SubViewOp> &views) {
    SmallVector<Value> aliases;
    collectAliases(buffer, aliases);
    for (Value alias : llvm::drop_begin(aliases))
      if (!loop->isAncestor(alias.getDefiningOp()))
        for (Operation *user : alias.getUsers())
          if (loop->isProperAncestor(user))
            return false;
    for (Operation *user : buffer.getUsers()) {
      if (!loop->isProperAncestor(user))
        continue;
      auto view = dyn_cast<memref::SubViewOp>(user);
      if (!view)
        return false;
      views.push_back(view);
    }
    return true;
  }

  static bool sameWindow(memref::SubViewOp a, memref::SubViewOp b) {
    auto same = [](ArrayRef<OpFoldResult> x, ArrayRef<OpFoldResult> y) {
      return x.size() == y.size() &&
             llvm::all_of(llvm::zip_equal(x, y), [](auto pair) {
               return isEqualConstantIntOrValue(std::get<0>(pair),
                                                std::get<1>(pair));
             });
    };
    return a.getSource() != b.getSource() &&
           same(a.getMixedOffsets(), b.getMixedOffsets()) &&
           same(a.getMixedSizes(), b.getMixedSizes()) &&
           same(a.getMixedStrides(), b.getMixedStrides());
  }

  /// Lets a rows loop (softmax, a layer norm) write its result rows over
  /// the rows of an input that dies there: each iteration reads its input
  /// rows, computes the result rows in temporaries and stores them last, so
  /// a row read is never one already overwritten.
  static void rowsInPlace(scf::ForOp loop, Liveness &live) {
    if (!loop->hasAttr(kRowsLoopAttrName) || loop->getBlock() != live.body)
      return;
    Block &loopBody = *loop.getBody();
    SmallVector<memref::AllocOp> touched;
    loop.walk([&](memref::SubViewOp view) {
      if (auto alloc = directAlloc(view.getSource()))
        if (!llvm::is_contained(touched, alloc))
          touched.push_back(alloc);
    });
    for (memref::AllocOp out : touched) {
      // The result: written whole-window by copies into one subview.
      SmallVector<memref::SubViewOp> outViews;
      if (!live.lastUse.count(out) || !subviewsIn(out, loop, outViews) ||
          outViews.size() != 1 || !startsAt(out, loop, live))
        continue;
      memref::SubViewOp outView = outViews.front();
      Operation *store = nullptr;
      bool onlyStored = llvm::all_of(outView->getUsers(), [&](Operation *u) {
        auto copy = dyn_cast<memref::CopyOp>(u);
        if (!copy || copy.getTarget() != outView || store)
          return false;
        store = copy;
        return true;
      });
      if (!onlyStored || !store ||
          loopBody.findAncestorOpInBlock(*store) != store)
        continue;
      for (memref::AllocOp src : touched) {
        SmallVector<memref::SubViewOp> inViews;
        if (!candidate(src, out, loop, live) ||
            !subviewsIn(src, loop, inViews) ||
            !llvm::all_of(inViews, [&](memref::SubViewOp v) {
              return sameWindow(v, outView);
            }))
          continue;
        // Every read of the input rows comes before the store.
        bool before = true;
        for (memref::SubViewOp v : inViews) {
          SmallVector<Value> aliases;
          collectAliases(v, aliases);
          for (Value a : aliases)
            for (Operation *user : a.getUsers()) {
              Operation *top = loopBody.findAncestorOpInBlock(*user);
              before &= top && top != store && top->isBeforeInBlock(store);
            }
        }
        if (before) {
          merge(out, src, live);
          break;
        }
      }
    }
  }

  /// Lets a kernel that adds a residual (its last input) to its result
  /// write over the residual when that buffer dies there: called with its
  /// `accumulate_params`, the kernel accumulates into its output instead,
  /// which is the same sum.
  static void residualInPlace(UkernelOp op, Liveness &live) {
    DictionaryAttr accumulate = op.getAccumulateParamsAttr();
    if (!accumulate || op->getBlock() != live.body || op.getOutputs().empty() ||
        op.getInputs().empty())
      return;
    Value residual = op.getInputs().back();
    memref::AllocOp src = directAlloc(residual);
    memref::AllocOp out = directAlloc(op.getOutputs().front());
    if (!candidate(src, out, op, live) || !startsAt(out, op, live))
      return;
    // The kernel reads its other inputs while it writes C: none may be the
    // residual's buffer or a view of it.
    SmallVector<Value> views;
    collectAliases(src, views);
    for (Value in : op.getInputs().drop_back())
      if (llvm::is_contained(views, in))
        return;
    SmallVector<Value> outputs(op.getOutputs());
    OpBuilder ob(op);
    auto kernel = ob.create<UkernelOp>(
        op.getLoc(), TypeRange{}, op.getNameAttr(), op.getInputs().drop_back(),
        outputs, accumulate, DictionaryAttr());
    int64_t here = live.at(op);
    live.position.erase(op);
    live.position[kernel] = here;
    live.ops[here] = kernel;
    op.erase();
    merge(out, src, live);
  }

  /// Lets ops write into input buffers that die at them (see above).
  static void reuseInPlace(func::FuncOp func, Liveness &live) {
    SmallVector<Operation *> ops;
    for (Operation &op : func.front())
      ops.push_back(&op);
    for (Operation *op : ops) {
      if (auto generic = dyn_cast<linalg::GenericOp>(op))
        elementwiseInPlace(generic, live);
      else if (auto loop = dyn_cast<scf::ForOp>(op))
        rowsInPlace(loop, live);
      else if (auto kernel = dyn_cast<UkernelOp>(op))
        residualInPlace(kernel, live);
    }
  }

  /// A result the function computes into a buffer of its own and then
  /// copies into the caller's (an out-parameter no other op touches) is
  /// computed straight into the caller's; bufferization leaves such copies
  /// when a result comes out of a loop.
  static void forwardResults(func::FuncOp func) {
    Block &body = func.front();
    SmallVector<Operation *> copies;
    for (Operation &op : body) {
      Value from, to;
      if (auto copy = dyn_cast<linalg::CopyOp>(op)) {
        if (copy.getInputs().size() != 1 || copy.getOutputs().size() != 1)
          continue;
        from = copy.getInputs().front(), to = copy.getOutputs().front();
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        from = copy.getSource(), to = copy.getTarget();
      } else {
        continue;
      }
      auto arg = dyn_cast<BlockArgument>(to);
      memref::AllocOp alloc = directAlloc(from);
      if (!arg || arg.getOwner() != &body || !alloc ||
          alloc.getType() != arg.getType() || !arg.hasOneUse())
        continue;
      // The copy is the buffer's last use (deallocs aside).
      bool last = llvm::all_of(alloc->getUsers(), [&](Operation *user) {
        Operation *top = body.findAncestorOpInBlock(*user);
        return isa<memref::DeallocOp>(user) || top == &op ||
               (top && top->isBeforeInBlock(&op));
      });
      SmallVector<Value> aliases;
      collectAliases(alloc, aliases);
      bool escapes = llvm::any_of(aliases, [](Value v) {
        return llvm::any_of(v.getUsers(), [](Operation *user) {
          return isa<func::ReturnOp, func::CallOp>(user);
        });
      });
      if (last && !escapes)
        copies.push_back(&op);
    }
    for (Operation *copy : copies) {
      Value to = copy->getOperand(1);
      auto alloc = copy->getOperand(0).getDefiningOp<memref::AllocOp>();
      copy->erase();
      replaceAlloc(alloc, to);
    }
  }

  LogicalResult planFunction(func::FuncOp func) {
    forwardResults(func);
    Block &body = func.front();
    Liveness live;
    live.body = &body;
    DenseMap<Operation *, int64_t> &position = live.position;
    for (auto [i, op] : llvm::enumerate(body)) {
      position[&op] = i;
      live.ops.push_back(&op);
    }

    // Lifetimes: from the first op that reads or writes the buffer (through
    // any view; views and the alloc itself touch no memory, and
    // bufferization places allocs well before their writers) to the last.
    DenseMap<Operation *, int64_t> firstUse;
    DenseMap<Operation *, int64_t> &lastUse = live.lastUse;
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
          if (!isa<memref::DeallocOp>(user) && !makesAlias(user, v))
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
    reuseInPlace(func, live);

    std::vector<Buffer> buffers;
    std::vector<BufferRequest> requests;
    for (memref::AllocOp alloc : allocs) {
      if (!lastUse.count(alloc))
        continue; // Merged into another buffer in place.
      int64_t bytes = bufferBytes(alloc.getType());
      int64_t first = firstUse.lookup(alloc);
      buffers.push_back({alloc, bytes, first, lastUse.lookup(alloc),
                         first < int64_t(live.ops.size())
                             ? describeWriter(live.ops[first], alloc)
                             : std::string()});
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
           b.getNamedAttr("type", TypeAttr::get(buffer.alloc.getType())),
           b.getNamedAttr("writer", b.getStringAttr(buffer.writer))}));
    ModuleOp module = getOperation();
    module->setAttr(
        "tcc.memory_plan",
        b.getDictionaryAttr(
            {b.getNamedAttr("buffers", b.getArrayAttr(entries)),
             b.getNamedAttr("arena_bytes",
                            b.getI64IntegerAttr(plan.arenaBytes)),
             b.getNamedAttr(
                 "naive_bytes",
                 b.getI64IntegerAttr(plan.naiveBytes + live.mergedBytes)),
             b.getNamedAttr("peak_live_bytes",
                            b.getI64IntegerAttr(plan.peakLiveBytes))}));
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
      Value at =
          ob.create<arith::ConstantIndexOp>(buffer.alloc.getLoc(), offset);
      Value view = ob.create<memref::ViewOp>(buffer.alloc.getLoc(),
                                             buffer.alloc.getType(), arena, at,
                                             ValueRange{});
      if (buffer.alloc->hasAttr(kRowTemporaryAttrName))
        view.getDefiningOp()->setAttr(kRowTemporaryAttrName, ob.getUnitAttr());
      replaceAlloc(buffer.alloc, view);
    }
    return success();
  }
};
} // namespace
