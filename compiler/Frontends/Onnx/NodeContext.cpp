//===- NodeContext.cpp - what an ONNX op handler sees ---------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/APSInt.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;
using ::onnx::AttributeProto;

//===----------------------------------------------------------------------===//
// OpTable
//===----------------------------------------------------------------------===//

void OpTable::add(StringRef opType, int64_t since, unsigned minInputs,
                  unsigned maxInputs, unsigned maxOutputs, OpHandler handler) {
  auto &list = versions[opType];
  list.push_back({since, minInputs, maxInputs, maxOutputs, handler});
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

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

NodeContext::NodeContext(const ::onnx::NodeProto &node, std::string prefix,
                         int64_t opset, OpBuilder &builder, Location loc,
                         SmallVector<Value> inputs, StringRef modelDir)
    : node(node), opset(opset), b(builder), loc(loc), prefix(std::move(prefix)),
      inputs(std::move(inputs)), modelDir(modelDir.str()),
      errorFnStorage([this] { return emitError(); }) {}

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

DenseElementsAttr NodeContext::constInput(unsigned i) {
  Value v = input(i);
  Attribute attr;
  bool isConstant = v && matchPattern(v, m_Constant(&attr));
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(attr))
    return dense;
  InFlightDiagnostic diag = emitError();
  diag << "input " << i << " ('"
       << (i < (unsigned)node.input_size() ? node.input(i) : "") << "') ";
  if (isConstant)
    diag << "is too large a constant to read at compile time";
  else
    diag << "must be a constant (tcc needs its value at compile time)";
  return {};
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
                       ("attribute '" + name + "'").str(), blob, errorFn());
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
  int64_t count = 1;
  bool empty = llvm::is_contained(shape, 0);
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d))
      continue;
    if (d < 0) {
      emitError() << "result shape " << shapes::str(shape)
                  << " has a negative dimension";
      return {};
    }
    if (empty)
      continue;
    if (count > kMaxElements / d) {
      emitError() << "result shape " << shapes::str(shape)
                  << " holds more than 2^31 elements";
      return {};
    }
    count *= d;
  }
  return RankedTensorType::get(shape, elementType);
}

Value NodeContext::constant(ElementsAttr value) {
  return b.create<ConstantOp>(loc, value);
}

Value NodeContext::scalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  if (isa<FloatType>(elementType))
    return constant(
        DenseElementsAttr::get(type, FloatAttr::get(elementType, value)));
  auto intType = cast<IntegerType>(elementType);
  if (intType.getWidth() == 1)
    return constant(DenseElementsAttr::get(type, value != 0));
  // Saturates instead of overflowing (e.g. Gemm's alpha on integers).
  APSInt v(intType.getWidth(), intType.isUnsigned());
  bool exact;
  (void)APFloat(value).convertToInteger(v, APFloat::rmTowardZero, &exact);
  return constant(DenseElementsAttr::get(type, APInt(v)));
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

LogicalResult NodeContext::requireFloat(Value v, StringRef what) {
  if (isa<FloatType>(elementTypeOf(v)))
    return success();
  return emitError() << what << " must be a floating-point tensor; got "
                     << v.getType();
}

LogicalResult NodeContext::checkSameElementType(Value lhs, Value rhs) {
  if (elementTypeOf(lhs) == elementTypeOf(rhs))
    return success();
  return emitError() << "operand element types differ: " << lhs.getType()
                     << " and " << rhs.getType();
}

Value NodeContext::reshape(Value v, ArrayRef<int64_t> shape) {
  if (!v)
    return {};
  int64_t from = shapes::numElements(shapeOf(v));
  int64_t to = shapes::numElements(shape);
  if (!ShapedType::isDynamic(from) && !ShapedType::isDynamic(to) &&
      from != to) {
    emitError() << "cannot reshape " << shapes::str(shapeOf(v)) << " (" << from
                << " elements) into " << shapes::str(shape) << " (" << to
                << " elements)";
    return {};
  }
  RankedTensorType type = tensorType(shape, elementTypeOf(v));
  return type ? b.createOrFold<ReshapeOp>(loc, type, v) : Value();
}

Value NodeContext::transpose(Value v, ArrayRef<int64_t> perm) {
  if (!v)
    return {};
  FailureOr<shapes::Shape> shape =
      shapes::transpose(shapeOf(v), perm, errorFn());
  if (mlir::failed(shape))
    return {};
  RankedTensorType type = tensorType(*shape, elementTypeOf(v));
  return type ? b.createOrFold<TransposeOp>(loc, type, v, perm) : Value();
}

Value NodeContext::broadcastTo(Value v, ArrayRef<int64_t> shape) {
  if (!v)
    return {};
  if (!shapes::broadcastsTo(shapeOf(v), shape)) {
    emitError() << "shape " << shapes::str(shapeOf(v))
                << " does not broadcast to " << shapes::str(shape);
    return {};
  }
  RankedTensorType type = tensorType(shape, elementTypeOf(v));
  return type ? b.createOrFold<BroadcastToOp>(loc, type, v) : Value();
}

Value NodeContext::castTo(Value v, Type elementType) {
  if (!v)
    return {};
  auto type = RankedTensorType::get(shapeOf(v), elementType);
  return b.createOrFold<CastOp>(loc, type, v);
}

Value NodeContext::compare(ComparePredicate predicate, Value lhs, Value rhs) {
  if (!lhs || !rhs || mlir::failed(checkSameElementType(lhs, rhs)))
    return {};
  FailureOr<shapes::Shape> shape =
      shapes::broadcast({shapeOf(lhs), shapeOf(rhs)}, errorFn());
  if (mlir::failed(shape))
    return {};
  RankedTensorType type = tensorType(*shape, b.getI1Type());
  return type ? b.createOrFold<CompareOp>(loc, type, predicate, lhs, rhs)
              : Value();
}
