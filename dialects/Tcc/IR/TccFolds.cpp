//===- TccFolds.cpp - folders and canonicalization patterns ---------------===//
//
// Folding is limited to what is obviously right: identities (x + 0, x * 1,
// reshape to the same type, identity permutations), chains of shape ops,
// and arithmetic on small dense constants (shape computations). Big weights
// are left to the graph-level constant folding passes.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APSInt.h"

#include "dialects/Tcc/IR/TccConstants.h"
#include "dialects/Tcc/IR/TccOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tcc;

/// Constants with more elements than this are not folded by op folders.
static constexpr int64_t kMaxFoldElements = 4096;

static DenseElementsAttr smallDense(Attribute attr) {
  // A small f32 blob (an imported batch norm's statistics, folded into the
  // per-channel scale and shift it applies) as its values.
  if (auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(attr)) {
    auto type = cast<ShapedType>(resource.getType());
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!type.getElementType().isF32() || !type.hasStaticShape() ||
        type.getNumElements() > kMaxFoldElements || !blob ||
        blob->getData().size() != size_t(type.getNumElements()) * sizeof(float))
      return {};
    ArrayRef<float> values(
        reinterpret_cast<const float *>(blob->getData().data()),
        type.getNumElements());
    return DenseElementsAttr::get(type, values);
  }
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || dense.getNumElements() > kMaxFoldElements)
    return {};
  return dense;
}

static bool isSplatOf(Attribute attr, double value) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  Type et = dense.getElementType();
  if (isa<FloatType>(et))
    return dense.getSplatValue<APFloat>().isExactlyValue(value);
  if (et.isInteger(1))
    return false;
  if (isa<IntegerType>(et))
    return dense.getSplatValue<APInt>().getSExtValue() == (int64_t)value;
  return false;
}

/// Index into an operand of shape `shape` (broadcast to `result`) for the
/// flat result element `flat`.
static int64_t broadcastIndex(ArrayRef<int64_t> shape, ArrayRef<int64_t> result,
                              int64_t flat) {
  int64_t index = 0, stride = 1;
  size_t lead = result.size() - shape.size();
  for (int64_t i = result.size() - 1; i >= 0; --i) {
    int64_t coord = flat % result[i];
    flat /= result[i];
    if (i < (int64_t)lead)
      continue;
    int64_t d = shape[i - lead];
    if (d != 1)
      index += coord * stride;
    stride *= d;
  }
  return index;
}

using FloatFn = function_ref<std::optional<APFloat>(APFloat, APFloat)>;
using IntFn = function_ref<std::optional<APInt>(APInt, APInt, bool)>;

/// Folds a broadcasting binary op over two small dense constants.
static Attribute foldBinary(Attribute lhs, Attribute rhs, Type type,
                            FloatFn floatFn, IntFn intFn) {
  DenseElementsAttr a = smallDense(lhs), b = smallDense(rhs);
  auto resultType = cast<RankedTensorType>(type);
  if (!a || !b || !resultType.hasStaticShape() ||
      resultType.getNumElements() > kMaxFoldElements)
    return {};
  Type et = resultType.getElementType();
  ArrayRef<int64_t> shape = resultType.getShape();
  int64_t n = resultType.getNumElements();
  if (isa<FloatType>(et)) {
    auto av = a.getValues<APFloat>(), bv = b.getValues<APFloat>();
    SmallVector<APFloat> out;
    for (int64_t i = 0; i < n; ++i) {
      std::optional<APFloat> r =
          floatFn(av[broadcastIndex(a.getType().getShape(), shape, i)],
                  bv[broadcastIndex(b.getType().getShape(), shape, i)]);
      if (!r)
        return {};
      out.push_back(*r);
    }
    return DenseElementsAttr::get(resultType, out);
  }
  if (isa<IntegerType>(et)) {
    bool isUnsigned = et.isUnsignedInteger();
    auto av = a.getValues<APInt>(), bv = b.getValues<APInt>();
    SmallVector<APInt> out;
    for (int64_t i = 0; i < n; ++i) {
      std::optional<APInt> r = intFn(
          av[broadcastIndex(a.getType().getShape(), shape, i)],
          bv[broadcastIndex(b.getType().getShape(), shape, i)], isUnsigned);
      if (!r)
        return {};
      out.push_back(*r);
    }
    return DenseElementsAttr::get(resultType, out);
  }
  return {};
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

/// A product over an empty contraction (k = 0) is zeros.
OpFoldResult MatmulOp::fold(FoldAdaptor) {
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  auto type = cast<RankedTensorType>(getType());
  if (lhs.getRank() == 0 || lhs.getShape().back() != 0 ||
      !type.hasStaticShape())
    return {};
  Type et = type.getElementType();
  Attribute zero = isa<FloatType>(et) ? Attribute(FloatAttr::get(et, 0.0))
                                      : Attribute(IntegerAttr::get(et, 0));
  return DenseElementsAttr::get(type, zero);
}

/// `x op identity` folds to x when that does not change x's type.
static Value foldIdentity(Value x, Attribute other, double identity,
                          Type resultType) {
  if (x.getType() == resultType && isSplatOf(other, identity))
    return x;
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdentity(getLhs(), adaptor.getRhs(), 0, getType()))
    return v;
  if (Value v = foldIdentity(getRhs(), adaptor.getLhs(), 0, getType()))
    return v;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](APFloat a, APFloat b) -> std::optional<APFloat> { return a + b; },
      [](APInt a, APInt b, bool) -> std::optional<APInt> { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdentity(getLhs(), adaptor.getRhs(), 0, getType()))
    return v;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](APFloat a, APFloat b) -> std::optional<APFloat> { return a - b; },
      [](APInt a, APInt b, bool) -> std::optional<APInt> { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdentity(getLhs(), adaptor.getRhs(), 1, getType()))
    return v;
  if (Value v = foldIdentity(getRhs(), adaptor.getLhs(), 1, getType()))
    return v;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](APFloat a, APFloat b) -> std::optional<APFloat> { return a * b; },
      [](APInt a, APInt b, bool) -> std::optional<APInt> { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdentity(getLhs(), adaptor.getRhs(), 1, getType()))
    return v;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](APFloat a, APFloat b) -> std::optional<APFloat> { return a / b; },
      [](APInt a, APInt b, bool isUnsigned) -> std::optional<APInt> {
        if (b.isZero() ||
            (!isUnsigned && b.isAllOnes() && a.isMinSignedValue()))
          return std::nullopt; // Undefined: leave it to run time.
        return isUnsigned ? a.udiv(b) : a.sdiv(b);
      });
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](APFloat a, APFloat b) -> std::optional<APFloat> {
        return llvm::maximum(a, b);
      },
      [](APInt a, APInt b, bool isUnsigned) -> std::optional<APInt> {
        return isUnsigned ? llvm::APIntOps::umax(a, b)
                          : llvm::APIntOps::smax(a, b);
      });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](APFloat a, APFloat b) -> std::optional<APFloat> {
        return llvm::minimum(a, b);
      },
      [](APInt a, APInt b, bool isUnsigned) -> std::optional<APInt> {
        return isUnsigned ? llvm::APIntOps::umin(a, b)
                          : llvm::APIntOps::smin(a, b);
      });
}

