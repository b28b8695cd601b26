//===- RecurrentOps.cpp - ONNX RNN, GRU and LSTM --------------------------===//
//
// The sequence length is static, so the recurrence is unrolled at import:
// each time step is a few matmuls and elementwise ops on [batch, hidden]
// tensors, per direction. sequence_lens masks the steps past a batch
// entry's length (its state stops changing and its outputs are zero), and
// `layout = 1` transposes the batch-major inputs and outputs.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

namespace {
enum class Cell { RNN, GRU, LSTM };

/// An activation function with its alpha and beta.
struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

struct Recurrence {
  Cell cell;
  int64_t hidden, gates, dirs;
  SmallVector<Activation> acts; // per direction: f, g[, h]
  std::optional<double> clip;
  bool linearBeforeReset = false, inputForget = false;
  bool reverse = false; // direction = reverse
};
} // namespace

static Value activate(NodeContext &ctx, const Activation &a, Value x) {
  Type et = elementTypeOf(x);
  auto c = [&](double v) { return ctx.scalar(et, v); };
  const std::string &n = a.name;
  if (n == "Tanh")
    return ctx.unary<TanhOp>(x);
  if (n == "Sigmoid")
    return ctx.unary<SigmoidOp>(x);
  if (n == "Relu")
    return ctx.unary<ReluOp>(x);
  if (n == "Affine")
    return ctx.binary<AddOp>(ctx.binary<MulOp>(x, c(a.alpha)), c(a.beta));
  if (n == "LeakyRelu")
    return ctx.select(ctx.compare(ComparePredicate::lt, x, c(0)),
                      ctx.binary<MulOp>(x, c(a.alpha)), x);
  if (n == "ThresholdedRelu")
    return ctx.select(ctx.compare(ComparePredicate::gt, x, c(a.alpha)), x,
                      c(0));
  if (n == "ScaledTanh")
    return ctx.binary<MulOp>(ctx.unary<TanhOp>(ctx.binary<MulOp>(x, c(a.beta))),
                             c(a.alpha));
  if (n == "HardSigmoid")
    return ctx.clamp(
        ctx.binary<AddOp>(ctx.binary<MulOp>(x, c(a.alpha)), c(a.beta)), 0, 1);
  if (n == "Elu")
    return ctx.select(
        ctx.compare(ComparePredicate::lt, x, c(0)),
        ctx.binary<MulOp>(ctx.binary<SubOp>(ctx.unary<ExpOp>(x), c(1)),
                          c(a.alpha)),
        x);
  if (n == "Softsign")
    return ctx.binary<DivOp>(x, ctx.binary<AddOp>(ctx.unary<AbsOp>(x), c(1)));
  if (n == "Softplus")
    return ctx.unary<LogOp>(ctx.binary<AddOp>(ctx.unary<ExpOp>(x), c(1)));
  return {};
}

