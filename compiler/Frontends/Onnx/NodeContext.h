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
// gives exactly one diagnostic. The builders build through TccBuilder and
// end the node (NodeFailure) when an op cannot be built.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTENDS_ONNX_NODECONTEXT_H
#define TCC_FRONTENDS_ONNX_NODECONTEXT_H

#include "dialects/Tcc/IR/TccBuilder.h"
#include "dialects/Tcc/IR/TccOps.h"
#include "dialects/Tcc/IR/TccShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <map>
#include <optional>

#include "onnx/onnx_pb.h"

namespace mlir::tcc::onnx {

/// The newest default-domain opset the importer knows (that of the pip onnx
/// package the tests were written against).
constexpr int64_t kNewestOpset = 28;
/// A bound on single dimensions and counts that keeps the importer's
/// arithmetic from overflowing; the caps on whole tensors are SizeLimits.
constexpr int64_t kMaxElements = int64_t(1) << 31;
/// The most copies of a body one node may expand into at import time
/// (unrolled recurrent steps, sequence elements, Scan-8 batch entries):
/// each copy is ops of its own, and the bound keeps a small model from
/// asking for billions of them.
constexpr int64_t kMaxUnroll = int64_t(1) << 16;
/// Constants with at most this many elements become `dense` (and fold);
/// bigger ones become `dense_resource` blobs.
constexpr int64_t kMaxDenseElements = 64;

class NodeContext;
using OpHandler = LogicalResult (*)(NodeContext &);

/// Thrown by NodeContext's builders after they reported the node's error;
/// caught only where the importer calls a handler. No MLIR or LLVM frame
/// lies between the two.
struct NodeFailure {};

/// One version of an op: from opset `since` up to the next version's.
struct OpVersion {
  int64_t since;
  unsigned minInputs, maxInputs, maxOutputs;
  OpHandler handler;
  /// Whether the first `minInputs` inputs may be absent ("") when the op is
  /// variadic (Loop's M and cond).
  bool leadingOptional = false;
};
constexpr unsigned kVariadic = ~0u;

/// Maps an ONNX op type (default domain) to the versions the importer
/// handles.
class OpTable {
public:
  void add(llvm::StringRef opType, int64_t since, unsigned minInputs,
           unsigned maxInputs, unsigned maxOutputs, OpHandler handler,
           bool leadingOptional = false);
  /// The version in force at `opset`, or null when the op is unknown or not
  /// yet defined at that opset.
  const OpVersion *lookup(llvm::StringRef opType, int64_t opset) const;
  /// The opset that introduced the op, or 0 when the op is unknown.
  int64_t firstSince(llvm::StringRef opType) const;
  /// Every op type with the opsets at which its versions start.
  std::vector<std::pair<std::string, std::vector<int64_t>>> entries() const;

private:
  llvm::StringMap<llvm::SmallVector<OpVersion, 2>> versions;
};

void registerElementwiseOps(OpTable &table);
void registerNNOps(OpTable &table);
void registerReductionOps(OpTable &table);
void registerShapeOps(OpTable &table);
void registerMathOps(OpTable &table);
void registerNormalizationOps(OpTable &table);
void registerIndexingOps(OpTable &table);
void registerLossOps(OpTable &table);
void registerAttentionOps(OpTable &table);
void registerResizeOps(OpTable &table);
void registerRecurrentOps(OpTable &table);
void registerControlFlowOps(OpTable &table);
void registerSignalOps(OpTable &table);
void registerQuantizationOps(OpTable &table);
void registerEinsumOps(OpTable &table);
void registerSequenceOps(OpTable &table);
void registerSamplingOps(OpTable &table);

/// Caps on the size of any one tensor the import reads or makes
/// (ImportOptions::maxElements and maxTensorBytes).
struct SizeLimits {
  int64_t maxElements = int64_t(1) << 31;
  int64_t maxBytes = int64_t(1) << 32;
};

/// Checks a tensor of `shape` (dynamic dimensions do not count) and
/// `elementType` against `limits` before anything of that size is built or
/// allocated. On failure emits "<what> of shape S holds N elements, more
/// than the limit of M; raise it with --max-elements" (or the same for bytes
/// and --max-tensor-bytes).
LogicalResult checkTensorSize(llvm::ArrayRef<int64_t> shape, Type elementType,
                              const SizeLimits &limits, const llvm::Twine &what,
                              shapes::EmitErrorFn emitError);

/// Element type of an ONNX TensorProto data type, or null when tcc has none.
Type convertDataType(MLIRContext *ctx, int32_t dataType);
/// The ONNX name of a data type ("float", "string", "float8e4m3fn", ...).
std::string dataTypeName(int32_t dataType);

/// Turns a TensorProto (initializer or tensor attribute) into a constant
/// value: `dense` when small, a `dense_resource` blob named after `name`
/// otherwise. External data is read relative to `modelDir` and must stay
/// inside it. `what` names the tensor in diagnostics ("initializer 'W'").
/// A tensor beyond `limits` is refused before any byte is read.
FailureOr<ElementsAttr>
convertTensor(MLIRContext *ctx, const ::onnx::TensorProto &tensor,
              llvm::StringRef modelDir, llvm::StringRef what,
              llvm::StringRef name, const SizeLimits &limits,
              shapes::EmitErrorFn emitError);

/// A constant from ONNX's raw little-endian layout (a byte per bool):
/// `dense` when small, otherwise a `dense_resource` blob named after `name`
/// (MLIR makes blob names unique).
ElementsAttr makeElements(RankedTensorType type, llvm::ArrayRef<char> raw,
                          llvm::StringRef name);

/// `v` as an int64_t without undefined behaviour: truncated toward zero in
/// range, saturated beyond it, and -2^63 + 1 for NaN, so that range checks
/// on the result refuse hostile floats (INT64_MIN itself would read as a
/// dynamic dimension).
inline int64_t saturatingInt(double v) {
  if (!(v > -0x1p63))
    return INT64_MIN + 1;
  return v >= 0x1p63 ? INT64_MAX : (int64_t)v;
}

/// The shape of a ranked tensor value.
inline llvm::ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
inline Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// Whether `v` is a small integer constant holding kRunTimeSize (the size
/// of a dynamic dimension, from Shape) in some element.
bool holdsRunTimeSize(Value v);

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
  /// The caps on each tensor the node makes (tensorType checks them).
  SizeLimits limits;
  /// `--dim` bounds by name (ImportOptions::dimBounds); may be null.
  const llvm::StringMap<std::pair<int64_t, int64_t>> *dimBounds = nullptr;

