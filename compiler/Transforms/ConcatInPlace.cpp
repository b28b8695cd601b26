//===- ConcatInPlace.cpp - the tcc-concat-in-place pass
//--------------------===//
//
// The inputs of a concatenation computed straight into its slices: see the
// pass's description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Tcc/IR/TccOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCCONCATINPLACE
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
/// Whether the slice `insert` writes is one contiguous run of its
/// destination (row-major): every dimension before the first partial one
/// of size 1, every one after it whole.
bool contiguousSlice(tensor::InsertSliceOp insert) {
  ArrayRef<int64_t> dest = insert.getDestType().getShape();
  ArrayRef<int64_t> sizes = insert.getStaticSizes();
  int64_t d = 0, rank = static_cast<int64_t>(dest.size());
  while (d < rank && sizes[d] == dest[d])
    ++d;
  // Dimensions before the first partial one are whole; contiguous only if
  // they hold one element each, or if nothing is partial.
  if (d == rank)
    return true;
  for (int64_t i = 0; i < d; ++i)
    if (dest[i] != 1)
      return false;
  for (int64_t i = d + 1; i < rank; ++i)
    if (sizes[i] != dest[i])
      return false;
  return true;
}

/// Whether `insert` is a plain static piece: unit strides, static offsets
/// and sizes, no rank reduction.
bool plainPiece(tensor::InsertSliceOp insert) {
  return insert.hasUnitStride() && insert.getOffsets().empty() &&
         insert.getSizes().empty() &&
         insert.getSourceType().getRank() == insert.getDestType().getRank();
}

struct TccConcatInPlacePass
    : mlir::tcc::impl::TccConcatInPlaceBase<TccConcatInPlacePass> {
  void runOnOperation() override {
    SmallVector<tensor::InsertSliceOp> heads;
    getOperation().walk([&](tensor::InsertSliceOp op) {
      if (op.getDest().getDefiningOp<tensor::EmptyOp>() &&
          op.getDest().hasOneUse())
        heads.push_back(op);
    });
    for (tensor::InsertSliceOp head : heads)
      rewriteChain(head);
  }

  void rewriteChain(tensor::InsertSliceOp head) {
    auto empty = head.getDest().getDefiningOp<tensor::EmptyOp>();
    Block *block = head->getBlock();
    if (!empty.getDynamicSizes().empty() || empty->getBlock() != block)
      return;
    // The chain: each insert's result used only by the next as its
    // destination; the last one's result is the concatenation.
    SmallVector<tensor::InsertSliceOp> chain = {head};
    for (;;) {
      Value r = chain.back().getResult();
      if (!r.hasOneUse())
        break;
      auto next = dyn_cast<tensor::InsertSliceOp>(*r.getUsers().begin());
      if (!next || next.getDest() != r || next->getBlock() != block)
        break;
      chain.push_back(next);
    }
    if (chain.size() < 2 || !llvm::all_of(chain, plainPiece))
      return;
    Value result = chain.back().getResult();
    SmallVector<OpOperand *> outside = llvm::map_to_vector(
        result.getUses(), [](OpOperand &use) { return &use; });

    // The pieces in the order of their producers in the block (inputs from
    // outside it first).
    auto producer = [&](tensor::InsertSliceOp insert) -> Operation * {
      Operation *def = insert.getSource().getDefiningOp();
      return def ? block->findAncestorOpInBlock(*def) : nullptr;
    };
    SmallVector<tensor::InsertSliceOp> order(chain);
    llvm::stable_sort(order,
                      [&](tensor::InsertSliceOp a, tensor::InsertSliceOp b) {
                        Operation *pa = producer(a), *pb = producer(b);
                        if (!pa || !pb)
                          return !pa && pb;
                        return pa != pb && pa->isBeforeInBlock(pb);
                      });
    // Only pieces some producer can compute in place are worth moving: the
    // destination then lives from the first of those producers on, not
    // from the first of all (DenseNet's concatenations take every earlier
    // layer's features, each also read elsewhere: none is in place).
    Operation *first = nullptr;
    for (tensor::InsertSliceOp insert : order)
      if (inPlaceProducer(insert)) {
        first = producer(insert);
        break;
      }
    if (!first)
      return;
    if (first->isBeforeInBlock(empty))
      empty->moveBefore(first);
    Operation *cursor = empty;
    Value dest = empty.getResult();
    for (tensor::InsertSliceOp insert : order) {
      Operation *p = producer(insert);
      insert->moveAfter(p && cursor->isBeforeInBlock(p) ? p : cursor);
      insert.getDestMutable().assign(dest);
      if (Operation *prod = inPlaceProducer(insert))
        computeInPlace(insert, prod, dest);
      dest = insert.getResult();
      cursor = insert;
    }
    for (OpOperand *use : outside)
      use->set(dest);
  }

  /// The producer of `insert`'s source where it can compute it into the
  /// slice: a destination-style op in the same block writing it into a
  /// tensor.empty of its own, the source read by the insert alone (and
  /// for a micro-kernel, which addresses dense buffers, a contiguous slice:
  /// a strided one would be staged through a copy of its own).
  Operation *inPlaceProducer(tensor::InsertSliceOp insert) {
    auto source = dyn_cast<OpResult>(insert.getSource());
    if (!source || !source.hasOneUse())
      return nullptr;
    Operation *prod = source.getOwner();
    auto dps = dyn_cast<DestinationStyleOpInterface>(prod);
    if (!dps || prod->getBlock() != insert->getBlock())
      return nullptr;
    OpOperand *init = dps.getTiedOpOperand(source);
    auto initEmpty =
        init ? init->get().getDefiningOp<tensor::EmptyOp>() : tensor::EmptyOp();
    if (!initEmpty || !initEmpty->hasOneUse())
      return nullptr;
    if (isa<tcc::UkernelOp>(prod) && !contiguousSlice(insert))
      return nullptr;
    return prod;
  }

  /// Makes `prod` compute `insert`'s source into the slice of `dest` the
  /// insert writes, where `dest` comes before it.
  void computeInPlace(tensor::InsertSliceOp insert, Operation *prod,
                      Value dest) {
    if (Operation *d = dest.getDefiningOp();
        !d || d->getBlock() != prod->getBlock() || !d->isBeforeInBlock(prod))
      return;
    OpOperand *init = cast<DestinationStyleOpInterface>(prod).getTiedOpOperand(
        cast<OpResult>(insert.getSource()));
    Operation *initEmpty = init->get().getDefiningOp();
    OpBuilder b(prod);
    auto slice = b.create<tensor::ExtractSliceOp>(
        insert.getLoc(), insert.getSourceType(), dest, insert.getMixedOffsets(),
        insert.getMixedSizes(), insert.getMixedStrides());
    init->set(slice.getResult());
    initEmpty->erase();
  }
};
} // namespace
