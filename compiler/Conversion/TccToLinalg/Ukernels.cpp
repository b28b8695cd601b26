//===- Ukernels.cpp - contractions as micro-kernel calls ------------------===//
//
// 2-D f32 convolutions and f32 matrix products become tcc.ukernel calls of
// runtime/ukernels, built for the target's ISA. Constant weights are packed
// here, at compile time, into the layout the kernels read (with the same
// packing code the kernels use, compiled into the compiler). A tcc.fused
// "contraction" group passes its bias, residual add, GELU and clamp to the
// kernel as its epilogue. 2-D f32 max pooling becomes a call where the
// kernels do it a vector at a time. Anything else keeps the generic
// lowering.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/TccToLinalg/Patterns.h"
#include "compiler/Conversion/TccToLinalg/Utils.h"
#include "compiler/Transforms/Attention.h"
#include "compiler/Transforms/Epilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include "dialects/Tcc/IR/TccConstants.h"
#include "dialects/Tcc/IR/TccOps.h"

#include "ukernels.h"

#include <limits>

static_assert(int32_t(mlir::tcc::Activation::Gelu) == TCC_UK_ACT_GELU &&
                  int32_t(mlir::tcc::Activation::GeluTanh) ==
                      TCC_UK_ACT_GELU_TANH &&
                  int32_t(mlir::tcc::Activation::Silu) == TCC_UK_ACT_SILU &&
                  int32_t(mlir::tcc::Activation::HardSwish) ==
                      TCC_UK_ACT_HARDSWISH,
              "the epilogue's activations are the kernels'");

using namespace mlir;
using namespace mlir::tcc;

/// A constant holding `packed` (kernel-specific layout, as a flat tensor).
static Value packedConstant(OpBuilder &b, Location loc,
                            const std::vector<float> &packed) {
  auto type = RankedTensorType::get({int64_t(packed.size())}, b.getF32Type());
  return b.create<arith::ConstantOp>(
      loc, cast<TypedAttr>(floatBlob(type, packed, "packed_weight")));
}

static Value scratchTensor(OpBuilder &b, Location loc, int64_t bytes) {
  return b.create<tensor::EmptyOp>(loc, ArrayRef<int64_t>{bytes},
                                   b.getI8Type());
}

static bool isF32Static(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32();
}

/// A product of f32 matrices (or stacks of them); a vector operand, which
/// numpy semantics promote and then squeeze, keeps the generic lowering.
static bool matmulFits(MatmulOp op) {
  return isF32Static(op.getLhs()) && isF32Static(op.getRhs()) &&
         op.getLhs().getType().getRank() >= 2 &&
         op.getRhs().getType().getRank() >= 2;
}

/// Bytes of scratch a batched product may take to run its products in
/// parallel, each with scratch of its own.
static constexpr int64_t kBatchScratchLimit = int64_t(4) << 20;

namespace {
/// The named scalar parameters of a tcc.ukernel call.
struct ParamList {
  explicit ParamList(OpBuilder &b) : b(b) {}
  void operator()(StringRef name, int64_t v) {
    list.push_back(b.getNamedAttr(name, b.getI64IntegerAttr(v)));
  }
  void f32(StringRef name, float v) {
    list.push_back(b.getNamedAttr(name, b.getF32FloatAttr(v)));
  }
  /// <prefix>has_clamp, <prefix>clamp_min and <prefix>clamp_max.
  void clamp(const Epilogue &e, StringRef prefix = "") {
    (*this)((prefix + "has_clamp").str(), e.hasClamp);
    f32((prefix + "clamp_min").str(), e.clampMin);
    f32((prefix + "clamp_max").str(), e.clampMax);
  }
  /// A window's input sizes, extent, strides, dilations and leading pads
  /// (a convolution's or a pooling's parameters).
  /// Each name after `prefix`.
  template <typename Params>
  void window(const Params &p, StringRef prefix = "") {
    auto add = [&](StringRef name, int64_t v) {
      (*this)((prefix + name).str(), v);
    };
    add("n", p.n), add("c", p.c), add("h", p.h), add("w", p.w);
    add("kh", p.kh), add("kw", p.kw);
    add("stride_h", p.stride_h), add("stride_w", p.stride_w);
    add("dilation_h", p.dilation_h), add("dilation_w", p.dilation_w);
    add("pad_top", p.pad_top), add("pad_left", p.pad_left);
  }
  /// A convolution's window and trailing pads too.
  void convWindow(const tcc_uk_conv2d_params_t &p, StringRef prefix = "") {
    window(p, prefix);
    (*this)((prefix + "pad_bottom").str(), p.pad_bottom);
    (*this)((prefix + "pad_right").str(), p.pad_right);
  }
  OpBuilder &b;
  SmallVector<NamedAttribute> list;
};

bool convFits(ConvOp op);

/// The global average pooling a group yields beside its convolution's
/// output (tcc-fuse's plane means): result 1, the keepdims mean over the
/// plane axes of result 0. Null where the group has no such result.
ReduceMeanOp matchPlaneMeans(FusedOp op) {
  auto yield = cast<YieldOp>(op.getBody().front().getTerminator());
  if (yield.getNumOperands() != 2)
    return ReduceMeanOp();
  auto mean = yield.getOperand(1).getDefiningOp<ReduceMeanOp>();
  if (!mean || mean.getInput() != yield.getOperand(0) || !mean.getKeepdims() ||
      mean.getInput().getType().getRank() != 4 ||
      mean.getAxes() != ArrayRef<int64_t>({2, 3}))
    return ReduceMeanOp();
  return mean;
}

/// Shared by the plain and the fused forms.
struct UkernelBuilder {
  int32_t isa;

