//===- UkernelsToCalls.cpp - the convert-ukernels-to-calls pass -----------===//

#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "dialects/Tcc/IR/TccOps.h"
#include "dialects/Tcc/Transforms/BufferizableOpInterfaceImpl.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_CONVERTUKERNELSTOCALLS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {
/// Builds the scalar argument list of one call.
class CallBuilder {
public:
  CallBuilder(OpBuilder &b, Location loc, DictionaryAttr params)
      : b(b), loc(loc), params(params) {}

  LogicalResult address(Value memref) {
    if (!memref) {
      args.push_back(i64(0));
      return success();
    }
    FailureOr<Value> at = byteAddress(memref);
    if (failed(at))
      return failure();
    args.push_back(b.create<arith::IndexCastOp>(loc, b.getI64Type(), *at));
    return success();
  }

  /// The address of a contiguous buffer's first element, as an index.
  FailureOr<Value> byteAddress(Value memref) {
    auto type = cast<MemRefType>(memref.getType());
    if (!isContiguousRowMajor(type))
      return failure();
    auto meta = b.create<memref::ExtractStridedMetadataOp>(loc, memref);
    Value bytes = b.create<arith::MulIOp>(
        loc, meta.getOffset(),
        b.create<arith::ConstantIndexOp>(
            loc, (type.getElementTypeBitWidth() + 7) / 8));
    return b.create<arith::AddIOp>(loc, alignedPointer(memref), bytes)
        .getResult();
  }

  /// The aligned pointer of `memref`. View-like ops keep their source's,
  /// except memref.view, which moves it by its byte shift (upstream's
  /// expand-strided-metadata forwards extract_aligned_pointer_as_index
  /// through every view-like op and would drop that shift).
  Value alignedPointer(Value memref) {
    Operation *def = memref.getDefiningOp();
    if (auto view = dyn_cast_or_null<memref::ViewOp>(def))
      return b.create<arith::AddIOp>(loc, alignedPointer(view.getSource()),
                                     view.getByteShift());
    if (auto viewLike = dyn_cast_or_null<ViewLikeOpInterface>(def))
      return alignedPointer(viewLike.getViewSource());
    return b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
  }
  void param(StringRef name) {
    auto attr = dyn_cast_or_null<IntegerAttr>(params.get(name));
    if (!attr)
      missing.push_back(name);
    args.push_back(i64(attr ? attr.getInt() : 0));
  }
  /// Whether a flag that only some calls have is set (absent: no).
  bool optionalFlag(StringRef name) {
    auto attr = dyn_cast_or_null<IntegerAttr>(params.get(name));
    return attr && attr.getInt() != 0;
  }
  /// A parameter that only some calls have (0 where absent).
  void optionalParam(StringRef name) {
    auto attr = dyn_cast_or_null<IntegerAttr>(params.get(name));
    args.push_back(i64(attr ? attr.getInt() : 0));
  }
  void floatParam(StringRef name) {
    auto attr = dyn_cast_or_null<FloatAttr>(params.get(name));
    if (!attr) {
      missing.push_back(name);
      attr = b.getF32FloatAttr(0);
    }
    args.push_back(b.create<arith::ConstantOp>(loc, attr));
  }
  bool flag(StringRef name) {
    auto attr = dyn_cast_or_null<IntegerAttr>(params.get(name));
    if (!attr)
      missing.push_back(name);
    return attr && attr.getInt() != 0;
  }

  Value i64(int64_t v) {
    return b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(v));
  }

  OpBuilder &b;
  Location loc;
  DictionaryAttr params;
  SmallVector<Value> args;
  SmallVector<StringRef> missing; ///< Parameters asked for but absent.
};