OpFoldResult RemOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](APFloat a, APFloat b) -> std::optional<APFloat> {
        if (a.mod(b) != APFloat::opOK)
          return std::nullopt;
        return a;
      },
      [](APInt a, APInt b, bool isUnsigned) -> std::optional<APInt> {
        if (b.isZero() ||
            (!isUnsigned && b.isAllOnes() && a.isMinSignedValue()))
          return std::nullopt; // Undefined: leave it to run time.
        if (isUnsigned)
          return a.urem(b);
        // The sign follows the divisor, as Python's %.
        APInt r = a.srem(b);
        if (!r.isZero() && (r.isNegative() != b.isNegative()))
          r += b;
        return r;
      });
}

OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(), nullptr,
      [](APInt a, APInt b, bool) -> std::optional<APInt> { return a & b; });
}

OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(), nullptr,
      [](APInt a, APInt b, bool) -> std::optional<APInt> { return a | b; });
}

OpFoldResult XorOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(), nullptr,
      [](APInt a, APInt b, bool) -> std::optional<APInt> { return a ^ b; });
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr a = smallDense(adaptor.getInput());
  if (!a)
    return {};
  return a.mapValues(a.getElementType(), [](const APInt &v) { return ~v; });
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  DenseElementsAttr a = smallDense(adaptor.getInput());
  if (!a)
    return {};
  if (isa<FloatType>(a.getElementType()))
    return a.mapValues(a.getElementType(),
                       [](const APFloat &v) { return (-v).bitcastToAPInt(); });
  return a.mapValues(a.getElementType(), [](const APInt &v) { return -v; });
}

/// Applies `fn` (in double precision, rounded back to the element type) to
/// every element of a small float constant.
static Attribute foldUnaryFloat(Attribute input,
                                function_ref<double(double)> fn) {
  DenseElementsAttr a = smallDense(input);
  if (!a || !isa<FloatType>(a.getElementType()))
    return {};
  const llvm::fltSemantics &sem =
      cast<FloatType>(a.getElementType()).getFloatSemantics();
  return a.mapValues(a.getElementType(), [&](const APFloat &v) {
    APFloat r(fn(v.convertToDouble()));
    bool lost;
    r.convert(sem, APFloat::rmNearestTiesToEven, &lost);
    return r.bitcastToAPInt();
  });
}

OpFoldResult SqrtOp::fold(FoldAdaptor adaptor) {
  return foldUnaryFloat(adaptor.getInput(),
                        [](double x) { return std::sqrt(x); });
}
OpFoldResult RsqrtOp::fold(FoldAdaptor adaptor) {
  return foldUnaryFloat(adaptor.getInput(),
                        [](double x) { return 1.0 / std::sqrt(x); });
}
OpFoldResult ReciprocalOp::fold(FoldAdaptor adaptor) {
  return foldUnaryFloat(adaptor.getInput(), [](double x) { return 1.0 / x; });
}

/// The elements of a small dense constant, or empty when it is not one.
static SmallVector<Attribute> smallValues(Attribute attr) {
  DenseElementsAttr dense = smallDense(attr);
  return dense ? SmallVector<Attribute>(dense.getValues<Attribute>())
               : SmallVector<Attribute>();
}

/// Whether the result of a folder would be small enough to build.
static bool isSmallStatic(RankedTensorType type) {
  return type.hasStaticShape() && type.getNumElements() <= kMaxFoldElements;
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  auto cond = dyn_cast_or_null<DenseElementsAttr>(adaptor.getCondition());
  if (cond && cond.isSplat()) {
    Value chosen = cond.getSplatValue<bool>() ? getOnTrue() : getOnFalse();
    if (chosen.getType() == getType())
      return chosen;
  }
  // All three constant: pick element by element (Where in shape code).
  SmallVector<Attribute> c = smallValues(adaptor.getCondition()),
                         t = smallValues(adaptor.getOnTrue()),
                         f = smallValues(adaptor.getOnFalse());
  if (c.empty() || t.empty() || f.empty() || !isSmallStatic(getType()))
    return {};
  ArrayRef<int64_t> shape = getType().getShape();
  SmallVector<Attribute> out;
  for (int64_t i = 0, n = getType().getNumElements(); i < n; ++i) {
    auto pick = [&](Value v, ArrayRef<Attribute> values) {
      return values[broadcastIndex(cast<ShapedType>(v.getType()).getShape(),
                                   shape, i)];
    };
    bool on =
        cast<IntegerAttr>(pick(getCondition(), c)).getValue().getBoolValue();
    out.push_back(on ? pick(getOnTrue(), t) : pick(getOnFalse(), f));
  }
  return DenseElementsAttr::get(getType(), out);
}

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  SmallVector<Attribute> a = smallValues(adaptor.getLhs()),
                         b = smallValues(adaptor.getRhs());
  if (a.empty() || b.empty() || !isSmallStatic(getType()))
    return {};
  ArrayRef<int64_t> shape = getType().getShape();
  ArrayRef<int64_t> lhsShape = getLhs().getType().getShape();
  ArrayRef<int64_t> rhsShape = getRhs().getType().getShape();
  Type et = getLhs().getType().getElementType();
  bool isUnsigned = et.isUnsignedInteger() || et.isInteger(1);
  SmallVector<bool> out;
  for (int64_t i = 0, n = getType().getNumElements(); i < n; ++i) {
    Attribute x = a[broadcastIndex(lhsShape, shape, i)];
    Attribute y = b[broadcastIndex(rhsShape, shape, i)];
    // -1, 0, 1 for less, equal, greater; 2 when a NaN makes them unordered.
    int order;
    if (auto fx = dyn_cast<FloatAttr>(x)) {
      APFloat::cmpResult r =
          fx.getValue().compare(cast<FloatAttr>(y).getValue());
      order = r == APFloat::cmpLessThan      ? -1
              : r == APFloat::cmpEqual       ? 0
              : r == APFloat::cmpGreaterThan ? 1
                                             : 2;
    } else {
      APInt ix = cast<IntegerAttr>(x).getValue();
      APInt iy = cast<IntegerAttr>(y).getValue();
      order = ix == iy ? 0 : (isUnsigned ? ix.ult(iy) : ix.slt(iy)) ? -1 : 1;
    }
    bool value = false;
    switch (getPredicate()) {
    case ComparePredicate::eq:
      value = order == 0;
      break;
    case ComparePredicate::ne:
      value = order != 0;
      break;
    case ComparePredicate::lt:
      value = order == -1;
      break;
    case ComparePredicate::le:
      value = order == -1 || order == 0;
      break;
    case ComparePredicate::gt:
      value = order == 1;
      break;
    case ComparePredicate::ge:
      value = order == 1 || order == 0;
      break;
    }
    out.push_back(value);
  }
  return DenseElementsAttr::get(getType(), out);
}

