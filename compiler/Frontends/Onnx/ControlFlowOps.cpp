//===- ControlFlowOps.cpp - ONNX If, Loop and Scan ------------------------===//
//
// Subgraphs become regions: If a tcc.if (or, with a constant condition, the
// chosen branch inline), Loop and Scan a tcc.loop. A Scan's body reads its
// per-iteration slices with tcc.gather at the iteration number and its
// stacked outputs are the loop's scan outputs, reversed or transposed as
// its attributes ask. Loop-carried values and branch results must keep one
// type. A Loop's scan outputs stack one row per iteration: with a constant
// trip count and a condition that stays true their length is static;
// otherwise it is the number of iterations the run makes, a size the run
// computes (tcc.trim), the rows computed at the bound --dim gives.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

/// A detached block holding a subgraph import, with its yielded values.
struct ImportedRegion {
  std::unique_ptr<Block> block;
  SmallVector<Value> results;
};

static FailureOr<ImportedRegion>
importRegion(NodeContext &ctx, const ::onnx::GraphProto &g,
             ArrayRef<Type> argTypes,
             function_ref<SmallVector<Value>(Block *)> makeInputs = nullptr) {
  ImportedRegion r{std::make_unique<Block>(), {}};
  for (Type t : argTypes)
    r.block->addArgument(t, ctx.loc);
  SmallVector<Value> inputs;
  if (makeInputs) {
    OpBuilder::InsertionGuard guard(ctx.b);
    ctx.b.setInsertionPointToEnd(r.block.get());
    inputs = makeInputs(r.block.get());
  } else {
    inputs.assign(r.block->args_begin(), r.block->args_end());
  }
  FailureOr<SmallVector<Value>> results =
      ctx.importSubgraph(g, inputs, r.block.get());
  if (failed(results))
    return failure();
  r.results = std::move(*results);
  return r;
}

static bool isConstantTrue(Value v) {
  DenseElementsAttr attr;
  return v && matchPattern(v, m_Constant(&attr)) &&
         attr.getElementType().isInteger(1) && attr.getNumElements() == 1 &&
         *attr.getValues<bool>().begin();
}

static LogicalResult importIf(NodeContext &ctx) {
  Value cond = ctx.input(0);
  const ::onnx::GraphProto *thenG = ctx.getGraph("then_branch");
  const ::onnx::GraphProto *elseG = ctx.getGraph("else_branch");
  if (!thenG || !elseG)
    return failure();
  if (!elementTypeOf(cond).isInteger(1) ||
      shapes::numElements(shapeOf(cond)) != 1)
    return ctx.emitError() << "the condition must be one bool; got "
                           << cond.getType();
  // A constant condition picks its branch at compile time.
  DenseElementsAttr known;
  if (matchPattern(cond, m_Constant(&known))) {
    const ::onnx::GraphProto &g =
        *known.getValues<bool>().begin() ? *thenG : *elseG;
    FailureOr<SmallVector<Value>> results =
        ctx.importSubgraph(g, {}, ctx.b.getInsertionBlock());
    if (failed(results))
      return failure();
    for (auto [i, v] : llvm::enumerate(*results))
      ctx.setResult(i, v);
    return success();
  }
  FailureOr<ImportedRegion> thenR = importRegion(ctx, *thenG, {});
  if (failed(thenR))
    return failure();
  FailureOr<ImportedRegion> elseR = importRegion(ctx, *elseG, {});
  if (failed(elseR))
    return failure();
  if (thenR->results.size() != elseR->results.size())
    return ctx.emitError() << "the branches give " << thenR->results.size()
                           << " and " << elseR->results.size() << " outputs";
  SmallVector<Type> types;
  for (auto [a, b] : llvm::zip(thenR->results, elseR->results)) {
    if (a.getType() != b.getType())
      return ctx.emitError()
             << "the branches give different types (" << a.getType() << " and "
             << b.getType() << "), which tcc does not support";
    types.push_back(a.getType());
  }
  auto op = ctx.b.create<IfOp>(ctx.loc, types, cond);
  for (auto [region, r] : {std::make_pair(&op.getThenRegion(), &*thenR),
                           std::make_pair(&op.getElseRegion(), &*elseR)}) {
    Block *block = r->block.release();
    region->push_back(block);
    OpBuilder::InsertionGuard guard(ctx.b);
    ctx.b.setInsertionPointToEnd(block);
    ctx.b.create<YieldOp>(ctx.loc, r->results);
  }
  for (auto [i, v] : llvm::enumerate(op.getResults()))
    ctx.setResult(i, v);
  return success();
}