  /// conv2d: input, weight (packed now if `weightSource`, the weight as the
  /// graph has it, is a constant), bias?, residual?, the prologue's scale?
  /// and shift? (as converted; `prologue` only where prologueFits). With
  /// `means` (a depthwise convolution, meansFit), the call also writes the
  /// mean of each output plane, a tensor of type `meansType` set there.
  FailureOr<Value> conv(OpBuilder &b, ConvOp op, Value input, Value weight,
                        Value weightSource, Value bias,
                        const Epilogue &epilogue, MaxPoolOp pool = MaxPoolOp(),
                        const Prologue *prologue = nullptr,
                        Value *means = nullptr,
                        RankedTensorType meansType = {}) const {
    Location loc = op.getLoc();
    tcc_uk_conv2d_params_t p = convParams(op);
    weight = packWeights(b, loc, p, weight, weightSource);
    if (pool)
      poolMode(isa, p, pool);
    p.in_relu = prologue ? 1 : 0; // the scratch asks only whether there is one
    int64_t scratch = tcc_uk_conv2d_scratch_bytes(isa, &p);
    SmallVector<Value> inputs = {input, weight};
    if (bias)
      inputs.push_back(bias);
    if (epilogue.residual)
      inputs.push_back(epilogue.residual);
    if (prologue)
      for (Value v : {prologue->scale, prologue->shift})
        if (v)
          inputs.push_back(v);
    SmallVector<Value> outputs = {
        emptyTensor(b, loc, pool ? pool.getType() : op.getType())};
    if (means)
      outputs.push_back(emptyTensor(b, loc, meansType));
    if (scratch > 0)
      outputs.push_back(scratchTensor(b, loc, scratch));
    ParamList add(b);
    add.convWindow(p);
    add("f", p.f), add("groups", p.groups), add("flags", p.flags);
    if (pool)
      add("pool", p.pool);
    if (p.pool == 1) {
      const tcc_uk_pool2d_params_t &q = p.pool_window;
      add("pool_kh", q.kh), add("pool_kw", q.kw);
      add("pool_stride_h", q.stride_h), add("pool_stride_w", q.stride_w);
      add("pool_pad_top", q.pad_top), add("pool_pad_left", q.pad_left);
      add("pool_oh", q.oh), add("pool_ow", q.ow);
    }
    add("has_bias", bias != nullptr);
    add("has_residual", epilogue.residual != nullptr);
    add.clamp(epilogue);
    add("activation", static_cast<int64_t>(epilogue.activation));
    if (means)
      add("has_means", 1);
    if (prologue) {
      add("has_in_scale", prologue->scale != nullptr);
      add("has_in_shift", prologue->shift != nullptr);
      add("in_relu", prologue->relu);
    }
    // The accumulating form drops the residual, the last input: not with a
    // prologue's inputs after it, nor with means (computed where the
    // output is written, not accumulated).
    FailureOr<Value> r =
        call(b, loc, "conv2d", inputs, outputs, add.list,
             epilogue.residual != nullptr && !prologue && !means);
    if (succeeded(r) && means)
      *means = r->getDefiningOp()->getResult(1);
    return r;
  }

  /// Whether the kernels write the plane means of `op`'s output as they
  /// compute it: a depthwise convolution (one input channel and one filter
  /// a group) of a static f32 shape.
  static bool meansFit(ConvOp op) {
    tcc_uk_conv2d_params_t p = convParams(op);
    return convFits(op) && p.groups > 1 && p.groups == p.c && p.f == p.c;
  }

  /// Whether the kernels apply an input prologue to `op` (its weight as
  /// the graph has it: packed now where constant, which decides the path).
  bool prologueFits(ConvOp op, Value weightSource) const {
    tcc_uk_conv2d_params_t p = convParams(op);
    if (matchPattern(weightSource, m_Constant()))
      p.flags |= TCC_UK_PACKED_A;
    p.in_relu = 1;
    return tcc_uk_conv2d_prologue_fits(isa, &p) != 0;
  }

  /// How the kernels of `isa` pool convolution p's output as `pool` says,
  /// set in p.pool (and p.pool_window) and returned: 2, the 2x2 in
  /// registers; 1, by bands of rows; 0, not at all (a maxpool2d call after
  /// the convolution's).
  static int64_t poolMode(int32_t isa, tcc_uk_conv2d_params_t &p,
                          MaxPoolOp pool) {
    auto all = [](ArrayRef<int64_t> values, int64_t v) {
      return llvm::all_of(values, [&](int64_t x) { return x == v; });
    };
    RankedTensorType out = pool.getType();
    if (!pool.getCeilMode() && all(pool.getKernel(), 2) &&
        all(pool.getStrides(), 2) && all(pool.getPadding(), 0)) {
      p.pool = 2;
      if (tcc_uk_conv2d_pool_fits(isa, &p))
        return 2;
    }
    tcc_uk_pool2d_params_t &window = p.pool_window;
    window = {};
    window.n = p.n, window.c = p.f;
    auto in = cast<RankedTensorType>(pool.getInput().getType());
    window.h = in.getDimSize(2), window.w = in.getDimSize(3);
    window.kh = pool.getKernel()[0], window.kw = pool.getKernel()[1];
    window.stride_h = pool.getStrides()[0];
    window.stride_w = pool.getStrides()[1];
    window.dilation_h = window.dilation_w = 1;
    window.pad_top = pool.getPadding()[0];
    window.pad_left = pool.getPadding()[1];
    window.oh = out.getDimSize(2), window.ow = out.getDimSize(3);
    p.pool = 1;
    if (!tcc_uk_conv2d_pool_fits(isa, &p))
      p.pool = 0;
    return p.pool;
  }

  /// The kernel's parameters for a 2-D convolution (flags: none yet).
  static tcc_uk_conv2d_params_t convParams(ConvOp op) {
    auto in = op.getInput().getType();
    auto w = op.getWeight().getType();
    tcc_uk_conv2d_params_t p = {};
    p.n = in.getDimSize(0), p.c = in.getDimSize(1);
    p.h = in.getDimSize(2), p.w = in.getDimSize(3);
    p.f = w.getDimSize(0), p.kh = w.getDimSize(2), p.kw = w.getDimSize(3);
    p.stride_h = op.getStrides()[0], p.stride_w = op.getStrides()[1];
    p.dilation_h = op.getDilations()[0], p.dilation_w = op.getDilations()[1];
    p.pad_top = op.getPadding()[0], p.pad_left = op.getPadding()[1];
    p.pad_bottom = op.getPadding()[2], p.pad_right = op.getPadding()[3];
    p.groups = op.getGroups();
    return p;
  }

  /// The weight packed now for the kernels of `isa` when `weightSource` is
  /// a constant (setting TCC_UK_PACKED_A in p), else `weight`.
  Value packWeights(OpBuilder &b, Location loc, tcc_uk_conv2d_params_t &p,
                    Value weight, Value weightSource) const {
    std::optional<std::vector<float>> values = constantFloats(weightSource);
    if (!values)
      return weight;
    std::vector<float> packed(tcc_uk_conv2d_pack_weights_bytes(isa, &p) /
                              sizeof(float));
    tcc_uk_conv2d_pack_weights(isa, &p, values->data(), packed.data());
    p.flags |= TCC_UK_PACKED_A;
    return packedConstant(b, loc, packed);
  }

  /// Whether the kernels run this depthwise/pointwise pair in one pass
  /// faster than as two convolutions.
  bool pairFast(ConvOp dw, ConvOp pw) const {
    tcc_uk_dwpw_params_t p = {};
    p.dw = convParams(dw);
    p.f = pw.getType().getDimSize(1);
    return tcc_uk_dwpw_fast(isa, &p) != 0;
  }

