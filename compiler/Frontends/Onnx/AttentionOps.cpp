//===- AttentionOps.cpp - ONNX Attention and RotaryEmbedding --------------===//
//
// Attention follows ONNX's reference step by step: heads split from 3-D
// inputs, the KV cache concatenated, an additive bias built from the mask,
// the causal frontier (offset by the cache or per batch by
// nonpad_kv_seqlen) and the sliding window, grouped-query heads repeated,
// Q K^T scaled (sqrt(scale) on each side), softcapped, biased, softmaxed
// with fully masked rows giving zeros, and multiplied by V. Everything is
// tcc matmuls, reductions and elementwise ops, so fusion sees the parts.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

static constexpr double kInf = std::numeric_limits<double>::infinity();

/// [B, S, H * D] -> [B, H, S, D].
static Value splitHeads(NodeContext &ctx, Value x, int64_t heads) {
  ArrayRef<int64_t> s = shapeOf(x);
  if (heads <= 0 || ShapedType::isDynamic(s[2]) || s[2] % heads) {
    ctx.emitError() << "hidden size " << s[2] << " does not split into "
                    << heads << " heads";
    return {};
  }
  return ctx.transpose(ctx.reshape(x, {s[0], s[1], heads, s[2] / heads}),
                       {0, 2, 1, 3});
}

/// A [rows, cols] bias: 0 where `allowed(i, j)`, -inf elsewhere.
template <typename Fn>
static Value staticBias(NodeContext &ctx, Type et, int64_t rows, int64_t cols,
                        Fn allowed) {
  SmallVector<double> v;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      v.push_back(allowed(i, j) ? 0.0 : -kInf);
  return ctx.constant({rows, cols}, et, v);
}

/// 0 / -inf from a bool.
static Value boolToBias(NodeContext &ctx, Value allowed, Type et) {
  return ctx.select(allowed, ctx.scalar(et, 0), ctx.scalar(et, -kInf));
}

/// Softmax over the last axis where an all -inf row gives zeros.
static Value safeSoftmax(NodeContext &ctx, Value x) {
  int64_t last = shapeOf(x).size() - 1;
  Value m = ctx.reduce<ReduceMaxOp>(x, {last}, true);
  Value masked = ctx.compare(ComparePredicate::eq, m, ctx.scalarLike(x, -kInf));
  m = ctx.select(masked, ctx.scalarLike(x, 0), m);
  Value e = ctx.unary<ExpOp>(ctx.binary<SubOp>(x, m));
  Value s = ctx.reduce<ReduceSumOp>(e, {last}, true);
  Value zero = ctx.compare(ComparePredicate::eq, s, ctx.scalarLike(x, 0));
  s = ctx.select(zero, ctx.scalarLike(x, 1), s);
  return ctx.binary<DivOp>(e, s);
}

/// Grouped-query attention: repeats each of K's and V's heads (dimension 1
/// of [batch, heads, seq, dim]) until there are `hq`, one per query head.
static LogicalResult repeatKvHeads(NodeContext &ctx, int64_t hq, Value &k,
                                   Value &v) {
  int64_t hk = shapeOf(k)[1];
  if (hq == hk)
    return success();
  if (hk == 0 || hq % hk)
    return ctx.emitError() << hq << " query heads do not group over " << hk
                           << " key/value heads";
  int64_t reps = hq / hk;
  auto repeat = [&](Value t) {
    ArrayRef<int64_t> sh = shapeOf(t);
    Value r = ctx.reshape(t, {sh[0], sh[1], 1, sh[2], sh[3]});
    r = ctx.broadcastTo(r, {sh[0], sh[1], reps, sh[2], sh[3]});
    return ctx.reshape(r, {sh[0], sh[1] * reps, sh[2], sh[3]});
  };
  k = repeat(k);
  v = repeat(v);
  return success();
}

