//===- Contractions.cpp - tcc.matmul and tcc.conv to linalg ---------------===//

#include "compiler/Conversion/TccToLinalg/Patterns.h"
#include "compiler/Conversion/TccToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "dialects/Tcc/IR/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

/// acc + x * y, the body of every contraction.
static void multiplyAccumulate(OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0], y = args[1], acc = args[2], r;
  if (isa<FloatType>(x.getType()))
    r = b.create<arith::AddFOp>(loc, acc, b.create<arith::MulFOp>(loc, x, y));
  else
    r = b.create<arith::AddIOp>(loc, acc, b.create<arith::MulIOp>(loc, x, y));
  b.create<linalg::YieldOp>(loc, r);
}

static RankedTensorType withShape(RankedTensorType t, ArrayRef<int64_t> s) {
  return RankedTensorType::get(s, t.getElementType());
}

namespace {
struct MatmulToLinalg : OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    auto lt = cast<RankedTensorType>(lhs.getType());
    auto rt = cast<RankedTensorType>(rhs.getType());
    Type et = lt.getElementType();
    // Vectors become matrices; the result is reshaped back at the end.
    if (lt.getRank() == 1)
      lhs = reshapeTensor(rewriter, loc, lhs,
                          lt = withShape(lt, {1, lt.getDimSize(0)}));
    if (rt.getRank() == 1)
      rhs = reshapeTensor(rewriter, loc, rhs,
                          rt = withShape(rt, {rt.getDimSize(0), 1}));
    int64_t k = lt.getShape().back(), n = rt.getShape().back();
    Value zero = scalarConstant(rewriter, loc, et, 0);

    // A batch of rows times one matrix is one big matrix product.
    if (rt.getRank() == 2) {
      int64_t rows = lt.getNumElements() / k;
      Value flat = reshapeTensor(rewriter, loc, lhs, withShape(lt, {rows, k}));
      auto outType = withShape(lt, {rows, n});
      Value mm = rewriter
                     .create<linalg::MatmulOp>(
                         loc, outType, ValueRange{flat, rhs},
                         filledTensor(rewriter, loc, outType, zero))
                     .getResult(0);
      rewriter.replaceOp(op, reshapeTensor(rewriter, loc, mm, op.getType()));
      return success();
    }

    // General case: broadcast batch dimensions through the indexing maps.
    ArrayRef<int64_t> lb = lt.getShape().drop_back(2);
    ArrayRef<int64_t> rb = rt.getShape().drop_back(2);
    int64_t nb = std::max(lb.size(), rb.size());
    SmallVector<int64_t> outShape(nb, 1);
    for (ArrayRef<int64_t> s : {lb, rb})
      for (auto [i, d] : llvm::enumerate(s))
        if (d != 1)
          outShape[nb - s.size() + i] = d;
    SmallVector<int64_t> batch = outShape;
    int64_t m = lt.getShape()[lt.getRank() - 2];
    outShape.append({m, n});
    // Loops: batch..., m, n, k.
    unsigned loops = nb + 3;
    auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    auto operandMap = [&](ArrayRef<int64_t> b, AffineExpr r, AffineExpr c) {
      SmallVector<AffineExpr> e =
          llvm::to_vector(broadcastMap(ctx, b, batch).getResults());
      e.append({r, c});
      return AffineMap::get(loops, 0, e, ctx);
    };
    SmallVector<AffineExpr> outExprs;
    for (unsigned i = 0; i < nb + 2; ++i)
      outExprs.push_back(dim(i));
    SmallVector<AffineMap> maps = {operandMap(lb, dim(nb), dim(nb + 2)),
                                   operandMap(rb, dim(nb + 2), dim(nb + 1)),
                                   AffineMap::get(loops, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators = parallelIterators(nb + 2);
    iterators.push_back(utils::IteratorType::reduction);
    auto outType = withShape(lt, outShape);
    Value result = rewriter
                       .create<linalg::GenericOp>(
                           loc, outType, ValueRange{lhs, rhs},
                           filledTensor(rewriter, loc, outType, zero), maps,
                           iterators, multiplyAccumulate)
                       .getResult(0);
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, result, op.getType()));
    return success();
  }
};

