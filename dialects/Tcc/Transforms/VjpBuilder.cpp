//===- VjpBuilder.cpp - building blocks of the VJP rules ------------------===//

#include "dialects/Tcc/Transforms/VjpBuilder.h"

#include "dialects/Tcc/IR/TccShapes.h"

using namespace mlir;
using namespace mlir::tcc;

/// A shape the rules computed from operands that verified; failing here is
/// a bug in a VJP rule.
static SmallVector<int64_t> expectShape(FailureOr<shapes::Shape> shape) {
  assert(succeeded(shape) && "VJP rule built an op with impossible shapes");
  return SmallVector<int64_t>(*shape);
}

SmallVector<int64_t> tcc::keptShape(ArrayRef<int64_t> shape,
                                    ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept(shape);
  for (int64_t a : axes)
    kept[a] = 1;
  return kept;
}

SmallVector<int64_t> tcc::invertPermutation(ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  return inverse;
}

SmallVector<int64_t> VjpBuilder::broadcastShape(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> c) {
  size_t rank = std::max(a.size(), c.size());
  SmallVector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - c.size() ? 1 : c[i - (rank - c.size())];
    out[i] = x == 1 ? y : x;
  }
  return out;
}

Value VjpBuilder::scalar(Type elementType, double value) {
  return splat(RankedTensorType::get({}, elementType), value);
}

Value VjpBuilder::splat(RankedTensorType type, double value) {
  Type e = type.getElementType();
  if (isa<FloatType>(e))
    return b.create<ConstantOp>(
        loc, DenseElementsAttr::get(type, b.getFloatAttr(e, value).getValue()));
  if (e.isInteger(1))
    return b.create<ConstantOp>(
        loc, DenseElementsAttr::get(type, ArrayRef<bool>{value != 0}));
  return b.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               type, APInt(e.getIntOrFloatBitWidth(), int64_t(value), true)));
}

Value VjpBuilder::constant(RankedTensorType type, ArrayRef<double> values) {
  Type e = type.getElementType();
  if (isa<FloatType>(e)) {
    SmallVector<APFloat> floats;
    for (double v : values)
      floats.push_back(b.getFloatAttr(e, v).getValue());
    return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, floats));
  }
  SmallVector<APInt> ints;
  for (double v : values)
    ints.push_back(APInt(e.getIntOrFloatBitWidth(), int64_t(v), true));
  return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, ints));
}

Value VjpBuilder::indexConstant(ArrayRef<int64_t> shape,
                                ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(shape, b.getI64Type());
  return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, values));
}

Value VjpBuilder::cmp(ComparePredicate predicate, Value lhs, Value rhs) {
  return b.create<CompareOp>(loc, broadcastType(lhs, rhs, b.getI1Type()),
                             predicate, lhs, rhs);
}

Value VjpBuilder::select(Value condition, Value onTrue, Value onFalse) {
  SmallVector<int64_t> shape = broadcastShape(
      shapeOf(condition), broadcastShape(shapeOf(onTrue), shapeOf(onFalse)));
  return b.create<SelectOp>(loc,
                            RankedTensorType::get(shape, elementOf(onTrue)),
                            condition, onTrue, onFalse);
}

Value VjpBuilder::cast(Value v, Type elementType) {
  if (elementOf(v) == elementType)
    return v;
  return b.create<CastOp>(loc, typeOf(v).clone(elementType), v);
}

Value VjpBuilder::reshape(Value v, ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape)
    return v;
  return b.create<ReshapeOp>(loc, typeOf(v).clone(shape), v);
}

Value VjpBuilder::transpose(Value v, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= int64_t(i) == p;
  if (identity)
    return v;
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(shapeOf(v)[p]);
  return b.create<TransposeOp>(loc, typeOf(v).clone(shape), v, perm);
}

Value VjpBuilder::transposeLast2(Value v) {
  int64_t rank = typeOf(v).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return transpose(v, perm);
}

Value VjpBuilder::broadcastTo(Value v, ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape)
    return v;
  return b.create<BroadcastToOp>(loc, typeOf(v).clone(shape), v);
}

Value VjpBuilder::slice(Value v, ArrayRef<int64_t> offsets,
                        ArrayRef<int64_t> steps, ArrayRef<int64_t> shape) {
  bool identity = shape == shapeOf(v);
  for (auto [o, s] : llvm::zip(offsets, steps))
    identity &= o == 0 && s == 1;
  if (identity)
    return v;
  return b.create<SliceOp>(loc, typeOf(v).clone(shape), v, offsets, steps);
}

Value VjpBuilder::sliceAxis(Value v, int64_t axis, int64_t begin,
                            int64_t end) {
  int64_t rank = typeOf(v).getRank();
  SmallVector<int64_t> offsets(rank, 0), steps(rank, 1);
  SmallVector<int64_t> shape(shapeOf(v));
  offsets[axis] = begin;
  shape[axis] = end - begin;
  return slice(v, offsets, steps, shape);
}

