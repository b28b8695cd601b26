//===- OnnxImporter.cpp - ONNX models to the tcc dialect ------------------===//
//
// Reads the model (binary protobuf or ONNX text), checks its structure
// (names, opsets, initializers, graph order), then imports the nodes in
// topological order through the handler table, one NodeContext per node.
// Every problem becomes one diagnostic that names the model and, when a node
// is at fault, the node, its op type and opset.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/OnnxImporter.h"
#include "compiler/Frontends/Onnx/NodeContext.h"
#include "compiler/Frontends/Onnx/RunTimeSize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/checker.h"
#include "onnx/defs/parser.h"

#include <climits>
#include <queue>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;
using llvm::StringRef;

/// The newest default-domain opset the linked libonnx (1.12) knows; its
/// checker runs only up to it. (Its shape inference is not used: it crashes
/// on some malformed attributes, e.g. an out-of-range LayerNormalization
/// axis, and the importer infers every type itself with TccShapes.h.)
static constexpr int64_t kLibOnnxOpset = 17;

/// The most tensors all sequence values of a model may hold together (each
/// is an SSA value per element, copied for every sequence).
static constexpr int64_t kMaxSequenceTensors = int64_t(1) << 22;

static const OpTable &opTable() {
  static const OpTable table = [] {
    OpTable t;
    registerElementwiseOps(t);
    registerNNOps(t);
    registerReductionOps(t);
    registerShapeOps(t);
    registerMathOps(t);
    registerNormalizationOps(t);
    registerIndexingOps(t);
    registerLossOps(t);
    registerAttentionOps(t);
    registerResizeOps(t);
    registerRecurrentOps(t);
    registerControlFlowOps(t);
    registerSignalOps(t);
    registerQuantizationOps(t);
    registerEinsumOps(t);
    registerSequenceOps(t);
    registerSamplingOps(t);
    return t;
  }();
  return table;
}

/// How deep subgraphs may nest: each level is a few frames of recursion in
/// the importer (and in the onnx text parser), so a hostile model must not
/// choose the depth. Binary models are bounded anyway by protobuf's
/// recursion limit (100 messages, about 33 graphs).
static constexpr int kMaxSubgraphDepth = 64;

/// The deepest nesting of (), [] and {} in ONNX text, outside comments and
/// strings; libonnx's parser recurses on them without a bound.
static int textNesting(StringRef text) {
  int depth = 0, deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '#') {
      i = text.find('\n', i);
      if (i == StringRef::npos)
        break;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '(' || c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ')' || c == ']' || c == '}') {
      depth = std::max(depth - 1, 0);
    }
  }
  return deepest;
}

/// onnx's messages span several lines ("...\n\n==> Context: ..."); a
/// diagnostic is one line.
static std::string oneLine(StringRef message) {
  std::string out;
  for (StringRef line : llvm::split(message.trim(), '\n')) {
    line = line.trim();
    if (line.empty() || line.starts_with("==> Context"))
      continue;
    if (!out.empty())
      out += ' ';
    out += line.str();
  }
  return out;
}

/// The ops that take sequence inputs (sequences exist at import time).
static bool takesSequences(StringRef opType) {
  return llvm::is_contained({"SequenceInsert", "SequenceAt", "SequenceErase",
                             "SequenceLength", "ConcatFromSequence",
                             "Identity"},
                            opType);
}

/// "sequence", "optional", "map", ... for a non-tensor ONNX type.
static std::string typeKind(const ::onnx::TypeProto &type) {
  switch (type.value_case()) {
  case ::onnx::TypeProto::kSequenceType:
    return "sequence";
  case ::onnx::TypeProto::kMapType:
    return "map";
  case ::onnx::TypeProto::kOptionalType:
    return "optional";
  case ::onnx::TypeProto::kSparseTensorType:
    return "sparse tensor";
  default:
    return "unknown";
  }
}

static bool isDefaultDomain(StringRef domain) {
  return domain.empty() || domain == "ai.onnx";
}

namespace {
class ModelImporter {
public:
  ModelImporter(MLIRContext &ctx, StringRef path, const ImportOptions &opts)
      : ctx(ctx), path(path.str()), opts(opts), builder(&ctx),
        limits{opts.maxElements, opts.maxTensorBytes} {
    StringRef dir = llvm::sys::path::parent_path(path);
    modelDir = dir.empty() ? "." : dir.str();
  }

