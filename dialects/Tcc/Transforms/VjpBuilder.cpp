//===- VjpBuilder.cpp - building blocks of the VJP rules ------------------===//

#include "dialects/Tcc/Transforms/VjpBuilder.h"

#include "dialects/Tcc/IR/TccShapes.h"

#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::tcc;

Value VjpBuilder::expect(FailureOr<Value> v) {
  if (failed(v))
    llvm::report_fatal_error("a VJP rule built an op with impossible types "
                             "(see the error above)");
  return *v;
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

Value VjpBuilder::indexConstant(ArrayRef<int64_t> shape,
                                ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(shape, builder().getI64Type());
  return tb.constant(DenseElementsAttr::get(type, values));
}

Value VjpBuilder::transposeLast2(Value v) {
  int64_t rank = typeOf(v).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return transpose(v, perm);
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