static LogicalResult importAttention(NodeContext &ctx) {
  Value q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  Value mask = ctx.input(3), pastK = ctx.input(4), pastV = ctx.input(5);
  Value nonpad = ctx.input(6);
  bool causal = ctx.getInt("is_causal", 0);
  int64_t qHeads = ctx.getInt("q_num_heads", 0);
  int64_t kvHeads = ctx.getInt("kv_num_heads", 0);
  int64_t mode = ctx.getInt("qk_matmul_output_mode", 0);
  bool hasScale = ctx.hasAttr("scale");
  double scale = ctx.getFloat("scale", 0);
  double softcap = ctx.getFloat("softcap", 0);
  int64_t left = -1, right = -1;
  if (ctx.opset >= 25) {
    left = ctx.getInt("left_window_size", -1);
    right = ctx.getInt("right_window_size", -1);
  }
  Type et = elementTypeOf(q);
  Type softmaxType = et;
  if (ctx.hasAttr("softmax_precision")) {
    int32_t p = ctx.getInt("softmax_precision", 0);
    softmaxType = convertDataType(ctx.b.getContext(), p);
    if (!softmaxType || !isa<FloatType>(softmaxType))
      return ctx.emitError()
             << "softmax_precision " << dataTypeName(p) << " is not supported";
  }
  if (ctx.hasError() || failed(ctx.requireFloat(q)))
    return failure();
  if ((pastK == nullptr) != (pastV == nullptr))
    return ctx.emitError() << "past_key and past_value go together";
  if (mode < 0 || mode > 3)
    return ctx.emitError() << "qk_matmul_output_mode = " << mode
                           << " is not supported";
  size_t rank = shapeOf(q).size();
  if (rank != shapeOf(k).size() || rank != shapeOf(v).size() ||
      (rank != 3 && rank != 4))
    return ctx.emitError() << "Q, K and V must all be 3-D or all 4-D";
  for (Value t : {q, k, v})
    if (!cast<RankedTensorType>(t.getType()).hasStaticShape())
      return ctx.emitError() << "Q, K and V need static shapes";
  for (Value t : {pastK, pastV})
    if (t && (shapeOf(t).size() != 4 ||
              !cast<RankedTensorType>(t.getType()).hasStaticShape()))
      return ctx.emitError() << "past_key and past_value must be static 4-D; "
                                "got "
                             << shapes::str(shapeOf(t));
  if (rank == 3) {
    q = splitHeads(ctx, q, qHeads);
    k = splitHeads(ctx, k, kvHeads);
    v = splitHeads(ctx, v, kvHeads);
    if (!q || !k || !v)
      return failure();
  }
  int64_t batch = shapeOf(q)[0], hq = shapeOf(q)[1], qLen = shapeOf(q)[2];
  int64_t headSize = shapeOf(q)[3];
  if (!hasScale)
    scale = 1.0 / std::sqrt((double)headSize);
  Value s = ctx.scalar(et, std::sqrt(scale));

  // The KV cache.
  Value presentK = pastK ? ctx.concat({pastK, k}, 2) : k;
  Value presentV = pastV ? ctx.concat({pastV, v}, 2) : v;
  if (!presentK || !presentV)
    return failure();
  k = presentK;
  v = presentV;
  int64_t kvLen = shapeOf(k)[2];
  int64_t pastLen = pastK ? shapeOf(pastK)[2] : 0;

  // The additive bias.
  Type i64 = ctx.b.getI64Type();
  Value bias = ctx.constant({qLen, kvLen}, et, {0.0});
  bool isBoolMask = mask && elementTypeOf(mask).isInteger(1);
  if (mask) {
    if (shapeOf(mask).empty() ||
        !cast<RankedTensorType>(mask.getType()).hasStaticShape())
      return ctx.emitError() << "attn_mask must have a static shape of rank "
                                ">= 1; got "
                             << shapes::str(shapeOf(mask));
    int64_t pad = kvLen - shapeOf(mask).back();
    if (pad < 0)
      return ctx.emitError()
             << "attn_mask is longer than the " << kvLen << " keys";
    if (pad > 0) {
      SmallVector<int64_t> low(shapeOf(mask).size(), 0), high(low);
      high.back() = pad;
      mask = ctx.pad(mask, low, high, isBoolMask ? 0.0 : -kInf);
    }
    if (isBoolMask)
      mask = boolToBias(ctx, mask, et);
    else if (elementTypeOf(mask) != et)
      mask = ctx.castTo(mask, et);
  }
  // Per-batch frontier offsets with an external cache, else one offset.
  Value batchOffset;
  if (nonpad && !pastK)
    batchOffset = ctx.reshape(
        ctx.binary<SubOp>(ctx.castTo(nonpad, i64), ctx.scalar(i64, qLen)),
        {batch, 1, 1});
  // [B, 1, q, kv] bias from the per-batch diff = (i + offset[b]) - j.
  auto frontierBias = [&](auto allowedFromDiff) -> Value {
    Value diff = ctx.binary<SubOp>(
        ctx.binary<AddOp>(ctx.iota(qLen, i64, 1, 3), batchOffset),
        ctx.iota(kvLen, i64, 2, 3));
    Value allowed = allowedFromDiff(diff);
    return ctx.reshape(boolToBias(ctx, allowed, et), {batch, 1, qLen, kvLen});
  };
  if (causal) {
    Value base = mask ? mask : bias;
    if (batchOffset)
      bias = ctx.binary<AddOp>(base, frontierBias([&](Value d) {
                                 return ctx.compare(ComparePredicate::ge, d,
                                                    ctx.scalar(i64, 0));
                               }));
    else
      bias = ctx.binary<AddOp>(
          base, staticBias(ctx, et, qLen, kvLen, [&](int64_t i, int64_t j) {
            return j <= i + pastLen;
          }));
  } else if (mask) {
    bias = ctx.binary<AddOp>(bias, mask);
  }
  if (left >= 0 || right >= 0) {
    if (batchOffset) {
      bias = ctx.binary<AddOp>(
          bias, frontierBias([&](Value d) {
            Value ok = ctx.constant({}, ctx.b.getI1Type(), {1.0});
            if (left >= 0)
              ok = ctx.binary<AndOp>(ok, ctx.compare(ComparePredicate::le, d,
                                                     ctx.scalar(i64, left)));
            if (right >= 0)
              ok = ctx.binary<AndOp>(ok, ctx.compare(ComparePredicate::ge, d,
                                                     ctx.scalar(i64, -right)));
            return ok;
          }));
    } else {
      bias = ctx.binary<AddOp>(
          bias, staticBias(ctx, et, qLen, kvLen, [&](int64_t i, int64_t j) {
            int64_t d = i + pastLen - j;
            return (left < 0 || d <= left) && (right < 0 || -d <= right);
          }));
    }
  }
  if (nonpad) {
    Value keep = ctx.compare(ComparePredicate::lt, ctx.iota(kvLen, i64, 1, 2),
                             ctx.reshape(ctx.castTo(nonpad, i64), {batch, 1}));
    bias = ctx.binary<AddOp>(
        bias, ctx.reshape(boolToBias(ctx, keep, et), {batch, 1, 1, kvLen}));
  }
  if (!bias)
    return failure();

  // Grouped-query attention: repeat each KV head.
  if (failed(repeatKvHeads(ctx, hq, k, v)))
    return failure();

  Value qk = ctx.matmul(ctx.binary<MulOp>(q, s),
                        ctx.binary<MulOp>(ctx.transpose(k, {0, 1, 3, 2}), s));
  if (softcap > 0) {
    Value c = ctx.scalar(et, softcap);
    qk = ctx.binary<MulOp>(ctx.unary<TanhOp>(ctx.binary<DivOp>(qk, c)), c);
  }
  Value withBias = ctx.binary<AddOp>(qk, bias);
  Value qkOut = mode == 2 ? withBias : qk;
  Value probs = safeSoftmax(ctx, ctx.castTo(withBias, softmaxType));
  // Rows whose bias is -inf everywhere attend nothing: zeros.
  int64_t last = shapeOf(bias).size() - 1;
  Value dead = ctx.compare(ComparePredicate::eq,
                           ctx.reduce<ReduceMaxOp>(bias, {last}, true),
                           ctx.scalar(et, -kInf));
  probs = ctx.select(dead, ctx.scalar(softmaxType, 0), probs);
  if (mode == 3)
    qkOut = probs;
  probs = ctx.castTo(probs, et);
  Value y = ctx.matmul(probs, v);
  if (rank == 3 && y) {
    ArrayRef<int64_t> ys = shapeOf(y);
    y = ctx.reshape(ctx.transpose(y, {0, 2, 1, 3}),
                    {ys[0], ys[2], ys[1] * ys[3]});
  }
  ctx.setResult(0, y);
  ctx.setResult(1, presentK);
  ctx.setResult(2, presentV);
  ctx.setResult(3, ctx.castTo(qkOut, et));
  return success(y);
}

