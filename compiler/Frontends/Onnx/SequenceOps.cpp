//===- SequenceOps.cpp - ONNX sequence ops --------------------------------===//
//
// A sequence exists only at import time, as the list of its tensors: every
// position (SequenceInsert/At/Erase) must be a constant, and a sequence may
// not be a graph input or output. SplitToSequence makes one from a tensor,
// ConcatFromSequence one tensor from it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

/// The sequence input `i`, or an error.
static const SmallVector<Value> *requireSequence(NodeContext &ctx, unsigned i) {
  const SmallVector<Value> *seq = ctx.sequence(i);
  if (!seq)
    ctx.emitError() << "input " << i << " must be a sequence";
  return seq;
}

/// A constant position in [0, size] (`inclusive`) or [0, size); negative
/// ones count from the end. `dflt` when the input is absent.
static FailureOr<int64_t> position(NodeContext &ctx, unsigned i, int64_t size,
                                   bool inclusive, int64_t dflt) {
  if (!ctx.input(i))
    return dflt;
  FailureOr<double> p = ctx.constScalar(i);
  if (failed(p))
    return failure();
  int64_t pos = saturatingInt(*p);
  if (pos < 0)
    pos += size;
  if (pos < 0 || pos > size || (!inclusive && pos == size)) {
    ctx.emitError() << "position " << saturatingInt(*p)
                    << " is out of range for a sequence of " << size;
    return failure();
  }
  return pos;
}

static LogicalResult importSequenceEmpty(NodeContext &ctx) {
  (void)ctx.getInt("dtype", 1);
  ctx.sequenceResults[0] = {};
  return success(!ctx.hasError());
}

static LogicalResult importSequenceConstruct(NodeContext &ctx) {
  SmallVector<Value> seq;
  for (unsigned i = 0; i < ctx.numInputs(); ++i)
    seq.push_back(ctx.input(i));
  ctx.sequenceResults[0] = seq;
  return success();
}

static LogicalResult importSequenceInsert(NodeContext &ctx) {
  const SmallVector<Value> *in = requireSequence(ctx, 0);
  if (!in)
    return failure();
  SmallVector<Value> seq(*in);
  FailureOr<int64_t> pos = position(ctx, 2, seq.size(), true, seq.size());
  if (failed(pos))
    return failure();
  seq.insert(seq.begin() + *pos, ctx.input(1));
  ctx.sequenceResults[0] = seq;
  return success();
}

static LogicalResult importSequenceAt(NodeContext &ctx) {
  const SmallVector<Value> *seq = requireSequence(ctx, 0);
  if (!seq)
    return failure();
  FailureOr<int64_t> pos = position(ctx, 1, seq->size(), false, 0);
  if (failed(pos))
    return failure();
  ctx.setResult(0, (*seq)[*pos]);
  return success();
}

static LogicalResult importSequenceErase(NodeContext &ctx) {
  const SmallVector<Value> *in = requireSequence(ctx, 0);
  if (!in)
    return failure();
  SmallVector<Value> seq(*in);
  if (seq.empty())
    return ctx.emitError() << "cannot erase from an empty sequence";
  FailureOr<int64_t> pos =
      position(ctx, 1, seq.size(), false, (int64_t)seq.size() - 1);
  if (failed(pos))
    return failure();
  seq.erase(seq.begin() + *pos);
  ctx.sequenceResults[0] = seq;
  return success();
}

static LogicalResult importSequenceLength(NodeContext &ctx) {
  const SmallVector<Value> *seq = requireSequence(ctx, 0);
  if (!seq)
    return failure();
  ctx.setResult(0, ctx.scalar(ctx.b.getI64Type(), (double)seq->size()));
  return success();
}