/// One element converted as tcc.cast does; nullopt when float to integer
/// has no defined result (NaN or out of range), which is left to run time.
static std::optional<Attribute> castElement(Attribute value, Type to) {
  auto toInt = dyn_cast<IntegerType>(to);
  if (auto f = dyn_cast<FloatAttr>(value)) {
    APFloat v = f.getValue();
    if (!toInt) {
      bool lost;
      v.convert(cast<FloatType>(to).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
      return FloatAttr::get(to, v);
    }
    if (toInt.getWidth() == 1)
      return IntegerAttr::get(to, APInt(1, !v.isZero()));
    APSInt r(toInt.getWidth(), toInt.isUnsigned());
    bool exact;
    if (v.convertToInteger(r, APFloat::rmTowardZero, &exact) &
        APFloat::opInvalidOp)
      return std::nullopt;
    return IntegerAttr::get(to, r);
  }
  auto i = cast<IntegerAttr>(value);
  APInt v = i.getValue();
  bool fromUnsigned = i.getType().isUnsignedInteger() || v.getBitWidth() == 1;
  if (!toInt) {
    APFloat r(cast<FloatType>(to).getFloatSemantics());
    r.convertFromAPInt(v, !fromUnsigned, APFloat::rmNearestTiesToEven);
    return FloatAttr::get(to, r);
  }
  if (toInt.getWidth() == 1)
    return IntegerAttr::get(to, APInt(1, !v.isZero()));
  return IntegerAttr::get(to, fromUnsigned ? v.zextOrTrunc(toInt.getWidth())
                                           : v.sextOrTrunc(toInt.getWidth()));
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  SmallVector<Attribute> values = smallValues(adaptor.getInput());
  if (values.empty() || !getType().hasStaticShape())
    return {};
  SmallVector<Attribute> out;
  for (Attribute v : values) {
    std::optional<Attribute> converted =
        castElement(v, getType().getElementType());
    if (!converted)
      return {};
    out.push_back(*converted);
  }
  return DenseElementsAttr::get(getType(), out);
}

template <typename Op> static OpFoldResult foldReduce(Op op) {
  if (op.getAxes().empty() && op.getInput().getType() == op.getType())
    return op.getInput();
  return {};
}
OpFoldResult ReduceSumOp::fold(FoldAdaptor) { return foldReduce(*this); }
OpFoldResult ReduceMeanOp::fold(FoldAdaptor) { return foldReduce(*this); }
OpFoldResult ReduceMaxOp::fold(FoldAdaptor) { return foldReduce(*this); }
OpFoldResult ReduceMinOp::fold(FoldAdaptor) { return foldReduce(*this); }
OpFoldResult ReduceProdOp::fold(FoldAdaptor) { return foldReduce(*this); }

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    if (getType().hasStaticShape() &&
        (dense.isSplat() || dense.getNumElements() <= kMaxFoldElements))
      return dense.reshape(getType());
  return {};
}

namespace {
/// reshape(reshape(x)) -> reshape(x): only the last shape matters.
struct FoldReshapeOfReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a reshape");
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), inner.getInput());
    return success();
  }
};

/// transpose(transpose(x)) -> transpose(x) with the composed permutation
/// (which folds away when it is the identity).
struct FoldTransposeOfTranspose : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a transpose");
    SmallVector<int64_t> perm;
    for (int64_t p : op.getPerm())
      perm.push_back(inner.getPerm()[p]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), inner.getInput(),
                                             perm);
    return success();
  }
};

