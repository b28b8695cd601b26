//===- NodeContext.cpp - what an ONNX op handler sees ---------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"
#include "compiler/Frontends/Onnx/RunTimeSize.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/APSInt.h"
#include "llvm/ADT/StringExtras.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;
using ::onnx::AttributeProto;

//===----------------------------------------------------------------------===//
// OpTable
//===----------------------------------------------------------------------===//

void OpTable::add(StringRef opType, int64_t since, unsigned minInputs,
                  unsigned maxInputs, unsigned maxOutputs, OpHandler handler,
                  bool leadingOptional) {
  auto &list = versions[opType];
  list.push_back(
      {since, minInputs, maxInputs, maxOutputs, handler, leadingOptional});
  llvm::sort(list, [](const OpVersion &a, const OpVersion &b) {
    return a.since < b.since;
  });
}

const OpVersion *OpTable::lookup(StringRef opType, int64_t opset) const {
  auto it = versions.find(opType);
  if (it == versions.end())
    return nullptr;
  const OpVersion *found = nullptr;
  for (const OpVersion &v : it->second)
    if (v.since <= opset)
      found = &v;
  return found;
}

int64_t OpTable::firstSince(StringRef opType) const {
  auto it = versions.find(opType);
  return it == versions.end() ? 0 : it->second.front().since;
}

std::vector<std::pair<std::string, std::vector<int64_t>>>
OpTable::entries() const {
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  for (const auto &entry : versions) {
    std::vector<int64_t> since;
    for (const OpVersion &v : entry.getValue())
      since.push_back(v.since);
    out.emplace_back(entry.getKey().str(), std::move(since));
  }
  llvm::sort(out);
  return out;
}

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

NodeContext::NodeContext(const ::onnx::NodeProto &node, std::string prefix,
                         int64_t opset, OpBuilder &builder, Location loc,
                         SmallVector<Value> inputs, StringRef modelDir)
    : node(node), opset(opset), b(builder), loc(loc), prefix(std::move(prefix)),
      inputs(std::move(inputs)), modelDir(modelDir.str()),
      errorFnStorage([this] { return emitError(); }), tb(builder, loc) {
  tb.setErrorFn(errorFnStorage);
  tb.setTypeCheck([this](RankedTensorType type) {
    return success(
        static_cast<bool>(tensorType(type.getShape(), type.getElementType())));
  });
}

InFlightDiagnostic NodeContext::emitError() {
  InFlightDiagnostic diag = mlir::emitError(loc);
  if (hasFailed) {
    // Later errors follow from the first: keep the report to one line.
    diag.abandon();
    return diag;
  }
  hasFailed = true;
  diag << prefix;
  return diag;
}

DenseElementsAttr NodeContext::constInput(unsigned i, StringRef why) {
  Value v = input(i);
  Attribute attr;
  bool isConstant = v && matchPattern(v, m_Constant(&attr));
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(attr))
    return dense;
  InFlightDiagnostic diag = emitError();
  diag << "input " << i << " ('"
       << (i < (unsigned)node.input_size() ? node.input(i) : "") << "') ";
  if (isConstant) {
    diag << "is too large a constant to read at compile time";
    return {};
  }
  diag << "must be a constant (tcc needs its value at compile time)";
  // Say which graph inputs it is computed from: giving those values (as
  // initializers) makes it constant.
  SmallVector<std::string> sources = graphInputsBehind(v);
  if (!sources.empty() &&
      !(isa<BlockArgument>(v) && sources.size() == 1 &&
        i < (unsigned)node.input_size() && sources[0] == node.input(i))) {
    diag << "; ";
    describeSources(diag, sources);
  }
  if (!why.empty())
    diag << "; " << why;
  return {};
}

SmallVector<std::string> NodeContext::computedSizeSources(Value v) {
  SmallVector<std::string> names;
  SmallVector<Value> stack = {v};
  DenseSet<Value> seen;
  while (!stack.empty() && seen.size() < 10000) {
    Value cur = stack.pop_back_val();
    Operation *def = cur.getDefiningOp();
    if (!def || !seen.insert(cur).second)
      continue;
    if (auto trim = dyn_cast<TrimOp>(def))
      for (std::string &name : graphInputsBehind(trim.getSize()))
        if (!llvm::is_contained(names, name))
          names.push_back(std::move(name));
    llvm::append_range(stack, def->getOperands());
  }
  llvm::sort(names);
  return names;
}