  /// Imports a subgraph (an If branch, a Loop or Scan body) into `block`:
  /// `inputs` stand for its inputs in order, the names around it stay
  /// visible. Gives its outputs' values.
  std::function<FailureOr<llvm::SmallVector<Value>>(const ::onnx::GraphProto &,
                                                    ValueRange, Block *)>
      importSubgraph;
  /// The graph attribute `name`, or null after an error when it is missing.
  const ::onnx::GraphProto *getGraph(llvm::StringRef name);

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
  /// The tensors of each input that is a sequence (nullopt for tensors).
  llvm::SmallVector<std::optional<llvm::SmallVector<Value>>> sequenceInputs;
  /// Outputs that are sequences, by output index.
  std::map<unsigned, llvm::SmallVector<Value>> sequenceResults;
  /// The tensors of sequence input `i`, or null when it is not a sequence.
  const llvm::SmallVector<Value> *sequence(unsigned i) const {
    return i < sequenceInputs.size() && sequenceInputs[i] ? &*sequenceInputs[i]
                                                          : nullptr;
  }
  /// The value of a constant input; an error when it is computed at run time
  /// (ending "; <why>" when given: what needs the value).
  DenseElementsAttr constInput(unsigned i, llvm::StringRef why = {});
  /// The names of the graph inputs `v` is computed from (sorted).
  llvm::SmallVector<std::string> graphInputsBehind(Value v);
  /// The graph inputs the sizes the run computes behind `v` (the counts of
  /// the tcc.trims it is made from) are computed from (sorted).
  llvm::SmallVector<std::string> computedSizeSources(Value v);
  /// Appends "it is computed from graph input(s) 'a', 'b'" to `diag`.
  static void describeSources(InFlightDiagnostic &diag,
                              llvm::ArrayRef<std::string> names);
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
  /// The node's single result `v`: success when it was built.
  LogicalResult result(Value v) {
    setResult(0, v);
    return success(static_cast<bool>(v));
  }
  llvm::ArrayRef<Value> getResults() const { return results; }
  /// Whether the node's i-th output is used (listed with a name).
  bool hasOutput(unsigned i) const {
    return (int)i < node.output_size() && !node.output(i).empty();
  }

  //===--- Builders ---------------------------------------------------===//
  // Thin wrappers of the one builder (TccBuilder), with the node's error
  // prefix and size limits. A wrapper that fails has reported the node's
  // error and throws NodeFailure, which ends the node where the importer
  // called its handler: a handler never computes with a value that failed.
  // An absent input (a null Value) passes through as null.