  OwningOpRef<ModuleOp> run();

private:
  LogicalResult importModel(ModuleOp module);
  InFlightDiagnostic emitError() {
    InFlightDiagnostic diag =
        mlir::emitError(FileLineColLoc::get(&ctx, path, 0, 0));
    diag << path << ": ";
    return diag;
  }
  InFlightDiagnostic emitNodeError(int index) {
    InFlightDiagnostic diag = mlir::emitError(nodeLoc(index));
    diag << nodePrefix(index);
    return diag;
  }
  std::string nodeName(int index) const;
  std::string nodePrefix(int index) const;
  Location nodeLoc(int index);

  LogicalResult load();
  LogicalResult readOpsets();
  FailureOr<RankedTensorType> inputType(const ::onnx::ValueInfoProto &input);
  LogicalResult importInitializers();
  FailureOr<SmallVector<int>> topologicalOrder();
  LogicalResult importNode(int index);
  /// Refuses a node that reads a size known only at run time (see
  /// kRunTimeSize) other than as shape code or a target shape.
  LogicalResult checkRunTimeSizes(NodeContext &node, StringRef opType);
  LogicalResult checkNode(NodeContext &node);
  LogicalResult verifyNewOps(NodeContext &node, Block::iterator firstNew);
  LogicalResult checkNewSizes(NodeContext &node, Block::iterator firstNew);
  LogicalResult importOutputs(func::FuncOp func);
  FailureOr<SmallVector<Value>> importSubgraph(const ::onnx::GraphProto &g,
                                               ValueRange inputs, Block *block,
                                               NodeContext &parent);

  MLIRContext &ctx;
  std::string path, modelDir;
  const ImportOptions &opts;
  OpBuilder builder;
  const SizeLimits limits;
  ::onnx::ModelProto model;
  int64_t opset = 0;
  std::unordered_map<std::string, int> opsetImports;
  /// The value of each name imported so far (a subgraph also sees the
  /// names of the graphs around it).
  llvm::StringMap<Value> values;
  /// Values holding kRunTimeSize (from Shape of a dynamic dimension), and
  /// for those that hold sizes the run computes (Shape of a tcc.trim-med
  /// value), the graph inputs the sizes are computed from.
  DenseSet<Value> runTimeSizes;
  DenseMap<Value, SmallVector<std::string>> runTimeSizeSources;
  /// Whether a node made a tcc.trim yet (else no Shape can see one).
  bool madeTrims = false;
  /// The tensors of each sequence-typed name (sequences exist only at
  /// import time: their positions are constants).
  llvm::StringMap<SmallVector<Value>> sequences;
  /// How many tensors all sequences made so far hold: each sequence is a
  /// copy, so a chain of SequenceInserts grows quadratically and is bounded
  /// by kMaxSequenceTensors.
  int64_t sequenceTensors = 0;
  /// The graph whose nodes are being imported, and the block they go to.
  const ::onnx::GraphProto *graph = nullptr;
  Block *body = nullptr;
  /// How many subgraphs enclose the one being imported.
  int depth = 0;
};
} // namespace

std::string ModelImporter::nodeName(int index) const {
  const ::onnx::NodeProto &node = graph->node(index);
  if (!node.name().empty())
    return node.name();
  return node.op_type() + "_" + std::to_string(index + 1);
}

std::string ModelImporter::nodePrefix(int index) const {
  const ::onnx::NodeProto &node = graph->node(index);
  std::string type = node.op_type();
  int64_t version = opset;
  if (!isDefaultDomain(node.domain())) {
    type = node.domain() + "." + type;
    auto it = opsetImports.find(node.domain());
    version = it == opsetImports.end() ? 0 : it->second;
  }
  return llvm::formatv("{0}: node '{1}' ({2}, opset {3}): ", path,
                       nodeName(index), type, version);
}

Location ModelImporter::nodeLoc(int index) {
  const ::onnx::NodeProto &node = graph->node(index);
  return NameLoc::get(
      StringAttr::get(&ctx, nodeName(index) + " (" + node.op_type() + ")"),
      FileLineColLoc::get(&ctx, path, index + 1, 0));
}