static LogicalResult importSplitToSequence(NodeContext &ctx) {
  Value x = ctx.input(0);
  ArrayRef<int64_t> shape = shapeOf(x);
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), shape.size());
  bool keepdims = ctx.getInt("keepdims", 1);
  if (failed(axis) || ctx.hasError())
    return failure();
  int64_t d = shape[*axis];
  if (ShapedType::isDynamic(d))
    return ctx.emitError() << "the split dimension must be static";
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (!ctx.input(1)) {
    if (failed(ctx.checkUnroll(d, "sequence elements")))
      return failure();
    sizes.assign(d, 1);
    squeeze = !keepdims;
  } else {
    FailureOr<SmallVector<int64_t>> given = ctx.constInts(1);
    if (failed(given))
      return failure();
    if (shapeOf(ctx.input(1)).empty()) {
      int64_t chunk = (*given)[0];
      if (chunk < 1)
        return ctx.emitError() << "split " << chunk << " must be positive";
      if (failed(ctx.checkUnroll(d / chunk, "sequence elements")))
        return failure();
      for (int64_t at = 0; at < d; at += sizes.back())
        sizes.push_back(std::min(chunk, d - at));
    } else {
      sizes = *given;
      if (failed(ctx.checkUnroll(sizes.size(), "sequence elements")))
        return failure();
    }
  }
  SmallVector<Value> seq;
  int64_t at = 0;
  for (int64_t s : sizes) {
    if (s < 0 || s > d - at) // (at + s could overflow: s is from the file)
      return ctx.emitError() << "split sizes " << shapes::str(sizes)
                             << " do not fit dimension " << d;
    Value piece = ctx.slice(x, *axis, at, s);
    if (squeeze) {
      SmallVector<int64_t> out(shape);
      out.erase(out.begin() + *axis);
      piece = ctx.reshape(piece, out);
    }
    seq.push_back(piece);
    at += s;
  }
  if (at != d)
    return ctx.emitError() << "split sizes " << shapes::str(sizes)
                           << " do not add up to " << d;
  ctx.sequenceResults[0] = seq;
  return success();
}

static LogicalResult importConcatFromSequence(NodeContext &ctx) {
  const SmallVector<Value> *seq = requireSequence(ctx, 0);
  bool newAxis = ctx.getInt("new_axis", 0);
  if (!ctx.hasAttr("axis"))
    return ctx.emitError() << "attribute 'axis' is required";
  int64_t axisValue = ctx.getInt("axis", 0);
  if (!seq || ctx.hasError())
    return failure();
  if (seq->empty())
    return ctx.emitError() << "cannot concatenate an empty sequence";
  for (Value v : *seq)
    if (shapeOf(v).size() != shapeOf(seq->front()).size())
      return ctx.emitError()
             << "the sequence holds tensors of shapes "
             << shapes::str(shapeOf(seq->front())) << " and "
             << shapes::str(shapeOf(v)) << ", of different ranks";
  int64_t rank = shapeOf(seq->front()).size() + (newAxis ? 1 : 0);
  FailureOr<int64_t> axis = ctx.normalizeAxis(axisValue, rank);
  if (failed(axis))
    return failure();
  SmallVector<Value> parts;
  for (Value v : *seq) {
    if (newAxis) {
      SmallVector<int64_t> s(shapeOf(v));
      s.insert(s.begin() + *axis, 1);
      v = ctx.reshape(v, s);
    }
    parts.push_back(v);
  }
  Value y = ctx.concat(parts, *axis);
  return ctx.result(y);
}

void mlir::tcc::onnx::registerSequenceOps(OpTable &t) {
  t.add("SequenceEmpty", 11, 0, 0, 1, importSequenceEmpty);
  t.add("SequenceConstruct", 11, 1, kVariadic, 1, importSequenceConstruct);
  t.add("SequenceInsert", 11, 2, 3, 1, importSequenceInsert);
  t.add("SequenceAt", 11, 2, 2, 1, importSequenceAt);
  t.add("SequenceErase", 11, 1, 2, 1, importSequenceErase);
  t.add("SequenceLength", 11, 1, 1, 1, importSequenceLength);
  t.add("SplitToSequence", 11, 1, 2, 1, importSplitToSequence);
  t.add("ConcatFromSequence", 11, 1, 1, 1, importConcatFromSequence);
}