  /// A depthwise convolution (with its bias and clamp) and the 1x1
  /// convolution after it as one call; the operands as converted, weight
  /// sources as the graph has them (to see constants).
  FailureOr<Value> pair(OpBuilder &b, ConvOp dw, ConvOp pw, Value input,
                        Value dwWeight, Value dwBias, const Epilogue &dwEpi,
                        Value pwWeight, Value pwWeightSource, Value bias,
                        const Epilogue &epilogue) const {
    Location loc = pw.getLoc();
    tcc_uk_dwpw_params_t p = {};
    p.dw = convParams(dw);
    p.f = pw.getType().getDimSize(1);
    tcc_uk_conv2d_params_t pwParams = convParams(pw);
    pwWeight = packWeights(b, loc, pwParams, pwWeight, pwWeightSource);
    p.flags = pwParams.flags;
    int64_t scratch = tcc_uk_dwpw_scratch_bytes(isa, &p);
    if (scratch <= 0)
      return failure();
    SmallVector<Value> inputs = {input, dwWeight};
    if (dwBias)
      inputs.push_back(dwBias);
    inputs.push_back(pwWeight);
    if (bias)
      inputs.push_back(bias);
    if (epilogue.residual)
      inputs.push_back(epilogue.residual);
    SmallVector<Value> outputs = {emptyTensor(b, loc, pw.getType()),
                                  scratchTensor(b, loc, scratch)};
    ParamList add(b);
    add.convWindow(p.dw);
    add("has_dw_bias", dwBias != nullptr);
    add.clamp(dwEpi, "dw_");
    add("f", p.f), add("flags", p.flags);
    add("has_bias", bias != nullptr);
    add("has_residual", epilogue.residual != nullptr);
    add.clamp(epilogue);
    return call(b, loc, "dwpw_conv2d", inputs, outputs, add.list);
  }

  /// The kernels' parameters for an expansion, depthwise and pointwise
  /// block (flags and scratch unset).
  static tcc_uk_block_params_t blockParams(ConvOp exp, ConvOp dw, ConvOp pw) {
    tcc_uk_block_params_t p = {};
    p.pair.dw = convParams(dw);
    p.pair.f = pw.getType().getDimSize(1);
    p.exp = convParams(exp);
    return p;
  }

  /// Whether the kernels run the block as one call faster than as the
  /// expansion and the pair.
  bool blockFast(ConvOp exp, ConvOp dw, ConvOp pw) const {
    tcc_uk_block_params_t p = blockParams(exp, dw, pw);
    return tcc_uk_block_fast(isa, &p) != 0;
  }

  /// Where the kernels run the block channel-blocked and its three
  /// weights are constants: the weights packed now as those kernels read
  /// them (TCC_UK_PACKED_BLOCKED in p.exp.flags); false, changing nothing,
  /// elsewhere.
  bool packBlocked(OpBuilder &b, Location loc, tcc_uk_block_params_t &p,
                   Value &expWeight, Value expSource, Value &dwWeight,
                   Value dwSource, Value &pwWeight, Value pwSource) const {
    if (!tcc_uk_block_blocked(isa, &p))
      return false;
    std::optional<std::vector<float>> values[] = {constantFloats(expSource),
                                                  constantFloats(dwSource),
                                                  constantFloats(pwSource)};
    if (!values[0] || !values[1] || !values[2])
      return false;
    Value *weights[] = {&expWeight, &dwWeight, &pwWeight};
    const int32_t parts[] = {TCC_UK_BLOCK_EXPANSION, TCC_UK_BLOCK_DEPTHWISE,
                             TCC_UK_BLOCK_PROJECTION};
    for (int i = 0; i < 3; ++i) {
      std::vector<float> packed(
          tcc_uk_block_pack_weights_bytes(isa, &p, parts[i]) / sizeof(float));
      tcc_uk_block_pack_weights(isa, &p, parts[i], values[i]->data(),
                                packed.data());
      *weights[i] = packedConstant(b, loc, packed);
    }
    p.exp.flags |= TCC_UK_PACKED_BLOCKED;
    return true;
  }

  /// A convolution with one group (an expanding 1x1, or a stem), the
  /// depthwise convolution after it and the 1x1 after that as one call:
  /// the pair's operands as for `pair`, the first convolution's weight (as
  /// converted, and as the graph has it), bias and epilogue (a clamp at
  /// most) before them.
  FailureOr<Value> block(OpBuilder &b, ConvOp exp, ConvOp dw, ConvOp pw,
                         Value input, Value expWeight, Value expWeightSource,
                         Value expBias, const Epilogue &expEpi, Value dwWeight,
                         Value dwWeightSource, Value dwBias,
                         const Epilogue &dwEpi, Value pwWeight,
                         Value pwWeightSource, Value bias,
                         const Epilogue &epilogue) const {
    Location loc = pw.getLoc();
    tcc_uk_block_params_t p = blockParams(exp, dw, pw);
    if (!packBlocked(b, loc, p, expWeight, expWeightSource, dwWeight,
                     dwWeightSource, pwWeight, pwWeightSource)) {
      expWeight = packWeights(b, loc, p.exp, expWeight, expWeightSource);
      tcc_uk_conv2d_params_t pwParams = convParams(pw);
      pwWeight = packWeights(b, loc, pwParams, pwWeight, pwWeightSource);
      p.pair.flags = pwParams.flags;
    }
    int64_t scratch = tcc_uk_block_scratch_bytes(isa, &p);
    if (scratch <= 0)
      return failure();
    SmallVector<Value> inputs = {input, expWeight};
    for (Value v :
         {expBias, dwWeight, dwBias, pwWeight, bias, epilogue.residual})
      if (v)
        inputs.push_back(v);
    SmallVector<Value> outputs = {emptyTensor(b, loc, pw.getType()),
                                  scratchTensor(b, loc, scratch)};
    ParamList add(b);
    add.convWindow(p.pair.dw);
    add.convWindow(p.exp, "exp_");
    add("exp_flags", p.exp.flags);
    add("has_exp_bias", expBias != nullptr);
    add.clamp(expEpi, "exp_");
    add("has_dw_bias", dwBias != nullptr);
    add.clamp(dwEpi, "dw_");
    add("f", p.pair.f), add("flags", p.pair.flags);
    add("has_bias", bias != nullptr);
    add("has_residual", epilogue.residual != nullptr);
    add.clamp(epilogue);
    return call(b, loc, "block_conv2d", inputs, outputs, add.list);
  }