static FailureOr<Recurrence> readAttributes(NodeContext &ctx, Cell cell) {
  Recurrence r;
  r.cell = cell;
  r.gates = cell == Cell::RNN ? 1 : cell == Cell::GRU ? 3 : 4;
  r.hidden = ctx.getInt("hidden_size", 0);
  std::string direction = ctx.getString("direction", "forward");
  SmallVector<float> alphas = ctx.getFloats("activation_alpha");
  SmallVector<float> betas = ctx.getFloats("activation_beta");
  SmallVector<std::string> names;
  for (const auto &a : ctx.node.attribute())
    if (a.name() == "activations")
      for (const std::string &s : a.strings())
        names.push_back(s);
  ctx.ignoreAttrs({"activations"});
  if (ctx.hasAttr("clip"))
    r.clip = ctx.getFloat("clip", 0);
  if (cell == Cell::GRU)
    r.linearBeforeReset = ctx.getInt("linear_before_reset", 0);
  if (cell == Cell::LSTM)
    r.inputForget = ctx.getInt("input_forget", 0);
  if (ctx.opset >= 14)
    (void)ctx.getInt("layout", 0);
  // output_sequence (before opset 7) only says whether Y is wanted.
  ctx.ignoreAttrs({"output_sequence"});
  if (ctx.hasError())
    return failure();
  // Bounded before W's and R's sizes are computed from it.
  if (r.hidden < 0 || r.hidden > kMaxElements) {
    ctx.emitError() << "hidden_size " << r.hidden << " is out of range";
    return failure();
  }
  if (direction == "forward" || direction == "reverse")
    r.dirs = 1;
  else if (direction == "bidirectional")
    r.dirs = 2;
  else {
    (void)ctx.unsupportedValue("direction", direction);
    return failure();
  }
  if (r.inputForget) {
    ctx.emitError() << "attribute input_forget = 1 is not supported";
    return failure();
  }
  size_t perDir = cell == Cell::LSTM ? 3 : cell == Cell::GRU ? 2 : 1;
  SmallVector<std::string> defaults =
      cell == Cell::RNN   ? SmallVector<std::string>{"Tanh"}
      : cell == Cell::GRU ? SmallVector<std::string>{"Sigmoid", "Tanh"}
                          : SmallVector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  if (names.empty())
    for (int64_t d = 0; d < r.dirs; ++d)
      names.append(defaults.begin(), defaults.end());
  if (names.size() != perDir * r.dirs) {
    ctx.emitError() << "activations has " << names.size()
                    << " entries; expected " << perDir * r.dirs;
    return failure();
  }
  for (auto [i, name] : llvm::enumerate(names)) {
    Activation a{name};
    a.alpha = i < alphas.size()       ? alphas[i]
              : name == "LeakyRelu"   ? 0.01
              : name == "HardSigmoid" ? 0.2
                                      : 1.0;
    a.beta = i < betas.size() ? betas[i] : name == "HardSigmoid" ? 0.5 : 0.0;
    static const char *const known[] = {
        "Tanh",      "Sigmoid",         "Relu",       "Affine",
        "LeakyRelu", "ThresholdedRelu", "ScaledTanh", "HardSigmoid",
        "Elu",       "Softsign",        "Softplus"};
    if (!llvm::is_contained(known, name)) {
      (void)ctx.unsupportedValue("activations", name);
      return failure();
    }
    r.acts.push_back(a);
  }
  r.reverse = direction == "reverse";
  return r;
}

