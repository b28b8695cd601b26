//===- ConcatInPlace.cpp - the tcc-concat-in-place pass ------------------===//
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

/// A concatenation as lowered: inserts into a tensor.empty, each result
/// used only by the next insert as its destination.
struct Chain {
  tensor::EmptyOp empty;
  SmallVector<tensor::InsertSliceOp> inserts;
  // Op handles are values; their accessors are not const.
  RankedTensorType type() const { return tensor::EmptyOp(empty).getType(); }
  Value result() const {
    return tensor::InsertSliceOp(inserts.back()).getResult();
  }
};

/// The chain starting at `head`, if it is one this pass handles: static,
/// in one block, at least two plain pieces.
std::optional<Chain> chainAt(tensor::InsertSliceOp head) {
  auto empty = head.getDest().getDefiningOp<tensor::EmptyOp>();
  Block *block = head->getBlock();
  if (!empty || !head.getDest().hasOneUse() ||
      !empty.getDynamicSizes().empty() || empty->getBlock() != block)
    return std::nullopt;
  Chain c{empty, {head}};
  for (;;) {
    Value r = c.inserts.back().getResult();
    if (!r.hasOneUse())
      break;
    auto next = dyn_cast<tensor::InsertSliceOp>(*r.getUsers().begin());
    if (!next || next.getDest() != r || next->getBlock() != block)
      break;
    c.inserts.push_back(next);
  }
  if (c.inserts.size() < 2 || !llvm::all_of(c.inserts, plainPiece))
    return std::nullopt;
  return c;
}

/// Whether `small` is a leading slice of `big` along one axis holding the
/// same pieces at the same places (a dense block: each layer concatenates
/// the block's input and every earlier layer's features, the next layer the
/// same and its own): then `small` can be read out of `big`'s buffer.
bool isPrefixOf(const Chain &small, const Chain &big) {
  RankedTensorType s = small.type(), b = big.type();
  if (s.getElementType() != b.getElementType() || s.getRank() != b.getRank() ||
      small.empty->getBlock() != big.empty->getBlock())
    return false;
  int axis = -1;
  for (int64_t d = 0; d < s.getRank(); ++d) {
    if (s.getDimSize(d) == b.getDimSize(d))
      continue;
    if (axis >= 0 || s.getDimSize(d) > b.getDimSize(d))
      return false;
    axis = static_cast<int>(d);
  }
  if (axis < 0)
    return false;
  return llvm::all_of(small.inserts, [&](tensor::InsertSliceOp p) {
    return llvm::any_of(big.inserts, [&](tensor::InsertSliceOp q) {
      return p.getSource() == q.getSource() &&
             p.getStaticOffsets() == q.getStaticOffsets() &&
             p.getStaticSizes() == q.getStaticSizes();
    });
  });
}