void NodeContext::describeSources(InFlightDiagnostic &diag,
                                  ArrayRef<std::string> names) {
  diag << "it is computed from graph input" << (names.size() > 1 ? "s" : "");
  for (auto [k, name] : llvm::enumerate(names))
    diag << (k ? ", '" : " '") << name << "'";
}

SmallVector<std::string> NodeContext::graphInputsBehind(Value v) {
  SmallVector<std::string> names;
  SmallVector<Value> stack = {v};
  DenseSet<Value> seen;
  while (!stack.empty() && seen.size() < 10000) {
    Value cur = stack.pop_back_val();
    if (!cur || !seen.insert(cur).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(cur)) {
      auto func = dyn_cast_or_null<func::FuncOp>(arg.getOwner()->getParentOp());
      if (!func)
        continue;
      if (auto name =
              func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tcc.name"))
        if (!llvm::is_contained(names, name.str()))
          names.push_back(name.str());
      continue;
    }
    Operation *op = cur.getDefiningOp();
    llvm::append_range(stack, op->getOperands());
    // Values a region uses from above count too.
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        Operation *owner = operand.getParentBlock()->getParentOp();
        if (owner && owner != op && !op->isProperAncestor(owner))
          stack.push_back(operand);
      }
    });
  }
  llvm::sort(names);
  return names;
}

FailureOr<SmallVector<int64_t>> NodeContext::constInts(unsigned i) {
  DenseElementsAttr dense = constInput(i);
  if (!dense)
    return failure();
  auto intType = dyn_cast<IntegerType>(dense.getElementType());
  if (!intType) {
    emitError() << "input " << i << " must hold integers; got "
                << dense.getElementType();
    return failure();
  }
  SmallVector<int64_t> values;
  for (const APInt &v : dense.getValues<APInt>())
    values.push_back(intType.isUnsigned() ? (int64_t)v.getZExtValue()
                                          : v.getSExtValue());
  return values;
}

FailureOr<double> NodeContext::constScalar(unsigned i) {
  DenseElementsAttr dense = constInput(i);
  if (!dense)
    return failure();
  if (dense.getNumElements() != 1) {
    emitError() << "input " << i << " must hold one value; it has "
                << dense.getNumElements();
    return failure();
  }
  Type et = dense.getElementType();
  if (isa<FloatType>(et))
    return (*dense.getValues<APFloat>().begin()).convertToDouble();
  APInt v = *dense.getValues<APInt>().begin();
  return et.isUnsignedInteger() || et.isInteger(1) ? (double)v.getZExtValue()
                                                   : (double)v.getSExtValue();
}

/// The kind of an attribute; very old models leave `type` unset.
static int attrKind(const AttributeProto &a) {
  if (a.type() != AttributeProto::UNDEFINED)
    return a.type();
  if (a.has_i())
    return AttributeProto::INT;
  if (a.has_f())
    return AttributeProto::FLOAT;
  if (a.has_s())
    return AttributeProto::STRING;
  if (a.has_t())
    return AttributeProto::TENSOR;
  if (a.has_g())
    return AttributeProto::GRAPH;
  if (a.ints_size())
    return AttributeProto::INTS;
  if (a.floats_size())
    return AttributeProto::FLOATS;
  return AttributeProto::UNDEFINED;
}

const AttributeProto *NodeContext::findAttr(StringRef name, int kind,
                                            StringRef kindName) {
  for (const AttributeProto &a : node.attribute()) {
    if (a.name() != name)
      continue;
    usedAttrs.insert(name);
    if (attrKind(a) != kind) {
      emitError() << "attribute '" << name << "' must be " << kindName;
      return nullptr;
    }
    return &a;
  }
  return nullptr;
}