  /// sgemm over a batch of matrices. `lhs`, `rhs` and `out` describe the
  /// operands as strided views of the tensors the kernel receives
  /// (`lhsValue`, `rhsValue`: as converted; `out`'s base: the result type);
  /// a constant right-hand side with one matrix is packed now.
  FailureOr<Value> matmul(OpBuilder &b, Location loc, const MatrixView &lhs,
                          Value lhsValue, const MatrixView &rhs, Value rhsValue,
                          const MatrixView &out, RankedTensorType outType,
                          const Epilogue &epilogue) const {
    int64_t batch = out.batch, m = out.rows, n = out.cols, k = lhs.cols;
    if (lhs.rows != m || rhs.rows != k || rhs.cols != n ||
        (lhs.batch != 1 && lhs.batch != batch) ||
        (rhs.batch != 1 && rhs.batch != batch))
      return failure();
    uint32_t flags = 0;
    auto leading = [&](const MatrixView &v, uint32_t transFlag) {
      if (v.colStride != 1) {
        flags |= transFlag;
        return v.colStride;
      }
      return v.rowStride;
    };
    int64_t lda = leading(lhs, TCC_UK_TRANS_A);
    int64_t ldb = leading(rhs, TCC_UK_TRANS_B);
    int64_t ldc = out.rowStride;
    int64_t strideA = lhs.batch == 1 ? 0 : lhs.batchStride;
    int64_t strideB = rhs.batch == 1 ? 0 : rhs.batchStride;
    int64_t strideC = out.batchStride;
    // Matrices stacked row after row, times one matrix: one tall product.
    if (batch > 1 && rhs.batch == 1 && !(flags & TCC_UK_TRANS_A) &&
        strideA == m * lda && strideC == m * ldc) {
      m *= batch;
      batch = 1;
    }
    if (batch == 1)
      strideA = strideB = strideC = 0;
    if (rhs.batch == 1)
      if (std::optional<std::vector<float>> values = constantFloats(rhs.base)) {
        std::vector<float> packed(tcc_uk_pack_b_bytes(isa, k, n) /
                                  sizeof(float));
        tcc_uk_pack_b(isa, k, n, values->data(), ldb,
                      (flags & TCC_UK_TRANS_B) != 0, packed.data());
        rhsValue = packedConstant(b, loc, packed);
        flags = (flags & ~uint32_t(TCC_UK_TRANS_B)) | TCC_UK_PACKED_B;
      }
    int64_t scratch = tcc_uk_sgemm_scratch_bytes(isa, flags, m, n, k);
    // A batch may run one product a thread (attention's heads: small
    // products, each split across threads would cost more in dispatch than
    // it saves) when every product can have scratch of its own.
    int64_t scratchStride = 0;
    bool batchParallel = batch > 1;
    if (batchParallel && scratch > 0) {
      scratchStride = (scratch + 63) / 64 * 64;
      batchParallel = scratchStride * batch <= kBatchScratchLimit;
      scratch = batchParallel ? scratchStride * batch : scratch;
      scratchStride = batchParallel ? scratchStride : 0;
    }
    SmallVector<Value> inputs = {lhsValue, rhsValue};
    if (epilogue.bias)
      inputs.push_back(epilogue.bias);
    if (epilogue.residual)
      inputs.push_back(epilogue.residual);
    SmallVector<Value> outputs = {emptyTensor(b, loc, outType)};
    if (scratch > 0)
      outputs.push_back(scratchTensor(b, loc, scratch));
    ParamList add(b);
    add("batch", batch), add("m", m), add("n", n), add("k", k);
    add("lda", lda), add("ldb", ldb), add("ldc", ldc);
    add("stride_a", strideA), add("stride_b", strideB),
        add("stride_c", strideC);
    add("flags", flags);
    add("has_bias", epilogue.bias != nullptr), add("bias_per_row", 0);
    add("has_residual", epilogue.residual != nullptr);
    // A residual is shaped like the (contiguous) result.
    add("ldr", n), add("stride_r", batch == 1 ? 0 : m * n);
    add("batch_parallel", batchParallel), add("scratch_stride", scratchStride);
    add("activation", static_cast<int64_t>(epilogue.activation));
    add.clamp(epilogue);
    // In place only when C is as dense as the residual.
    bool canAccumulate =
        epilogue.residual && ldc == n && (batch == 1 || strideC == m * n);
    return call(b, loc, "sgemm", inputs, outputs, add.list, canAccumulate);
  }

  /// The call; with `canAccumulate` (its last input a residual, added in
  /// the epilogue), also the params that accumulate into C instead.
  FailureOr<Value> call(OpBuilder &b, Location loc, StringRef name,
                        ValueRange inputs, ValueRange outputs,
                        ArrayRef<NamedAttribute> params,
                        bool canAccumulate = false) const {
    DictionaryAttr accumulate;
    if (canAccumulate) {
      NamedAttrList acc(params);
      int64_t flags = cast<IntegerAttr>(acc.get("flags")).getInt();
      acc.set("flags", b.getI64IntegerAttr(flags | TCC_UK_ACCUMULATE));
      acc.set("has_residual", b.getI64IntegerAttr(0));
      accumulate = acc.getDictionary(b.getContext());
    }
    auto op =
        b.create<UkernelOp>(loc, outputs.getTypes(), name, inputs, outputs,
                            b.getDictionaryAttr(params), accumulate);
    return op.getResult(0);
  }
};

bool convFits(ConvOp op) {
  return op.getType().getRank() == 4 && isF32Static(op.getInput()) &&
         isF32Static(op.getWeight()) &&
         (!op.getBias() || isF32Static(op.getBias()));
}

struct ConvToUkernel : OpConversionPattern<ConvOp> {
  ConvToUkernel(MLIRContext *ctx, int32_t isa)
      : OpConversionPattern(ctx, /*benefit=*/2), builder{isa} {}
  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!convFits(op))
      return rewriter.notifyMatchFailure(op, "not a 2-D f32 convolution");
    FailureOr<Value> r =
        builder.conv(rewriter, op, adaptor.getInput(), adaptor.getWeight(),
                     op.getWeight(), adaptor.getBias(), Epilogue());
    if (failed(r))
      return failure();
    rewriter.replaceOp(op, *r);
    return success();
  }
  UkernelBuilder builder;
};

/// A group's body arguments stand for its inputs: as converted, and as the
/// graph has them (to see constants).
static void mapGroupInputs(FusedOp op, ValueRange convertedInputs,
                           IRMapping &converted, IRMapping &original) {
  for (auto [arg, v, o] : llvm::zip(op.getBody().front().getArguments(),
                                    convertedInputs, op.getInputs())) {
    converted.map(arg, v);
    original.map(arg, o);
  }
}