struct TccConcatInPlacePass
    : mlir::tcc::impl::TccConcatInPlaceBase<TccConcatInPlacePass> {
  void runOnOperation() override {
    SmallVector<Chain> chains;
    getOperation().walk([&](tensor::InsertSliceOp op) {
      if (std::optional<Chain> c = chainAt(op))
        chains.push_back(*c);
    });
    // Largest first, each takes the chains that are leading slices of it.
    llvm::stable_sort(chains, [](const Chain &a, const Chain &b) {
      return a.type().getNumElements() > b.type().getNumElements();
    });
    SmallVector<bool> taken(chains.size(), false);
    for (size_t i = 0; i < chains.size(); ++i) {
      if (taken[i])
        continue;
      SmallVector<Chain> prefixes;
      for (size_t j = i + 1; j < chains.size(); ++j)
        if (!taken[j] && isPrefixOf(chains[j], chains[i])) {
          taken[j] = true;
          prefixes.push_back(chains[j]);
        }
      rewriteChain(chains[i], prefixes);
    }
  }

  void rewriteChain(Chain &chain, ArrayRef<Chain> prefixes) {
    Block *block = chain.empty->getBlock();
    tensor::EmptyOp empty = chain.empty;
    SmallVector<OpOperand *> outside = llvm::map_to_vector(
        chain.result().getUses(), [](OpOperand &use) { return &use; });

    // The pieces in the order of their producers in the block (inputs from
    // outside it first).
    auto producer = [&](tensor::InsertSliceOp insert) -> Operation * {
      Operation *def = insert.getSource().getDefiningOp();
      return def ? block->findAncestorOpInBlock(*def) : nullptr;
    };
    SmallVector<tensor::InsertSliceOp> order(chain.inserts);
    llvm::stable_sort(order,
                      [&](tensor::InsertSliceOp a, tensor::InsertSliceOp b) {
                        Operation *pa = producer(a), *pb = producer(b);
                        if (!pa || !pb)
                          return !pa && pb;
                        return pa != pb && pa->isBeforeInBlock(pb);
                      });
    // Where the concatenation starts: before the first of its producers
    // that computes in place (only those are worth a longer life of the
    // destination: in a dense block each layer's features are read by
    // several concatenations, so none is in place until the leading slices
    // are read out of the last one), or before the first producer of all
    // when there are leading slices to read out of it.
    Operation *first = nullptr;
    for (tensor::InsertSliceOp insert : order)
      if (prefixes.empty() ? inPlaceProducer(insert) != nullptr
                           : producer(insert) != nullptr) {
        first = producer(insert);
        break;
      }
    if (!first && prefixes.empty())
      return;
    if (!first)
      empty->moveBefore(&block->front());
    else if (first->isBeforeInBlock(empty))
      empty->moveBefore(first);
    // Each insert right after its producer (or the insert before it); each
    // leading slice read out right after its last piece is in.
    Operation *cursor = empty;
    Value dest = empty.getResult();
    constexpr unsigned kReadOut = ~0u;
    SmallVector<unsigned> piecesLeft = llvm::map_to_vector(
        prefixes, [](const Chain &p) { return unsigned(p.inserts.size()); });
    for (tensor::InsertSliceOp insert : order) {
      Operation *p = producer(insert);
      insert->moveAfter(p && cursor->isBeforeInBlock(p) ? p : cursor);
      insert.getDestMutable().assign(dest);
      dest = insert.getResult();
      cursor = insert;
      for (auto [k, prefix] : llvm::enumerate(prefixes)) {
        if (piecesLeft[k] == kReadOut) // its inserts are gone
          continue;
        for (tensor::InsertSliceOp q : prefix.inserts)
          if (q.getSource() == insert.getSource() &&
              q.getStaticOffsets() == insert.getStaticOffsets())
            --piecesLeft[k];
        if (piecesLeft[k] != 0)
          continue;
        piecesLeft[k] = kReadOut;
        OpBuilder b(insert->getContext());
        b.setInsertionPointAfter(cursor);
        RankedTensorType t = prefix.type();
        SmallVector<OpFoldResult> zeros(t.getRank(), b.getIndexAttr(0)),
            ones(t.getRank(), b.getIndexAttr(1)), sizes;
        for (int64_t d : t.getShape())
          sizes.push_back(b.getIndexAttr(d));
        auto lead = b.create<tensor::ExtractSliceOp>(insert.getLoc(), t, dest,
                                                     zeros, sizes, ones);
        cursor = lead;
        prefix.result().replaceAllUsesWith(lead.getResult());
        for (tensor::InsertSliceOp q : llvm::reverse(prefix.inserts))
          q->erase();
        prefix.empty->erase();
      }
    }
    for (OpOperand *use : outside)
      use->set(dest);
    // Now that the leading slices no longer read the pieces, the producers
    // that can compute into their slices.
    for (tensor::InsertSliceOp insert : order)
      if (Operation *prod = inPlaceProducer(insert))
        computeInPlace(insert, prod, insert.getDest());
  }

  /// The producer of `insert`'s source where it can compute it into the
  /// slice: a destination-style op in the same block writing it into a
  /// tensor.empty of its own, the source read by the insert alone (and for
  /// a micro-kernel, which addresses dense buffers, a contiguous slice: a
  /// strided one would be staged through a copy of its own).
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