bool NodeContext::hasAttr(StringRef name) {
  return llvm::any_of(node.attribute(), [&](const AttributeProto &a) {
    return a.name() == name;
  });
}

int64_t NodeContext::getInt(StringRef name, int64_t dflt) {
  const AttributeProto *a = findAttr(name, AttributeProto::INT, "an int");
  return a ? a->i() : dflt;
}

double NodeContext::getFloat(StringRef name, double dflt) {
  const AttributeProto *a = findAttr(name, AttributeProto::FLOAT, "a float");
  return a ? a->f() : dflt;
}

std::string NodeContext::getString(StringRef name, StringRef dflt) {
  const AttributeProto *a = findAttr(name, AttributeProto::STRING, "a string");
  return a ? a->s() : dflt.str();
}

SmallVector<int64_t> NodeContext::getInts(StringRef name) {
  const AttributeProto *a =
      findAttr(name, AttributeProto::INTS, "a list of ints");
  return a ? SmallVector<int64_t>(a->ints().begin(), a->ints().end())
           : SmallVector<int64_t>();
}

SmallVector<float> NodeContext::getFloats(StringRef name) {
  const AttributeProto *a =
      findAttr(name, AttributeProto::FLOATS, "a list of floats");
  return a ? SmallVector<float>(a->floats().begin(), a->floats().end())
           : SmallVector<float>();
}

const ::onnx::GraphProto *NodeContext::getGraph(StringRef name) {
  const AttributeProto *a = findAttr(name, AttributeProto::GRAPH, "a graph");
  if (!a && !hasFailed)
    emitError() << "attribute '" << name << "' is required";
  return a ? &a->g() : nullptr;
}

const ::onnx::TensorProto *NodeContext::getTensor(StringRef name) {
  const AttributeProto *a = findAttr(name, AttributeProto::TENSOR, "a tensor");
  return a ? &a->t() : nullptr;
}

FailureOr<ElementsAttr> NodeContext::convertTensorAttr(StringRef name) {
  const ::onnx::TensorProto *t = getTensor(name);
  if (!t)
    return failure();
  // Constant nodes seldom name their tensor: name the blob after the output.
  StringRef blob = !t->name().empty()   ? StringRef(t->name())
                   : node.output_size() ? StringRef(node.output(0))
                                        : name;
  return convertTensor(b.getContext(), *t, modelDir,
                       ("attribute '" + name + "'").str(), blob, limits,
                       errorFn());
}

void NodeContext::ignoreAttrs(ArrayRef<StringRef> names) {
  for (StringRef name : names)
    usedAttrs.insert(name);
}

const AttributeProto *NodeContext::firstUnusedAttr() const {
  for (const AttributeProto &a : node.attribute())
    if (!usedAttrs.contains(a.name()))
      return &a;
  return nullptr;
}

LogicalResult NodeContext::unsupportedValue(StringRef attr, StringRef value) {
  return emitError() << "attribute " << attr << " = '" << value
                     << "' is not supported";
}

void NodeContext::setResult(unsigned i, Value v) {
  if (results.size() <= i)
    results.resize(i + 1);
  results[i] = v;
}

RankedTensorType NodeContext::tensorType(ArrayRef<int64_t> shape,
                                         Type elementType) {
  for (int64_t d : shape) {
    if (!ShapedType::isDynamic(d) && d < 0) {
      emitError() << "result shape " << shapes::str(shape)
                  << " has a negative dimension";
      return {};
    }
  }
  // Name the tensor when the node has only one.
  std::string what = "a result";
  if (node.output_size() == 1 && !node.output(0).empty())
    what = "output '" + node.output(0) + "'";
  if (failed(checkTensorSize(shape, elementType, limits, what, errorFn())))
    return {};
  return RankedTensorType::get(shape, elementType);
}

FailureOr<int64_t> NodeContext::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    emitError() << "axis " << axis << " is out of range for rank " << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>>
NodeContext::normalizeAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    FailureOr<int64_t> n = normalizeAxis(a, rank);
    if (mlir::failed(n))
      return failure();
    if (llvm::is_contained(out, *n)) {
      emitError() << "axis " << a << " is listed twice";
      return failure();
    }
    out.push_back(*n);
  }
  llvm::sort(out);
  return out;
}