/// Builds the tcc.loop around an imported body whose results are (cond,
/// carried..., scans...); `scanLength` is the static trip count when there
/// are scan outputs.
static FailureOr<LoopOp> buildLoop(NodeContext &ctx, Value tripCount,
                                   Value cond, ValueRange inits,
                                   ImportedRegion &body, int64_t scanLength) {
  size_t n = inits.size();
  if (body.results.size() < 1 + n) {
    ctx.emitError() << "the body gives " << body.results.size()
                    << " outputs; the loop carries " << n;
    return failure();
  }
  SmallVector<Type> types;
  for (size_t i = 0; i < n; ++i) {
    Type t = body.results[1 + i].getType();
    if (t != inits[i].getType()) {
      ctx.emitError() << "loop-carried value " << i << " changes type from "
                      << inits[i].getType() << " to " << t
                      << ", which tcc does not support";
      return failure();
    }
    types.push_back(t);
  }
  size_t scans = body.results.size() - 1 - n;
  for (size_t i = 0; i < scans; ++i) {
    auto t = cast<RankedTensorType>(body.results[1 + n + i].getType());
    SmallVector<int64_t> shape = {scanLength};
    shape.append(t.getShape().begin(), t.getShape().end());
    types.push_back(RankedTensorType::get(shape, t.getElementType()));
  }
  Value bodyCond = body.results[0];
  if (!elementTypeOf(bodyCond).isInteger(1) ||
      shapes::numElements(shapeOf(bodyCond)) != 1) {
    ctx.emitError() << "the body's condition must be one bool";
    return failure();
  }
  auto scalarType = RankedTensorType::get({}, ctx.b.getI1Type());
  if (bodyCond.getType() != scalarType) {
    OpBuilder::InsertionGuard guard(ctx.b);
    ctx.b.setInsertionPointToEnd(body.block.get());
    body.results[0] = ctx.reshape(bodyCond, {});
  }
  auto op = ctx.b.create<LoopOp>(ctx.loc, types, tripCount, cond, inits);
  Block *block = body.block.release();
  op.getBody().push_back(block);
  OpBuilder::InsertionGuard guard(ctx.b);
  ctx.b.setInsertionPointToEnd(block);
  ctx.b.create<YieldOp>(ctx.loc, body.results);
  return op;
}

static LogicalResult importLoop(NodeContext &ctx) {
  const ::onnx::GraphProto *g = ctx.getGraph("body");
  if (!g)
    return failure();
  Type i64 = ctx.b.getI64Type(), i1 = ctx.b.getI1Type();
  Value trip = ctx.input(0), cond = ctx.input(1);
  SmallVector<Value> inits;
  for (unsigned i = 2; i < ctx.numInputs(); ++i)
    inits.push_back(ctx.input(i));
  std::optional<int64_t> knownTrip;
  if (trip) {
    DenseElementsAttr attr;
    if (matchPattern(trip, m_Constant(&attr)) && attr.getNumElements() == 1)
      knownTrip = (*attr.getValues<APInt>().begin()).getSExtValue();
    trip = ctx.reshape(trip, {});
  } else {
    trip = ctx.scalar(i64, (double)std::numeric_limits<int64_t>::max());
  }
  bool alwaysGoes = !cond || isConstantTrue(cond);
  cond = cond ? ctx.reshape(cond, {}) : ctx.constant({}, i1, {1.0});
  if (!trip || !cond)
    return failure();
  auto scalar = [](Type t) { return RankedTensorType::get({}, t); };
  SmallVector<Type> args = {scalar(i64), scalar(i1)};
  for (Value v : inits)
    args.push_back(v.getType());
  // Two more carried values, used when the number of iterations sizes the
  // scan outputs at run time: the iterations made and the condition.
  args.push_back(scalar(i64));
  args.push_back(scalar(i1));
  size_t carried = 2 + inits.size();
  FailureOr<ImportedRegion> body =
      importRegion(ctx, *g, args, [&](Block *block) {
        return SmallVector<Value>(block->getArguments().take_front(carried));
      });
  if (failed(body))
    return failure();
  size_t scans =
      body->results.size() - std::min(body->results.size(), 1 + inits.size());
  Value bodyCond = body->results.empty() ? Value() : body->results[0];
  bool staysTrue =
      bodyCond == body->block->getArgument(1) || isConstantTrue(bodyCond);
  if (scans && knownTrip && (*knownTrip < 0 || *knownTrip > kMaxElements))
    return ctx.emitError() << "trip count " << *knownTrip << " is out of range";
  if (scans && !(knownTrip && alwaysGoes && staysTrue)) {
    // The scan outputs' length is the number of iterations the run makes:
    // rows computed up to the bound, cut to that count.
    unsigned firstScan = inits.size();
    FailureOr<int64_t> bound =
        ctx.computedSizeBound("the number of iterations", firstScan);
    if (failed(bound))
      return failure();
    if (!elementTypeOf(bodyCond).isInteger(1) ||
        shapes::numElements(shapeOf(bodyCond)) != 1)
      return ctx.emitError() << "the body's condition must be one bool";
    {
      OpBuilder::InsertionGuard guard(ctx.b);
      ctx.b.setInsertionPointToEnd(body->block.get());
      Value counter = body->block->getArgument(carried);
      Value next = ctx.binary<AddOp>(counter, ctx.scalar(i64, 1));
      Value goesOn = ctx.reshape(bodyCond, {});
      body->results.insert(body->results.begin() + 1 + inits.size(),
                           {next, goesOn});
    }
    SmallVector<Value> all(inits);
    all.push_back(ctx.scalar(i64, 0));
    all.push_back(cond);
    FailureOr<LoopOp> op = buildLoop(ctx, trip, cond, all, *body, *bound);
    if (failed(op))
      return failure();
    // Iterations made; one past the bound when the loop stopped there with
    // more to make (the run then fails naming the bound).
    Value made = op->getResult(inits.size());
    Value more = op->getResult(inits.size() + 1);
    Value cap = ctx.scalar(i64, (double)*bound);
    Value cut = ctx.binary<AndOp>(
        ctx.binary<AndOp>(ctx.compare(ComparePredicate::eq, made, cap), more),
        ctx.compare(ComparePredicate::lt, cap, trip));
    Value count =
        ctx.select(cut, ctx.binary<AddOp>(cap, ctx.scalar(i64, 1)), made);
    for (unsigned i = 0; i < inits.size(); ++i)
      ctx.setResult(i, op->getResult(i));
    for (unsigned i = 0; i < scans; ++i)
      ctx.setResult(firstScan + i,
                    ctx.trim(op->getResult(carried + i), count, 0, firstScan));
    return success();
  }
  // (Otherwise the two extra carried values are not needed.)
  body->block->eraseArguments(carried, 2);
  FailureOr<LoopOp> op =
      buildLoop(ctx, trip, cond, inits, *body, knownTrip.value_or(0));
  if (failed(op))
    return failure();
  for (auto [i, v] : llvm::enumerate(op->getResults()))
    ctx.setResult(i, v);
  return success();
}

