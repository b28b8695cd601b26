//===- ConvolutionsToGemm.cpp - im2col + GEMM for the CUDA target ---------===//
//
// On a GPU a GEMM runs at cuBLAS's speed while a convolution's generic loop
// nest would run one output element per thread. A convolution becomes the
// copy of its input windows into columns and one batched contraction,
// which tcc-contractions-to-cublas then hands to cuBLAS.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCCONVOLUTIONSTOGEMM
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
/// Below these, the GEMM is too thin for cuBLAS to beat the direct loops
/// (depthwise convolutions: one output channel and 9 taps a group).
constexpr int64_t kMinOutputChannels = 16;
constexpr int64_t kMinReduction = 16;

/// The coefficient of dimension `dim` in the linear expression `e` of
/// `numDims` dimensions (nullopt when `e` is not linear or has a constant).
std::optional<int64_t> coefficient(AffineExpr e, unsigned dim,
                                   unsigned numDims) {
  MLIRContext *ctx = e.getContext();
  auto at = [&](std::optional<unsigned> one) -> std::optional<int64_t> {
    SmallVector<AffineExpr> values;
    for (unsigned i = 0; i < numDims; ++i)
      values.push_back(getAffineConstantExpr(one && *one == i ? 1 : 0, ctx));
    auto c = dyn_cast<AffineConstantExpr>(
        simplifyAffineExpr(e.replaceDims(values), numDims, 0));
    if (!c)
      return std::nullopt;
    return c.getValue();
  };
  std::optional<int64_t> zero = at(std::nullopt), unit = at(dim);
  if (!zero || !unit || *zero != 0)
    return std::nullopt;
  return *unit;
}

/// `out + a * b` (in either order) as the op's body.
bool isMultiplyAdd(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || body.getOperations().size() != 3)
    return false;
  BlockArgument out = body.getArgument(2);
  Value product = add.getLhs() == out   ? add.getRhs()
                  : add.getRhs() == out ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1);
  return (mul.getLhs() == a && mul.getRhs() == b) ||
         (mul.getLhs() == b && mul.getRhs() == a);
}

struct Convolution {
  int64_t strideH, strideW, dilationH, dilationW;
};

/// Matches tcc's 2-D convolution: loops (n, g, f, oh, ow, c, kh, kw), input
/// (n, g, c, oh * sh + kh * dh, ow * sw + kw * dw), filter (g, f, c, kh,
/// kw), output (n, g, f, oh, ow), a multiply-add body, f32 tensors.
std::optional<Convolution> matchConvolution(linalg::GenericOp op) {
  if (op.getNumLoops() != 8 || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !op.hasPureTensorSemantics() ||
      !isMultiplyAdd(op))
    return std::nullopt;
  auto iterators = op.getIteratorTypesArray();
  for (unsigned i = 0; i < 8; ++i)
    if ((i < 5) != (iterators[i] == utils::IteratorType::parallel))
      return std::nullopt;
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape() || !t.getElementType().isF32())
      return std::nullopt;
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  if (maps[1] != AffineMap::get(8, 0, {d(1), d(2), d(5), d(6), d(7)}, ctx) ||
      maps[2] != AffineMap::get(8, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx))
    return std::nullopt;
  AffineMap in = maps[0];
  if (in.getNumResults() != 5 || in.getResult(0) != d(0) ||
      in.getResult(1) != d(1) || in.getResult(2) != d(5))
    return std::nullopt;
  Convolution conv;
  auto window = [&](AffineExpr e, unsigned outDim, unsigned tapDim,
                    int64_t &stride, int64_t &dilation) {
    for (unsigned i = 0; i < 8; ++i) {
      std::optional<int64_t> c = coefficient(e, i, 8);
      if (!c)
        return false;
      if (i == outDim)
        stride = *c;
      else if (i == tapDim)
        dilation = *c;
      else if (*c != 0)
        return false;
    }
    return stride > 0 && dilation > 0;
  };
  if (!window(in.getResult(3), 3, 6, conv.strideH, conv.dilationH) ||
      !window(in.getResult(4), 4, 7, conv.strideW, conv.dilationW))
    return std::nullopt;
  return conv;
}