/// N-d grouped convolution as one linalg.generic over
/// (n, g, f, o1..os | c, k1..ks): out[n,g,f,o] += in[n,g,c,o*s+k*d] *
/// w[g,f,c,k] on the zero-padded input, with the bias as the initial value.
struct ConvToLinalg : OpConversionPattern<ConvOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    auto wType = cast<RankedTensorType>(adaptor.getWeight().getType());
    Type et = inType.getElementType();
    int64_t s = inType.getRank() - 2, groups = op.getGroups();
    int64_t batch = inType.getDimSize(0), channels = inType.getDimSize(1);
    int64_t filters = wType.getDimSize(0);
    ArrayRef<int64_t> pads = op.getPadding();

    SmallVector<int64_t> low(2, 0), high(2, 0);
    low.append(pads.begin(), pads.begin() + s);
    high.append(pads.begin() + s, pads.end());
    Value padded = padTensor(rewriter, loc, adaptor.getInput(), low, high,
                             scalarConstant(rewriter, loc, et, 0));
    auto paddedType = cast<RankedTensorType>(padded.getType());

    // Split the channel dimensions into (groups, per group).
    SmallVector<int64_t> inShape = {batch, groups, channels / groups};
    inShape.append(paddedType.getShape().begin() + 2,
                   paddedType.getShape().end());
    SmallVector<int64_t> wShape = {groups, filters / groups,
                                   wType.getDimSize(1)};
    wShape.append(wType.getShape().begin() + 2, wType.getShape().end());
    SmallVector<int64_t> outShape = {batch, groups, filters / groups};
    outShape.append(op.getType().getShape().begin() + 2,
                    op.getType().getShape().end());
    Value in = reshapeTensor(rewriter, loc, padded, withShape(inType, inShape));
    Value w = reshapeTensor(rewriter, loc, adaptor.getWeight(),
                            withShape(wType, wShape));
    auto outType = withShape(inType, outShape);

    Value init;
    if (Value bias = adaptor.getBias()) {
      Value b2 = reshapeTensor(rewriter, loc, bias,
                               withShape(inType, {groups, filters / groups}));
      SmallVector<AffineExpr> biasExprs = {getAffineDimExpr(1, ctx),
                                           getAffineDimExpr(2, ctx)};
      init =
          gatherThroughMap(rewriter, loc, b2, outType,
                           AffineMap::get(outShape.size(), 0, biasExprs, ctx));
    } else {
      init = filledTensor(rewriter, loc, outType,
                          scalarConstant(rewriter, loc, et, 0));
    }

    // Loop order: n, g, f, o_1..o_s, c, k_1..k_s.
    unsigned loops = 3 + s + 1 + s;
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    unsigned cDim = 3 + s;
    SmallVector<AffineExpr> inExprs = {d(0), d(1), d(cDim)};
    SmallVector<AffineExpr> wExprs = {d(1), d(2), d(cDim)};
    SmallVector<AffineExpr> outExprs = {d(0), d(1), d(2)};
    for (int64_t i = 0; i < s; ++i) {
      AffineExpr o = d(3 + i), k = d(cDim + 1 + i);
      inExprs.push_back(o * op.getStrides()[i] + k * op.getDilations()[i]);
      wExprs.push_back(k);
      outExprs.push_back(o);
    }
    SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, inExprs, ctx),
                                   AffineMap::get(loops, 0, wExprs, ctx),
                                   AffineMap::get(loops, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators = parallelIterators(3 + s);
    iterators.append(1 + s, utils::IteratorType::reduction);
    Value result =
        rewriter
            .create<linalg::GenericOp>(loc, outType, ValueRange{in, w}, init,
                                       maps, iterators, multiplyAccumulate)
            .getResult(0);
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, result, op.getType()));
    return success();
  }
};
} // namespace

void mlir::tcc::populateContractionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<MatmulToLinalg, ConvToLinalg>(patterns.getContext());
}