LogicalResult ModelImporter::load() {
  // Only a regular file: a directory cannot be read, and a FIFO or a device
  // such as /dev/zero could block or never end.
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return emitError() << "cannot read the model: " << ec.message();
  if (status.type() == llvm::sys::fs::file_type::directory_file)
    return emitError() << "cannot read the model: it is a directory";
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return emitError() << "cannot read the model: it is not a regular file";
  bool text = StringRef(path).ends_with(".onnxtxt");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/text);
  if (!buffer)
    return emitError() << "cannot read the model: "
                       << buffer.getError().message();
  StringRef bytes = (*buffer)->getBuffer();
  if (text) {
    // A graph nests one {} in its parent; the rest is slack for types.
    if (textNesting(bytes) > 4 * kMaxSubgraphDepth)
      return emitError() << "cannot parse the ONNX text: brackets nest "
                            "deeper than "
                         << 4 * kMaxSubgraphDepth << " levels";
    try {
      ::onnx::Common::Status status =
          ::onnx::OnnxParser::Parse(model, bytes.data());
      if (!status.IsOK())
        return emitError() << "cannot parse the ONNX text: "
                           << oneLine(status.ErrorMessage());
    } catch (const std::exception &e) {
      return emitError() << "cannot parse the ONNX text: " << oneLine(e.what());
    }
  } else {
    if (bytes.size() > INT_MAX)
      return emitError() << "the model is larger than 2 GiB; keep its "
                            "weights in external data files";
    if (!model.ParseFromArray(bytes.data(), (int)bytes.size()))
      return emitError() << "not a valid ONNX model (protobuf parsing failed)";
  }
  if (!model.has_graph())
    return emitError() << "the model has no graph";
  return success();
}

LogicalResult ModelImporter::readOpsets() {
  bool found = false;
  for (const auto &import : model.opset_import()) {
    std::string domain = import.domain();
    if (isDefaultDomain(domain)) {
      if (found)
        return emitError() << "the model imports the default domain twice";
      found = true;
      opset = import.version();
      domain = "";
    }
    opsetImports[domain] = (int)import.version();
  }
  if (!found) {
    // A graph of other domains' ops only: name the first such op.
    const ::onnx::GraphProto &g = model.graph();
    for (int i = 0; i < g.node_size(); ++i)
      if (!isDefaultDomain(g.node(i).domain())) {
        graph = &g;
        return emitNodeError(i) << "op '" << g.node(i).domain() << "."
                                << g.node(i).op_type() << "' is not supported";
      }
    return emitError() << "the model imports no default-domain (ai.onnx) opset";
  }
  if (opset < 1 || opset > kNewestOpset)
    return emitError() << "default-domain opset " << opset
                       << " is not supported (tcc knows opsets 1 to "
                       << kNewestOpset << ")";
  return success();
}

FailureOr<RankedTensorType>
ModelImporter::inputType(const ::onnx::ValueInfoProto &input) {
  StringRef name = input.name();
  if (!input.type().has_tensor_type())
    return emitError() << "graph input '" << name << "' has type "
                       << typeKind(input.type())
                       << ", which tcc does not support (tensors only)";
  const auto &tensorType = input.type().tensor_type();
  Type elementType = convertDataType(&ctx, tensorType.elem_type());
  if (!elementType)
    return emitError() << "graph input '" << name << "' has data type "
                       << dataTypeName(tensorType.elem_type())
                       << ", which tcc does not support";
  SmallVector<int64_t> declared;
  bool hasShape = tensorType.has_shape();
  for (const auto &dim : tensorType.shape().dim()) {
    if (dim.has_dim_value() && dim.dim_value() < 0)
      return emitError() << "graph input '" << name
                         << "' has a negative dimension";
    declared.push_back(dim.has_dim_value() ? dim.dim_value()
                                           : ShapedType::kDynamic);
  }
  SmallVector<int64_t> shape = declared;
  auto fixed = opts.inputShapes.find(name);
  if (fixed != opts.inputShapes.end()) {
    shape.assign(fixed->second.begin(), fixed->second.end());
    // A dynamic dimension may replace a fixed one (the model then runs at
    // other sizes where its ops allow it).
    bool agrees = !hasShape || declared.size() == shape.size();
    for (size_t i = 0; agrees && hasShape && i < shape.size(); ++i)
      agrees = ShapedType::isDynamic(declared[i]) ||
               ShapedType::isDynamic(shape[i]) || declared[i] == shape[i];
    if (!agrees)
      return emitError() << "--input-shape " << name << "="
                         << shapes::str(shape)
                         << " conflicts with its declared shape "
                         << shapes::str(declared);
  } else if (!hasShape) {
    return emitError() << "graph input '" << name
                       << "' has no shape; give one with --input-shape " << name
                       << "=DxD...";
  }
  if (failed(checkTensorSize(shape, elementType, limits,
                             "graph input '" + name + "'",
                             [&] { return emitError(); })))
    return failure();
  return RankedTensorType::get(shape, elementType);
}