struct TccConvolutionsToGemmPass
    : tcc::impl::TccConvolutionsToGemmBase<TccConvolutionsToGemmPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> convs;
    getOperation().walk([&](linalg::GenericOp op) {
      if (matchConvolution(op))
        convs.push_back(op);
    });
    for (linalg::GenericOp op : convs)
      rewrite(op, *matchConvolution(op));
  }

  void rewrite(linalg::GenericOp op, const Convolution &conv) {
    Value input = op.getDpsInputOperand(0)->get();
    Value filter = op.getDpsInputOperand(1)->get();
    Value init = op.getDpsInitOperand(0)->get();
    auto outType = cast<RankedTensorType>(init.getType());
    auto filterType = cast<RankedTensorType>(filter.getType());
    ArrayRef<int64_t> o = outType.getShape(), w = filterType.getShape();
    int64_t N = o[0], G = o[1], F = o[2], OH = o[3], OW = o[4];
    int64_t C = w[2], KH = w[3], KW = w[4];
    int64_t K = C * KH * KW, P = OH * OW;
    if (F < kMinOutputChannels || K < kMinReduction || (N != 1 && G != 1))
      return;
    OpBuilder b(op);
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Type f32 = b.getF32Type();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    auto par = utils::IteratorType::parallel;
    auto red = utils::IteratorType::reduction;

    // The columns, [N, G, K, P].
    Value columns;
    auto inType = cast<RankedTensorType>(input.getType());
    bool pointwise = KH == 1 && KW == 1 && conv.strideH == 1 &&
                     conv.strideW == 1 && inType.getDimSize(3) == OH &&
                     inType.getDimSize(4) == OW;
    if (pointwise) {
      // A 1x1 convolution of stride 1 reads its input as it is.
      columns = b.create<tensor::CollapseShapeOp>(
          loc, RankedTensorType::get({N, G, K, P}, f32), input,
          ArrayRef<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
    } else {
      // col[n, g, c, kh, kw, oh, ow] = in[n, g, c, oh*sh + kh*dh, ...].
      auto colType = RankedTensorType::get({N, G, C, KH, KW, OH, OW}, f32);
      Value empty = b.create<tensor::EmptyOp>(loc, colType.getShape(), f32);
      AffineMap read = AffineMap::get(
          7, 0,
          {d(0), d(1), d(2), d(5) * conv.strideH + d(3) * conv.dilationH,
           d(6) * conv.strideW + d(4) * conv.dilationW},
          ctx);
      auto copy = b.create<linalg::GenericOp>(
          loc, colType, input, empty,
          ArrayRef<AffineMap>{read, AffineMap::getMultiDimIdentityMap(7, ctx)},
          SmallVector<utils::IteratorType>(7, par),
          [](OpBuilder &nb, Location nl, ValueRange args) {
            nb.create<linalg::YieldOp>(nl, args[0]);
          });
      columns = b.create<tensor::CollapseShapeOp>(
          loc, RankedTensorType::get({N, G, K, P}, f32), copy.getResult(0),
          ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3, 4}, {5, 6}});
    }
    // One image: batched over groups; one group: batched over images.
    bool overGroups = N == 1;
    int64_t batch = overGroups ? G : N;
    Value cols = b.create<tensor::CollapseShapeOp>(
        loc, RankedTensorType::get({batch, K, P}, f32), columns,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
    Value out = b.create<tensor::CollapseShapeOp>(
        loc, RankedTensorType::get({batch, F, P}, f32), init,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3, 4}});
    Value weights;
    AffineMap weightMap;
    // Loops (b, f, p, k).
    if (overGroups) {
      weights = b.create<tensor::CollapseShapeOp>(
          loc, RankedTensorType::get({G, F, K}, f32), filter,
          ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3, 4}});
      weightMap = AffineMap::get(4, 0, {d(0), d(1), d(3)}, ctx);
    } else {
      weights = b.create<tensor::CollapseShapeOp>(
          loc, RankedTensorType::get({F, K}, f32), filter,
          ArrayRef<ReassociationIndices>{{0, 1}, {2, 3, 4}});
      weightMap = AffineMap::get(4, 0, {d(1), d(3)}, ctx);
    }
    auto gemm = b.create<linalg::GenericOp>(
        loc, out.getType(), ValueRange{cols, weights}, out,
        ArrayRef<AffineMap>{AffineMap::get(4, 0, {d(0), d(3), d(2)}, ctx),
                            weightMap,
                            AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx)},
        ArrayRef<utils::IteratorType>{par, par, par, red},
        [](OpBuilder &nb, Location nl, ValueRange args) {
          Value p = nb.create<arith::MulFOp>(nl, args[0], args[1]);
          nb.create<linalg::YieldOp>(
              nl, ValueRange{nb.create<arith::AddFOp>(nl, args[2], p)});
        });
    Value result = b.create<tensor::ExpandShapeOp>(
        loc, outType, gemm.getResult(0),
        ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3, 4}});
    op.getResult(0).replaceAllUsesWith(result);
    op.erase();
  }
};
} // namespace