/// An "attention" group (tcc-fuse-attention): softmax(scale Q K^T + mask) V
/// in one call, each operand addressed through its views' strides.
struct AttentionGroupToUkernel : OpConversionPattern<FusedOp> {
  AttentionGroupToUkernel(MLIRContext *ctx, int32_t isa)
      : OpConversionPattern(ctx, /*benefit=*/2), builder{isa} {}
  LogicalResult
  matchAndRewrite(FusedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getKind() != "attention")
      return rewriter.notifyMatchFailure(op, "not an attention group");
    Block &body = op.getBody().front();
    IRMapping converted, original;
    mapGroupInputs(op, adaptor.getInputs(), converted, original);
    SmallVector<MatmulOp> products;
    for (Operation &inner : body)
      if (auto mm = dyn_cast<MatmulOp>(inner))
        products.push_back(mm);
    if (products.size() != 2)
      return rewriter.notifyMatchFailure(op, "not two products");
    MatmulOp qk = products[0], pv = products[1];
    std::optional<SoftmaxChain> chain = matchSoftmaxChain(qk.getResult());
    if (!chain || chain->result->getResult(0) != pv.getLhs())
      return rewriter.notifyMatchFailure(op, "no softmax between products");
    auto scalar = [&](Value v) -> std::optional<float> {
      std::optional<std::vector<float>> values =
          constantFloats(original.lookup(v));
      if (!values || values->size() != 1)
        return std::nullopt;
      return values->front();
    };
    // Q and K may each be scaled by a constant first (into the kernel's).
    float operandScale = 1.0f;
    size_t covered = 3;
    auto unscaled = [&](Value v) -> FailureOr<Value> {
      Value by;
      v = matchScaledOperand(v, by);
      if (!by)
        return v;
      std::optional<float> c =
          isa<BlockArgument>(by) ? scalar(by) : std::nullopt;
      if (!c)
        return failure();
      operandScale *= *c;
      ++covered;
      return v;
    };
    FailureOr<Value> qValue = unscaled(qk.getLhs());
    FailureOr<Value> kValue = unscaled(qk.getRhs());
    if (failed(qValue) || failed(kValue))
      return rewriter.notifyMatchFailure(op, "operands scaled by variables");
    MatrixView q = matchMatrixView(*qValue);
    MatrixView kt = matchMatrixView(*kValue);
    MatrixView v = matchMatrixView(pv.getRhs());
    MatrixView out = matchResultView(pv.getResult());
    covered += q.ops.size() + kt.ops.size() + v.ops.size() + out.ops.size() +
               chain->ops.size();
    if (covered != body.getOperations().size() || !isa<BlockArgument>(q.base) ||
        !isa<BlockArgument>(kt.base) || !isa<BlockArgument>(v.base) ||
        !matmulFits(qk) || !matmulFits(pv))
      return rewriter.notifyMatchFailure(op, "operands are not views");
    tcc_uk_attention_params_t p = {};
    p.batch = out.batch, p.sq = q.rows, p.d = q.cols, p.sk = kt.cols;
    p.dv = v.cols;
    if (kt.rows != p.d || v.rows != p.sk || out.rows != p.sq ||
        out.cols != p.dv)
      return rewriter.notifyMatchFailure(op, "shapes do not chain");
    // Each operand's leading dimension and batch stride (0: shared by every
    // problem), or a failure when it has no unit stride.
    bool fits = true;
    auto strides = [&](const MatrixView &m, uint32_t transFlag, int64_t &ld,
                       int64_t &stride) {
      fits &= m.batch == 1 || m.batch == p.batch;
      stride = m.batch == 1 ? 0 : m.batchStride;
      if (m.colStride == 1) {
        ld = m.rowStride;
      } else if (m.rowStride == 1) {
        ld = m.colStride;
        p.flags |= transFlag;
      } else {
        fits = false;
      }
    };
    strides(q, TCC_UK_ATTN_TRANS_Q, p.ldq, p.stride_q);
    strides(kt, TCC_UK_ATTN_TRANS_K, p.ldk, p.stride_k);
    strides(v, TCC_UK_ATTN_TRANS_V, p.ldv, p.stride_v);
    strides(out, 0, p.ldo, p.stride_o);
    if (!fits || out.colStride != 1)
      return rewriter.notifyMatchFailure(op, "operands are not strided views");
    p.scale = operandScale;
    if (chain->scale) {
      std::optional<float> c = scalar(chain->scale);
      if (!c)
        return rewriter.notifyMatchFailure(op, "the scale is not a constant");
      p.scale = chain->divide ? p.scale / *c : p.scale * *c;
    }
    Value mask;
    if (chain->mask) {
      auto maskType = cast<RankedTensorType>(chain->mask.getType());
      if (!isa<BlockArgument>(chain->mask) ||
          !attentionMaskStrides(maskType.getShape(),
                                qk.getResult().getType().getShape(), p.ldm,
                                p.stride_m))
        return rewriter.notifyMatchFailure(op, "mask layout not supported");
      mask = converted.lookup(chain->mask);
      p.mask_kind = TCC_UK_MASK_ADD;
      if (chain->fill) {
        std::optional<float> fill = scalar(chain->fill);
        if (!fill)
          return rewriter.notifyMatchFailure(op, "the fill is not a constant");
        p.mask_kind = TCC_UK_MASK_SELECT;
        p.fill = *fill;
      }
    }
    int64_t scratch = tcc_uk_attention_scratch_bytes(builder.isa, &p);
    if (scratch <= 0)
      return rewriter.notifyMatchFailure(op, "empty problem");
    SmallVector<Value> inputs = {converted.lookup(q.base),
                                 converted.lookup(kt.base),
                                 converted.lookup(v.base)};
    if (mask)
      inputs.push_back(mask);
    auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
    Location loc = op.getLoc();
    SmallVector<Value> outputs = {emptyTensor(rewriter, loc, resultType),
                                  scratchTensor(rewriter, loc, scratch)};
    ParamList add(rewriter);
    add("batch", p.batch), add("sq", p.sq), add("sk", p.sk), add("d", p.d);
    add("dv", p.dv), add("ldq", p.ldq), add("stride_q", p.stride_q);
    add("ldk", p.ldk), add("stride_k", p.stride_k), add("ldv", p.ldv);
    add("stride_v", p.stride_v), add("ldo", p.ldo), add("stride_o", p.stride_o);
    add("ldm", p.ldm), add("stride_m", p.stride_m);
    add.f32("scale", p.scale), add.f32("fill", p.fill);
    add("mask_kind", p.mask_kind), add("flags", p.flags);
    FailureOr<Value> r =
        builder.call(rewriter, loc, "attention", inputs, outputs, add.list);
    if (failed(r))
      return failure();
    rewriter.replaceOp(op, *r);
    return success();
  }
  UkernelBuilder builder;
};