LogicalResult ModelImporter::importInitializers() {
  for (const ::onnx::TensorProto &t : model.graph().initializer()) {
    Value &slot = values[t.name()];
    if (slot)
      return emitError() << "initializer '" << t.name() << "' is defined twice";
    std::string what = "initializer '" + t.name() + "'";
    FailureOr<ElementsAttr> value = convertTensor(
        &ctx, t, modelDir, what, t.name(), limits, [&] { return emitError(); });
    if (failed(value))
      return failure();
    Location loc = NameLoc::get(StringAttr::get(&ctx, t.name()),
                                FileLineColLoc::get(&ctx, path, 0, 0));
    slot = builder.create<ConstantOp>(loc, *value);
  }
  return success();
}

FailureOr<SmallVector<int>> ModelImporter::topologicalOrder() {
  const ::onnx::GraphProto &graph = *this->graph;
  int n = graph.node_size();
  llvm::StringMap<int> producer;
  for (int i = 0; i < n; ++i) {
    for (const std::string &out : graph.node(i).output()) {
      if (out.empty())
        continue;
      if (values.count(out))
        return emitNodeError(i) << "output '" << out
                                << "' redefines a graph input or initializer";
      auto [it, inserted] = producer.try_emplace(out, i);
      if (!inserted)
        return emitNodeError(i)
               << "output '" << out << "' is also produced by node '"
               << nodeName(it->second) << "'";
    }
  }
  // Kahn's algorithm, always taking the lowest ready index, so that a
  // sorted graph keeps its order.
  std::vector<SmallVector<int, 2>> users(n);
  std::vector<int> pending(n, 0);
  for (int i = 0; i < n; ++i) {
    for (const std::string &in : graph.node(i).input()) {
      if (in.empty() || values.count(in) || sequences.count(in))
        continue;
      auto it = producer.find(in);
      if (it == producer.end())
        return emitNodeError(i) << "input '" << in
                                << "' is not a graph input, an initializer "
                                   "or the output of any node";
      users[it->second].push_back(i);
      ++pending[i];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (!pending[i])
      ready.push(i);
  SmallVector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int user : users[i])
      if (--pending[user] == 0)
        ready.push(user);
  }
  if ((int)order.size() == n)
    return order;
  // Some node waits forever. Walk back through inputs that are never ready
  // until a node repeats: that one lies on a cycle.
  auto waitsOn = [&](int node) -> std::pair<int, StringRef> {
    for (const std::string &in : graph.node(node).input()) {
      auto it = producer.find(in);
      if (!in.empty() && !values.count(in) && it != producer.end() &&
          pending[it->second] > 0)
        return {it->second, in};
    }
    return {node, ""}; // Unreachable: a waiting node waits on something.
  };
  int node =
      llvm::find_if(pending, [](int p) { return p > 0; }) - pending.begin();
  std::vector<bool> seen(n, false);
  for (; !seen[node]; node = waitsOn(node).first)
    seen[node] = true;
  return emitNodeError(node)
         << "is part of a cycle: its input '" << waitsOn(node).second
         << "' depends on its own output";
}

LogicalResult ModelImporter::checkNode(NodeContext &node) {
  if (!opts.runChecker || opset > kLibOnnxOpset)
    return success();
  ::onnx::checker::CheckerContext checkerCtx;
  checkerCtx.set_ir_version((int)model.ir_version());
  checkerCtx.set_opset_imports(opsetImports);
  // A subgraph may read the names around it: the checker must know them.
  ::onnx::checker::LexicalScopeContext lex;
  if (llvm::any_of(node.node.attribute(), [](const auto &attr) {
        return attr.has_g() || attr.graphs_size() > 0;
      })) {
    for (const auto &entry : values)
      lex.add(entry.getKey().str());
    for (const auto &entry : sequences)
      lex.add(entry.getKey().str());
  }
  try {
    ::onnx::checker::check_node(node.node, checkerCtx, lex);
  } catch (const std::exception &e) {
    return node.emitError()
           << "the ONNX checker rejects it: " << oneLine(e.what());
  }
  return success();
}

LogicalResult ModelImporter::verifyNewOps(NodeContext &node,
                                          Block::iterator firstNew) {
  for (Operation &op : llvm::make_range(firstNew, body->end())) {
    std::string message;
    bool valid;
    {
      ScopedDiagnosticHandler capture(&ctx, [&](Diagnostic &diag) {
        if (message.empty())
          message = diag.str();
        return success();
      });
      valid = succeeded(mlir::verify(&op, /*verifyRecursively=*/false));
    }
    if (!valid)
      return node.emitError() << message;
  }
  return success();
}