/// transpose(matmul(a, b)) swapping the last two dimensions ->
/// matmul(transpose(b), transpose(a)): (AB)^T = B^T A^T. The transposes
/// that appear are of operands, which contraction kernels read as strides
/// (and which cancel against transposes already there, as in the weight
/// gradient of a linear layer), rather than a copy of the product.
struct SwapTransposedMatmul : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto mm = op.getInput().getDefiningOp<MatmulOp>();
    if (!mm || !mm->hasOneUse())
      return rewriter.notifyMatchFailure(op, "input is not a matmul");
    auto lhsType = cast<RankedTensorType>(mm.getLhs().getType());
    auto rhsType = cast<RankedTensorType>(mm.getRhs().getType());
    int64_t rank = op.getType().getRank();
    if (rank < 2 || lhsType.getRank() != rank || rhsType.getRank() != rank ||
        !lhsType.hasStaticShape() || !rhsType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a plain batched matmul");
    SmallVector<int64_t> swap = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(swap[rank - 2], swap[rank - 1]);
    if (!llvm::equal(op.getPerm(), swap))
      return rewriter.notifyMatchFailure(op, "not a swap of the last two");
    auto transposed = [&](Value v, RankedTensorType type) {
      SmallVector<int64_t> shape(type.getShape());
      std::swap(shape[rank - 2], shape[rank - 1]);
      return rewriter.create<TransposeOp>(
          op.getLoc(), RankedTensorType::get(shape, type.getElementType()), v,
          swap);
    };
    Value bt = transposed(mm.getRhs(), rhsType);
    Value at = transposed(mm.getLhs(), lhsType);
    rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), bt, at);
    return success();
  }
};
/// transpose(x) that moves only dimensions of size 1 (the others keep their
/// order) -> reshape(x): the same elements in the same order, so a view
/// instead of a copy (a transformer's [tokens, 1, d] -> [1, tokens, d]
/// after its output projection, which left the residual add a kernel of
/// its own).
struct TransposeOfUnitDimsAsReshape : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto in = dyn_cast<RankedTensorType>(op.getInput().getType());
    if (!in || !in.hasStaticShape() || !op.getType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not static");
    if (llvm::equal(op.getPerm(), llvm::seq<int64_t>(0, in.getRank())))
      return rewriter.notifyMatchFailure(op, "the identity");
    int64_t last = -1;
    for (int64_t p : op.getPerm()) {
      if (in.getDimSize(p) == 1)
        continue;
      if (p < last)
        return rewriter.notifyMatchFailure(op, "reorders dimensions");
      last = p;
    }
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput());
    return success();
  }
};

/// Whether a reshape from `from` to `to` (static) only adds or drops
/// dimensions of size 1.
static bool onlyUnitDims(RankedTensorType from, RankedTensorType to) {
  auto big = [](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> dims;
    for (int64_t d : shape)
      if (d != 1)
        dims.push_back(d);
    return dims;
  };
  return from.hasStaticShape() && to.hasStaticShape() &&
         big(from.getShape()) == big(to.getShape());
}

/// add(reshape(p), r) -> reshape(add(p, reshape(r))) when p is a product
/// (a matmul, or a matmul plus its bias), the reshape only adds or drops
/// dimensions of size 1 and r has the sum's shape: the residual add of a
/// transformer's output projection ([tokens, d] viewed as [1, tokens, d])
/// then directly follows the product, whose kernel adds it as it stores
/// (it ran as a kernel of its own). Only a product's reshape moves, and
/// not beside another product (or its view), so the rewrite cannot undo
/// itself.
struct AddAfterProductView : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    auto isProduct = [](Value v) {
      Operation *def = v.getDefiningOp();
      if (auto add = dyn_cast_or_null<AddOp>(def))
        def = add.getLhs().getDefiningOp();
      return isa_and_nonnull<MatmulOp>(def);
    };
    for (int i = 0; i < 2; ++i) {
      auto view = op->getOperand(i).getDefiningOp<ReshapeOp>();
      Value other = op->getOperand(1 - i);
      auto otherView = other.getDefiningOp<ReshapeOp>();
      if (!view || !view->hasOneUse() || !isProduct(view.getInput()) ||
          other.getType() != op.getType() || view.getType() != op.getType() ||
          isProduct(other) || (otherView && isProduct(otherView.getInput())))
        continue;
      auto from = cast<RankedTensorType>(view.getInput().getType());
      if (!onlyUnitDims(from, op.getType()))
        continue;
      Location loc = op.getLoc();
      Value r = rewriter.create<ReshapeOp>(loc, from, other);
      Value sum = i == 0 ? rewriter.create<AddOp>(loc, view.getInput(), r)
                         : rewriter.create<AddOp>(loc, r, view.getInput());
      rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), sum);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no product's view to move");
  }
};

/// The block of columns of a projection that a gather takes: gather(g, c)
/// along an axis of g that, through the transposes and reshapes between
/// them, splits the last dimension N of m = matmul(x, W) (+ b) into S
/// blocks of w columns (W a constant [K, N], b a constant [N]).
struct ProjectionBlock {
  Value m;                        // the projection
  MatmulOp matmul;                // its product
  Value bias;                     // its bias, or null
  SmallVector<Operation *> chain; // the views from m to g, first to last
  SmallVector<int64_t> axes;      // the split axis in each view's result
  int64_t width = 0, index = 0;
};

/// Whether m = matmul(x, W) or matmul(x, W) + b, W a constant f32 [K, N]
/// and b a constant [N] (N m's last dimension): its product and bias.
static bool matchProjection(Value m, MatmulOp &matmul, Value &bias) {
  auto type = dyn_cast<RankedTensorType>(m.getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 1)
    return false;
  const int64_t n = type.getShape().back();
  Value product = m;
  bias = Value();
  if (auto add = m.getDefiningOp<AddOp>()) {
    bias = add.getRhs();
    product = add.getLhs();
    auto biasType = dyn_cast<RankedTensorType>(bias.getType());
    if (!biasType || biasType.getRank() != 1 || biasType.getDimSize(0) != n ||
        !constantFloats(bias))
      return false;
  }
  matmul = product.getDefiningOp<MatmulOp>();
  if (!matmul || product.getType() != m.getType())
    return false;
  auto wType = dyn_cast<RankedTensorType>(matmul.getRhs().getType());
  return wType && wType.getRank() == 2 && wType.hasStaticShape() &&
         wType.getElementType().isF32() && wType.getDimSize(1) == n &&
         constantFloats(matmul.getRhs());
}

/// matmul(x, W[:, c0 : c0 + w]) (+ b[c0 : c0 + w]): columns [c0, c0 + w)
/// of a projection (matchProjection's).
static Value projectColumns(PatternRewriter &rewriter, Location loc,
                            MatmulOp matmul, Value bias, int64_t c0,
                            int64_t w) {
  auto wType = cast<RankedTensorType>(matmul.getRhs().getType());
  const int64_t k = wType.getDimSize(0), n = wType.getDimSize(1);
  std::vector<float> weights = *constantFloats(matmul.getRhs());
  std::vector<float> columns(k * w);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < w; ++j)
      columns[i * w + j] = weights[i * n + c0 + j];
  Value v = rewriter.create<MatmulOp>(
      loc, matmul.getLhs(),
      rewriter.create<ConstantOp>(
          loc, floatBlob(RankedTensorType::get({k, w}, wType.getElementType()),
                         columns, "projection_block")));
  if (!bias)
    return v;
  std::vector<float> b = *constantFloats(bias);
  auto type = RankedTensorType::get({w}, wType.getElementType());
  return rewriter.create<AddOp>(
      loc, v,
      rewriter.create<ConstantOp>(
          loc, DenseElementsAttr::get(type, ArrayRef<float>(b).slice(c0, w))));
}

