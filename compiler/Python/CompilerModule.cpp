//===- CompilerModule.cpp - tcc._compiler: the compiler from Python -------===//
//
// The compiler's Python binding: a Graph builds `func.func @main` in the tcc
// dialect through the one builder (TccBuilder: ops by name, result types
// inferred, every failure a diagnostic), and compiles it in process with
// the driver; compile_file compiles a model file the way `tcc` does. The
// torch frontend (tcc.torch) is an importer written against it. Errors
// raise tcc.CompileError with the diagnostics' text.
//
// One MLIR context serves the process; the binding holds the GIL while it
// uses it, so Python threads take turns.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Driver.h"
#include "dialects/Tcc/IR/TccBuilder.h"
#include "dialects/Tcc/IR/TccOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>

namespace py = pybind11;
using namespace mlir;

namespace {

PyObject *compileErrorType = nullptr;

/// A failure whose diagnostics become tcc.CompileError.
struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The process's context, with every dialect the compiler uses loaded.
MLIRContext &context() {
  static MLIRContext *ctx = [] {
    auto *c = new MLIRContext(MLIRContext::Threading::DISABLED);
    tcc::registerCompilerDialects(*c);
    return c;
  }();
  return *ctx;
}

/// Collects the errors (and their notes) reported while it lives.
class Diagnostics {
public:
  Diagnostics()
      : handler(&context(), [this](Diagnostic &diag) {
          if (diag.getSeverity() != DiagnosticSeverity::Error)
            return success();
          if (!text.empty())
            text += "\n";
          text += diag.str();
          for (Diagnostic &note : diag.getNotes())
            text += "\n  note: " + note.str();
          return success();
        }) {}
  /// Raises the collected errors, or `fallback` when there were none.
  [[noreturn]] void raise(const std::string &fallback) const {
    throw CompileError(text.empty() ? fallback : text);
  }

private:
  std::string text;
  ScopedDiagnosticHandler handler;
};

Type dtypeType(const std::string &dtype) {
  MLIRContext *c = &context();
  Builder b(c);
  if (dtype == "float32")
    return b.getF32Type();
  if (dtype == "float64")
    return b.getF64Type();
  if (dtype == "float16")
    return b.getF16Type();
  if (dtype == "bfloat16")
    return b.getBF16Type();
  if (dtype == "bool")
    return b.getI1Type();
  if (dtype == "int8" || dtype == "int16" || dtype == "int32" ||
      dtype == "int64")
    return b.getIntegerType(std::stoi(dtype.substr(3)));
  if (dtype == "uint8" || dtype == "uint16" || dtype == "uint32" ||
      dtype == "uint64")
    return IntegerType::get(c, std::stoi(dtype.substr(4)),
                            IntegerType::Unsigned);
  throw py::value_error("tcc has no dtype '" + dtype + "'");
}

std::string dtypeName(Type t) {
  if (t.isF32())
    return "float32";
  if (t.isF64())
    return "float64";
  if (t.isF16())
    return "float16";
  if (t.isBF16())
    return "bfloat16";
  if (t.isInteger(1))
    return "bool";
  if (auto i = dyn_cast<IntegerType>(t))
    return std::string(i.isUnsigned() ? "uint" : "int") +
           std::to_string(i.getWidth());
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

/// What a Graph holds; shared with its values so that they stay valid.
struct GraphState {
  OwningOpRef<ModuleOp> module;
  func::FuncOp main;
  OpBuilder builder{&context()};
  Location loc = UnknownLoc::get(&context());
  bool finished = false;
};

struct PyValue {
  Value value;
  std::shared_ptr<GraphState> graph;
  RankedTensorType type() const {
    return cast<RankedTensorType>(value.getType());
  }
  /// The shape, -1 for a dynamic dimension.
  std::vector<int64_t> shape() const {
    std::vector<int64_t> s;
    for (int64_t d : type().getShape())
      s.push_back(ShapedType::isDynamic(d) ? -1 : d);
    return s;
  }
  std::string dtype() const { return dtypeName(type().getElementType()); }
  std::string repr() const {
    std::string s = "<tcc.Value " + dtype() + "[";
    for (auto [i, d] : llvm::enumerate(shape()))
      s += (i ? "x" : "") + (d < 0 ? std::string("?") : std::to_string(d));
    return s + "]>";
  }
};

/// Constants of at most this many elements are `dense` (and fold); bigger
/// ones are `dense_resource` blobs, neither hashed nor uniqued.
constexpr int64_t kMaxDenseElements = 64;

/// An attribute from a Python value: True a unit attribute, an int i64, a
/// float f64, a sequence of ints a dense i64 array, a string MLIR's
/// attribute syntax (e.g. "2 : i32" for an enum case).
Attribute toAttribute(const py::handle &value, const std::string &name) {
  MLIRContext *c = &context();
  Builder b(c);
  if (py::isinstance<py::bool_>(value))
    return value.cast<bool>() ? b.getUnitAttr() : Attribute();
  if (py::isinstance<py::int_>(value))
    return b.getI64IntegerAttr(value.cast<int64_t>());
  if (py::isinstance<py::float_>(value))
    return b.getF64FloatAttr(value.cast<double>());
  if (py::isinstance<py::str>(value)) {
    std::string text = value.cast<std::string>();
    Diagnostics diags;
    if (Attribute a = parseAttribute(text, c))
      return a;
    diags.raise("attribute '" + name + "': cannot parse '" + text + "'");
  }
  if (py::isinstance<py::sequence>(value))
    return b.getDenseI64ArrayAttr(value.cast<std::vector<int64_t>>());
  throw py::type_error("attribute '" + name + "' has an unsupported type " +
                       py::str(py::type::of(value)).cast<std::string>());
}

/// The `func.func @main` being built, and how to compile it.
class PyGraph {
public:
  explicit PyGraph(const std::string &name)
      : state(std::make_shared<GraphState>()) {
    MLIRContext *c = &context();
    state->module = ModuleOp::create(UnknownLoc::get(c));
    if (!name.empty())
      (*state->module)->setAttr("tcc.model_name", StringAttr::get(c, name));
    state->builder.setInsertionPointToEnd(state->module->getBody());
    state->main = state->builder.create<func::FuncOp>(
        UnknownLoc::get(c), "main", FunctionType::get(c, {}, {}));
    state->builder.setInsertionPointToEnd(state->main.addEntryBlock());
  }

  /// Diagnostics of what follows name `where` (the node being imported).
  void setLocation(const std::string &where) {
    state->loc =
        where.empty()
            ? Location(UnknownLoc::get(&context()))
            : Location(NameLoc::get(StringAttr::get(&context(), where)));
  }

  /// An input of `shape` (-1: a dynamic dimension, named by `dims`, one
  /// name or None per dimension: the artifact's symbol).
  PyValue addInput(const std::string &name, const std::string &dtype,
                   const std::vector<int64_t> &shape, const py::object &dims) {
    checkOpen();
    auto type = RankedTensorType::get(
        tensorShape(shape, "input '" + name + "'"), dtypeType(dtype));
    SmallVector<Attribute> names;
    if (!dims.is_none()) {
      auto given = dims.cast<std::vector<py::object>>();
      if (given.size() != shape.size())
        throw py::value_error("input '" + name + "': dims names " +
                              std::to_string(given.size()) + " dimensions of " +
                              std::to_string(shape.size()));
      for (auto [d, n] : llvm::zip(shape, given))
        names.push_back(StringAttr::get(
            &context(), d < 0 && !n.is_none() ? n.cast<std::string>() : ""));
    }
    func::FuncOp main = state->main;
    unsigned i = main.getNumArguments();
    Value arg = main.front().addArgument(type, state->loc);
    SmallVector<Type> inputs(main.front().getArgumentTypes());
    main.setType(FunctionType::get(&context(), inputs,
                                   main.getFunctionType().getResults()));
    main.setArgAttr(i, "tcc.name", StringAttr::get(&context(), name));
    if (!type.hasStaticShape() && !names.empty())
      main.setArgAttr(i, "tcc.dims", ArrayAttr::get(&context(), names));
    return wrap(arg);
  }

  /// A shape from Python's: -1 is a dynamic dimension; any other negative
  /// size is an error naming `what`.
  static SmallVector<int64_t> tensorShape(const std::vector<int64_t> &shape,
                                          const std::string &what) {
    SmallVector<int64_t> dims;
    for (int64_t d : shape) {
      if (d < -1)
        throw py::value_error(what + " has a negative dimension (" +
                              std::to_string(d) + ")");
      dims.push_back(d == -1 ? ShapedType::kDynamic : d);
    }
    return dims;
  }

  /// Whether `raw` repeats its first element.
  static bool isSplat(ArrayRef<char> raw, size_t elementBytes) {
    return raw.size() >= elementBytes &&
           std::memcmp(raw.data(), raw.data() + elementBytes,
                       raw.size() - elementBytes) == 0;
  }

  /// A constant holding a NumPy array's elements (C order).
  PyValue constant(const py::array &array, const std::string &dtype,
                   const std::string &name) {
    checkOpen();
    auto flat = py::array::ensure(array, py::array::c_style);
    std::vector<int64_t> shape(flat.shape(), flat.shape() + flat.ndim());
    auto type = RankedTensorType::get(shape, dtypeType(dtype));
    size_t elementBytes =
        type.getElementType().isInteger(1)
            ? 1
            : type.getElementType().getIntOrFloatBitWidth() / 8;
    if (static_cast<size_t>(flat.itemsize()) != elementBytes)
      throw py::type_error("constant '" + name + "': the array's elements (" +
                           std::to_string(flat.itemsize()) +
                           " bytes) are not " + dtype);
    ArrayRef<char> raw(static_cast<const char *>(flat.data()),
                       static_cast<size_t>(flat.nbytes()));
    ElementsAttr value;
    if (type.getElementType().isInteger(1)) {
      value = DenseElementsAttr::get(type,
                                     SmallVector<bool>(raw.begin(), raw.end()));
    } else if (type.getNumElements() <= kMaxDenseElements) {
      value = DenseElementsAttr::getFromRawBuffer(type, raw);
    } else if (isSplat(raw, elementBytes)) {
      // One value repeated (zeros, a fill): a splat, which folds (x + 0)
      // and takes no space in the artifact.
      value = DenseElementsAttr::getFromRawBuffer(type,
                                                  raw.take_front(elementBytes));
    } else {
      AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
          raw.size(), elementBytes, /*dataIsMutable=*/false);
      std::memcpy(const_cast<char *>(blob.getData().data()), raw.data(),
                  raw.size());
      value = DenseResourceElementsAttr::get(
          type, name.empty() ? "weight" : name, std::move(blob));
    }
    return wrap(builder().constant(value));
  }

  /// Makes op `name` (result types inferred unless given as (dtype, shape)
  /// pairs); gives its results.
  std::vector<PyValue> op(const std::string &name, const py::list &operands,
                          const py::dict &attrs, const py::object &results) {
    checkOpen();
    SmallVector<Value> values = unwrap(operands);
    SmallVector<NamedAttribute> named = attributes(attrs);
    SmallVector<Type> types;
    if (!results.is_none())
      for (py::handle r : results) {
        auto [dtype, shape] =
            r.cast<std::pair<std::string, std::vector<int64_t>>>();
        types.push_back(RankedTensorType::get(
            tensorShape(shape, "a result of " + name), dtypeType(dtype)));
      }
    Diagnostics diags;
    FailureOr<SmallVector<Value>> made =
        builder().create(name, values, named, types);
    if (failed(made))
      diags.raise("cannot build " + name);
    std::vector<PyValue> out;
    for (Value v : *made)
      out.push_back(wrap(v));
    return out;
  }

  /// A tcc.loop carrying `inits` (no stacked outputs): `body(i, c,
  /// *carried)` gets the iteration number (0-d int64), the condition and
  /// the carried values, and gives (condition, *next carried values); the
  /// loop runs while i < trip_count and the condition holds.
  std::vector<PyValue> loop(const PyValue &tripCount, const PyValue &condition,
                            const py::list &inits, const py::function &body) {
    checkOpen();
    SmallVector<Value> initValues = unwrap(inits);
    SmallVector<Type> types;
    for (Value v : initValues)
      types.push_back(v.getType());
    MLIRContext *c = &context();
    OpBuilder &b = state->builder;
    auto loop = b.create<tcc::LoopOp>(state->loc, types, tripCount.value,
                                      condition.value, initValues);
    try {
      OpBuilder::InsertionGuard guard(b);
      Block *block = b.createBlock(&loop.getBody());
      block->addArgument(RankedTensorType::get({}, IntegerType::get(c, 64)),
                         state->loc);
      block->addArgument(RankedTensorType::get({}, IntegerType::get(c, 1)),
                         state->loc);
      for (Type t : types)
        block->addArgument(t, state->loc);
      py::tuple args(block->getNumArguments());
      for (auto [i, arg] : llvm::enumerate(block->getArguments()))
        args[i] = wrap(arg);
      py::object made = body(*args);
      SmallVector<Value> yielded = unwrap(py::list(made));
      if (yielded.size() != 1 + types.size())
        throw py::value_error("the loop body gives " +
                              std::to_string(yielded.size()) +
                              " values; it must give the condition and " +
                              std::to_string(types.size()) + " carried");
      for (auto [i, t] : llvm::enumerate(types))
        if (yielded[1 + i].getType() != t)
          throw py::value_error("loop-carried value " + std::to_string(i) +
                                " changes type in the body");
      b.create<tcc::YieldOp>(state->loc, yielded);
    } catch (...) {
      loop->erase();
      throw;
    }
    std::vector<PyValue> out;
    for (Value v : loop.getResults())
      out.push_back(wrap(v));
    return out;
  }

  /// The cotangents of op `name`'s operands, given its results'
  /// (`cotangents`, None where a result does not reach the loss): the op's
  /// own VJP rule, as tcc-autodiff applies it.
  std::vector<std::optional<PyValue>> vjp(const std::string &name,
                                          const py::list &operands,
                                          const py::dict &attrs,
                                          const py::list &cotangents) {
    checkOpen();
    SmallVector<Value> values = unwrap(operands);
    SmallVector<NamedAttribute> named = attributes(attrs);
    Diagnostics diags;
    tcc::TccBuilder tb = builder();
    tb.setFolding(false);
    FailureOr<SmallVector<Value>> made = tb.create(name, values, named);
    if (failed(made))
      diags.raise("cannot build " + name);
    Operation *op = made->front().getDefiningOp();
    auto diff = dyn_cast<tcc::DifferentiableOpInterface>(op);
    if (!diff)
      throw CompileError(name + " has no VJP rule");
    SmallVector<Value> cts;
    for (py::handle c : cotangents)
      cts.push_back(c.is_none() ? Value() : c.cast<PyValue &>().value);
    if (cts.size() != op->getNumResults())
      throw py::value_error(
          name + " has " + std::to_string(op->getNumResults()) +
          " results; got " + std::to_string(cts.size()) + " cotangents");
    SmallVector<Value> grads;
    if (failed(diff.buildVjp(state->builder, cts, grads)))
      diags.raise("the VJP of " + name + " failed");
    if (op->use_empty())
      op->erase();
    std::vector<std::optional<PyValue>> out;
    for (Value g : grads)
      out.push_back(g ? std::optional<PyValue>(wrap(g)) : std::nullopt);
    return out;
  }

  void setOutputs(const py::list &values,
                  const std::vector<std::string> &names) {
    checkOpen();
    SmallVector<Value> results = unwrap(values);
    if (names.size() != results.size())
      throw py::value_error("one name per output");
    state->builder.create<func::ReturnOp>(state->loc, results);
    func::FuncOp main = state->main;
    main.setType(FunctionType::get(&context(), main.front().getArgumentTypes(),
                                   ValueRange(results).getTypes()));
    for (auto [i, n] : llvm::enumerate(names))
      main.setResultAttr(i, "tcc.name", StringAttr::get(&context(), n));
    state->finished = true;
    Diagnostics diags;
    if (failed(verify(*state->module)))
      diags.raise("the graph does not verify");
  }

  /// The graph as MLIR text; `elide_weights` leaves out the bytes of big
  /// constants (a cache key hashes them apart).
  std::string mlir(bool elideWeights) const {
    std::string s;
    llvm::raw_string_ostream os(s);
    OpPrintingFlags flags;
    if (elideWeights)
      flags.elideLargeResourceString();
    state->module->print(os, flags);
    return s;
  }

  /// Compiles a copy of the finished graph to `output` (its suffix, or
  /// `emit`, says what to make), in process.
  void compile(const std::string &output, const py::kwargs &options) const {
    if (!state->finished)
      throw py::value_error("set the graph's outputs before compiling it");
    tcc::CompileOptions opts = compileOptions(options);
    opts.outputPath = output;
    if (opts.inputPath.empty())
      opts.inputPath = "graph";
    OwningOpRef<ModuleOp> copy(cast<ModuleOp>((*state->module)->clone()));
    Diagnostics diags;
    if (failed(tcc::compileModule(*copy, opts)))
      diags.raise("compiling the graph failed");
  }

  static tcc::CompileOptions compileOptions(const py::kwargs &options) {
    tcc::CompileOptions opts;
    for (auto [key, value] : options) {
      std::string k = py::str(key);
      if (value.is_none())
        continue;
      if (k == "emit")
        opts.emit = emitKind(value.cast<std::string>());
      else if (k == "mcpu")
        opts.mcpu = value.cast<std::string>();
      else if (k == "opt_level")
        opts.optLevel = value.cast<int>();
      else if (k == "ukernels")
        opts.ukernels = value.cast<std::string>();
      else if (k == "memory_report")
        opts.memoryReport = value.cast<std::string>();
      else if (k == "name")
        opts.name = value.cast<std::string>();
      else if (k == "lib_dir")
        opts.libDir = value.cast<std::string>();
      else if (k == "python")
        opts.python = value.cast<std::string>();
      else if (k == "python_package_dir")
        opts.pythonPackageDir = value.cast<std::string>();
      else if (k == "input_name")
        opts.inputPath = value.cast<std::string>();
      else if (k == "timings")
        opts.timings = value.cast<bool>();
      else if (k == "profile")
        opts.profile = value.cast<bool>();
      else if (k == "input_shapes")
        // A dimension is a size, or a name / None: a dynamic one.
        for (auto [n, s] : value.cast<py::dict>()) {
          std::string input = py::str(n).cast<std::string>();
          llvm::SmallVector<int64_t> dims;
          llvm::SmallVector<std::string> names;
          for (py::handle d : s.cast<py::sequence>()) {
            bool dynamic = d.is_none() || py::isinstance<py::str>(d);
            dims.push_back(dynamic ? mlir::ShapedType::kDynamic
                                   : d.cast<int64_t>());
            names.push_back(py::isinstance<py::str>(d) ? d.cast<std::string>()
                                                       : std::string());
          }
          opts.inputShapes[input] = dims;
          opts.inputDimNames[input] = names;
        }
      else if (k == "dims")
        // {"batch": (1, 64)}: bounds of dynamic dimensions.
        for (auto [n, b] : value.cast<py::dict>()) {
          auto bounds = b.cast<std::pair<int64_t, int64_t>>();
          if (bounds.first < 1 || bounds.first > bounds.second)
            throw py::value_error("dims: bounds of '" +
                                  py::str(n).cast<std::string>() +
                                  "' must satisfy 1 <= min <= max");
          opts.dimBounds[py::str(n).cast<std::string>()] = bounds;
        }
      else
        throw py::type_error("compile() got an unknown option '" + k + "'");
    }
    return opts;
  }

private:
  static tcc::EmitKind emitKind(const std::string &s) {
    using tcc::EmitKind;
    static const std::pair<const char *, EmitKind> kinds[] = {
        {"import", EmitKind::Import},  {"tcc", EmitKind::Tcc},
        {"linalg", EmitKind::Linalg},  {"llvm-dialect", EmitKind::LLVMDialect},
        {"llvm-ir", EmitKind::LLVMIR}, {"asm", EmitKind::Asm},
        {"obj", EmitKind::Object},     {"lib", EmitKind::Library},
        {"exe", EmitKind::Executable}};
    for (auto [name, kind] : kinds)
      if (s == name)
        return kind;
    throw py::value_error("unknown emit '" + s + "'");
  }

  tcc::TccBuilder builder() const {
    tcc::TccBuilder tb(state->builder, state->loc);
    return tb;
  }
  void checkOpen() const {
    if (state->finished)
      throw py::value_error("the graph's outputs are set; it is finished");
  }
  PyValue wrap(Value v) const { return PyValue{v, state}; }
  SmallVector<Value> unwrap(const py::list &values) const {
    SmallVector<Value> out;
    for (py::handle h : values) {
      auto &v = h.cast<PyValue &>();
      if (v.graph != state)
        throw py::value_error("a value of another graph");
      out.push_back(v.value);
    }
    return out;
  }
  static SmallVector<NamedAttribute> attributes(const py::dict &attrs) {
    SmallVector<NamedAttribute> named;
    for (auto [key, value] : attrs) {
      std::string name = py::str(key);
      if (Attribute a = toAttribute(value, name))
        named.push_back(NamedAttribute(StringAttr::get(&context(), name), a));
    }
    return named;
  }

  std::shared_ptr<GraphState> state;
};

/// Compiles a model file (.onnx, .onnxtxt, .mlir, TorchScript) as `tcc`
/// does.
void compileFile(const std::string &input, const std::string &output,
                 const py::kwargs &options) {
  tcc::CompileOptions opts = PyGraph::compileOptions(options);
  opts.inputPath = input;
  opts.outputPath = output;
  Diagnostics diags;
  OwningOpRef<ModuleOp> module = tcc::importModel(context(), opts);
  if (!module || failed(tcc::compileModule(*module, opts)))
    diags.raise("compiling '" + input + "' failed");
}

} // namespace

