//===- VjpShapes.cpp - VJP rules of shape, indexing and padding ops -------===//
//
// Data movement is linear, so each rule is the transpose of the movement:
// a reshape back, the inverse permutation, a sum over broadcast dimensions,
// pieces cut out of a concatenation, a scatter-add for a gather, and so on.
//
//===----------------------------------------------------------------------===//

#include "dialects/Tcc/Transforms/VjpRules.h"

#include "dialects/Tcc/IR/TccShapes.h"

using namespace mlir;
using namespace mlir::tcc;

using P = ComparePredicate;

namespace {

bool isFloat(Value v) { return isa<FloatType>(VjpBuilder::elementOf(v)); }

LogicalResult vjpReshape(ReshapeOp op, VjpBuilder &b, ValueRange ct,
                         MutableArrayRef<Value> out) {
  if (isFloat(op.getInput()))
    out[0] = b.reshape(ct[0], VjpBuilder::shapeOf(op.getInput()));
  return success();
}

LogicalResult vjpTranspose(TransposeOp op, VjpBuilder &b, ValueRange ct,
                           MutableArrayRef<Value> out) {
  if (isFloat(op.getInput()))
    out[0] = b.transpose(ct[0], invertPermutation(op.getPerm()));
  return success();
}

LogicalResult vjpBroadcastTo(BroadcastToOp op, VjpBuilder &b, ValueRange ct,
                             MutableArrayRef<Value> out) {
  if (isFloat(op.getInput()))
    out[0] = b.sumToShape(ct[0], VjpBuilder::shapeOf(op.getInput()));
  return success();
}

LogicalResult vjpConcat(ConcatOp op, VjpBuilder &b, ValueRange ct,
                        MutableArrayRef<Value> out) {
  if (!isFloat(op.getResult()))
    return success();
  int64_t axis = op.getAxis(), begin = 0;
  for (auto [i, v] : llvm::enumerate(op.getInputs())) {
    int64_t size = VjpBuilder::shapeOf(v)[axis];
    out[i] = b.sliceAxis(ct[0], axis, begin, begin + size);
    begin += size;
  }
  return success();
}

LogicalResult vjpSlice(SliceOp op, VjpBuilder &b, ValueRange ct,
                       MutableArrayRef<Value> out) {
  if (isFloat(op.getInput()))
    out[0] = b.unslice(ct[0], VjpBuilder::shapeOf(op.getInput()),
                       op.getOffsets(), op.getSteps());
  return success();
}

/// The pieces' cotangents join again; a piece that does not reach the loss
/// contributes zeros.
LogicalResult vjpSplit(SplitOp op, VjpBuilder &b, ValueRange ct,
                       MutableArrayRef<Value> out) {
  if (!isFloat(op.getInput()))
    return success();
  SmallVector<Value> pieces;
  for (auto [r, g] : llvm::zip(op.getResults(), ct))
    pieces.push_back(g ? g : b.zerosLike(r));
  out[0] = b.concat(pieces, op.getAxis());
  return success();
}

/// Gather's transpose adds each cotangent into the row it was read from:
/// with data as [pre, D, post] and the indices flattened to I, a scatter-add
/// along the middle axis of [pre, I, post] updates.
LogicalResult vjpGather(GatherOp op, VjpBuilder &b, ValueRange ct,
                        MutableArrayRef<Value> out) {
  Value data = op.getData(), indices = op.getIndices();
  if (!isFloat(data))
    return success();
  ArrayRef<int64_t> ds = VjpBuilder::shapeOf(data);
  int64_t axis = op.getAxis(), pre = 1, post = 1;
  for (int64_t i = 0; i < axis; ++i)
    pre *= ds[i];
  for (int64_t i = axis + 1; i < int64_t(ds.size()); ++i)
    post *= ds[i];
  int64_t count = shapes::numElements(VjpBuilder::shapeOf(indices));
  Value updates = b.reshape(ct[0], {pre, count, post});
  Value where =
      b.broadcastTo(b.reshape(indices, {1, count, 1}), {pre, count, post});
  Value zeros =
      b.splat(VjpBuilder::typeOf(data).clone({pre, ds[axis], post}), 0.0);
  Value grad = b.builder().create<ScatterOp>(b.location(), zeros, where,
                                             updates, 1, ScatterReduction::add);
  out[0] = b.reshape(grad, ds);
  return success();
}

/// ONNX GatherElements, which tcc has no op for: the flat position of every
/// element of `indices` in `source` (the coordinate along `axis` replaced by
/// the index), then a gather from the flattened source.
Value gatherElements(VjpBuilder &b, Value source, Value indices, int64_t axis) {
  ArrayRef<int64_t> ss = VjpBuilder::shapeOf(source),
                    is = VjpBuilder::shapeOf(indices);
  int64_t rank = ss.size();
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * ss[i + 1];
  int64_t count = shapes::numElements(is);
  SmallVector<int64_t> base(count, 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t rest = e;
    for (int64_t i = rank - 1; i >= 0; --i) {
      if (i != axis)
        base[e] += (rest % is[i]) * strides[i];
      rest /= is[i];
    }
  }
  Value idx = b.cast(indices, b.builder().getI64Type());
  Value size = b.scalar(b.builder().getI64Type(), double(ss[axis]));
  idx = b.select(b.cmp(P::lt, idx, b.scalar(b.builder().getI64Type(), 0)),
                 b.add(idx, size), idx);
  Value flat = b.add(
      b.mul(idx, b.scalar(b.builder().getI64Type(), double(strides[axis]))),
      b.indexConstant(is, base));
  Value table = b.reshape(source, {shapes::numElements(ss)});
  return b.gather(table, flat, 0);
}

/// `none`: the overwritten data gets no gradient and each update the
/// cotangent where it landed; `add`: both get it. The multiplicative and
/// extremal reductions have no rule.
LogicalResult vjpScatter(ScatterOp op, VjpBuilder &b, ValueRange ct,
                         MutableArrayRef<Value> out) {
  if (!isFloat(op.getData()))
    return success();
  Value g = ct[0];
  switch (op.getReduction()) {
  case ScatterReduction::none:
    out[0] = b.builder().create<ScatterOp>(
        b.location(), g, op.getIndices(), b.zerosLike(op.getUpdates()),
        op.getAxis(), ScatterReduction::none);
    break;
  case ScatterReduction::add:
    out[0] = g;
    break;
  default:
    return op.emitOpError() << "has no VJP rule for reduction = "
                            << stringifyScatterReduction(op.getReduction())
                            << " (only none and add are differentiable)";
  }
  out[2] = gatherElements(b, g, op.getIndices(), op.getAxis());
  return success();
}

/// Constant padding: the cotangent's interior. The border modes copy input
/// elements into the border, so along each padded dimension the cotangent
/// is contracted with the 0/1 matrix that maps padded to source positions.
LogicalResult vjpPad(PadOp op, VjpBuilder &b, ValueRange ct,
                     MutableArrayRef<Value> out) {
  Value x = op.getInput(), g = ct[0];
  if (!isFloat(x))
    return success();
  ArrayRef<int64_t> xs = VjpBuilder::shapeOf(x);
  ArrayRef<int64_t> low = op.getLow(), high = op.getHigh();
  int64_t rank = xs.size();
  if (op.getMode() == PadMode::constant) {
    SmallVector<int64_t> ones(rank, 1);
    out[0] = b.slice(g, low, ones, xs);
    return success();
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (low[d] == 0 && high[d] == 0)
      continue;
    int64_t size = xs[d], padded = size + low[d] + high[d];
    SmallVector<double> matrix(padded * size, 0.0);
    for (int64_t p = 0; p < padded; ++p) {
      int64_t j = p - low[d], src = 0;
      switch (op.getMode()) {
      case PadMode::edge:
        src = std::min(std::max<int64_t>(j, 0), size - 1);
        break;
      case PadMode::wrap:
        src = ((j % size) + size) % size;
        break;
      case PadMode::reflect: {
        int64_t period = 2 * (size - 1);
        int64_t k = period ? ((j % period) + period) % period : 0;
        src = k >= size ? period - k : k;
        break;
      }
      case PadMode::constant:
        break;
      }
      matrix[p * size + src] = 1.0;
    }
    // Move dimension d last, contract it, move it back.
    SmallVector<int64_t> perm;
    for (int64_t i = 0; i < rank; ++i)
      if (i != d)
        perm.push_back(i);
    perm.push_back(d);
    Value moved = b.transpose(g, perm);
    SmallVector<int64_t> movedShape(VjpBuilder::shapeOf(moved));
    Value m = b.constant(
        RankedTensorType::get({padded, size}, VjpBuilder::elementOf(x)),
        matrix);
    Value r = b.matmul(
        b.reshape(moved, {shapes::numElements(movedShape) / padded, padded}),
        m);
    movedShape.back() = size;
    g = b.transpose(b.reshape(r, movedShape), invertPermutation(perm));
  }
  out[0] = g;
  return success();
}

} // namespace

void mlir::tcc::attachShapeVjps(MLIRContext &ctx) {
  attachVjp<ReshapeOp, vjpReshape>(ctx);
  attachVjp<TransposeOp, vjpTranspose>(ctx);
  attachVjp<BroadcastToOp, vjpBroadcastTo>(ctx);
  attachVjp<ConcatOp, vjpConcat>(ctx);
  attachVjp<SliceOp, vjpSlice>(ctx);
  attachVjp<SplitOp, vjpSplit>(ctx);
  attachVjp<GatherOp, vjpGather>(ctx);
  attachVjp<ScatterOp, vjpScatter>(ctx);
  attachVjp<PadOp, vjpPad>(ctx);
}
