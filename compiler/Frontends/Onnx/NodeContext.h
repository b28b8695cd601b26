//===- NodeContext.h - what an ONNX op handler sees -------------*- C++ -*-===//
//
// Internal to the ONNX frontend. Each supported ONNX op has a handler that
// turns one node into tcc ops through a NodeContext: the node's inputs as
// values, its attributes, its opset, and builders that infer result types
// with the shape rules of TccShapes.h and fold constants as they go, so that
// shape computations in the model become constants at import time.
//
// Errors are sticky: the first one is reported with the node prefix, later
// ones (which usually follow from the first) are dropped, so a failed node
// gives exactly one diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTENDS_ONNX_NODECONTEXT_H
#define TCC_FRONTENDS_ONNX_NODECONTEXT_H

#include "dialects/Tcc/IR/TccOps.h"
#include "dialects/Tcc/IR/TccShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

namespace mlir::tcc::onnx {

/// The newest default-domain opset the importer knows (that of the pip onnx
/// package the tests were written against).
constexpr int64_t kNewestOpset = 28;
/// The most elements any tensor the importer makes may hold.
constexpr int64_t kMaxElements = int64_t(1) << 31;
/// Constants with at most this many elements become `dense` (and fold);
/// bigger ones become `dense_resource` blobs.
constexpr int64_t kMaxDenseElements = 64;

class NodeContext;
using OpHandler = LogicalResult (*)(NodeContext &);

/// One version of an op: from opset `since` up to the next version's.
struct OpVersion {
  int64_t since;
  unsigned minInputs, maxInputs, maxOutputs;
  OpHandler handler;
};
constexpr unsigned kVariadic = ~0u;

/// Maps an ONNX op type (default domain) to the versions the importer
/// handles.
class OpTable {
public:
  void add(llvm::StringRef opType, int64_t since, unsigned minInputs,
           unsigned maxInputs, unsigned maxOutputs, OpHandler handler);
  /// The version in force at `opset`, or null when the op is unknown or not
  /// yet defined at that opset.
  const OpVersion *lookup(llvm::StringRef opType, int64_t opset) const;
  /// The opset that introduced the op, or 0 when the op is unknown.
  int64_t firstSince(llvm::StringRef opType) const;

private:
  llvm::StringMap<llvm::SmallVector<OpVersion, 2>> versions;
};

void registerElementwiseOps(OpTable &table);
void registerNNOps(OpTable &table);
void registerReductionOps(OpTable &table);
void registerShapeOps(OpTable &table);

/// Element type of an ONNX TensorProto data type, or null when tcc has none.
Type convertDataType(MLIRContext *ctx, int32_t dataType);
/// The ONNX name of a data type ("float", "string", "float8e4m3fn", ...).
std::string dataTypeName(int32_t dataType);

/// Turns a TensorProto (initializer or tensor attribute) into a constant
/// value: `dense` when small, a `dense_resource` blob named after `name`
/// otherwise. External data is read relative to `modelDir` and must stay
/// inside it. `what` names the tensor in diagnostics ("initializer 'W'").
FailureOr<ElementsAttr>
convertTensor(MLIRContext *ctx, const ::onnx::TensorProto &tensor,
              llvm::StringRef modelDir, llvm::StringRef what,
              llvm::StringRef name, shapes::EmitErrorFn emitError);

/// A constant from ONNX's raw little-endian layout (a byte per bool):
/// `dense` when small, otherwise a `dense_resource` blob named after `name`
/// (MLIR makes blob names unique).
ElementsAttr makeElements(RankedTensorType type, llvm::ArrayRef<char> raw,
                          llvm::StringRef name);

/// The shape of a ranked tensor value.
inline llvm::ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
inline Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

class NodeContext {
public:
  NodeContext(const ::onnx::NodeProto &node, std::string prefix, int64_t opset,
              OpBuilder &builder, Location loc, llvm::SmallVector<Value> inputs,
              llvm::StringRef modelDir);
  NodeContext(const NodeContext &) = delete;
  NodeContext &operator=(const NodeContext &) = delete;

  const ::onnx::NodeProto &node;
  const int64_t opset;
  OpBuilder &b;
  const Location loc;

  //===--- Diagnostics ---------------------------------------------------===//
  /// The node's error, prefixed "<model>: node '<name>' (<OpType>, opset N): ".
  InFlightDiagnostic emitError();
  shapes::EmitErrorFn errorFn() { return errorFnStorage; }
  bool hasError() const { return hasFailed; }