/// Handlers check the sizes they compute, but not every type goes through
/// NodeContext::tensorType: every result the node made, in nested regions
/// too, is checked against the caps here.
LogicalResult ModelImporter::checkNewSizes(NodeContext &node,
                                           Block::iterator firstNew) {
  for (Operation &top : llvm::make_range(firstNew, body->end())) {
    WalkResult walk = top.walk([&](Operation *op) {
      for (Value result : op->getResults()) {
        auto type = dyn_cast<RankedTensorType>(result.getType());
        if (!type)
          continue;
        std::string what = "a result";
        for (auto [i, name] : llvm::enumerate(node.node.output()))
          if (i < node.getResults().size() && node.getResults()[i] == result)
            what = "output '" + name + "'";
        if (failed(checkTensorSize(type.getShape(), type.getElementType(),
                                   limits, what, node.errorFn())))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  return success();
}

LogicalResult ModelImporter::checkRunTimeSizes(NodeContext &node,
                                               StringRef opType) {
  // Shape code passes them on; Reshape and Expand take them as the
  // dynamic dimensions of their target (input 1), ConstantOfShape as its
  // shape, Range as its limit (the dimension's positions).
  static const llvm::StringSet<> passOn = {
      "Gather", "Unsqueeze", "Squeeze", "Slice", "Concat", "Cast", "Identity"};
  auto consumes = [&](unsigned i) {
    return ((opType == "Reshape" || opType == "Expand") && i == 1) ||
           (opType == "ConstantOfShape" && i == 0) ||
           (opType == "Range" && i == 1);
  };
  for (unsigned i = 0; i < node.numInputs(); ++i) {
    Value v = node.input(i);
    if (!v || !runTimeSizes.contains(v))
      continue;
    if (passOn.contains(opType) || consumes(i))
      continue;
    auto sources = runTimeSizeSources.find(v);
    if (sources != runTimeSizeSources.end()) {
      // (Giving those inputs' values makes the sizes constants.)
      InFlightDiagnostic diag = node.emitError();
      diag << "input " << i << " ('" << node.node.input(i)
           << "') holds a size the run computes, known only at run time; "
              "tcc takes such sizes only as the target shape of Reshape, "
              "Expand or ConstantOfShape and as the limit of Range; ";
      NodeContext::describeSources(diag, sources->second);
      return diag;
    }
    return node.emitError()
           << "input " << i << " ('" << node.node.input(i)
           << "') holds the size of a dynamic dimension, known only at run "
              "time; tcc takes such sizes only as the target shape of "
              "Reshape, Expand or ConstantOfShape and as the limit of Range "
              "(fix the dimension with --input-shape)";
  }
  return success();
}

LogicalResult ModelImporter::importNode(int index) {
  const ::onnx::NodeProto &proto = graph->node(index);
  SmallVector<Value> inputs;
  SmallVector<std::optional<SmallVector<Value>>> seqInputs;
  for (const std::string &name : proto.input()) {
    inputs.push_back(name.empty() ? Value() : values.lookup(name));
    auto seq = sequences.find(name);
    seqInputs.push_back(seq == sequences.end()
                            ? std::nullopt
                            : std::optional<SmallVector<Value>>(seq->second));
  }
  NodeContext node(proto, nodePrefix(index), opset, builder, nodeLoc(index),
                   std::move(inputs), modelDir);
  node.sequenceInputs = std::move(seqInputs);
  node.limits = limits;
  node.dimBounds = &opts.dimBounds;
  node.importSubgraph = [this, &node](const ::onnx::GraphProto &g,
                                      ValueRange args, Block *block) {
    return importSubgraph(g, args, block, node);
  };
  StringRef opType = proto.op_type();

  // Ops of other domains are in the table as "<domain>.<OpType>", versioned
  // by their domain's opset.
  std::string key = opType.str();
  int64_t version_ = opset;
  if (!isDefaultDomain(proto.domain())) {
    key = proto.domain() + "." + key;
    auto it = opsetImports.find(proto.domain());
    version_ = it == opsetImports.end() ? 0 : it->second;
    if (!opTable().firstSince(key))
      return node.emitError() << "op '" << key << "' is not supported";
  }
  const OpVersion *version = opTable().lookup(key, version_);
  if (!version) {
    if (int64_t since = opTable().firstSince(key))
      return node.emitError()
             << opType << " needs opset " << since << " or newer";
    return node.emitError() << "op '" << opType << "' is not supported";
  }
  unsigned numInputs = proto.input_size();
  if (numInputs < version->minInputs || numInputs > version->maxInputs) {
    InFlightDiagnostic diag = node.emitError();
    diag << "takes ";
    if (version->maxInputs == kVariadic)
      diag << "at least " << version->minInputs;
    else if (version->minInputs == version->maxInputs)
      diag << version->minInputs;
    else
      diag << version->minInputs << " to " << version->maxInputs;
    return diag << " input(s); got " << numInputs;
  }
  if ((unsigned)proto.output_size() > version->maxOutputs)
    return node.emitError()
           << "has " << proto.output_size() << " outputs; the op has at most "
           << version->maxOutputs;
  for (unsigned i = 0; i < numInputs; ++i) {
    bool required = i < version->minInputs ? !version->leadingOptional
                                           : version->maxInputs == kVariadic;
    bool isSequence = (bool)node.sequenceInputs[i];
    if (isSequence && !takesSequences(opType))
      return node.emitError()
             << "input " << i << " ('" << proto.input(i)
             << "') is a sequence, which " << opType << " does not take";
    if (!node.input(i) && !isSequence && required)
      return node.emitError() << "input " << i << " is required";
  }
  llvm::StringSet<> attrNames;
  for (const auto &attr : proto.attribute()) {
    if (!attrNames.insert(attr.name()).second)
      return node.emitError()
             << "attribute '" << attr.name() << "' is given twice";
    if (!attr.ref_attr_name().empty())
      return node.emitError() << "attribute '" << attr.name()
                              << "' refers to a function attribute";
  }
  if (failed(checkNode(node)) || failed(checkRunTimeSizes(node, opType)))
    return failure();

  Operation *last = body->empty() ? nullptr : &body->back();
  LogicalResult result = failure();
  // A node inside a subgraph reports its own error: count what is reported
  // meanwhile, so that the node around it does not add a second one.
  unsigned reported = 0;
  {
    ScopedDiagnosticHandler counter(&ctx, [&](Diagnostic &diag) {
      reported += diag.getSeverity() == DiagnosticSeverity::Error;
      return failure(); // on to the handler that prints it
    });
    try {
      result = version->handler(node);
    } catch (const NodeFailure &) {
      result = failure();
    }
  }
  Block::iterator firstNew =
      last ? std::next(last->getIterator()) : body->begin();
  if (failed(result) || node.hasError()) {
    if (!node.hasError() && !reported)
      node.emitError() << "cannot be imported";
    return failure();
  }
  if (const ::onnx::AttributeProto *attr = node.firstUnusedAttr())
    return node.emitError()
           << "attribute '" << attr->name() << "' is not supported";
  ArrayRef<Value> results = node.getResults();
  for (int i = 0; i < proto.output_size(); ++i)
    if (node.hasOutput(i) && (i >= (int)results.size() || !results[i]) &&
        !node.sequenceResults.count(i))
      return node.emitError() << "output " << i << " ('" << proto.output(i)
                              << "') is not supported";
  if (failed(verifyNewOps(node, firstNew)) ||
      failed(checkNewSizes(node, firstNew)))
    return failure();
  for (Operation &op : llvm::make_range(firstNew, body->end()))
    madeTrims |= isa<TrimOp>(op);
  for (int i = 0; i < proto.output_size(); ++i) {
    if (!node.hasOutput(i))
      continue;
    if (i < (int)results.size() && results[i] && holdsRunTimeSize(results[i])) {
      runTimeSizes.insert(results[i]);
      // Where the sizes come from: the counts of the trims behind Shape's
      // input, or what the inputs carrying them came from.
      SmallVector<std::string> sources;
      auto add = [&](ArrayRef<std::string> names) {
        for (const std::string &n : names)
          if (!llvm::is_contained(sources, n))
            sources.push_back(n);
      };
      for (unsigned k = 0; k < node.numInputs(); ++k)
        if (Value in = node.input(k)) {
          auto it = runTimeSizeSources.find(in);
          if (it != runTimeSizeSources.end())
            add(it->second);
        }
      if (madeTrims && proto.op_type() == "Shape" && node.input(0))
        add(node.computedSizeSources(node.input(0)));
      if (!sources.empty()) {
        llvm::sort(sources);
        runTimeSizeSources[results[i]] = std::move(sources);
      }
    }
    auto seq = node.sequenceResults.find(i);
    if (seq != node.sequenceResults.end()) {
      sequenceTensors += seq->second.size();
      if (sequenceTensors > kMaxSequenceTensors)
        return node.emitError() << "the model's sequences hold more than "
                                << kMaxSequenceTensors << " tensors in all";
      sequences[proto.output(i)] = seq->second;
    } else
      values[proto.output(i)] = results[i];
  }
  return success();
}

LogicalResult ModelImporter::importOutputs(func::FuncOp func) {
  SmallVector<Value> results;
  llvm::StringSet<> seen;
  for (const ::onnx::ValueInfoProto &output : model.graph().output()) {
    StringRef name = output.name();
    if (name.empty())
      return emitError() << "a graph output has no name";
    if (!seen.insert(name).second)
      return emitError() << "graph output '" << name << "' is listed twice";
    Value v = values.lookup(name);
    if (!v && sequences.count(name))
      return emitError() << "graph output '" << name
                         << "' has type sequence, which tcc does not support "
                            "(tensors only)";
    if (!v)
      return emitError() << "graph output '" << name
                         << "' is not produced by any node";
    // A declared type that disagrees with the computed one means the model
    // (or the importer) is wrong: say so instead of guessing.
    auto type = cast<RankedTensorType>(v.getType());
    const auto &declared = output.type().tensor_type();
    bool agrees = true;
    if (declared.elem_type())
      agrees =
          convertDataType(&ctx, declared.elem_type()) == type.getElementType();
    if (declared.has_shape()) {
      const auto &dims = declared.shape().dim();
      agrees &= dims.size() == type.getRank();
      for (int i = 0; agrees && i < dims.size(); ++i)
        agrees = !dims[i].has_dim_value() || type.isDynamicDim(i) ||
                 dims[i].dim_value() == type.getDimSize(i);
    }
    if (!agrees) {
      SmallVector<int64_t> shape;
      for (const auto &dim : declared.shape().dim())
        shape.push_back(dim.has_dim_value() ? dim.dim_value()
                                            : ShapedType::kDynamic);
      std::string dims = declared.has_shape() ? shapes::str(shape) : "?";
      return emitError() << "graph output '" << name << "' is declared as "
                         << dataTypeName(declared.elem_type()) << "[" << dims
                         << "] but the graph computes " << type;
    }
    results.push_back(v);
  }
  builder.create<func::ReturnOp>(func.getLoc(), results);
  func.setFunctionType(builder.getFunctionType(func.getArgumentTypes(),
                                               ValueRange(results).getTypes()));
  for (auto [i, output] : llvm::enumerate(model.graph().output()))
    func.setResultAttr(i, "tcc.name", builder.getStringAttr(output.name()));
  return success();
}

FailureOr<SmallVector<Value>>
ModelImporter::importSubgraph(const ::onnx::GraphProto &g, ValueRange inputs,
                              Block *block, NodeContext &parent) {
  // The subgraph sees the names around it; its own names go when it ends.
  // Its own errors name the node that holds it.
  if (depth >= kMaxSubgraphDepth) {
    parent.emitError() << "subgraphs nest deeper than " << kMaxSubgraphDepth
                       << " levels";
    return failure();
  }
  ++depth;
  auto leave = llvm::make_scope_exit([&] { --depth; });
  llvm::StringMap<Value> outer = values;
  llvm::StringMap<SmallVector<Value>> outerSequences = sequences;
  const ::onnx::GraphProto *outerGraph = graph;
  Block *outerBody = body;
  OpBuilder::InsertionGuard guard(builder);
  auto restore = llvm::make_scope_exit([&] {
    values = std::move(outer);
    sequences = std::move(outerSequences);
    graph = outerGraph;
    body = outerBody;
  });
  graph = &g;
  body = block;
  builder.setInsertionPointToEnd(block);
  if ((size_t)g.input_size() != inputs.size()) {
    parent.emitError() << "subgraph '" << g.name() << "' takes "
                       << g.input_size() << " inputs; the op gives it "
                       << inputs.size();
    return failure();
  }
  for (auto [in, v] : llvm::zip(g.input(), inputs))
    values[in.name()] = v;
  for (const ::onnx::TensorProto &t : g.initializer()) {
    std::string what = "initializer '" + t.name() + "'";
    FailureOr<ElementsAttr> value =
        convertTensor(&ctx, t, modelDir, what, t.name(), limits,
                      [&] { return parent.emitError(); });
    if (failed(value))
      return failure();
    values[t.name()] = builder.create<ConstantOp>(
        NameLoc::get(StringAttr::get(&ctx, t.name()),
                     FileLineColLoc::get(&ctx, path, 0, 0)),
        *value);
  }
  FailureOr<SmallVector<int>> order = topologicalOrder();
  if (failed(order))
    return failure();
  for (int index : *order)
    if (failed(importNode(index)))
      return failure();
  SmallVector<Value> results;
  for (const ::onnx::ValueInfoProto &out : g.output()) {
    Value v = values.lookup(out.name());
    if (!v && sequences.count(out.name())) {
      parent.emitError() << "subgraph output '" << out.name()
                         << "' has type sequence, which tcc does not support "
                            "(tensors only)";
      return failure();
    }
    if (!v) {
      parent.emitError() << "subgraph output '" << out.name()
                         << "' is not produced by any node";
      return failure();
    }
    results.push_back(v);
  }
  return results;
}

OwningOpRef<ModuleOp> ModelImporter::run() {
  OwningOpRef<ModuleOp> module =
      ModuleOp::create(FileLineColLoc::get(&ctx, path, 0, 0));
  if (failed(importModel(*module)))
    return {};
  return module;
}

LogicalResult ModelImporter::importModel(ModuleOp module) {
  if (failed(load()) || failed(readOpsets()))
    return failure();
  const ::onnx::GraphProto &graph = model.graph();
  this->graph = &graph;
  if (graph.sparse_initializer_size())
    return emitError() << "sparse initializer '"
                       << graph.sparse_initializer(0).values().name()
                       << "' is not supported";

  // Arguments: the graph inputs that no initializer provides (an
  // initializer named like an input is that input's default value).
  llvm::StringSet<> initializers, inputNames;
  for (const auto &t : graph.initializer()) {
    if (t.name().empty())
      return emitError() << "an initializer has no name";
    initializers.insert(t.name());
  }
  SmallVector<const ::onnx::ValueInfoProto *> args;
  SmallVector<Type> argTypes;
  for (const auto &input : graph.input()) {
    if (input.name().empty())
      return emitError() << "a graph input has no name";
    if (!inputNames.insert(input.name()).second)
      return emitError() << "graph input '" << input.name()
                         << "' is listed twice";
    if (initializers.contains(input.name()))
      continue;
    FailureOr<RankedTensorType> type = inputType(input);
    if (failed(type))
      return failure();
    args.push_back(&input);
    argTypes.push_back(*type);
  }
  for (const auto &entry : opts.inputShapes)
    if (llvm::none_of(args,
                      [&](auto *a) { return a->name() == entry.getKey(); }))
      return emitError() << "--input-shape names '" << entry.getKey()
                         << "', which is not a graph input";

  std::string modelName =
      graph.name().empty() ? llvm::sys::path::stem(path).str() : graph.name();
  module->setAttr("tcc.model_name", builder.getStringAttr(modelName));
  builder.setInsertionPointToEnd(module.getBody());
  auto func = builder.create<func::FuncOp>(
      module.getLoc(), "main", builder.getFunctionType(argTypes, {}));
  body = func.addEntryBlock();
  for (auto [i, input] : llvm::enumerate(args)) {
    values[input->name()] = body->getArgument(i);
    func.setArgAttr(i, "tcc.name", builder.getStringAttr(input->name()));
    // Names of dynamic dimensions (--input-shape's, else the model's
    // dim_param), which the artifact's symbols take.
    auto type = cast<RankedTensorType>(argTypes[i]);
    if (type.hasStaticShape())
      continue;
    SmallVector<Attribute> names;
    auto given = opts.inputDimNames.find(input->name());
    const auto &dims = input->type().tensor_type().shape().dim();
    for (int64_t d = 0; d < type.getRank(); ++d) {
      std::string name;
      if (given != opts.inputDimNames.end() &&
          d < int64_t(given->second.size()))
        name = given->second[d];
      else if (d < dims.size() && dims.Get(d).has_dim_param())
        name = dims.Get(d).dim_param();
      names.push_back(
          builder.getStringAttr(type.isDynamicDim(d) ? name : std::string()));
    }
    func.setArgAttr(i, "tcc.dims", builder.getArrayAttr(names));
  }
  builder.setInsertionPointToEnd(body);

  if (failed(importInitializers()))
    return failure();
  FailureOr<SmallVector<int>> order = topologicalOrder();
  if (failed(order))
    return failure();
  for (int index : *order)
    if (failed(importNode(index)))
      return failure();
  if (failed(importOutputs(func)))
    return failure();

  // Shape subgraphs fold into constants that nothing uses any more, and
  // unused initializers are dead too.
  for (Operation &op :
       llvm::make_early_inc_range(llvm::reverse(body->getOperations())))
    if (isOpTriviallyDead(&op))
      op.erase();
  return success();
}

std::vector<std::pair<std::string, std::vector<int64_t>>>
mlir::tcc::onnx::supportedOps() {
  return opTable().entries();
}

OwningOpRef<ModuleOp>
mlir::tcc::onnx::importOnnxFile(MLIRContext &ctx, StringRef path,
                                const ImportOptions &opts) {
  ctx.loadDialect<TccDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect>();
  try {
    return ModelImporter(ctx, path, opts).run();
  } catch (const std::exception &e) {
    // The onnx library and protobuf are the only code here that throws.
    mlir::emitError(FileLineColLoc::get(&ctx, path, 0, 0))
        << path << ": " << oneLine(e.what());
    return {};
  }
}