/// The constant scalar index of a gather, if it is one.
static std::optional<int64_t> scalarIndex(GatherOp op) {
  DenseIntElementsAttr index;
  if (!matchPattern(op.getIndices(), m_Constant(&index)) ||
      index.getType().getRank() != 0)
    return std::nullopt;
  return (*index.getValues<APInt>().begin()).getSExtValue();
}

static std::optional<ProjectionBlock> matchProjectionBlock(GatherOp op) {
  std::optional<int64_t> index = scalarIndex(op);
  auto dataType = dyn_cast<RankedTensorType>(op.getData().getType());
  if (!index || !dataType || !dataType.hasStaticShape())
    return std::nullopt;
  ProjectionBlock block;
  int64_t axis = op.getAxis();
  if (axis < 0)
    axis += dataType.getRank();
  auto product = [](ArrayRef<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= d;
    return n;
  };
  // From g back to m, the split axis in each view's result.
  Value v = op.getData();
  int64_t blocks = 0;
  while (true) {
    Operation *def = v.getDefiningOp();
    if (!isa_and_nonnull<TransposeOp, ReshapeOp>(def))
      return std::nullopt;
    block.chain.push_back(def);
    block.axes.push_back(axis);
    Value in = def->getOperand(0);
    auto inType = dyn_cast<RankedTensorType>(in.getType());
    if (!inType || !inType.hasStaticShape())
      return std::nullopt;
    if (auto t = dyn_cast<TransposeOp>(def)) {
      axis = t.getPerm()[axis];
      v = in;
      continue;
    }
    ArrayRef<int64_t> out = cast<RankedTensorType>(def->getResult(0).getType())
                                .getShape(),
                      inShape = inType.getShape();
    const int64_t before = product(out.take_front(axis));
    // The axis kept whole by the reshape.
    int64_t kept = -1;
    for (int64_t b = 0; b < inType.getRank() && kept < 0; ++b)
      if (product(inShape.take_front(b)) == before && inShape[b] == out[axis] &&
          out[axis] != 1)
        kept = b;
    if (kept >= 0) {
      axis = kept;
      v = in;
      continue;
    }
    // The reshape splits the last dimension of its input, the projection,
    // into [.., S, w]: the axis is S.
    if (inShape.empty() || before != product(inShape.drop_back()) ||
        product(out.drop_front(axis)) != inShape.back() || out[axis] < 2)
      return std::nullopt;
    blocks = out[axis];
    block.width = inShape.back() / out[axis];
    block.m = in;
    break;
  }
  std::reverse(block.chain.begin(), block.chain.end());
  std::reverse(block.axes.begin(), block.axes.end());
  block.index = *index < 0 ? *index + blocks : *index;
  if (block.index < 0 || block.index >= blocks)
    return std::nullopt;
  if (!matchProjection(block.m, block.matmul, block.bias))
    return std::nullopt;
  return block;
}

/// Whether every use of `v` reaches, through transposes and reshapes, a
/// gather of a block of the same projection (so that none keeps the whole
/// product alive once the gathers take their blocks).
static bool onlyBlocksTaken(Value v, Value m) {
  for (Operation *user : v.getUsers()) {
    if (isa<TransposeOp, ReshapeOp>(user)) {
      if (!onlyBlocksTaken(user->getResult(0), m))
        return false;
      continue;
    }
    auto gather = dyn_cast<GatherOp>(user);
    if (!gather)
      return false;
    std::optional<ProjectionBlock> block = matchProjectionBlock(gather);
    if (!block || block->m != m)
      return false;
  }
  return true;
}

/// gather(views(matmul(x, W) + b), c) taking block c of w columns ->
/// views(matmul(x, W[:, c w : (c + 1) w]) + b[c w : (c + 1) w]): the fused
/// QKV projection of torch's multi-head attention, split by a transpose and
/// three gathers (two copies of the product), becomes three projections
/// whose results attention reads where they lie. Only when every use of the
/// product is such a gather, so that the whole product is not computed too.
struct GatherOfProjectionBlock : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<ProjectionBlock> block = matchProjectionBlock(op);
    if (!block)
      return rewriter.notifyMatchFailure(op, "not a block of a projection");
    if (!onlyBlocksTaken(block->m, block->m))
      return rewriter.notifyMatchFailure(op, "the product has other uses");
    Location loc = op.getLoc();
    Value v = projectColumns(rewriter, loc, block->matmul, block->bias,
                             block->index * block->width, block->width);
    // The views again, without the split axis.
    for (auto [view, axis] : llvm::zip(block->chain, block->axes)) {
      auto type = cast<RankedTensorType>(view->getResult(0).getType());
      SmallVector<int64_t> shape(type.getShape());
      shape.erase(shape.begin() + axis);
      auto outType = RankedTensorType::get(shape, type.getElementType());
      if (auto t = dyn_cast<TransposeOp>(view)) {
        const int64_t from = t.getPerm()[axis];
        SmallVector<int64_t> perm;
        for (int64_t p : t.getPerm())
          if (p != from)
            perm.push_back(p > from ? p - 1 : p);
        v = rewriter.create<TransposeOp>(loc, outType, v, perm);
      } else {
        v = rewriter.create<ReshapeOp>(loc, outType, v);
      }
    }
    if (v.getType() != op.getType())
      v = rewriter.create<ReshapeOp>(loc, op.getType(), v);
    rewriter.replaceOp(op, v);
    return success();
  }
};

