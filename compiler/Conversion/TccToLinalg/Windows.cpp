//===- Windows.cpp - tcc pooling ops to linalg.generic --------------------===//
//
// Pooling is a reduction over (n, c, o_1..o_s | k_1..k_s) reading the padded
// input at o*stride + k*dilation. An empty tensor of the kernel's shape gives
// the k loops their extent. Average pooling divides by a per-position count
// that is known at compile time.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/TccToLinalg/Patterns.h"
#include "compiler/Conversion/TccToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "dialects/Tcc/IR/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {
struct WindowGeometry {
  SmallVector<int64_t> low, high; // Pads of the full-rank input.
};
} // namespace

/// Pads so that every window the output needs (ceil_mode included) lies
/// inside the padded input.
static WindowGeometry geometry(RankedTensorType in, RankedTensorType out,
                               ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> pads,
                               ArrayRef<int64_t> dilations) {
  int64_t s = kernel.size();
  WindowGeometry g{{0, 0}, {0, 0}};
  for (int64_t i = 0; i < s; ++i) {
    int64_t reach = (out.getDimSize(2 + i) - 1) * strides[i] +
                    (kernel[i] - 1) * dilations[i] + 1;
    g.low.push_back(pads[i]);
    g.high.push_back(
        std::max<int64_t>(pads[s + i], reach - in.getDimSize(2 + i) - pads[i]));
  }
  return g;
}

/// Builds the windowed reduction; `combine(b, loc, acc, x)` folds one input
/// element into the accumulator.
static Value
windowReduce(ConversionPatternRewriter &rewriter, Location loc, Value padded,
             RankedTensorType outType, ArrayRef<int64_t> kernel,
             ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations, Value init,
             function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  MLIRContext *ctx = rewriter.getContext();
  int64_t s = kernel.size();
  unsigned loops = 2 + 2 * s;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> inExprs = {d(0), d(1)}, kExprs,
                          outExprs = {d(0), d(1)};
  for (int64_t i = 0; i < s; ++i) {
    AffineExpr o = d(2 + i), k = d(2 + s + i);
    inExprs.push_back(o * strides[i] + k * dilations[i]);
    kExprs.push_back(k);
    outExprs.push_back(o);
  }
  Value window =
      rewriter.create<tensor::EmptyOp>(loc, kernel, outType.getElementType());
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, inExprs, ctx),
                                 AffineMap::get(loops, 0, kExprs, ctx),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators = parallelIterators(2 + s);
  iterators.append(s, utils::IteratorType::reduction);
  return rewriter
      .create<linalg::GenericOp>(
          loc, outType, ValueRange{padded, window},
          filledTensor(rewriter, loc, outType, init), maps, iterators,
          [&](OpBuilder &b, Location l, ValueRange args) {
            b.create<linalg::YieldOp>(l, combine(b, l, args[2], args[0]));
          })
      .getResult(0);
}

namespace {
struct MaxPoolToLinalg : OpConversionPattern<MaxPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    Type et = inType.getElementType();
    WindowGeometry g =
        geometry(inType, op.getType(), op.getKernel(), op.getStrides(),
                 op.getPadding(), op.getDilations());
    Value lowest = lowestValue(rewriter, loc, et);
    Value padded =
        padTensor(rewriter, loc, adaptor.getInput(), g.low, g.high, lowest);
    rewriter.replaceOp(
        op, windowReduce(
                rewriter, loc, padded, op.getType(), op.getKernel(),
                op.getStrides(), op.getDilations(), lowest,
                [](OpBuilder &b, Location l, Value acc, Value x) {
                  return b.create<arith::MaximumFOp>(l, acc, x).getResult();
                }));
    return success();
  }
};

struct AvgPoolToLinalg : OpConversionPattern<AvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    RankedTensorType outType = op.getType();
    auto et = cast<FloatType>(inType.getElementType());
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                      pads = op.getPadding(), dilations = op.getDilations();
    int64_t s = kernel.size();
    WindowGeometry g =
        geometry(inType, outType, kernel, strides, pads, dilations);
    Value zero = scalarConstant(rewriter, loc, et, 0);
    Value padded =
        padTensor(rewriter, loc, adaptor.getInput(), g.low, g.high, zero);
    Value sum =
        windowReduce(rewriter, loc, padded, outType, kernel, strides, dilations,
                     zero, [](OpBuilder &b, Location l, Value acc, Value x) {
                       return b.create<arith::AddFOp>(l, acc, x).getResult();
                     });

    // How many window elements count at each output position: those inside
    // the input, or inside the declared pads with count_include_pad (never
    // the extra room ceil_mode adds).
    SmallVector<SmallVector<int64_t>> perDim;
    for (int64_t i = 0; i < s; ++i) {
      int64_t size = inType.getDimSize(2 + i);
      int64_t lo = op.getCountIncludePad() ? -pads[i] : 0;
      int64_t hi = op.getCountIncludePad() ? size + pads[s + i] : size;
      SmallVector<int64_t> counts;
      for (int64_t o = 0; o < outType.getDimSize(2 + i); ++o) {
        int64_t n = 0;
        for (int64_t k = 0; k < kernel[i]; ++k) {
          int64_t pos = o * strides[i] - pads[i] + k * dilations[i];
          n += pos >= lo && pos < hi;
        }
        counts.push_back(n);
      }
      perDim.push_back(counts);
    }
    SmallVector<int64_t> spatial(outType.getShape().drop_front(2));
    auto countType = RankedTensorType::get(spatial, et);
    SmallVector<APFloat> counts;
    for (int64_t flat = 0, n = countType.getNumElements(); flat < n; ++flat) {
      int64_t rest = flat, c = 1;
      for (int64_t i = s - 1; i >= 0; --i) {
        c *= perDim[i][rest % spatial[i]];
        rest /= spatial[i];
      }
      APFloat v(static_cast<double>(std::max<int64_t>(c, 1)));
      bool lost;
      v.convert(et.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      counts.push_back(v);
    }
    Value countTensor = rewriter.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(countType, counts));
    SmallVector<AffineExpr> spatialExprs;
    for (int64_t i = 0; i < s; ++i)
      spatialExprs.push_back(getAffineDimExpr(2 + i, ctx));
    unsigned rank = outType.getRank();
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank),
                                   AffineMap::get(rank, 0, spatialExprs, ctx),
                                   rewriter.getMultiDimIdentityMap(rank)};
    rewriter.replaceOp(
        op,
        rewriter
            .create<linalg::GenericOp>(
                loc, outType, ValueRange{sum, countTensor},
                emptyTensor(rewriter, loc, outType), maps,
                parallelIterators(rank),
                [](OpBuilder &b, Location l, ValueRange args) {
                  b.create<linalg::YieldOp>(
                      l,
                      b.create<arith::DivFOp>(l, args[0], args[1]).getResult());
                })
            .getResult(0));
    return success();
  }
};
} // namespace

void mlir::tcc::populateWindowToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MaxPoolToLinalg, AvgPoolToLinalg>(patterns.getContext());
}