/// A Scan (opset 9+) of `states` and `scanInputs`.
static FailureOr<SmallVector<Value>> scanLoop(NodeContext &ctx,
                                              const ::onnx::GraphProto &g,
                                              ValueRange states,
                                              ValueRange scanInputs) {
  size_t m = scanInputs.size();
  auto ints = [&](StringRef name, size_t count) {
    SmallVector<int64_t> v = ctx.getInts(name);
    if (v.empty())
      v.assign(count, 0);
    return v;
  };
  SmallVector<int64_t> inAxes = ints("scan_input_axes", m);
  SmallVector<int64_t> inDirs = ints("scan_input_directions", m);
  size_t k = g.output_size() - std::min<size_t>(g.output_size(), states.size());
  SmallVector<int64_t> outAxes = ints("scan_output_axes", k);
  SmallVector<int64_t> outDirs = ints("scan_output_directions", k);
  if (ctx.hasError())
    return failure();
  if (inAxes.size() != m || inDirs.size() != m || outAxes.size() != k ||
      outDirs.size() != k) {
    ctx.emitError() << "scan axes and directions must have one entry per "
                       "scan input and output";
    return failure();
  }
  int64_t length = -1;
  for (auto [i, x] : llvm::enumerate(scanInputs)) {
    FailureOr<int64_t> a = ctx.normalizeAxis(inAxes[i], shapeOf(x).size());
    if (failed(a))
      return failure();
    inAxes[i] = *a;
    int64_t d = shapeOf(x)[*a];
    if (ShapedType::isDynamic(d) || (length >= 0 && d != length)) {
      ctx.emitError() << "scan inputs must share one static length";
      return failure();
    }
    length = d;
  }
  if (length < 0) {
    ctx.emitError() << "Scan needs at least one scan input";
    return failure();
  }
  Type i64 = ctx.b.getI64Type(), i1 = ctx.b.getI1Type();
  auto scalar = [](Type t) { return RankedTensorType::get({}, t); };
  SmallVector<Type> args = {scalar(i64), scalar(i1)};
  for (Value v : states)
    args.push_back(v.getType());
  FailureOr<ImportedRegion> body =
      importRegion(ctx, g, args, [&](Block *block) {
        SmallVector<Value> inputs(block->args_begin() + 2, block->args_end());
        Value iter = block->getArgument(0);
        for (auto [i, x] : llvm::enumerate(scanInputs)) {
          Value idx = inDirs[i]
                          ? ctx.binary<SubOp>(
                                ctx.scalar(i64, (double)(length - 1)), iter)
                          : iter;
          inputs.push_back(ctx.gather(x, idx, inAxes[i]));
        }
        return inputs;
      });
  if (failed(body))
    return failure();
  // The body gives (states..., scan slices...); the loop wants a condition
  // first.
  {
    OpBuilder::InsertionGuard guard(ctx.b);
    ctx.b.setInsertionPointToEnd(body->block.get());
    body->results.insert(body->results.begin(), ctx.constant({}, i1, {1.0}));
  }
  FailureOr<LoopOp> op =
      buildLoop(ctx, ctx.scalar(i64, (double)length),
                ctx.constant({}, i1, {1.0}), states, *body, length);
  if (failed(op))
    return failure();
  SmallVector<Value> results(op->getResults().take_front(states.size()));
  for (auto [i, r] :
       llvm::enumerate(op->getResults().drop_front(states.size()))) {
    Value v = r;
    int64_t rank = shapeOf(v).size();
    if (outDirs[i])
      v = ctx.slice(v, 0, length - 1, length, -1);
    FailureOr<int64_t> a = ctx.normalizeAxis(outAxes[i], rank);
    if (failed(a))
      return failure();
    if (*a != 0) {
      // Move the stacked dimension 0 to position a.
      SmallVector<int64_t> perm;
      for (int64_t d = 1; d <= *a; ++d)
        perm.push_back(d);
      perm.push_back(0);
      for (int64_t d = *a + 1; d < rank; ++d)
        perm.push_back(d);
      v = ctx.transpose(v, perm);
    }
    results.push_back(v);
  }
  return results;
}