/// split(matmul(x, W) + b) along its last axis -> one projection a piece,
/// each with its columns of W and b: a fused QKV projection cut into Q, K
/// and V (a decoder's c_attn) leaves three products whose results attention
/// reads where they lie, instead of a product and the copies of its
/// pieces. Only when the split is the product's one use.
struct SplitOfProjection : OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitOp op,
                                PatternRewriter &rewriter) const override {
    Value m = op.getInput();
    auto type = dyn_cast<RankedTensorType>(m.getType());
    MatmulOp matmul;
    Value bias;
    if (!type || !m.hasOneUse() || !matchProjection(m, matmul, bias))
      return rewriter.notifyMatchFailure(op, "not a projection's one use");
    int64_t axis = op.getAxis();
    if (axis < 0)
      axis += type.getRank();
    if (axis != type.getRank() - 1)
      return rewriter.notifyMatchFailure(op, "not along the columns");
    SmallVector<Value> pieces;
    int64_t c0 = 0;
    for (Value r : op.getResults()) {
      auto rType = dyn_cast<RankedTensorType>(r.getType());
      if (!rType || !rType.hasStaticShape())
        return rewriter.notifyMatchFailure(op, "dynamic pieces");
      const int64_t w = rType.getShape().back();
      Value piece = projectColumns(rewriter, op.getLoc(), matmul, bias, c0, w);
      if (piece.getType() != rType)
        piece = rewriter.create<ReshapeOp>(op.getLoc(), rType, piece);
      pieces.push_back(piece);
      c0 += w;
    }
    rewriter.replaceOp(op, pieces);
    return success();
  }
};

/// batch_norm(conv(x, W, b)) -> conv(x, W', b') with constant f32 weights
/// and statistics: W'[f] = W[f] * s[f] and b'[f] = (b[f] - mean[f]) * s[f]
/// + beta[f], s = gamma / sqrt(var + eps). The normalization then costs
/// nothing at run time, and the new weights are packed as any other.
struct FoldBatchNormIntoConv : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &rewriter) const override {
    auto conv = op.getInput().getDefiningOp<ConvOp>();
    if (!conv || !conv->hasOneUse())
      return rewriter.notifyMatchFailure(op, "input is not a convolution");
    std::optional<std::vector<float>> w = constantFloats(conv.getWeight());
    std::optional<std::vector<float>> gamma = constantFloats(op.getScale()),
                                      beta = constantFloats(op.getBias()),
                                      mean = constantFloats(op.getMean()),
                                      var = constantFloats(op.getVariance());
    std::optional<std::vector<float>> bias;
    if (conv.getBias())
      bias = constantFloats(conv.getBias());
    auto wType = cast<RankedTensorType>(conv.getWeight().getType());
    if (!w || !gamma || !beta || !mean || !var || (conv.getBias() && !bias) ||
        !wType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "weights are not f32 constants");
    int64_t filters = wType.getDimSize(0);
    int64_t per = filters ? wType.getNumElements() / filters : 0;
    if (int64_t(gamma->size()) != filters)
      return rewriter.notifyMatchFailure(op, "statistics per filter differ");
    double eps = op.getEpsilon().convertToDouble();
    std::vector<float> folded(*w), shift(filters);
    for (int64_t f = 0; f < filters; ++f) {
      double s = (*gamma)[f] / std::sqrt(double((*var)[f]) + eps);
      for (int64_t i = 0; i < per; ++i)
        folded[f * per + i] = float((*w)[f * per + i] * s);
      double b = bias ? (*bias)[f] : 0.0;
      shift[f] = float((b - (*mean)[f]) * s + (*beta)[f]);
    }
    Location loc = op.getLoc();
    Value weight = rewriter.create<ConstantOp>(
        loc, floatBlob(wType, folded, "folded_weight"));
    auto biasType = RankedTensorType::get({filters}, wType.getElementType());
    Value newBias = rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(biasType, ArrayRef<float>(shift)));
    rewriter.replaceOpWithNewOp<ConvOp>(op, conv.getInput(), weight, newBias,
                                        conv.getStrides(), conv.getPadding(),
                                        conv.getDilations(), conv.getGroups());
    return success();
  }
};
/// conv(x, W, b) whose one-group window covers the whole unpadded input
/// (the output is 1x...x1 per image: squeeze-and-excitation's 1x1
/// convolutions after a global pool, classifiers written as convolutions)
/// with constant f32 weights -> reshape(matmul(reshape(x, [n, c*k]), W^T)
/// + b): a product of n rows, whose kernel streams the weights once, where
/// the convolution's tiles filled one column of sixteen.
struct ConvOverWholeInputAsMatmul : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    auto in = dyn_cast<RankedTensorType>(op.getInput().getType());
    auto wType = dyn_cast<RankedTensorType>(op.getWeight().getType());
    if (!in || !wType || !in.hasStaticShape() || !wType.hasStaticShape() ||
        !in.getElementType().isF32() || in.getRank() < 3 || op.getGroups() != 1)
      return rewriter.notifyMatchFailure(op, "not a static f32 convolution");
    if (llvm::any_of(op.getPadding(), [](int64_t p) { return p != 0; }))
      return rewriter.notifyMatchFailure(op, "padded");
    for (int64_t d = 2; d < in.getRank(); ++d)
      if (wType.getDimSize(d) != in.getDimSize(d) ||
          (in.getDimSize(d) != 1 && op.getDilations()[d - 2] != 1))
        return rewriter.notifyMatchFailure(op, "window not the whole input");
    // Batch normalization folds into the convolution first.
    for (Operation *user : op->getUsers())
      if (isa<BatchNormOp>(user))
        return rewriter.notifyMatchFailure(op, "a batch norm follows");
    std::optional<std::vector<float>> w = constantFloats(op.getWeight());
    if (!w)
      return rewriter.notifyMatchFailure(op, "weights are not constants");
    int64_t n = in.getDimSize(0), f = wType.getDimSize(0);
    int64_t k = f ? wType.getNumElements() / f : 0;
    std::vector<float> transposed(w->size());
    for (int64_t i = 0; i < f; ++i)
      for (int64_t j = 0; j < k; ++j)
        transposed[j * f + i] = (*w)[i * k + j];
    Location loc = op.getLoc();
    Type et = in.getElementType();
    Value weight = rewriter.create<ConstantOp>(
        loc, floatBlob(RankedTensorType::get({k, f}, et), transposed,
                       "matmul_weight"));
    Value rows = rewriter.create<ReshapeOp>(
        loc, RankedTensorType::get({n, k}, et), op.getInput());
    Value product = rewriter.create<MatmulOp>(loc, rows, weight);
    if (Value bias = op.getBias())
      product = rewriter.create<AddOp>(loc, product, bias);
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), product);
    return success();
  }
};
} // namespace