static LogicalResult importRotaryEmbedding(NodeContext &ctx) {
  Value x = ctx.input(0), cosCache = ctx.input(1), sinCache = ctx.input(2);
  Value positions = ctx.input(3);
  bool interleaved = ctx.getInt("interleaved", 0);
  int64_t heads = ctx.getInt("num_heads", 0);
  int64_t rotDim = ctx.getInt("rotary_embedding_dim", 0);
  if (ctx.hasError() || failed(ctx.requireFloat(x)))
    return failure();
  if (!cast<RankedTensorType>(x.getType()).hasStaticShape())
    return ctx.emitError() << "the input needs a static shape";
  ArrayRef<int64_t> orig = shapeOf(x);
  // [B, S, H, D]
  Value t;
  if (orig.size() == 4) {
    t = ctx.transpose(x, {0, 2, 1, 3});
  } else if (orig.size() == 3) {
    if (heads <= 0 || orig[2] % heads)
      return ctx.emitError() << "hidden size " << orig[2]
                             << " does not split into " << heads << " heads";
    t = ctx.reshape(x, {orig[0], orig[1], heads, orig[2] / heads});
  } else {
    return ctx.emitError() << "input must be 3-D or 4-D";
  }
  if (!t)
    return failure();
  ArrayRef<int64_t> ts = shapeOf(t);
  int64_t headSize = ts[3];
  if (rotDim == 0)
    rotDim = headSize;
  if (rotDim < 0 || rotDim > headSize || rotDim % 2)
    return ctx.emitError() << "rotary_embedding_dim " << rotDim
                           << " does not fit head size " << headSize;
  int64_t half = rotDim / 2;
  if (positions) {
    cosCache =
        ctx.gather(cosCache, ctx.castTo(positions, ctx.b.getI64Type()), 0);
    sinCache =
        ctx.gather(sinCache, ctx.castTo(positions, ctx.b.getI64Type()), 0);
  }
  if (!cosCache || !sinCache)
    return failure();
  if (shapeOf(cosCache).size() != 3 || shapeOf(sinCache).size() != 3 ||
      shapeOf(cosCache).back() != half || shapeOf(sinCache).back() != half)
    return ctx.emitError() << "the caches (gathered by position ids) must be "
                           << "[batch, sequence, " << half << "]; got "
                           << shapes::str(shapeOf(cosCache)) << " and "
                           << shapes::str(shapeOf(sinCache));
  // [B, S, 1, half]
  auto expand = [&](Value c) {
    ArrayRef<int64_t> cs = shapeOf(c);
    return ctx.reshape(c, {cs[0], cs[1], 1, cs[2]});
  };
  Value cosv = ctx.castTo(expand(cosCache), elementTypeOf(x));
  Value sinv = ctx.castTo(expand(sinCache), elementTypeOf(x));
  Value rot = ctx.slice(t, 3, 0, rotDim);
  Value rest =
      rotDim < headSize ? ctx.slice(t, 3, rotDim, headSize - rotDim) : Value();
  Value x1, x2;
  if (interleaved) {
    x1 = ctx.slice(rot, 3, 0, half, 2);
    x2 = ctx.slice(rot, 3, 1, half, 2);
  } else {
    x1 = ctx.slice(rot, 3, 0, half);
    x2 = ctx.slice(rot, 3, half, half);
  }
  Value real = ctx.binary<SubOp>(ctx.binary<MulOp>(cosv, x1),
                                 ctx.binary<MulOp>(sinv, x2));
  Value imag = ctx.binary<AddOp>(ctx.binary<MulOp>(sinv, x1),
                                 ctx.binary<MulOp>(cosv, x2));
  if (!real || !imag)
    return failure();
  Value rotated;
  if (interleaved) {
    SmallVector<int64_t> e(shapeOf(real));
    e.push_back(1);
    rotated = ctx.concat({ctx.reshape(real, e), ctx.reshape(imag, e)}, 4);
    rotated = ctx.reshape(rotated, shapeOf(rot));
  } else {
    rotated = ctx.concat({real, imag}, 3);
  }
  Value out = rest ? ctx.concat({rotated, rest}, 3) : rotated;
  if (orig.size() == 3)
    out = ctx.reshape(out, orig);
  else
    out = ctx.transpose(out, {0, 2, 1, 3});
  return ctx.result(out);
}