Value VjpBuilder::pad(Value v, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                      double value) {
  if (llvm::all_of(low, [](int64_t x) { return x == 0; }) &&
      llvm::all_of(high, [](int64_t x) { return x == 0; }))
    return v;
  SmallVector<int64_t> shape(shapeOf(v));
  for (size_t i = 0; i < shape.size(); ++i)
    shape[i] += low[i] + high[i];
  return b.create<PadOp>(loc, typeOf(v).clone(shape), v,
                         b.getDenseI64ArrayAttr(low), b.getDenseI64ArrayAttr(high),
                         PadModeAttr::get(b.getContext(), PadMode::constant),
                         b.getF64FloatAttr(value));
}

Value VjpBuilder::concat(ValueRange values, int64_t axis) {
  if (values.size() == 1)
    return values.front();
  SmallVector<int64_t> shape(shapeOf(values.front()));
  shape[axis] = 0;
  for (Value v : values)
    shape[axis] += shapeOf(v)[axis];
  return b.create<ConcatOp>(loc, typeOf(values.front()).clone(shape), values,
                            axis);
}

Value VjpBuilder::dilate(Value v, ArrayRef<int64_t> factors) {
  ArrayRef<int64_t> shape = shapeOf(v);
  if (llvm::all_of(llvm::zip(shape, factors), [](auto p) {
        return std::get<1>(p) == 1 || std::get<0>(p) <= 1;
      }))
    return v;
  // [.., n, ..] -> [.., n, 1, ..] -> pad to [.., n, f, ..] -> [.., n*f, ..],
  // then drop the f-1 zeros after the last element.
  SmallVector<int64_t> split, low, high, merged, kept;
  for (auto [n, f] : llvm::zip(shape, factors)) {
    split.append({n, 1});
    low.append({0, 0});
    high.append({0, n > 1 ? f - 1 : 0});
    merged.push_back(n > 1 ? n * f : n);
    kept.push_back(n > 1 ? (n - 1) * f + 1 : n);
  }
  Value r = pad(reshape(v, split), low, high);
  r = reshape(r, merged);
  SmallVector<int64_t> zeros(shape.size(), 0), ones(shape.size(), 1);
  return slice(r, zeros, ones, kept);
}

Value VjpBuilder::unslice(Value g, ArrayRef<int64_t> inputShape,
                          ArrayRef<int64_t> offsets, ArrayRef<int64_t> steps) {
  ArrayRef<int64_t> shape = shapeOf(g);
  int64_t rank = shape.size();
  if (shapes::numElements(shape) == 0)
    return splat(typeOf(g).clone(inputShape), 0.0);
  // Reverse the dimensions read backwards, so every step is positive.
  SmallVector<int64_t> revOffsets(rank, 0), revSteps(rank, 1), starts(rank),
      factors(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t n = shape[i], s = steps[i];
    starts[i] = s > 0 ? offsets[i] : offsets[i] + (n - 1) * s;
    factors[i] = s > 0 ? s : -s;
    if (s < 0 && n > 1) {
      revOffsets[i] = n - 1;
      revSteps[i] = -1;
    }
  }
  Value r = slice(g, revOffsets, revSteps, shape);
  r = dilate(r, factors);
  SmallVector<int64_t> low(starts), high(rank);
  for (int64_t i = 0; i < rank; ++i)
    high[i] = inputShape[i] - (starts[i] + shapeOf(r)[i]);
  return pad(r, low, high);
}

Value VjpBuilder::reduceSum(Value v, ArrayRef<int64_t> axes, bool keepdims) {
  if (axes.empty())
    return v;
  auto shape = expectShape(
      shapes::reduce(shapeOf(v), axes, keepdims, [&] { return emitError(loc); }));
  return b.create<ReduceSumOp>(loc, typeOf(v).clone(shape), v, axes, keepdims);
}

Value VjpBuilder::reduceMax(Value v, ArrayRef<int64_t> axes, bool keepdims) {
  if (axes.empty())
    return v;
  auto shape = expectShape(
      shapes::reduce(shapeOf(v), axes, keepdims, [&] { return emitError(loc); }));
  return b.create<ReduceMaxOp>(loc, typeOf(v).clone(shape), v, axes, keepdims);
}

Value VjpBuilder::sumToShape(Value g, ArrayRef<int64_t> target) {
  ArrayRef<int64_t> shape = shapeOf(g);
  if (shape == target)
    return g;
  int64_t lead = shape.size() - target.size();
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < int64_t(shape.size()); ++i)
    if (i < lead || (target[i - lead] == 1 && shape[i] != 1))
      axes.push_back(i);
  return reshape(reduceSum(g, axes, /*keepdims=*/true), target);
}

Value VjpBuilder::matmul(Value lhs, Value rhs) {
  auto shape = expectShape(shapes::matmul(shapeOf(lhs), shapeOf(rhs),
                                          [&] { return emitError(loc); }));
  return b.create<MatmulOp>(loc, typeOf(lhs).clone(shape), lhs, rhs);
}

Value VjpBuilder::conv(Value input, Value weight, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> padding, ArrayRef<int64_t> dilations,
                       int64_t groups) {
  auto shape = expectShape(shapes::conv(shapeOf(input), shapeOf(weight),
                                        strides, padding, dilations, groups,
                                        [&] { return emitError(loc); }));
  return b.create<ConvOp>(loc, typeOf(input).clone(shape), input, weight,
                          Value(), strides, padding, dilations, groups);
}