LogicalResult NodeContext::checkUnroll(int64_t copies, StringRef what) {
  if (copies <= kMaxUnroll)
    return success();
  return emitError() << "importing it would unroll " << copies << " " << what
                     << "; tcc unrolls at most " << kMaxUnroll;
}

LogicalResult NodeContext::requireFloat(Value v, StringRef what) {
  if (isa<FloatType>(elementTypeOf(v)))
    return success();
  return emitError() << what << " must be a floating-point tensor; got "
                     << v.getType();
}

LogicalResult NodeContext::requireStatic(Value v, StringRef what) {
  if (cast<RankedTensorType>(v.getType()).hasStaticShape())
    return success();
  // Sizes the run computes (tcc.trim) come from graph inputs' values, not
  // from dynamic input dimensions: say which.
  SmallVector<std::string> sources = computedSizeSources(v);
  if (sources.empty())
    return emitError() << what << " shape " << shapes::str(shapeOf(v))
                       << " must be static; fix it with --input-shape";
  InFlightDiagnostic diag = emitError();
  diag << what << " shape " << shapes::str(shapeOf(v))
       << " must be static; its sizes are known only at run time: ";
  describeSources(diag, sources);
  return diag;
}

Value NodeContext::constant(ArrayRef<int64_t> shape, Type et,
                            ArrayRef<double> values) {
  RankedTensorType type = tensorType(shape, et);
  if (!type)
    throw NodeFailure();
  return constant(makeElements(
      type, rawElements(et, type.getNumElements(), values), "const"));
}

Value NodeContext::iota(int64_t n, Type et, int64_t axis, int64_t rank,
                        bool dynamic) {
  if (ShapedType::isDynamic(n) && !dynamic) {
    emitError() << "a dimension it ranges over is known only at run time; "
                   "tcc needs its size at compile time";
    throw NodeFailure();
  }
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = n;
  // A dynamic size: the positions as an op, sized where the padded
  // buckets fix the dimension.
  if (ShapedType::isDynamic(n))
    return create<IotaOp>({}, {attr("dimension", b.getI64IntegerAttr(axis))},
                          {RankedTensorType::get(shape, et)});
  // Sizes before the values: a hostile count must not allocate them.
  if (!tensorType(shape, et))
    throw NodeFailure();
  SmallVector<double> values;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(i);
  if (n == 1)
    return constant(shape, et, {0.0});
  return constant(shape, et, values);
}

/// `name` as an identifier (`--dim` takes letters, digits and '_').
static std::string sizeName(llvm::StringRef name) {
  std::string s;
  for (char c : name)
    s += llvm::isAlnum(c) ? c : '_';
  if (s.empty() || llvm::isDigit(s[0]))
    s.insert(s.begin(), '_');
  return s;
}

/// `v` at its bound cut to `count` along `dimension`, the size named `name`.
static Value trimTo(NodeContext &ctx, Value v, Value count, int64_t dimension,
                    StringRef name) {
  SmallVector<int64_t> shape(shapeOf(v));
  shape[dimension] = ShapedType::kDynamic;
  return ctx.create<TrimOp>(
      {v, count},
      {ctx.attr("dimension", ctx.b.getI64IntegerAttr(dimension)),
       ctx.attr("name", ctx.b.getStringAttr(name))},
      {RankedTensorType::get(shape, elementTypeOf(v))});
}

Value NodeContext::trim(Value v, Value count, int64_t dimension,
                        unsigned output) {
  return trimTo(*this, v, count, dimension, sizeName(node.output(output)));
}

Value NodeContext::trimDim(Value v, Value count, int64_t dim, unsigned output) {
  // (A vector's one size is the output's name.)
  std::string name = sizeName(node.output(output));
  if (shapeOf(v).size() != 1)
    name += "_" + std::to_string(dim);
  return trimTo(*this, v, count, dim, name);
}