/// A splat constant of any size (shape ops on it fold to another splat).
static DenseElementsAttr splatOf(Value v) {
  DenseElementsAttr dense;
  if (!matchPattern(v, m_Constant(&dense)) || !dense.isSplat())
    return {};
  return dense;
}

/// add(concat(a...), concat(b...)) along one axis, no broadcasting, to
/// concat(add(a_i, b_i)...) over the pieces both split points make: the
/// backward of a split (or select, chunk, unbind) sums one concatenation a
/// piece, each a gradient between zeros, and this leaves the gradients
/// themselves, concatenated once. Only splat constants are cut where the
/// other side splits, so no piece of a computed value is copied twice.
struct DistributeAddOverConcat : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    auto lhs = op.getLhs().getDefiningOp<ConcatOp>();
    auto rhs = op.getRhs().getDefiningOp<ConcatOp>();
    RankedTensorType type = op.getType();
    if (!lhs || !rhs || lhs.getAxis() != rhs.getAxis() ||
        lhs.getType() != type || rhs.getType() != type ||
        !type.hasStaticShape())
      return failure();
    const int64_t axis = lhs.getAxis();
    // The split points of both sides, and where each piece starts.
    auto starts = [&](ConcatOp c) {
      SmallVector<int64_t> at = {0};
      for (Value v : c.getInputs())
        at.push_back(at.back() +
                     cast<RankedTensorType>(v.getType()).getDimSize(axis));
      return at;
    };
    SmallVector<int64_t> ls = starts(lhs), rs = starts(rhs);
    SmallVector<int64_t> cuts(ls);
    llvm::append_range(cuts, rs);
    llvm::sort(cuts);
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    // A piece of `c` that a cut falls inside must be a splat.
    auto cutsOnlySplats = [&](ConcatOp c, ArrayRef<int64_t> at) {
      for (auto [i, v] : llvm::enumerate(c.getInputs()))
        for (int64_t cut : cuts)
          if (cut > at[i] && cut < at[i + 1] && !splatOf(v))
            return false;
      return true;
    };
    if (!cutsOnlySplats(lhs, ls) || !cutsOnlySplats(rhs, rs))
      return failure();
    // The piece [from, to) of `c`: an operand, or a splat resized.
    Location loc = op.getLoc();
    auto piece = [&](ConcatOp c, ArrayRef<int64_t> at, int64_t from,
                     int64_t to) -> Value {
      int64_t i = llvm::upper_bound(at, from) - at.begin() - 1;
      Value v = c.getInputs()[i];
      if (at[i] == from && at[i + 1] == to)
        return v;
      SmallVector<int64_t> shape(type.getShape());
      shape[axis] = to - from;
      auto t = RankedTensorType::get(shape, type.getElementType());
      return rewriter.create<ConstantOp>(loc, splatOf(v).resizeSplat(t));
    };
    SmallVector<Value> sums;
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      Value a = piece(lhs, ls, cuts[k], cuts[k + 1]);
      Value b = piece(rhs, rs, cuts[k], cuts[k + 1]);
      // x + 0 folds to x here, leaving no dead add.
      sums.push_back(rewriter.createOrFold<AddOp>(loc, a, b));
    }
    rewriter.replaceOpWithNewOp<ConcatOp>(op, type, sums, axis);
    return success();
  }
};

LogicalResult mlir::tcc::unstackMatmulOperands(MatmulOp op,
                                               RewriterBase &rewriter) {
  // The operand under a broadcast that keeps its matrix dimensions.
  auto unstacked = [](Value v) -> Value {
    auto b = v.getDefiningOp<BroadcastToOp>();
    if (!b)
      return v;
    auto from = cast<RankedTensorType>(b.getInput().getType());
    auto to = cast<RankedTensorType>(b.getType());
    if (from.getRank() < 2 ||
        from.getShape().take_back(2) != to.getShape().take_back(2) ||
        ShapedType::isDynamic(from.getShape().back()) ||
        ShapedType::isDynamic(from.getShape().end()[-2]))
      return v;
    return b.getInput();
  };
  Value lhs = unstacked(op.getLhs()), rhs = unstacked(op.getRhs());
  if (lhs == op.getLhs() && rhs == op.getRhs())
    return failure();
  SmallVector<Type> types;
  if (failed(MatmulOp::inferReturnTypes(
          op.getContext(), op.getLoc(), ValueRange{lhs, rhs},
          op->getAttrDictionary(), op->getPropertiesStorage(), op->getRegions(),
          types)) ||
      types.size() != 1 || types.front() != op.getType())
    return failure();
  rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), lhs, rhs);
  return success();
}

namespace {
struct UnstackMatmulOperands : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    return unstackMatmulOperands(op, rewriter);
  }
};
} // namespace

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<UnstackMatmulOperands>(context);
}

void AddOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<DistributeAddOverConcat, AddAfterProductView>(context);
}

void ConvOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<ConvOverWholeInputAsMatmul>(context);
}

void BatchNormOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldBatchNormIntoConv>(context);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<FoldReshapeOfReshape>(context);
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldTransposeOfTranspose, SwapTransposedMatmul,
              TransposeOfUnitDimsAsReshape>(context);
}

void SplitOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<SplitOfProjection>(context);
}

void GatherOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<GatherOfProjectionBlock>(context);
}