/// The kernels' window of a 2-D f32 pooling (max or average) over a static
/// NCHW tensor; nullopt for any other.
template <typename PoolOp>
static std::optional<tcc_uk_pool2d_params_t> poolWindow(PoolOp op) {
  auto in = dyn_cast<RankedTensorType>(op.getInput().getType());
  RankedTensorType out = op.getType();
  if (!in || in.getRank() != 4 || !isF32Static(op.getInput()) ||
      !out.hasStaticShape() || op.getKernel().size() != 2)
    return std::nullopt;
  tcc_uk_pool2d_params_t p = {};
  p.n = in.getDimSize(0), p.c = in.getDimSize(1);
  p.h = in.getDimSize(2), p.w = in.getDimSize(3);
  p.kh = op.getKernel()[0], p.kw = op.getKernel()[1];
  p.stride_h = op.getStrides()[0], p.stride_w = op.getStrides()[1];
  p.dilation_h = op.getDilations()[0], p.dilation_w = op.getDilations()[1];
  p.pad_top = op.getPadding()[0], p.pad_left = op.getPadding()[1];
  p.oh = out.getDimSize(2), p.ow = out.getDimSize(3);
  return p;
}

/// A 2-D f32 max pooling the target's kernels do a vector at a time.
struct MaxPoolToUkernel : OpConversionPattern<MaxPoolOp> {
  MaxPoolToUkernel(MLIRContext *ctx, int32_t isa)
      : OpConversionPattern(ctx, /*benefit=*/2), builder{isa} {}
  LogicalResult
  matchAndRewrite(MaxPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<tcc_uk_pool2d_params_t> window = poolWindow(op);
    if (!window)
      return rewriter.notifyMatchFailure(op, "not a 2-D f32 pooling");
    const tcc_uk_pool2d_params_t &p = *window;
    if (!tcc_uk_maxpool2d_fast(builder.isa, &p))
      return rewriter.notifyMatchFailure(op, "no vector kernel for it");
    ParamList add(rewriter);
    add.window(p);
    add("oh", p.oh), add("ow", p.ow);
    FailureOr<Value> r = builder.call(
        rewriter, op.getLoc(), "maxpool2d", ValueRange{adaptor.getInput()},
        ValueRange{emptyTensor(rewriter, op.getLoc(), op.getType())}, add.list);
    rewriter.replaceOp(op, *r);
    return success();
  }
  UkernelBuilder builder;
};

/// A 2-D f32 average pooling the kernels run a vector at a time (stride 1
/// or 2, dilation 1): one avgpool2d call, the same bits as the generic
/// lowering (its sums in window order from zero, then the division by the
/// count), where that lowering made four kernels (a padded copy, the sums
/// one element at a time, the division).
struct AvgPoolToUkernel : OpConversionPattern<AvgPoolOp> {
  AvgPoolToUkernel(MLIRContext *ctx, int32_t isa)
      : OpConversionPattern(ctx, /*benefit=*/2), builder{isa} {}
  LogicalResult
  matchAndRewrite(AvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<tcc_uk_pool2d_params_t> window = poolWindow(op);
    if (!window)
      return rewriter.notifyMatchFailure(op, "not a 2-D f32 pooling");
    tcc_uk_avgpool2d_params_t p = {};
    p.window = *window;
    const tcc_uk_pool2d_params_t &w = p.window;
    p.pad_bottom = op.getPadding()[2], p.pad_right = op.getPadding()[3];
    p.count_include_pad = op.getCountIncludePad();
    if (!tcc_uk_avgpool2d_fast(builder.isa, &p))
      return rewriter.notifyMatchFailure(op, "no vector kernel for it");
    ParamList add(rewriter);
    add.window(w);
    add("oh", w.oh), add("ow", w.ow);
    add("pad_bottom", p.pad_bottom), add("pad_right", p.pad_right);
    add("count_include_pad", p.count_include_pad);
    FailureOr<Value> r = builder.call(
        rewriter, op.getLoc(), "avgpool2d", ValueRange{adaptor.getInput()},
        ValueRange{emptyTensor(rewriter, op.getLoc(), op.getType())}, add.list);
    rewriter.replaceOp(op, *r);
    return success();
  }
  UkernelBuilder builder;
};

/// A transpose that, once the dimensions staying next to each other are
/// merged (and those of size 1 dropped), is [batch, rows, cols] -> [batch,
/// cols, rows]: its innermost dimension moves (NHWC <-> NCHW). One call of
/// the transpose kernel, 16 x 16 blocks in registers, where linalg's loop
/// moved an element at a time (figures in docs/ukernels.md, "Transposes").
/// f32 only; a permutation that keeps the innermost dimension (rows of
/// several elements moved) stays linalg's.
struct TransposeToUkernel : OpConversionPattern<TransposeOp> {
  TransposeToUkernel(MLIRContext *ctx, int32_t isa)
      : OpConversionPattern(ctx, /*benefit=*/2), builder{isa} {}
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isF32Static(op.getInput()) || !op.getType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a static f32 transpose");
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(op.getInput().getType()).getShape();
    // Runs of input dimensions that stay together, in output order: (first
    // input dimension, elements).
    SmallVector<std::pair<int64_t, int64_t>> runs;
    int64_t last = -2;
    for (int64_t p : op.getPerm()) {
      if (shape[p] == 1)
        continue;
      if (p == last + 1 && !runs.empty())
        runs.back().second *= shape[p];
      else
        runs.push_back({p, shape[p]});
      last = p;
    }
    int64_t batch = 1, rows = 0, cols = 0;
    if (runs.size() == 2 && runs[1].first < runs[0].first) {
      rows = runs[1].second, cols = runs[0].second;
    } else if (runs.size() == 3 && runs[0].first < runs[2].first &&
               runs[2].first < runs[1].first) {
      batch = runs[0].second, rows = runs[2].second, cols = runs[1].second;
    } else {
      return rewriter.notifyMatchFailure(op, "not a batch of 2-D transposes");
    }
    ParamList add(rewriter);
    add("batch", batch), add("rows", rows), add("cols", cols);
    Location loc = op.getLoc();
    FailureOr<Value> r = builder.call(
        rewriter, loc, "transpose", ValueRange{adaptor.getInput()},
        ValueRange{emptyTensor(rewriter, loc, op.getType())}, add.list);
    if (failed(r))
      return failure();
    rewriter.replaceOp(op, *r);
    return success();
  }
  UkernelBuilder builder;
};