struct ConvertUkernelsToCallsPass
    : mlir::tcc::impl::ConvertUkernelsToCallsBase<ConvertUkernelsToCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<UkernelOp> calls;
    module.walk([&](UkernelOp op) { calls.push_back(op); });
    for (UkernelOp op : calls)
      if (failed(lower(module, op)))
        return signalPassFailure();
  }

  LogicalResult lower(ModuleOp module, UkernelOp op) {
    if (op.getNumResults() != 0)
      return op.emitOpError() << "must be bufferized before it becomes a call";
    OpBuilder b(op);
    CallBuilder call(b, op.getLoc(), op.getParams());
    ValueRange ins = op.getInputs(), outs = op.getOutputs();
    // Pooling has no epilogue; the contractions say which inputs follow.
    bool pool = op.getName() == "maxpool2d" || op.getName() == "avgpool2d";
    bool attention = op.getName() == "attention";
    bool plain = pool || attention || op.getName() == "transpose";
    bool hasBias = !plain && call.flag("has_bias");
    bool hasResidual = !plain && call.flag("has_residual");
    Value bias = hasBias ? ins[2] : Value();
    Value residual = hasResidual ? ins[2 + hasBias] : Value();
    // A depthwise convolution's plane means (has_means) come before the
    // scratch.
    bool hasMeans = call.optionalFlag("has_means");
    Value means = hasMeans ? outs[1] : Value();
    size_t scratchAt = hasMeans ? 2 : 1;
    Value scratch = outs.size() > scratchAt ? outs[scratchAt] : Value();
    auto addresses = [&](ArrayRef<Value> values) {
      for (Value v : values)
        if (failed(call.address(v)))
          return failure();
      return success();
    };
    LogicalResult ok = success();
    if (op.getName() == "sgemm") {
      for (StringRef p : {"batch", "m", "n", "k"})
        call.param(p);
      ok = addresses({ins[0]});
      call.param("lda"), call.param("stride_a");
      ok = succeeded(ok) ? addresses({ins[1]}) : ok;
      call.param("ldb"), call.param("stride_b");
      ok = succeeded(ok) ? addresses({outs[0]}) : ok;
      call.param("ldc"), call.param("stride_c"), call.param("flags");
      ok = succeeded(ok) ? addresses({bias}) : ok;
      call.param("bias_per_row"), call.param("has_clamp");
      call.floatParam("clamp_min"), call.floatParam("clamp_max");
      ok = succeeded(ok) ? addresses({residual}) : ok;
      call.param("ldr"), call.param("stride_r");
      ok = succeeded(ok) ? addresses({scratch}) : ok;
      call.param("batch_parallel"), call.param("scratch_stride");
      call.param("activation");
    } else if (op.getName() == "conv2d") {
      // input, weight, bias?, residual?, in_scale?, in_shift?
      size_t i = 2 + hasBias + hasResidual;
      Value inScale = call.optionalFlag("has_in_scale") ? ins[i++] : Value();
      Value inShift = call.optionalFlag("has_in_shift") ? ins[i++] : Value();
      ok = addresses({ins[0], ins[1], outs[0], bias, residual, scratch});
      for (StringRef p :
           {"n", "c", "h", "w", "f", "kh", "kw", "stride_h", "stride_w",
            "dilation_h", "dilation_w", "pad_top", "pad_left", "pad_bottom",
            "pad_right", "groups", "flags", "has_clamp"})
        call.param(p);
      call.floatParam("clamp_min"), call.floatParam("clamp_max");
      call.param("activation");
      call.optionalParam("pool");
      ok = succeeded(ok) ? addresses({inScale, inShift}) : ok;
      call.optionalParam("in_relu");
      // A pooling by bands of rows (pool = 1): its window.
      for (StringRef p :
           {"pool_kh", "pool_kw", "pool_stride_h", "pool_stride_w",
            "pool_pad_top", "pool_pad_left", "pool_oh", "pool_ow"})
        call.optionalParam(p);
      ok = succeeded(ok) ? addresses({means}) : ok;
    } else if (op.getName() == "dwpw_conv2d") {
      // input, dw weight, dw bias?, pw weight, bias?, residual?
      bool hasDwBias = call.flag("has_dw_bias");
      Value dwBias = hasDwBias ? ins[2] : Value();
      Value pwWeight = ins[2 + hasDwBias];
      Value pwBias = hasBias ? ins[3 + hasDwBias] : Value();
      Value pwResidual = hasResidual ? ins[3 + hasDwBias + hasBias] : Value();
      ok = addresses({ins[0], ins[1], dwBias, pwWeight, outs[0], pwBias,
                      pwResidual, scratch});
      for (StringRef p :
           {"n", "c", "h", "w", "kh", "kw", "stride_h", "stride_w",
            "dilation_h", "dilation_w", "pad_top", "pad_left", "pad_bottom",
            "pad_right", "dw_has_clamp"})
        call.param(p);
      call.floatParam("dw_clamp_min"), call.floatParam("dw_clamp_max");
      call.param("f"), call.param("flags"), call.param("has_clamp");
      call.floatParam("clamp_min"), call.floatParam("clamp_max");
    } else if (op.getName() == "block_conv2d") {
      // input, exp weight, exp bias?, dw weight, dw bias?, pw weight, bias?,
      // residual?
      bool hasExpBias = call.flag("has_exp_bias");
      bool hasDwBias = call.flag("has_dw_bias");
      size_t i = 2;
      Value expBias = hasExpBias ? ins[i++] : Value();
      Value dwWeight = ins[i++];
      Value dwBias = hasDwBias ? ins[i++] : Value();
      Value pwWeight = ins[i++];
      Value pwBias = hasBias ? ins[i++] : Value();
      Value pwResidual = hasResidual ? ins[i++] : Value();
      ok = addresses({ins[0], ins[1], expBias, dwWeight, dwBias, pwWeight,
                      outs[0], pwBias, pwResidual, scratch});
      for (StringRef p :
           {"n", "exp_c", "exp_h", "exp_w", "exp_kh", "exp_kw", "exp_stride_h",
            "exp_stride_w", "exp_dilation_h", "exp_dilation_w", "exp_pad_top",
            "exp_pad_left", "exp_pad_bottom", "exp_pad_right", "exp_flags",
            "exp_has_clamp"})
        call.param(p);
      call.floatParam("exp_clamp_min"), call.floatParam("exp_clamp_max");
      for (StringRef p : {"c", "h", "w", "kh", "kw", "stride_h", "stride_w",
                          "dilation_h", "dilation_w", "pad_top", "pad_left",
                          "pad_bottom", "pad_right", "dw_has_clamp"})
        call.param(p);
      call.floatParam("dw_clamp_min"), call.floatParam("dw_clamp_max");
      call.param("f"), call.param("flags"), call.param("has_clamp");
      call.floatParam("clamp_min"), call.floatParam("clamp_max");
    } else if (attention) {
      // q, k, v, mask?
      Value mask = ins.size() > 3 ? ins[3] : Value();
      ok = addresses({ins[0], ins[1], ins[2], mask, outs[0], scratch});
      for (StringRef p : {"batch", "sq", "sk", "d", "dv", "ldq", "stride_q",
                          "ldk", "stride_k", "ldv", "stride_v", "ldo",
                          "stride_o", "ldm", "stride_m"})
        call.param(p);
      call.floatParam("scale"), call.floatParam("fill");
      call.param("mask_kind"), call.param("flags");
    } else if (op.getName() == "transpose") {
      ok = addresses({ins[0], outs[0]});
      for (StringRef p : {"batch", "rows", "cols"})
        call.param(p);
    } else if (pool) {
      ok = addresses({ins[0], outs[0]});
      for (StringRef p :
           {"n", "c", "h", "w", "kh", "kw", "stride_h", "stride_w",
            "dilation_h", "dilation_w", "pad_top", "pad_left", "oh", "ow"})
        call.param(p);
      // The average's end pads (its counts) and count_include_pad.
      if (op.getName() == "avgpool2d")
        for (StringRef p : {"pad_bottom", "pad_right", "count_include_pad"})
          call.param(p);
    } else {
      return op.emitOpError()
             << "unknown micro-kernel '" << op.getName() << "'";
    }
    if (!call.missing.empty()) {
      for (Value v : call.args)
        if (v.use_empty())
          v.getDefiningOp()->erase();
      return op.emitOpError()
             << "has no parameter '" << call.missing.front() << "'";
    }
    if (failed(ok))
      return op.emitOpError() << "needs contiguous buffers";

    std::string symbol = ("tcc_ukabi_" + op.getName()).str();
    auto type = b.getFunctionType(
        llvm::map_to_vector(call.args, [](Value v) { return v.getType(); }),
        {b.getI32Type()});
    auto callee = module.lookupSymbol<func::FuncOp>(symbol);
    if (!callee) {
      OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
      callee = mb.create<func::FuncOp>(op.getLoc(), symbol, type);
      callee.setPrivate();
    }
    b.create<func::CallOp>(op.getLoc(), callee, call.args);
    op.erase();
    return success();
  }
};
} // namespace