  /// The builder under the wrappers, for ops without one.
  TccBuilder &builder() { return tb; }
  /// `v`, or the end of the node when it failed.
  Value check(FailureOr<Value> v) {
    if (failed(v))
      throw NodeFailure();
    return *v;
  }
  /// Any tcc op (result types inferred unless given), checked.
  template <typename OpT>
  Value create(ValueRange operands, ArrayRef<NamedAttribute> attributes = {},
               TypeRange resultTypes = {}) {
    return check(tb.build<OpT>(operands, attributes, resultTypes));
  }
  NamedAttribute attr(llvm::StringRef name, Attribute value) {
    return tb.attr(name, value);
  }
  /// A tensor type, refusing negative sizes and tensors beyond `limits`.
  RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape, Type elementType);
  Value constant(ElementsAttr value) { return tb.constant(value); }
  /// A rank-0 constant of the given element type.
  Value scalar(Type elementType, double value) {
    return tb.scalar(elementType, value);
  }
  /// Normalizes a possibly negative axis to [0, rank).
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);
  /// Normalizes, sorts and checks for duplicates.
  FailureOr<llvm::SmallVector<int64_t>>
  normalizeAxes(llvm::ArrayRef<int64_t> axes, int64_t rank);
  /// Refuses to expand the node into more than kMaxUnroll copies of a body;
  /// `what` says what is copied ("recurrent steps").
  LogicalResult checkUnroll(int64_t copies, llvm::StringRef what);
  /// Asks for a float input (ops that tcc defines on floats only).
  LogicalResult requireFloat(Value v, llvm::StringRef what = "input");
  /// Asks for a tensor of static shape (ops whose expansion needs sizes).
  LogicalResult requireStatic(Value v, llvm::StringRef what = "input");

  /// A constant of `shape` and element type `et` holding `values` (row-major;
  /// one value is splat), converted from double; big ones are blobs.
  Value constant(llvm::ArrayRef<int64_t> shape, Type et,
                 llvm::ArrayRef<double> values);
  /// [0, 1, ..., n-1] of element type `et`, shaped to `rank` dimensions
  /// with the n values along `axis` (the others are 1). A dynamic n is an
  /// error unless `dynamic` (the op's positions then compare with each
  /// other only, never index into data: masks, ranges).
  Value iota(int64_t n, Type et, int64_t axis = 0, int64_t rank = 1,
             bool dynamic = false);
  /// `v` (a result at its upper bound) cut to its first `count` (an int64
  /// scalar the graph computes) along `dimension`: a size that depends on
  /// the data (tcc.trim), named after the node's output `output`.
  Value trim(Value v, Value count, int64_t dimension, unsigned output = 0);
  /// `idx` (i64) with negative entries counted from the end of `size`.
  Value wrapNegative(Value idx, Value size);
  /// The name of the size the run computes for the node's output `output`
  /// (an identifier made of it), and its upper bound from `--dim NAME=MAX`;
  /// an error asking for that flag when none is given.
  FailureOr<int64_t> computedSizeBound(llvm::StringRef what,
                                       unsigned output = 0);
  /// The same for an output with several such sizes, one per dimension:
  /// dimension `dim`'s is named "<output>_<dim>" (a vector's, "<output>")
  /// and bounded by `--dim <output>_<dim>=MAX`, else by `--dim
  /// <output>=MAX` (every dimension); `trimDim` cuts `v` to it.
  FailureOr<int64_t> computedDimBound(llvm::StringRef what, int64_t dim,
                                      unsigned output = 0);
  Value trimDim(Value v, Value count, int64_t dim, unsigned output = 0);
  /// `shape` (of output 0) with each dynamic dimension at its bound
  /// (computedDimBound), refused past the element limit.
  FailureOr<SmallVector<int64_t>> computedBox(llvm::StringRef what,
                                              llvm::ArrayRef<int64_t> shape);
  /// The rank-0 constant of one value of `like`'s element type.
  Value scalarLike(Value like, double value) {
    return scalar(elementTypeOf(like), value);
  }
  Value select(Value cond, Value onTrue, Value onFalse) {
    if (!cond || !onTrue || !onFalse)
      return {};
    return check(tb.select(cond, onTrue, onFalse));
  }
  /// Half-precision products accumulate in f32 (as numpy does), rounding
  /// once at the end.
  Value matmul(Value lhs, Value rhs);
  Value concat(llvm::ArrayRef<Value> values, int64_t axis) {
    if (llvm::any_of(values, [](Value v) { return !v; }))
      return {};
    return check(tb.concat(values, axis));
  }
  /// Elements [start, start + size) along `axis` with `step`.
  Value slice(Value v, int64_t axis, int64_t start, int64_t size,
              int64_t step = 1) {
    return v ? check(tb.sliceAxis(v, axis, start, size, step)) : Value();
  }
  /// Element `k` of a vector, as a rank-0 tensor (a size, a pad, a bound
  /// known only at run time).
  Value elementAt(Value vector, int64_t k) {
    return reshape(slice(vector, 0, k, 1), {});
  }
  Value gather(Value data, Value indices, int64_t axis) {
    if (!data || !indices)
      return {};
    return check(tb.gather(data, indices, axis));
  }
  /// A reduction over (normalized, sorted) `axes`. Sums and products of
  /// half-precision floats accumulate in f32 (as numpy does), rounding once.
  template <typename OpT>
  Value reduce(Value v, llvm::ArrayRef<int64_t> axes, bool keepdims) {
    if (!v)
      return {};
    Type et = elementTypeOf(v);
    constexpr bool accumulates =
        !std::is_same_v<OpT, ReduceMaxOp> && !std::is_same_v<OpT, ReduceMinOp>;
    if (accumulates && isHalf(et))
      return castTo(reduce<OpT>(castTo(v, b.getF32Type()), axes, keepdims), et);
    return check(tb.reduce<OpT>(v, axes, keepdims));
  }
  /// Whether `t` is f16 or bf16.
  static bool isHalf(Type t) { return t.isF16() || t.isBF16(); }
  /// `v` in f32 when it holds half-precision floats.
  Value widenHalf(Value v) {
    return v && isHalf(elementTypeOf(v)) ? castTo(v, b.getF32Type()) : v;
  }
  Value softmax(Value v, int64_t axis) {
    return v ? check(tb.softmax<SoftmaxOp>(v, axis)) : Value();
  }

  Value reshape(Value v, llvm::ArrayRef<int64_t> shape) {
    return v ? check(tb.reshape(v, shape)) : Value();
  }
  Value transpose(Value v, llvm::ArrayRef<int64_t> perm) {
    return v ? check(tb.transpose(v, perm)) : Value();
  }
  Value broadcastTo(Value v, llvm::ArrayRef<int64_t> shape) {
    return v ? check(tb.broadcastTo(v, shape)) : Value();
  }
  Value castTo(Value v, Type elementType) {
    return v ? check(tb.cast(v, elementType)) : Value();
  }
  Value compare(ComparePredicate predicate, Value lhs, Value rhs) {
    if (!lhs || !rhs)
      return {};
    return check(tb.compare(predicate, lhs, rhs));
  }
  Value pad(Value v, llvm::ArrayRef<int64_t> low, llvm::ArrayRef<int64_t> high,
            double value = 0.0, PadMode mode = PadMode::constant) {
    return v ? check(tb.pad(v, low, high, value, mode)) : Value();
  }
  Value conv(Value input, Value weight, Value bias,
             llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> padding,
             llvm::ArrayRef<int64_t> dilations, int64_t groups) {
    if (!input || !weight)
      return {};
    return check(
        tb.conv(input, weight, bias, strides, padding, dilations, groups));
  }
  /// ScatterElements of `updates` into `data` along `axis`.
  Value scatter(Value data, Value indices, Value updates, int64_t axis,
                ScatterReduction reduction);
  Value clamp(Value v, std::optional<double> min, std::optional<double> max) {
    return v ? check(tb.clamp(v, min, max)) : Value();
  }
  template <typename OpT> Value binary(Value lhs, Value rhs) {
    if (!lhs || !rhs)
      return {};
    return check(tb.binary<OpT>(lhs, rhs));
  }
  template <typename OpT> Value unary(Value v) {
    return v ? check(tb.unary<OpT>(v)) : Value();
  }

private:
  const ::onnx::AttributeProto *findAttr(llvm::StringRef name, int kind,
                                         llvm::StringRef kindName);

  std::string prefix;
  llvm::SmallVector<Value> inputs;
  llvm::SmallVector<Value> results;
  llvm::StringSet<> usedAttrs;
  std::string modelDir;
  bool hasFailed = false;
  std::function<InFlightDiagnostic()> errorFnStorage;
  TccBuilder tb;
};

/// The rows the Softmax family (Softmax, LogSoftmax, Hardmax) normalizes:
/// the node's float input and its `axis`, except that before opset 13 the
/// dimensions from `axis` on form one row of a matrix (`rows` is then the
/// input reshaped so, and `axis` 1).
struct SoftmaxRows {
  Value rows;
  int64_t axis;
};
FailureOr<SoftmaxRows> softmaxRows(NodeContext &ctx);

} // namespace mlir::tcc::onnx

#endif // TCC_FRONTENDS_ONNX_NODECONTEXT_H