struct MatmulToUkernel : OpConversionPattern<MatmulOp> {
  MatmulToUkernel(MLIRContext *ctx, int32_t isa)
      : OpConversionPattern(ctx, /*benefit=*/2), builder{isa} {}
  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!matmulFits(op))
      return rewriter.notifyMatchFailure(op, "not an f32 matrix product");
    // A constant weight behind a transpose is packed from its own layout.
    MatrixView rhs = matchMatrixView(op.getRhs());
    Value rhsValue = adaptor.getRhs();
    if (constantFloats(rhs.base))
      rhsValue = rhs.base;
    else
      rhs = plainMatrixView(op.getRhs());
    FailureOr<Value> r = builder.matmul(
        rewriter, op.getLoc(), plainMatrixView(op.getLhs()), adaptor.getLhs(),
        rhs, rhsValue, plainMatrixView(op.getResult()), op.getType(),
        Epilogue());
    if (failed(r))
      return rewriter.notifyMatchFailure(op, "batch shapes not supported");
    rewriter.replaceOp(op, *r);
    return success();
  }
  UkernelBuilder builder;
};

/// A "contraction" group: the contraction and its epilogue become one call.
struct ContractionGroupToUkernel : OpConversionPattern<FusedOp> {
  ContractionGroupToUkernel(MLIRContext *ctx, int32_t isa)
      : OpConversionPattern(ctx, /*benefit=*/2), builder{isa} {}
  LogicalResult
  matchAndRewrite(FusedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getKind() != "contraction")
      return rewriter.notifyMatchFailure(op, "not a contraction group");
    Block &body = op.getBody().front();
    IRMapping converted, original;
    mapGroupInputs(op, adaptor.getInputs(), converted, original);
    SmallVector<Operation *> contractions;
    for (Operation &inner : body)
      if (isa<ConvOp, MatmulOp>(inner))
        contractions.push_back(&inner);
    if (contractions.size() == 3)
      return rewriteBlock(op, contractions, converted, original, rewriter);
    if (contractions.size() == 2)
      return rewritePair(op, contractions, converted, original, rewriter);
    if (contractions.size() != 1)
      return rewriter.notifyMatchFailure(op, "no contraction in the group");
    Operation *contraction = contractions.front();
    SmallVector<Operation *> chain;
    Epilogue e = matchEpilogue(contraction, chain);
    // A 2x2 pooling after a convolution (tcc-fuse took it).
    auto pool =
        dyn_cast_or_null<MaxPoolOp>(matchMaxPoolAfter(contraction, e, chain));
    e.bias = e.bias ? converted.lookup(e.bias) : Value();
    e.residual = e.residual ? converted.lookup(e.residual) : Value();
    auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
    size_t covered = 2 + chain.size(); // The contraction and the yield.
    // The mean of each output plane beside the output (tcc-fuse's).
    ReduceMeanOp planeMeans = matchPlaneMeans(op);
    if (op.getNumResults() != (planeMeans ? 2u : 1u))
      return rewriter.notifyMatchFailure(op, "results the call cannot give");
    covered += planeMeans ? 1 : 0;
    // A per-channel scale, shift and ReLU before a 1x1 (tcc-fuse took it).
    SmallVector<Operation *> prologueOps;
    std::optional<Prologue> prologue = matchPrologue(contraction, prologueOps);
    covered += prologueOps.size();
    FailureOr<Value> r = failure();
    Value means;
    if (auto conv = dyn_cast<ConvOp>(contraction)) {
      if (!convFits(conv) ||
          covered + (pool ? 1 : 0) != body.getOperations().size())
        return rewriter.notifyMatchFailure(op, "convolution does not fit");
      Value bias = conv.getBias() ? converted.lookup(conv.getBias()) : e.bias;
      // tcc-fuse takes a prologue only before the 1x1s the kernels apply
      // one to (tcc_uk_conv2d_prologue_fits holds for every such shape).
      Value input = converted.lookup(conv.getInput());
      if (prologue) {
        if (!builder.prologueFits(conv, original.lookup(conv.getWeight())))
          return rewriter.notifyMatchFailure(op, "prologue does not fit");
        input = converted.lookup(prologue->input);
        for (Value *v : {&prologue->scale, &prologue->shift})
          *v = *v ? converted.lookup(*v) : Value();
      }
      if (planeMeans && (pool || prologue || !UkernelBuilder::meansFit(conv)))
        return rewriter.notifyMatchFailure(op, "plane means do not fit");
      // The pooling in the kernel where it can, else after it.
      tcc_uk_conv2d_params_t p = UkernelBuilder::convParams(conv);
      bool pooled = pool && UkernelBuilder::poolMode(builder.isa, p, pool);
      r = builder.conv(
          rewriter, conv, input, converted.lookup(conv.getWeight()),
          original.lookup(conv.getWeight()), bias, e,
          pooled ? pool : MaxPoolOp(), prologue ? &*prologue : nullptr,
          planeMeans ? &means : nullptr,
          planeMeans ? cast<RankedTensorType>(op.getResult(1).getType())
                     : RankedTensorType());
      if (pool && !pooled && succeeded(r))
        r = rewriter
                .create<MaxPoolOp>(pool.getLoc(), pool.getType(), *r,
                                   pool.getKernel(), pool.getStrides(),
                                   pool.getPadding(), pool.getDilations(),
                                   pool.getCeilMode())
                .getResult();
    } else {
      if (planeMeans)
        return rewriter.notifyMatchFailure(op, "plane means of a product");
      auto mm = cast<MatmulOp>(contraction);
      MatrixView lhs = matchMatrixView(mm.getLhs());
      MatrixView rhs = matchMatrixView(mm.getRhs());
      MatrixView out = chain.empty() ? matchResultView(mm.getResult())
                                     : plainMatrixView(mm.getResult());
      covered += lhs.ops.size() + rhs.ops.size() + out.ops.size();
      // Each operand must be a group input seen through the views.
      if (!isa<BlockArgument>(lhs.base) || !isa<BlockArgument>(rhs.base) ||
          covered != body.getOperations().size() || !matmulFits(mm))
        return rewriter.notifyMatchFailure(op, "matmul does not fit");
      Value rhsValue = converted.lookup(rhs.base);
      rhs.base = original.lookup(rhs.base); // To see a constant.
      r = builder.matmul(rewriter, op.getLoc(), lhs, converted.lookup(lhs.base),
                         rhs, rhsValue, out, resultType, e);
    }
    if (failed(r))
      return rewriter.notifyMatchFailure(op, "contraction does not fit");
    if (means)
      rewriter.replaceOp(op, {*r, means});
    else
      rewriter.replaceOp(op, *r);
    return success();
  }

  /// A convolution of a group with its epilogue: the bias (its own or the
  /// chain's) and the residual as converted, the epilogue without them.
  struct GroupConv {
    ConvOp op;
    Epilogue epi;
    Value bias;
    size_t chainOps = 0;
  };
  static GroupConv groupConv(ConvOp op, IRMapping &converted) {
    GroupConv g;
    g.op = op;
    SmallVector<Operation *> chain;
    g.epi = matchEpilogue(op, chain);
    g.chainOps = chain.size();
    auto lookup = [&](Value v) { return v ? converted.lookup(v) : Value(); };
    g.bias = op.getBias() ? lookup(op.getBias()) : lookup(g.epi.bias);
    g.epi.bias = Value();
    g.epi.residual = lookup(g.epi.residual);
    return g;
  }

  /// Whether convs[i + 1] is what tcc-fuse took after convs[i] (the chain
  /// ops between them already matched), and the body holds nothing else.
  static bool isFusedChain(FusedOp op, ArrayRef<GroupConv> convs) {
    size_t ops = 1; // The yield.
    for (size_t i = 0; i < convs.size(); ++i) {
      ops += 1 + convs[i].chainOps;
      if (!convFits(convs[i].op))
        return false;
      if (i + 1 == convs.size())
        break;
      SmallVector<Operation *> chain;
      Epilogue e = matchEpilogue(convs[i].op, chain);
      Operation *next =
          i + 2 == convs.size()
              ? matchPointwiseAfterDepthwise(convs[i].op, e, chain)
              : matchDepthwiseAfterExpansion(convs[i].op, e, chain);
      if (next != convs[i + 1].op)
        return false;
    }
    return ops == op.getBody().front().getOperations().size();
  }

  /// The pair (depthwise, then 1x1) over `input`: one call where the
  /// kernels run it fast, else one call each.
  FailureOr<Value> pairCalls(ConversionPatternRewriter &rewriter,
                             const GroupConv &dw, const GroupConv &pw,
                             Value input, IRMapping &converted,
                             IRMapping &original) const {
    auto weight = [&](ConvOp c) { return converted.lookup(c.getWeight()); };
    auto source = [&](ConvOp c) { return original.lookup(c.getWeight()); };
    // The pair's kernel applies no activation after the 1x1.
    if (pw.epi.activation == Activation::None && builder.pairFast(dw.op, pw.op))
      return builder.pair(rewriter, dw.op, pw.op, input, weight(dw.op), dw.bias,
                          dw.epi, weight(pw.op), source(pw.op), pw.bias,
                          pw.epi);
    FailureOr<Value> mid = builder.conv(rewriter, dw.op, input, weight(dw.op),
                                        source(dw.op), dw.bias, dw.epi);
    if (failed(mid))
      return failure();
    return builder.conv(rewriter, pw.op, *mid, weight(pw.op), source(pw.op),
                        pw.bias, pw.epi);
  }

  /// A depthwise convolution and the 1x1 after it (tcc-fuse's pair).
  LogicalResult rewritePair(FusedOp op, ArrayRef<Operation *> contractions,
                            IRMapping &converted, IRMapping &original,
                            ConversionPatternRewriter &rewriter) const {
    auto dw = dyn_cast<ConvOp>(contractions[0]);
    auto pw = dyn_cast<ConvOp>(contractions[1]);
    if (!dw || !pw)
      return rewriter.notifyMatchFailure(op, "not two convolutions");
    GroupConv convs[] = {groupConv(dw, converted), groupConv(pw, converted)};
    if (!isFusedChain(op, convs))
      return rewriter.notifyMatchFailure(op, "not a depthwise/1x1 pair");
    FailureOr<Value> r =
        pairCalls(rewriter, convs[0], convs[1], converted.lookup(dw.getInput()),
                  converted, original);
    if (failed(r))
      return rewriter.notifyMatchFailure(op, "pair does not fit");
    rewriter.replaceOp(op, *r);
    return success();
  }

  /// An expanding 1x1 convolution and the pair after it (tcc-fuse's
  /// block): one call where the kernels run it fast, else the expansion's
  /// call and the pair's.
  LogicalResult rewriteBlock(FusedOp op, ArrayRef<Operation *> contractions,
                             IRMapping &converted, IRMapping &original,
                             ConversionPatternRewriter &rewriter) const {
    auto exp = dyn_cast<ConvOp>(contractions[0]);
    auto dw = dyn_cast<ConvOp>(contractions[1]);
    auto pw = dyn_cast<ConvOp>(contractions[2]);
    if (!exp || !dw || !pw)
      return rewriter.notifyMatchFailure(op, "not three convolutions");
    GroupConv convs[] = {groupConv(exp, converted), groupConv(dw, converted),
                         groupConv(pw, converted)};
    if (!isFusedChain(op, convs))
      return rewriter.notifyMatchFailure(op, "not an expansion and a pair");
    auto weight = [&](ConvOp c) { return converted.lookup(c.getWeight()); };
    auto source = [&](ConvOp c) { return original.lookup(c.getWeight()); };
    Value input = converted.lookup(exp.getInput());
    FailureOr<Value> r = failure();
    // The block's kernel applies no activation after the 1x1.
    if (convs[2].epi.activation == Activation::None &&
        builder.blockFast(exp, dw, pw)) {
      r = builder.block(rewriter, exp, dw, pw, input, weight(exp), source(exp),
                        convs[0].bias, convs[0].epi, weight(dw), source(dw),
                        convs[1].bias, convs[1].epi, weight(pw), source(pw),
                        convs[2].bias, convs[2].epi);
    } else {
      FailureOr<Value> x =
          builder.conv(rewriter, exp, input, weight(exp), source(exp),
                       convs[0].bias, convs[0].epi);
      if (succeeded(x))
        r = pairCalls(rewriter, convs[1], convs[2], *x, converted, original);
    }
    if (failed(r))
      return rewriter.notifyMatchFailure(op, "block does not fit");
    rewriter.replaceOp(op, *r);
    return success();
  }
  UkernelBuilder builder;
};
} // namespace

void mlir::tcc::populateUkernelPatterns(RewritePatternSet &patterns,
                                        int32_t isa) {
  patterns.add<ConvToUkernel, MatmulToUkernel, ContractionGroupToUkernel,
               AttentionGroupToUkernel, MaxPoolToUkernel, AvgPoolToUkernel,
               TransposeToUkernel>(patterns.getContext(), isa);
}