/// LinearAttention: the recurrent state update unrolled over the static
/// sequence, in f32 (as ONNX's reference computes it).
static LogicalResult importLinearAttention(NodeContext &ctx) {
  Value q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  Value past = ctx.input(3), decay = ctx.input(4), beta = ctx.input(5);
  std::string rule = ctx.getString("update_rule", "gated_delta");
  int64_t hq = ctx.getInt("q_num_heads", 0), hk = ctx.getInt("kv_num_heads", 0);
  double scale = ctx.getFloat("scale", 0);
  ctx.ignoreAttrs({"chunk_size"}); // a tuning hint
  if (ctx.hasError() || failed(ctx.requireFloat(q)))
    return failure();
  bool gating = rule == "gated" || rule == "gated_delta";
  bool delta = rule == "delta" || rule == "gated_delta";
  if (!gating && !delta && rule != "linear")
    return ctx.unsupportedValue("update_rule", rule);
  if (gating != (bool)decay || delta != (bool)beta)
    return ctx.emitError() << "update_rule '" << rule
                           << "' does not match the decay and beta inputs";
  if (hq <= 0 || hk <= 0 || hq % hk)
    return ctx.emitError() << "q_num_heads " << hq
                           << " must be a positive multiple of kv_num_heads "
                           << hk;
  for (Value t : {q, k, v})
    if (shapeOf(t).size() != 3 ||
        !cast<RankedTensorType>(t.getType()).hasStaticShape())
      return ctx.emitError() << "query, key and value must be static 3-D";
  Type f32 = ctx.b.getF32Type(), out = elementTypeOf(q);
  int64_t batch = shapeOf(q)[0], steps = shapeOf(q)[1];
  if (failed(ctx.checkUnroll(steps, "recurrent steps")))
    return failure();
  Value q4 = splitHeads(ctx, ctx.castTo(q, f32), hq);
  Value k4 = splitHeads(ctx, ctx.castTo(k, f32), hk);
  Value v4 = splitHeads(ctx, ctx.castTo(v, f32), hk);
  if (!q4 || !k4 || !v4)
    return failure();
  int64_t dk = shapeOf(q4)[3], dv = shapeOf(v4)[3], group = hq / hk;
  // decay: [B, T, H_kv] or [B, T, H_kv * d_k]; beta: [B, T, H_kv] or
  // [B, T, 1].
  auto perStep = [&](Value t, StringRef name, int64_t a, int64_t b) {
    ArrayRef<int64_t> sh = shapeOf(t);
    if (sh.size() == 3 &&
        cast<RankedTensorType>(t.getType()).hasStaticShape() &&
        sh[0] == batch && sh[1] == steps && (sh[2] == a || sh[2] == b))
      return success();
    return LogicalResult(ctx.emitError()
                         << name << " must be " << batch << "x" << steps << "x"
                         << a << " or " << batch << "x" << steps << "x" << b
                         << "; got " << shapes::str(sh));
  };
  if ((decay && failed(perStep(decay, "decay", hk, hk * dk))) ||
      (beta && failed(perStep(beta, "beta", hk, 1))))
    return failure();
  Value decay4, beta4;
  if (decay) {
    int64_t last = shapeOf(decay).back();
    if (last == hk)
      decay4 = ctx.transpose(ctx.reshape(decay, {batch, steps, hk, 1}),
                             {0, 2, 1, 3});
    else
      decay4 = splitHeads(ctx, decay, hk);
    decay4 = ctx.castTo(decay4, f32);
  }
  if (beta) {
    int64_t last = shapeOf(beta).back();
    beta4 = ctx.castTo(
        ctx.transpose(ctx.reshape(beta, {batch, steps, last, 1}), {0, 2, 1, 3}),
        f32);
  }
  Type stateType = past ? elementTypeOf(past) : out;
  Value state = past ? ctx.castTo(past, f32)
                     : ctx.constant({batch, hk, dk, dv}, f32, {0.0});
  double s = scale == 0 ? 1 / std::sqrt((double)dk) : scale;
  // Null in, null out: a failed step has emitted its diagnostic.
  auto at = [&](Value t, int64_t i) { // [B, H, T, X] -> [B, H, X]
    if (!t)
      return Value();
    ArrayRef<int64_t> sh = shapeOf(t);
    return ctx.reshape(ctx.slice(t, 2, i, 1), {sh[0], sh[1], sh[3]});
  };
  auto col = [&](Value t) { // [B, H, X] -> [B, H, X, 1]
    if (!t)
      return Value();
    SmallVector<int64_t> sh(shapeOf(t));
    sh.push_back(1);
    return ctx.reshape(t, sh);
  };
  auto row = [&](Value t) { // [B, H, X] -> [B, H, 1, X]
    if (!t)
      return Value();
    ArrayRef<int64_t> sh = shapeOf(t);
    return ctx.reshape(t, {sh[0], sh[1], 1, sh[2]});
  };
  SmallVector<Value> outs;
  for (int64_t i = 0; i < steps; ++i) {
    Value kt = at(k4, i), vt = at(v4, i), qt = at(q4, i);
    if (gating)
      state = ctx.binary<MulOp>(state, col(ctx.unary<ExpOp>(at(decay4, i))));
    if (delta) {
      Value retrieved = ctx.reduce<ReduceSumOp>(
          ctx.binary<MulOp>(state, col(kt)), {2}, false);
      vt = ctx.binary<MulOp>(at(beta4, i), ctx.binary<SubOp>(vt, retrieved));
    }
    state = ctx.binary<AddOp>(state, ctx.binary<MulOp>(col(kt), row(vt)));
    Value read = state;
    if (group > 1) {
      Value r = ctx.reshape(state, {batch, hk, 1, dk, dv});
      r = ctx.broadcastTo(r, {batch, hk, group, dk, dv});
      read = ctx.reshape(r, {batch, hq, dk, dv});
    }
    Value o =
        ctx.reduce<ReduceSumOp>(ctx.binary<MulOp>(col(qt), read), {2}, false);
    o = ctx.binary<MulOp>(o, ctx.scalar(f32, s));
    if (!o)
      return failure();
    outs.push_back(ctx.reshape(o, {batch, hq, 1, dv}));
  }
  Value y = ctx.concat(outs, 2);
  y = ctx.reshape(ctx.transpose(y, {0, 2, 1, 3}), {batch, steps, hq * dv});
  ctx.setResult(0, ctx.castTo(y, out));
  ctx.setResult(1, ctx.castTo(state, stateType));
  return success(y);
}