PYBIND11_MODULE(_compiler, m) {
  m.doc() = "The tcc compiler from Python: Graph builds the tcc dialect, "
            "compile_file compiles model files. Use it through `import tcc`.";
  compileErrorType = PyErr_NewExceptionWithDoc(
      "tcc.CompileError",
      "A model or graph tcc cannot compile; the message is the compiler's "
      "diagnostics.",
      PyExc_RuntimeError, nullptr);
  m.attr("CompileError") = py::handle(compileErrorType);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const CompileError &e) {
      PyErr_SetString(compileErrorType, e.what());
    }
  });

  py::class_<PyValue>(m, "Value", "A tensor value of a Graph.")
      .def_property_readonly("shape", &PyValue::shape)
      .def_property_readonly("dtype", &PyValue::dtype)
      .def("__repr__", &PyValue::repr);

  py::class_<PyGraph>(m, "Graph", R"(A tcc function being built.

    g = Graph("model")
    x = g.add_input("x", "float32", [2, 3])
    y, = g.op("tcc.relu", [x])
    g.set_outputs([y], ["y"])
    g.compile("model.so"))")
      .def(py::init<const std::string &>(), py::arg("name") = "")
      .def("set_location", &PyGraph::setLocation, py::arg("where"),
           "Names what the next ops come from, in their diagnostics.")
      .def("add_input", &PyGraph::addInput, py::arg("name"), py::arg("dtype"),
           py::arg("shape"), py::arg("dims") = py::none(),
           "Adds an input of `shape` (-1: a dynamic dimension; `dims` names "
           "each dimension, None for a fixed one: the artifact's symbols).")
      .def("constant", &PyGraph::constant, py::arg("array"), py::arg("dtype"),
           py::arg("name") = "")
      .def("op", &PyGraph::op, py::arg("name"), py::arg("operands"),
           py::arg("attrs") = py::dict(), py::arg("results") = py::none(),
           "Makes a tcc op; result types are inferred unless given as "
           "(dtype, shape) pairs. Returns its results.")
      .def("loop", &PyGraph::loop, py::arg("trip_count"), py::arg("condition"),
           py::arg("inits"), py::arg("body"))
      .def("vjp", &PyGraph::vjp, py::arg("name"), py::arg("operands"),
           py::arg("attrs"), py::arg("cotangents"),
           "The operands' cotangents of an op by its VJP rule.")
      .def("set_outputs", &PyGraph::setOutputs, py::arg("values"),
           py::arg("names"))
      .def("mlir", &PyGraph::mlir, py::arg("elide_weights") = false,
           "The graph as MLIR text.")
      .def("compile", &PyGraph::compile, py::arg("output"));
  m.def("compile_file", &compileFile, py::arg("input"), py::arg("output"),
        "Compiles a model file (.onnx, .onnxtxt, .mlir) to `output`.");
}