static LogicalResult importRecurrent(NodeContext &ctx, Cell cell) {
  FailureOr<Recurrence> attrs = readAttributes(ctx, cell);
  if (failed(attrs))
    return failure();
  Recurrence &r = *attrs;
  bool reverseOnly = r.reverse;
  bool batchMajor = ctx.opset >= 14 && ctx.getInt("layout", 0);
  Value x = ctx.input(0), w = ctx.input(1), rw = ctx.input(2);
  Value bias = ctx.input(3), lens = ctx.input(4), h0 = ctx.input(5);
  Value c0 = cell == Cell::LSTM ? ctx.input(6) : Value();
  Value peep = cell == Cell::LSTM ? ctx.input(7) : Value();
  if (failed(ctx.requireFloat(x)))
    return failure();
  for (Value v : {x, w, rw})
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape() ||
        shapeOf(v).size() != 3)
      return ctx.emitError() << "X, W and R must be static 3-D tensors";
  if (batchMajor)
    x = ctx.transpose(x, {1, 0, 2});
  int64_t seq = shapeOf(x)[0], batch = shapeOf(x)[1];
  if (failed(ctx.checkUnroll(seq * r.dirs, "recurrent steps")))
    return failure();
  int64_t hid = r.hidden ? r.hidden : shapeOf(rw).back();
  int64_t g = r.gates;
  if (shapeOf(w)[0] != r.dirs || shapeOf(w)[1] != g * hid ||
      shapeOf(rw)[1] != g * hid || shapeOf(rw)[2] != hid)
    return ctx.emitError() << "W " << shapes::str(shapeOf(w)) << " and R "
                           << shapes::str(shapeOf(rw))
                           << " do not match hidden_size " << hid;
  Type et = elementTypeOf(x), i64 = ctx.b.getI64Type();
  // The optional inputs, as the state is laid out in the file.
  auto state = [&](int64_t size) {
    return batchMajor ? SmallVector<int64_t>{batch, r.dirs, size}
                      : SmallVector<int64_t>{r.dirs, batch, size};
  };
  const struct {
    Value value;
    const char *name;
    SmallVector<int64_t> shape;
    bool floating;
  } operands[] = {{w, "W", {r.dirs, g * hid, shapeOf(x)[2]}, true},
                  {rw, "R", {r.dirs, g * hid, hid}, true},
                  {bias, "B", {r.dirs, 2 * g * hid}, true},
                  {lens, "sequence_lens", {batch}, false},
                  {h0, "initial_h", state(hid), true},
                  {c0, "initial_c", state(hid), true},
                  {peep, "P", {r.dirs, 3 * hid}, true}};
  for (const auto &o : operands) {
    if (!o.value)
      continue;
    if (shapeOf(o.value) != ArrayRef<int64_t>(o.shape))
      return ctx.emitError()
             << o.name << " has shape " << shapes::str(shapeOf(o.value))
             << "; expected " << shapes::str(o.shape);
    if (o.floating && elementTypeOf(o.value) != et)
      return ctx.emitError() << o.name << " has element type "
                             << elementTypeOf(o.value) << "; X has " << et;
    if (!o.floating && !elementTypeOf(o.value).isInteger())
      return ctx.emitError() << o.name << " must hold integers";
  }
  auto layoutState = [&](Value s) {
    return s && batchMajor ? ctx.transpose(s, {1, 0, 2}) : s;
  };
  h0 = layoutState(h0);
  c0 = layoutState(c0);
  Value lenCol; // [batch, 1]
  if (lens)
    lenCol = ctx.reshape(ctx.castTo(lens, i64), {batch, 1});

  SmallVector<Value> ys(r.dirs), yh(r.dirs), yc(r.dirs);
  size_t perDir = r.acts.size() / r.dirs;
  for (int64_t d = 0; d < r.dirs; ++d) {
    bool backward = reverseOnly || d == 1;
    auto pick = [&](Value t) { // [dirs, ...] -> [...] of direction d
      if (!t)
        return Value();
      SmallVector<int64_t> s(shapeOf(t).drop_front());
      return ctx.reshape(ctx.slice(t, 0, d, 1), s);
    };
    Value wd = ctx.transpose(pick(w), {1, 0});  // [input, g*hid]
    Value rd = ctx.transpose(pick(rw), {1, 0}); // [hid, g*hid]
    Value wb, rb;
    if (bias) {
      Value bd = pick(bias); // [2*g*hid]
      wb = ctx.slice(bd, 0, 0, g * hid);
      rb = ctx.slice(bd, 0, g * hid, g * hid);
    }
    Value h = h0 ? pick(h0) : ctx.constant({batch, hid}, et, {0.0});
    Value c = c0 ? pick(c0) : ctx.constant({batch, hid}, et, {0.0});
    Value pd = pick(peep);
    ArrayRef<Activation> act = ArrayRef(r.acts).slice(d * perDir, perDir);
    auto gate = [&](Value t, int64_t k) {
      return ctx.slice(t, 1, k * hid, hid);
    };
    auto vgate = [&](Value t, int64_t k) {
      return ctx.slice(t, 0, k * hid, hid);
    };
    auto clip = [&](Value t) {
      if (!r.clip)
        return t;
      return ctx.clamp(t, -*r.clip, *r.clip);
    };
    SmallVector<Value> outs(seq);
    for (int64_t step = 0; step < seq; ++step) {
      int64_t t = backward ? seq - 1 - step : step;
      Value xt = ctx.reshape(ctx.slice(x, 0, t, 1), {batch, shapeOf(x)[2]});
      Value xw = ctx.matmul(xt, wd); // [batch, g*hid]
      if (wb)
        xw = ctx.binary<AddOp>(xw, wb);
      Value hr = ctx.matmul(h, rd);
      Value hrb = rb ? ctx.binary<AddOp>(hr, rb) : hr;
      Value hNew, cNew;
      if (cell == Cell::RNN) {
        hNew = activate(ctx, act[0], clip(ctx.binary<AddOp>(xw, hrb)));
      } else if (cell == Cell::GRU) {
        Value z = activate(ctx, act[0],
                           clip(ctx.binary<AddOp>(gate(xw, 0), gate(hrb, 0))));
        Value rr = activate(ctx, act[0],
                            clip(ctx.binary<AddOp>(gate(xw, 1), gate(hrb, 1))));
        Value rh = ctx.slice(rd, 1, 2 * hid, hid); // [hid, hid]
        Value inner;
        if (r.linearBeforeReset) {
          Value lin = ctx.matmul(h, rh);
          if (rb)
            lin = ctx.binary<AddOp>(lin, vgate(rb, 2));
          inner = ctx.binary<MulOp>(rr, lin);
        } else {
          inner = ctx.matmul(ctx.binary<MulOp>(rr, h), rh);
          if (rb)
            inner = ctx.binary<AddOp>(inner, vgate(rb, 2));
        }
        Value ht =
            activate(ctx, act[1], clip(ctx.binary<AddOp>(gate(xw, 2), inner)));
        Value one = ctx.scalar(et, 1);
        hNew =
            ctx.binary<AddOp>(ctx.binary<MulOp>(ctx.binary<SubOp>(one, z), ht),
                              ctx.binary<MulOp>(z, h));
      } else {
        Value s = ctx.binary<AddOp>(xw, hrb);
        Value iPre = gate(s, 0), oPre = gate(s, 1), fPre = gate(s, 2);
        if (pd) {
          iPre = ctx.binary<AddOp>(iPre, ctx.binary<MulOp>(vgate(pd, 0), c));
          fPre = ctx.binary<AddOp>(fPre, ctx.binary<MulOp>(vgate(pd, 2), c));
        }
        Value it = activate(ctx, act[0], clip(iPre));
        Value ft = activate(ctx, act[0], clip(fPre));
        Value ct = activate(ctx, act[1], clip(gate(s, 3)));
        cNew = ctx.binary<AddOp>(ctx.binary<MulOp>(ft, c),
                                 ctx.binary<MulOp>(it, ct));
        if (pd)
          oPre = ctx.binary<AddOp>(oPre, ctx.binary<MulOp>(vgate(pd, 1), cNew));
        Value ot = activate(ctx, act[0], clip(oPre));
        hNew = ctx.binary<MulOp>(ot, activate(ctx, act[2], cNew));
      }
      if (!hNew)
        return failure();
      Value out = hNew;
      if (lenCol) {
        Value live = ctx.compare(ComparePredicate::gt, lenCol,
                                 ctx.scalar(i64, (double)t));
        hNew = ctx.select(live, hNew, h);
        if (cNew)
          cNew = ctx.select(live, cNew, c);
        out = ctx.select(live, out, ctx.scalar(et, 0));
      }
      h = hNew;
      if (cNew)
        c = cNew;
      outs[t] = ctx.reshape(out, {1, 1, batch, hid});
    }
    ys[d] = ctx.concat(outs, 0);
    yh[d] = ctx.reshape(h, {1, batch, hid});
    yc[d] = ctx.reshape(c, {1, batch, hid});
  }
  Value y = ctx.concat(ys, 1); // [seq, dirs, batch, hid]
  Value hLast = ctx.concat(yh, 0), cLast = ctx.concat(yc, 0);
  if (batchMajor) {
    y = ctx.transpose(y, {2, 0, 1, 3});
    hLast = ctx.transpose(hLast, {1, 0, 2});
    cLast = ctx.transpose(cLast, {1, 0, 2});
  }
  ctx.setResult(0, y);
  ctx.setResult(1, hLast);
  if (cell == Cell::LSTM)
    ctx.setResult(2, cLast);
  return success(y && hLast);
}

static LogicalResult importRNN(NodeContext &ctx) {
  return importRecurrent(ctx, Cell::RNN);
}
static LogicalResult importGRU(NodeContext &ctx) {
  return importRecurrent(ctx, Cell::GRU);
}
static LogicalResult importLSTM(NodeContext &ctx) {
  return importRecurrent(ctx, Cell::LSTM);
}

void mlir::tcc::onnx::registerRecurrentOps(OpTable &t) {
  t.add("RNN", 1, 3, 6, 2, importRNN);
  t.add("GRU", 1, 3, 6, 2, importGRU);
  t.add("LSTM", 1, 3, 8, 3, importLSTM);
}