/// Builds `type` from `dense` by reading, for each result element, the input
/// element whose flat index is the sum over result dimensions of
/// `offset(dim, coord, inputStrides)`.
static Attribute remapElements(
    DenseElementsAttr dense, RankedTensorType type,
    function_ref<int64_t(int64_t, int64_t, ArrayRef<int64_t>)> offset) {
  ArrayRef<int64_t> in = dense.getType().getShape();
  SmallVector<int64_t> inStrides(in.size(), 1);
  for (int64_t i = (int64_t)in.size() - 2; i >= 0; --i)
    inStrides[i] = inStrides[i + 1] * in[i + 1];
  ArrayRef<int64_t> out = type.getShape();
  SmallVector<Attribute> values(dense.getValues<Attribute>());
  SmallVector<Attribute> result;
  for (int64_t flat = 0, n = type.getNumElements(); flat < n; ++flat) {
    int64_t rest = flat, index = 0;
    for (int64_t i = (int64_t)out.size() - 1; i >= 0; --i) {
      index += offset(i, rest % out[i], inStrides);
      rest /= out[i];
    }
    result.push_back(values[index]);
  }
  return DenseElementsAttr::get(type, result);
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  if (llvm::equal(getPerm(), llvm::seq<int64_t>(0, getPerm().size())) &&
      getInput().getType() == getType())
    return getInput();
  DenseElementsAttr dense = smallDense(adaptor.getInput());
  if (!dense || !getType().hasStaticShape())
    return {};
  return remapElements(dense, getType(),
                       [&](int64_t dim, int64_t coord, ArrayRef<int64_t> st) {
                         return coord * st[getPerm()[dim]];
                       });
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
  if (dense && dense.isSplat() && getType().hasStaticShape())
    return dense.resizeSplat(getType());
  SmallVector<Attribute> values = smallValues(dense);
  if (values.empty() || !isSmallStatic(getType()))
    return {};
  SmallVector<Attribute> out;
  for (int64_t i = 0, n = getType().getNumElements(); i < n; ++i)
    out.push_back(values[broadcastIndex(getInput().getType().getShape(),
                                        getType().getShape(), i)]);
  return DenseElementsAttr::get(getType(), out);
}

OpFoldResult IotaOp::fold(FoldAdaptor) {
  // Static: the positions themselves (n elements, the size of one
  // dimension, bounded as any tensor's).
  RankedTensorType type = getType();
  if (!type.hasStaticShape())
    return {};
  Type et = type.getElementType();
  int64_t n = type.getNumElements();
  SmallVector<Attribute> values;
  values.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    if (auto ft = dyn_cast<FloatType>(et)) {
      APFloat v((double)i);
      bool lost;
      v.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(FloatAttr::get(et, v));
    } else {
      values.push_back(IntegerAttr::get(et, i));
    }
  }
  return DenseElementsAttr::get(type, values);
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  if (!isSmallStatic(getType()))
    return {};
  // Row-major: for each index before `axis`, one block from every input.
  ArrayRef<int64_t> shape = getType().getShape();
  int64_t axis = getAxis();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= shape[i];
  for (int64_t i = axis + 1; i < (int64_t)shape.size(); ++i)
    inner *= shape[i];
  SmallVector<SmallVector<Attribute>> inputs;
  for (Attribute a : adaptor.getInputs()) {
    inputs.push_back(smallValues(a));
    if (inputs.back().empty() &&
        !(a && cast<ElementsAttr>(a).getNumElements() == 0))
      return {};
  }
  SmallVector<Attribute> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (auto [value, values] : llvm::zip(getInputs(), inputs)) {
      int64_t block =
          cast<ShapedType>(value.getType()).getDimSize(axis) * inner;
      llvm::append_range(out,
                         ArrayRef<Attribute>(values).slice(o * block, block));
    }
  }
  return DenseElementsAttr::get(getType(), out);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  bool identity =
      getInput().getType() == getType() &&
      llvm::all_of(getOffsets(), [](int64_t o) { return o == 0; }) &&
      llvm::all_of(getSteps(), [](int64_t s) { return s == 1; });
  if (identity)
    return getInput();
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getInput());
      splat && getType().hasStaticShape())
    return splat.resizeSplat(getType());
  DenseElementsAttr dense = smallDense(adaptor.getInput());
  if (!dense || !getType().hasStaticShape())
    return {};
  return remapElements(
      dense, getType(), [&](int64_t dim, int64_t coord, ArrayRef<int64_t> st) {
        return (getOffsets()[dim] + coord * getSteps()[dim]) * st[dim];
      });
}

LogicalResult SplitOp::fold(FoldAdaptor adaptor,
                            SmallVectorImpl<OpFoldResult> &results) {
  // One piece is the whole; pieces of a small constant are constants (shape
  // code splits a shape into its sizes).
  if (getNumResults() == 1 && getResult(0).getType() == getInput().getType()) {
    results.push_back(getInput());
    return success();
  }
  DenseElementsAttr dense = smallDense(adaptor.getInput());
  if (!dense)
    return failure();
  int64_t axis = getAxis(), start = 0;
  SmallVector<OpFoldResult> pieces;
  for (Value r : getResults()) {
    auto type = cast<RankedTensorType>(r.getType());
    if (!type.hasStaticShape())
      return failure();
    pieces.push_back(remapElements(
        dense, type, [&](int64_t dim, int64_t coord, ArrayRef<int64_t> st) {
          return (coord + (dim == axis ? start : 0)) * st[dim];
        }));
    start += type.getDimSize(axis);
  }
  llvm::append_range(results, pieces);
  return success();
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  SmallVector<Attribute> data = smallValues(adaptor.getData());
  DenseElementsAttr indices = smallDense(adaptor.getIndices());
  if (data.empty() || !indices || !isSmallStatic(getType()))
    return {};
  ArrayRef<int64_t> shape = getData().getType().getShape();
  int64_t axis = getAxis(), size = shape[axis], outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= shape[i];
  for (int64_t i = axis + 1; i < (int64_t)shape.size(); ++i)
    inner *= shape[i];
  SmallVector<int64_t> picks;
  for (const APInt &index : indices.getValues<APInt>()) {
    int64_t k = index.getSExtValue();
    if (k < 0)
      k += size;
    if (k < 0 || k >= size)
      return {}; // Out of range: the run time decides what it gives.
    picks.push_back(k);
  }
  SmallVector<Attribute> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k : picks)
      llvm::append_range(
          out, ArrayRef<Attribute>(data).slice((o * size + k) * inner, inner));
  return DenseElementsAttr::get(getType(), out);
}