/// Whether `v` is a small integer constant holding kRunTimeSize.
bool mlir::tcc::onnx::holdsRunTimeSize(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.getElementType().isInteger(64) || !type.hasStaticShape() ||
      type.getNumElements() > kMaxDenseElements)
    return false;
  auto constant = v.getDefiningOp<ConstantOp>();
  auto ints = constant ? dyn_cast<DenseIntElementsAttr>(constant.getValue())
                       : DenseIntElementsAttr();
  return ints && llvm::any_of(ints.getValues<APInt>(), [](const APInt &d) {
           return d.getSExtValue() == kRunTimeSize;
         });
}

Value NodeContext::wrapNegative(Value idx, Value size) {
  return select(compare(ComparePredicate::lt, idx, scalarLike(idx, 0)),
                binary<AddOp>(idx, size), idx);
}

/// The bound `--dim` gives the first of `names` it names; an error asking
/// for `--dim <names.back()>=MAX` when none.
static FailureOr<int64_t> boundOf(NodeContext &ctx, StringRef what,
                                  ArrayRef<std::string> names) {
  for (const std::string &name : names) {
    if (!ctx.dimBounds || !ctx.dimBounds->count(name))
      continue;
    int64_t max = ctx.dimBounds->lookup(name).second;
    if (max > ctx.limits.maxElements) {
      ctx.emitError() << "--dim " << name << " bounds its size by " << max
                      << ", more than the limit of " << ctx.limits.maxElements
                      << " elements; raise it with --max-elements";
      return failure();
    }
    return max;
  }
  ctx.emitError() << what << " is known only at run time: give its upper "
                  << "bound with --dim " << names.back() << "=MAX";
  return failure();
}

FailureOr<int64_t> NodeContext::computedSizeBound(llvm::StringRef what,
                                                  unsigned output) {
  return boundOf(*this, what, {sizeName(node.output(output))});
}

FailureOr<int64_t> NodeContext::computedDimBound(llvm::StringRef what,
                                                 int64_t dim, unsigned output) {
  std::string name = sizeName(node.output(output));
  return boundOf(*this, what, {name + "_" + std::to_string(dim), name});
}

FailureOr<SmallVector<int64_t>>
NodeContext::computedBox(llvm::StringRef what, llvm::ArrayRef<int64_t> shape) {
  SmallVector<int64_t> box(shape);
  int64_t total = 1;
  for (auto [d, size] : llvm::enumerate(box)) {
    if (ShapedType::isDynamic(size)) {
      FailureOr<int64_t> b = computedDimBound(what, d);
      if (failed(b))
        return failure();
      size = *b;
    }
    if (size && total > limits.maxElements / size) {
      emitError() << "the bounds of " << what << " give " << shapes::str(box)
                  << ", more than the limit of " << limits.maxElements
                  << " elements; lower them with --dim or raise it with "
                     "--max-elements";
      return failure();
    }
    total *= size;
  }
  return box;
}

Value NodeContext::scatter(Value data, Value indices, Value updates,
                           int64_t axis, ScatterReduction reduction) {
  if (!data || !indices || !updates)
    return {};
  return create<ScatterOp>(
      {data, indices, updates},
      {attr("axis", b.getI64IntegerAttr(axis)),
       attr("reduction", ScatterReductionAttr::get(b.getContext(), reduction))},
      data.getType());
}

Value NodeContext::matmul(Value lhs, Value rhs) {
  if (!lhs || !rhs)
    return {};
  Type et = elementTypeOf(lhs);
  if (isHalf(et) && elementTypeOf(rhs) == et)
    return castTo(matmul(widenHalf(lhs), widenHalf(rhs)), et);
  return check(tb.matmul(lhs, rhs));
}

FailureOr<SoftmaxRows> mlir::tcc::onnx::softmaxRows(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireFloat(x)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", ctx.opset < 13 ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  if (ctx.opset >= 13 || *axis == rank - 1)
    return SoftmaxRows{x, *axis};
  return SoftmaxRows{
      ctx.reshape(x, {shapes::numElements(shape.take_front(*axis)),
                      shapes::numElements(shape.drop_front(*axis))}),
      1};
}