static LogicalResult importScan(NodeContext &ctx) {
  const ::onnx::GraphProto *g = ctx.getGraph("body");
  int64_t m = ctx.getInt("num_scan_inputs", 0);
  if (!g || ctx.hasError())
    return failure();
  SmallVector<Value> inputs;
  unsigned first = ctx.opset < 9 ? 1 : 0;
  if (first && ctx.input(0))
    return ctx.emitError() << "sequence_lens is not supported";
  for (unsigned i = first; i < ctx.numInputs(); ++i)
    inputs.push_back(ctx.input(i));
  if (m < 1 || m > (int64_t)inputs.size())
    return ctx.emitError() << "num_scan_inputs = " << m << " does not fit "
                           << inputs.size() << " inputs";
  size_t n = inputs.size() - m;
  ValueRange states = ValueRange(inputs).take_front(n);
  ValueRange scans = ValueRange(inputs).drop_front(n);
  if (ctx.opset >= 9) {
    FailureOr<SmallVector<Value>> results = scanLoop(ctx, *g, states, scans);
    if (failed(results))
      return failure();
    for (auto [i, v] : llvm::enumerate(*results))
      ctx.setResult(i, v);
    return success();
  }
  // Scan-8: every input has a leading batch dimension, scanned along 1.
  // Each batch entry is a Scan-9 over its slice.
  if (ctx.hasAttr("scan_input_axes") || ctx.hasAttr("scan_output_axes"))
    return ctx.emitError() << "axes are not supported before opset 9";
  if (!inputs.empty() && shapeOf(inputs[0]).empty())
    return ctx.emitError() << "the inputs need a leading batch dimension";
  int64_t batch = inputs.empty() ? 0 : shapeOf(inputs[0])[0];
  if (ShapedType::isDynamic(batch))
    return ctx.emitError() << "the batch dimension must be static";
  if (failed(
          ctx.checkUnroll(batch, "copies of the body (one per batch entry)")))
    return failure();
  SmallVector<SmallVector<Value>> perBatch;
  for (int64_t b = 0; b < batch; ++b) {
    auto row = [&](Value v) {
      SmallVector<int64_t> s(shapeOf(v).drop_front());
      return ctx.reshape(ctx.slice(v, 0, b, 1), s);
    };
    SmallVector<Value> st, sc;
    for (Value v : states)
      st.push_back(row(v));
    for (Value v : scans)
      sc.push_back(row(v));
    FailureOr<SmallVector<Value>> r = scanLoop(ctx, *g, st, sc);
    if (failed(r))
      return failure();
    perBatch.push_back(*r);
  }
  for (size_t i = 0; batch && i < perBatch[0].size(); ++i) {
    SmallVector<Value> parts;
    for (auto &r : perBatch) {
      SmallVector<int64_t> s = {1};
      llvm::append_range(s, shapeOf(r[i]));
      parts.push_back(ctx.reshape(r[i], s));
    }
    ctx.setResult(i, ctx.concat(parts, 0));
  }
  return success();
}

void mlir::tcc::onnx::registerControlFlowOps(OpTable &t) {
  t.add("If", 1, 1, 1, kVariadic, importIf);
  t.add("Loop", 1, 2, kVariadic, kVariadic, importLoop,
        /*leadingOptional=*/true);
  t.add("Scan", 8, 1, kVariadic, kVariadic, importScan,
        /*leadingOptional=*/true);
  t.add("Scan", 9, 1, kVariadic, kVariadic, importScan);
}