/// Applies a score_mod / prob_mod subgraph to `v` inline.
static Value applyMod(NodeContext &ctx, StringRef name, Value v) {
  if (!ctx.hasAttr(name) || !v)
    return v;
  const ::onnx::GraphProto *g = ctx.getGraph(name);
  if (!g)
    return {};
  FailureOr<SmallVector<Value>> out =
      ctx.importSubgraph(*g, ValueRange{v}, ctx.b.getInsertionBlock());
  if (failed(out))
    return {};
  if (out->size() != 1 || (*out)[0].getType() != v.getType()) {
    ctx.emitError() << "attribute '" << name
                    << "' must give one tensor of the scores' type";
    return {};
  }
  return (*out)[0];
}

/// ai.onnx.preview FlexAttention: attention whose scores and probabilities
/// pass through optional subgraphs (imported inline), softmax in f32 for
/// half-precision inputs.
static LogicalResult importFlexAttention(NodeContext &ctx) {
  Value q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  bool hasScale = ctx.hasAttr("scale");
  double scale = ctx.getFloat("scale", 0);
  Type et = elementTypeOf(q);
  Type computeType = NodeContext::isHalf(et) ? ctx.b.getF32Type() : et;
  if (ctx.hasAttr("softmax_precision")) {
    int32_t p = ctx.getInt("softmax_precision", 0);
    computeType = convertDataType(ctx.b.getContext(), p);
    if (!computeType || !isa<FloatType>(computeType))
      return ctx.emitError()
             << "softmax_precision " << dataTypeName(p) << " is not supported";
  }
  if (ctx.hasError() || failed(ctx.requireFloat(q)))
    return failure();
  for (Value t : {q, k, v})
    if (shapeOf(t).size() != 4 ||
        !cast<RankedTensorType>(t.getType()).hasStaticShape())
      return ctx.emitError() << "Q, K and V must be static 4-D tensors";
  int64_t hq = shapeOf(q)[1];
  if (!hasScale)
    scale = 1.0 / std::sqrt((double)shapeOf(q)[3]);
  if (failed(repeatKvHeads(ctx, hq, k, v)))
    return failure();
  Value s = ctx.scalar(et, std::sqrt((float)scale));
  Value scores =
      ctx.matmul(ctx.binary<MulOp>(q, s),
                 ctx.transpose(ctx.binary<MulOp>(k, s), {0, 1, 3, 2}));
  scores = applyMod(ctx, "score_mod", ctx.castTo(scores, computeType));
  if (!scores)
    return failure();
  Value m = ctx.reduce<ReduceMaxOp>(scores, {3}, true);
  Value e = ctx.unary<ExpOp>(ctx.binary<SubOp>(scores, m));
  Value probs = ctx.binary<DivOp>(e, ctx.reduce<ReduceSumOp>(e, {3}, true));
  probs = applyMod(ctx, "prob_mod", probs);
  if (!probs)
    return failure();
  Value y = ctx.castTo(ctx.matmul(probs, ctx.castTo(v, computeType)),
                       elementTypeOf(v));
  return ctx.result(y);
}

void mlir::tcc::onnx::registerAttentionOps(OpTable &t) {
  t.add("LinearAttention", 27, 3, 6, 2, importLinearAttention);
  t.add("Attention", 23, 3, 6, 4, importAttention);
  t.add("Attention", 24, 3, 7, 4, importAttention);
  t.add("RotaryEmbedding", 23, 3, 4, 1, importRotaryEmbedding);
  t.add("ai.onnx.preview.FlexAttention", 1, 3, 3, 1, importFlexAttention);
}