  //===--- Inputs ---------------------------------------------------------===//
  unsigned numInputs() const { return inputs.size(); }
  /// The i-th input, or null when it is absent ("" or past the end).
  Value input(unsigned i) const {
    return i < inputs.size() ? inputs[i] : Value();
  }
  /// The value of a constant input; an error when it is computed at run time.
  DenseElementsAttr constInput(unsigned i);
  /// The integers of a constant integer input.
  FailureOr<llvm::SmallVector<int64_t>> constInts(unsigned i);
  /// The single number of a constant input with one element.
  FailureOr<double> constScalar(unsigned i);

  //===--- Attributes -----------------------------------------------------===//
  bool hasAttr(llvm::StringRef name);
  int64_t getInt(llvm::StringRef name, int64_t dflt);
  double getFloat(llvm::StringRef name, double dflt);
  std::string getString(llvm::StringRef name, llvm::StringRef dflt);
  llvm::SmallVector<int64_t> getInts(llvm::StringRef name);
  llvm::SmallVector<float> getFloats(llvm::StringRef name);
  const ::onnx::TensorProto *getTensor(llvm::StringRef name);
  FailureOr<ElementsAttr> convertTensorAttr(llvm::StringRef name);
  /// Attributes the handler accepts without using (e.g. legacy
  /// `consumed_inputs`); any other attribute it does not read is an error.
  void ignoreAttrs(llvm::ArrayRef<llvm::StringRef> names);
  /// The first attribute the handler neither read nor ignored, or null.
  const ::onnx::AttributeProto *firstUnusedAttr() const;
  /// A `value` attribute naming an unsupported choice.
  LogicalResult unsupportedValue(llvm::StringRef attr, llvm::StringRef value);

  //===--- Results --------------------------------------------------------===//
  void setResult(unsigned i, Value v);
  llvm::ArrayRef<Value> getResults() const { return results; }
  /// Whether the node's i-th output is used (listed with a name).
  bool hasOutput(unsigned i) const {
    return (int)i < node.output_size() && !node.output(i).empty();
  }

  //===--- Builders (return null after reporting an error) ----------------===//
  /// A tensor type, refusing negative sizes and more than kMaxElements.
  RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape, Type elementType);
  Value constant(ElementsAttr value);
  /// A rank-0 constant of the given element type.
  Value scalar(Type elementType, double value);
  /// Normalizes a possibly negative axis to [0, rank).
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);
  /// Normalizes, sorts and checks for duplicates.
  FailureOr<llvm::SmallVector<int64_t>>
  normalizeAxes(llvm::ArrayRef<int64_t> axes, int64_t rank);
  /// Asks for a float input (ops that tcc defines on floats only).
  LogicalResult requireFloat(Value v, llvm::StringRef what = "input");

  Value reshape(Value v, llvm::ArrayRef<int64_t> shape);
  Value transpose(Value v, llvm::ArrayRef<int64_t> perm);
  Value broadcastTo(Value v, llvm::ArrayRef<int64_t> shape);
  Value castTo(Value v, Type elementType);
  Value compare(ComparePredicate predicate, Value lhs, Value rhs);
  template <typename OpT> Value binary(Value lhs, Value rhs) {
    if (!lhs || !rhs || mlir::failed(checkSameElementType(lhs, rhs)))
      return {};
    FailureOr<shapes::Shape> shape =
        shapes::broadcast({shapeOf(lhs), shapeOf(rhs)}, errorFn());
    if (mlir::failed(shape))
      return {};
    RankedTensorType type = tensorType(*shape, elementTypeOf(lhs));
    return type ? b.createOrFold<OpT>(loc, type, lhs, rhs) : Value();
  }
  template <typename OpT> Value unary(Value v) {
    return v ? b.createOrFold<OpT>(loc, v.getType(), v) : Value();
  }

private:
  LogicalResult checkSameElementType(Value lhs, Value rhs);
  const ::onnx::AttributeProto *findAttr(llvm::StringRef name, int kind,
                                         llvm::StringRef kindName);

  std::string prefix;
  llvm::SmallVector<Value> inputs;
  llvm::SmallVector<Value> results;
  llvm::StringSet<> usedAttrs;
  std::string modelDir;
  bool hasFailed = false;
  std::function<InFlightDiagnostic()> errorFnStorage;
};

} // namespace mlir::tcc::onnx

#endif // TCC_FRONTENDS_ONNX_NODECONTEXT_H
