//===- Driver.cpp - the whole compilation as one library call -------------===//

#include "compiler/Driver/Driver.h"

#include "compiler/Frontends/Onnx/OnnxImporter.h"
#include "compiler/InitTcc.h"
#include "compiler/Target/Artifact.h"
#include "compiler/Target/LLVMCodegen.h"
#include "compiler/Target/Link.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Tcc/IR/TccOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <thread>
#include <unistd.h> // environ

using namespace mlir;
using namespace mlir::tcc;

bool tcc::parseShape(StringRef text, SmallVectorImpl<int64_t> &shape) {
  shape.clear();
  if (text.empty())
    return true;
  SmallVector<StringRef> dims;
  text.split(dims, 'x');
  for (StringRef d : dims) {
    int64_t v;
    if (d.getAsInteger(10, v) || v < 0)
      return false;
    shape.push_back(v);
  }
  return true;
}

bool tcc::parseShape(StringRef text, SmallVectorImpl<int64_t> &shape,
                     SmallVectorImpl<std::string> &names) {
  shape.clear();
  names.clear();
  if (text.empty())
    return true;
  SmallVector<StringRef> dims;
  text.split(dims, text.contains(',') ? ',' : 'x');
  for (StringRef d : dims) {
    int64_t v;
    if (!d.getAsInteger(10, v)) {
      if (v < 0)
        return false;
      shape.push_back(v);
      names.emplace_back();
      continue;
    }
    bool identifier =
        !d.empty() && (llvm::isAlpha(d[0]) || d[0] == '_') &&
        llvm::all_of(d, [](char c) { return llvm::isAlnum(c) || c == '_'; });
    if (d != "?" && !identifier)
      return false;
    shape.push_back(ShapedType::kDynamic);
    names.push_back(d == "?" ? std::string() : d.str());
  }
  return true;
}

bool tcc::parseDimBounds(StringRef text, std::string &name, int64_t &min,
                         int64_t &max) {
  auto [key, range] = text.split('=');
  bool identifier =
      !key.empty() && (llvm::isAlpha(key[0]) || key[0] == '_') &&
      llvm::all_of(key, [](char c) { return llvm::isAlnum(c) || c == '_'; });
  if (!identifier || range.empty())
    return false;
  name = key.str();
  min = 1;
  StringRef hi = range;
  if (range.contains("..")) {
    auto [lo, rest] = range.split("..");
    if (lo.getAsInteger(10, min))
      return false;
    hi = rest;
  }
  return !hi.getAsInteger(10, max) && min >= 1 && min <= max &&
         max <= std::numeric_limits<int32_t>::max();
}

bool tcc::parseSize(StringRef text, int64_t &size) {
  int shift = 0;
  if (!text.empty()) {
    switch (llvm::toUpper(text.back())) {
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    case 'T':
      shift = 40;
      break;
    }
    if (shift)
      text = text.drop_back();
  }
  uint64_t v;
  if (text.empty() || text.getAsInteger(10, v) || v == 0 ||
      v > (uint64_t(INT64_MAX) >> shift))
    return false;
  size = int64_t(v << shift);
  return true;
}

namespace {
/// Prints diagnostics as one line each. Errors the importer reports already
/// name the model (and node); other errors are prefixed with the model and
/// the node their location names.
class DiagnosticPrinter {
public:
  DiagnosticPrinter(MLIRContext &ctx, StringRef input)
      : input(input.str()),
        handler(&ctx, [this](Diagnostic &diag) { print(diag); }) {}

private:
  void print(Diagnostic &diag) {
    StringRef severity =
        diag.getSeverity() == DiagnosticSeverity::Error     ? "error"
        : diag.getSeverity() == DiagnosticSeverity::Warning ? "warning"
                                                            : "note";
    std::string msg = diag.str();
    llvm::errs() << severity << ": " << context(diag.getLocation(), msg) << msg
                 << "\n";
    for (Diagnostic &note : diag.getNotes())
      llvm::errs() << "note: " << context(note.getLocation(), note.str())
                   << note.str() << "\n";
  }

  std::string context(Location loc, StringRef msg) {
    if (msg.starts_with(input + ":"))
      return "";
    if (auto name = dyn_cast<NameLoc>(loc))
      return input + ": node '" + name.getName().str() + "': ";
    if (auto file = dyn_cast<FileLineColLoc>(loc))
      return (file.getFilename().str() + ":" + std::to_string(file.getLine()) +
              ":" + std::to_string(file.getColumn()) + ": ");
    if (auto fused = dyn_cast<FusedLoc>(loc))
      for (Location inner : fused.getLocations())
        if (isa<NameLoc>(inner))
          return context(inner, msg);
    return input + ": ";
  }

  std::string input;
  ScopedDiagnosticHandler handler;
};
} // namespace

/// Writes `path` through a temporary file that replaces it only on success;
/// "-" is stdout.
static LogicalResult
writeAtomically(StringRef path,
                function_ref<LogicalResult(llvm::raw_pwrite_stream &)> write,
                std::string &error) {
  if (path == "-") {
    // Flushed now: in process (the Python binding) other output follows.
    LogicalResult written = write(llvm::outs());
    llvm::outs().flush();
    return written;
  }
  SmallString<256> model = llvm::sys::path::parent_path(path);
  llvm::sys::path::append(model, ".tcc-%%%%%%.tmp");
  llvm::Expected<llvm::sys::fs::TempFile> temp =
      llvm::sys::fs::TempFile::create(model);
  if (!temp) {
    error = "cannot write '" + path.str() +
            "': " + llvm::toString(temp.takeError());
    return failure();
  }
  bool ok;
  {
    llvm::raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    ok = succeeded(write(os));
    os.flush();
    if (os.has_error()) {
      error = "cannot write '" + path.str() + "': " + os.error().message();
      os.clear_error();
      ok = false;
    }
  }
  if (!ok) {
    llvm::consumeError(temp->discard());
    return failure();
  }
  if (llvm::Error e = temp->keep(path)) {
    error =
        "cannot write '" + path.str() + "': " + llvm::toString(std::move(e));
    return failure();
  }
  return success();
}

static bool isTextStage(EmitKind kind) {
  return kind == EmitKind::Import || kind == EmitKind::Tcc ||
         kind == EmitKind::Linalg || kind == EmitKind::LLVMDialect ||
         kind == EmitKind::Ptx || kind == EmitKind::LLVMIR ||
         kind == EmitKind::Asm;
}

/// A C identifier for symbols, from the output's file name.
static std::string symbolPrefixFor(StringRef output) {
  std::string id;
  for (char c : llvm::sys::path::stem(output))
    id += llvm::isAlnum(c) ? c : '_';
  if (id.empty() || llvm::isDigit(id[0]))
    id = "model_" + id;
  return id;
}

/// Ops of @main that compute something: every op but constants, reshapes
/// (views) and the terminator; a tcc.fused group counts once.
static int64_t countKernels(ModuleOp module) {
  // A dynamic batch: its largest slab.
  std::vector<func::FuncOp> graphs = tcc::graphFunctions(module);
  if (graphs.empty())
    return 0;
  func::FuncOp main = graphs.front();
  int64_t n = 0;
  for (Operation &op : main.getBody().front())
    n += !isa<ConstantOp, ReshapeOp, func::ReturnOp>(op);
  return n;
}

/// Prints the plan tcc-plan-memory recorded: one line per buffer, then the
/// totals; or one JSON object.
static void printMemoryReport(ModuleOp module, StringRef model, bool json) {
  auto plan = module->getAttrOfType<DictionaryAttr>("tcc.memory_plan");
  llvm::raw_ostream &os = llvm::outs();
  auto total = [&](StringRef key) -> int64_t {
    auto v = plan ? plan.getAs<IntegerAttr>(key) : IntegerAttr();
    return v ? v.getInt() : 0;
  };
  auto buffers = plan ? plan.getAs<ArrayAttr>("buffers") : ArrayAttr();
  auto field = [](Attribute entry, StringRef key) {
    return cast<DictionaryAttr>(entry).getAs<IntegerAttr>(key).getInt();
  };
  auto typeOf = [](Attribute entry) {
    std::string s;
    llvm::raw_string_ostream ts(s);
    ts << cast<DictionaryAttr>(entry).getAs<TypeAttr>("type").getValue();
    return s;
  };
  auto writerOf = [](Attribute entry) {
    auto w = cast<DictionaryAttr>(entry).getAs<StringAttr>("writer");
    return w ? w.getValue() : StringRef();
  };
  ArrayRef<Attribute> entries =
      buffers ? buffers.getValue() : ArrayRef<Attribute>();
  // A dynamic batch: the plan of its largest slab, whose arena every slab
  // shares (it does not grow with the batch).
  int64_t slab = 0;
  if (auto batch = module->getAttrOfType<DictionaryAttr>("tcc.batch"))
    if (auto chunks = batch.getAs<DenseI64ArrayAttr>("chunks"))
      slab = chunks.empty() ? 0 : chunks[0];
  // A padded dimension: the largest bucket's plan, an upper bound that
  // every size uses.
  int64_t bucket = 0;
  StringRef padded;
  bool computed = false;
  if (auto pad = module->getAttrOfType<DictionaryAttr>("tcc.padded")) {
    if (auto buckets = pad.getAs<DenseI64ArrayAttr>("buckets"))
      bucket = buckets.empty() ? 0 : buckets[0];
    if (auto name = pad.getAs<StringAttr>("name"))
      padded = name.getValue();
    computed = pad.get("computed") != nullptr;
  }
  // Sizes the run computes, each planned at its bound: "(Y, a size the run
  // computes, planned at its bound, 12)", or for several "(sizes the run
  // computes, planned at their bounds: Y_0 9 and Y_1 12)".
  std::string computedSizes;
  if (computed) {
    auto pad = module->getAttrOfType<DictionaryAttr>("tcc.padded");
    auto names = pad.getAs<ArrayAttr>("computed_names");
    auto maxima = pad.getAs<DenseI64ArrayAttr>("computed_max");
    size_t count =
        names && maxima ? std::min<size_t>(names.size(), maxima.size()) : 0;
    llvm::raw_string_ostream out(computedSizes);
    if (count <= 1) {
      out << padded << ", a size the run computes, planned at its bound, "
          << bucket;
    } else {
      out << "sizes the run computes, planned at their bounds: ";
      for (size_t k = 0; k < count; ++k) {
        auto name = dyn_cast<StringAttr>(names[k]);
        out << (k == 0           ? ""
                : k + 1 == count ? " and "
                                 : ", ")
            << (name ? name.getValue() : StringRef("?")) << " " << maxima[k];
      }
    }
  }
  if (json) {
    llvm::json::OStream j(os);
    j.object([&] {
      j.attribute("model", model);
      if (slab)
        j.attribute("slab_rows", slab);
      if (bucket) {
        j.attribute("padded_dimension", padded);
        j.attribute("bucket", bucket);
      }
      for (StringRef key : {"arena_bytes", "naive_bytes", "peak_live_bytes"})
        j.attribute(key, total(key));
      j.attributeArray("buffers", [&] {
        for (Attribute b : entries)
          j.object([&] {
            for (StringRef key : {"bytes", "first", "last", "offset"})
              j.attribute(key, field(b, key));
            j.attribute("type", typeOf(b));
            j.attribute("writer", writerOf(b));
          });
      });
    });
    os << "\n";
    return;
  }
  os << "memory plan of '" << model << "': " << entries.size()
     << " buffers in one arena";
  if (bucket && computed)
    os << " (" << computedSizes << ")";
  else if (bucket)
    os << " (" << padded << " padded to its largest bucket, " << bucket
       << "; an upper bound every size uses)";
  if (slab)
    os << " (a slab of " << slab
       << " rows of the dynamic batch; every batch size uses this arena)";
  os << "\n";
  os << llvm::formatv("{0,6} {1,12} {2,12} {3,12}  {4,-30} {5}\n", "buffer",
                      "bytes", "live", "offset", "type", "written first by");
  for (auto [i, b] : llvm::enumerate(entries))
    os << llvm::formatv("{0,6} {1,12} {2,12} {3,12}  {4,-30} {5}\n", i,
                        field(b, "bytes"),
                        std::to_string(field(b, "first")) + ".." +
                            std::to_string(field(b, "last")),
                        field(b, "offset"), typeOf(b), writerOf(b));
  int64_t arena = total("arena_bytes"), naive = total("naive_bytes"),
          peak = total("peak_live_bytes");
  os << llvm::formatv("arena_bytes:     {0,12}\n", arena)
     << llvm::formatv("peak_live_bytes: {0,12}  (the lower bound)\n", peak)
     << llvm::formatv("naive_bytes:     {0,12}  (every buffer separate)\n",
                      naive);
  if (naive > 0 && peak > 0)
    os << llvm::formatv("arena / peak = {0:f3}, arena / naive = {1:f3}\n",
                        double(arena) / peak, double(arena) / naive);
}

/// A TorchScript file: the torch frontend, run in tcc's Python environment
/// (python -m tcc.torch.torchscript), imports it into tcc IR with its
/// weights, written to a temporary file that is then read as a .mlir
/// input. The frontend prints its one diagnostic itself.
static OwningOpRef<ModuleOp> importTorchScript(MLIRContext &ctx,
                                               const CompileOptions &opts) {
  Location loc = UnknownLoc::get(&ctx);
  if (!llvm::sys::fs::exists(opts.inputPath)) {
    emitError(loc) << opts.inputPath << ": no such file";
    return nullptr;
  }
  std::string python = opts.python;
  if (std::optional<std::string> env = llvm::sys::Process::GetEnv("TCC_PYTHON"))
    python = *env;
  if (python.empty() || !llvm::sys::fs::can_execute(python)) {
    llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("python3");
    if (!found) {
      emitError(loc) << opts.inputPath
                     << ": reading a TorchScript file needs Python 3 with "
                        "PyTorch; none found (set TCC_PYTHON to its python)";
      return nullptr;
    }
    python = *found;
  }
  SmallString<256> frontend(opts.pythonPackageDir);
  llvm::sys::path::append(frontend, "tcc", "torch", "torchscript.py");
  if (!llvm::sys::fs::exists(frontend)) {
    emitError(loc) << opts.inputPath
                   << ": reading a TorchScript file needs tcc's Python "
                      "package, which is not at '"
                   << opts.pythonPackageDir
                   << "' (build tcc with Python 3, pybind11 and PyTorch)";
    return nullptr;
  }
  for (const auto &entry : opts.inputShapes)
    if (llvm::any_of(entry.getValue(), ShapedType::isDynamic)) {
      emitError(loc) << "--input-shape " << entry.getKey()
                     << ": TorchScript inputs take fixed sizes; dynamic "
                        "dimensions are for ONNX models";
      return nullptr;
    }
  SmallString<128> imported;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "tcc-torchscript", "mlir", imported)) {
    emitError(loc) << "cannot create a temporary file: " << ec.message();
    return nullptr;
  }
  auto removeImported =
      llvm::make_scope_exit([&] { llvm::sys::fs::remove(imported); });
  std::string name = opts.name.empty()
                         ? llvm::sys::path::stem(opts.inputPath).str()
                         : opts.name;
  std::vector<std::string> args = {
      python,         "-m", "tcc.torch.torchscript",
      opts.inputPath, "-o", imported.str().str(),
      "--name",       name};
  for (const auto &entry : opts.inputShapes) {
    std::string spec = entry.getKey().str() + "=";
    for (auto [i, d] : llvm::enumerate(entry.getValue()))
      spec += (i ? "x" : "") + std::to_string(d);
    args.push_back("--input-shape");
    args.push_back(spec);
  }
  // The environment, with the package first on PYTHONPATH.
  std::vector<std::string> env;
  std::string path = opts.pythonPackageDir;
  for (char **e = environ; e && *e; ++e) {
    StringRef entry(*e);
    if (entry.consume_front("PYTHONPATH=")) {
      if (!entry.empty())
        path += ":" + entry.str();
      continue;
    }
    env.push_back(entry.str());
  }
  env.push_back("PYTHONPATH=" + path);
  std::vector<StringRef> argRefs(args.begin(), args.end()),
      envRefs(env.begin(), env.end());
  // The frontend's stderr is kept: its one `error:` line becomes this
  // diagnostic, and whatever else torch prints (a C++ stack trace when its
  // loader aborts on a damaged file) is not passed on.
  SmallString<128> errPath;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("tcc-torchscript",
                                                              "err", errPath)) {
    emitError(loc) << "cannot create a temporary file: " << ec.message();
    return nullptr;
  }
  auto removeErr =
      llvm::make_scope_exit([&] { llvm::sys::fs::remove(errPath); });
  std::optional<StringRef> redirects[] = {std::nullopt, std::nullopt,
                                          StringRef(errPath)};
  std::string error;
  bool notRun = false;
  int rc = llvm::sys::ExecuteAndWait(python, argRefs, envRefs, redirects, 0, 0,
                                     &error, &notRun);
  std::string said;
  if (auto buffer = llvm::MemoryBuffer::getFile(errPath)) {
    SmallVector<StringRef> lines;
    (*buffer)->getBuffer().split(lines, '\n');
    for (StringRef line : lines)
      if (line.starts_with("error: "))
        said = line.drop_front(7).str();
  }
  if (notRun) {
    emitError(loc) << opts.inputPath << ": cannot run " << python
                   << " to read the TorchScript file: " << error;
    return nullptr;
  }
  if (rc < 0) { // a signal: torch's loader is not hardened against bad files
    emitError(loc) << opts.inputPath
                   << ": torch's TorchScript loader crashed reading it ("
                   << error << "): a damaged or hostile file";
    return nullptr;
  }
  if (rc != 0) {
    if (!said.empty())
      emitError(loc) << said;
    else
      emitError(loc) << opts.inputPath
                     << ": the torch frontend failed (exit status " << rc
                     << ") without a diagnostic";
    return nullptr;
  }
  return parseSourceFile<ModuleOp>(imported, &ctx);
}

OwningOpRef<ModuleOp> tcc::importModel(MLIRContext &ctx,
                                       const CompileOptions &opts) {
  StringRef ext = llvm::sys::path::extension(opts.inputPath);
  if (ext == ".pt" || ext == ".pth" || ext == ".ts")
    return importTorchScript(ctx, opts);
  if (ext == ".mlir") {
    // A FIFO or a device such as /dev/zero could block or never end.
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(opts.inputPath, status) &&
        status.type() != llvm::sys::fs::file_type::regular_file) {
      emitError(UnknownLoc::get(&ctx))
          << opts.inputPath << ": cannot read the model: it is not a regular "
          << "file";
      return nullptr;
    }
    OwningOpRef<ModuleOp> module =
        parseSourceFile<ModuleOp>(opts.inputPath, &ctx);
    if (!module && !llvm::sys::fs::exists(opts.inputPath))
      emitError(UnknownLoc::get(&ctx)) << opts.inputPath << ": no such file";
    return module;
  }
  if (ext == ".onnx" || ext == ".onnxtxt" || ext == ".pb") {
    onnx::ImportOptions importOptions;
    importOptions.maxElements = opts.maxElements;
    importOptions.maxTensorBytes = opts.maxTensorBytes;
    for (const auto &entry : opts.inputShapes)
      importOptions.inputShapes[entry.getKey()] = entry.getValue();
    for (const auto &entry : opts.inputDimNames)
      importOptions.inputDimNames[entry.getKey()] = entry.getValue();
    for (const auto &entry : opts.dimBounds)
      importOptions.dimBounds[entry.getKey()] = entry.getValue();
    return onnx::importOnnxFile(ctx, opts.inputPath, importOptions);
  }
  emitError(UnknownLoc::get(&ctx))
      << opts.inputPath << ": unknown model format '" << ext
      << "' (tcc reads .onnx, .onnxtxt, .mlir and TorchScript .pt files)";
  return nullptr;
}

void tcc::registerCompilerDialects(MLIRContext &ctx) {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerTccDialect(registry);
  registerTccTranslations(registry);
  ctx.appendDialectRegistry(registry);
  ctx.loadAllAvailableDialects();
}

LogicalResult tcc::compile(MLIRContext &ctx, const CompileOptions &opts) {
  registerCompilerDialects(ctx);
  // One line per error: a pass's diagnostic names the model node, not the
  // IR of the op ("see current operation").
  ctx.printOpOnDiagnostic(false);
  DiagnosticPrinter printer(ctx, opts.inputPath);
  OwningOpRef<ModuleOp> module = importModel(ctx, opts);
  if (!module)
    return failure();
  return compileModule(*module, opts);
}

namespace {
/// One compilation of a module in the tcc dialect, stage by stage. Each stage
/// reports its own errors; the output is written only by the last one, and
/// atomically, so a failed compile leaves nothing behind.
class Compilation {
public:
  Compilation(ModuleOp module, const CompileOptions &opts)
      : module(module), ctx(*module.getContext()), opts(opts) {
    // --timings: every pass, then each step of code generation, reported on
    // stderr when the compilation ends.
    timing.setEnabled(opts.timings);
    rootTiming = timing.getRootScope();
    if (opts.printDebugInfo)
      printFlags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  }

  LogicalResult run() {
    if (failed(chooseOutput()))
      return failure();
    if (emit == EmitKind::Import)
      return writeModule();
    // The IR stages, each with the --emit that stops after it.
    using Stage = LogicalResult (Compilation::*)();
    const std::pair<Stage, EmitKind> stages[] = {
        {&Compilation::runGraphPasses, EmitKind::Tcc},
        {&Compilation::lowerToLinalg, EmitKind::Linalg},
        {&Compilation::lowerToLLVMDialect, EmitKind::LLVMDialect}};
    for (auto [stage, stopAfter] : stages) {
      if (failed((this->*stage)()))
        return failure();
      if (emit == stopAfter)
        return writeModule();
      if (emit == EmitKind::Ptx && stopAfter == EmitKind::LLVMDialect)
        return writePtx();
    }
    if (failed(translate()))
      return failure();
    return writeCode();
  }

private:
  LogicalResult fail(const Twine &message) {
    return emitError(UnknownLoc::get(&ctx)) << message;
  }
  LogicalResult runPipeline(function_ref<void(OpPassManager &)> build,
                            StringRef name) {
    PassManager pm(&ctx);
    build(pm);
    TimingScope scope = rootTiming.nest(name);
    pm.enableTiming(scope);
    return pm.run(module);
  }
  bool cuda() const { return opts.target == "cuda"; }

  /// The kernels' PTX text, as ptxas takes it.
  LogicalResult writePtx() {
    if (failed(writeAtomically(
            output,
            [&](llvm::raw_pwrite_stream &os) {
              os << info.cudaPtx;
              return success();
            },
            error)))
      return fail(error);
    return success();
  }

  LogicalResult writeModule() {
    if (failed(writeAtomically(
            output,
            [&](llvm::raw_pwrite_stream &os) {
              module->print(os, printFlags);
              os << "\n";
              return success();
            },
            error)))
      return fail(error);
    return success();
  }

  /// What to make (from --emit or the output's suffix), and where; fails
  /// before any work when the output cannot be written.
  LogicalResult chooseOutput() {
    output = opts.outputPath;
    if (opts.emit) {
      emit = *opts.emit;
    } else {
      StringRef ext = llvm::sys::path::extension(output);
      emit = ext == ".so"   ? EmitKind::Library
             : ext == ".o"  ? EmitKind::Object
             : ext == ".s"  ? EmitKind::Asm
             : ext == ".ll" ? EmitKind::LLVMIR
                            : EmitKind::Executable;
    }
    if (cuda() && emit == EmitKind::Executable)
      return fail("--target=cuda makes a library (-o OUT.so) or an object "
                  "(-o OUT.o); a standalone executable is CPU-only");
    if (cuda() && opts.profile)
      return fail("--profile is CPU-only (--target=cuda)");
    if (!cuda() && emit == EmitKind::Ptx)
      return fail("--emit=ptx needs --target=cuda");
    if (output.empty()) {
      if (!isTextStage(emit))
        return fail("no output file: give -o OUT (OUT.so, OUT.o or OUT)");
      output = "-";
    }
    if (output == "-")
      return isTextStage(emit)
                 ? success()
                 : fail("binary output cannot go to stdout; give -o FILE");
    SmallString<256> dir = llvm::sys::path::parent_path(output);
    if (dir.empty())
      dir = ".";
    if (!llvm::sys::fs::is_directory(dir))
      return fail("cannot write '" + output + "': no such directory '" + dir +
                  "'");
    if (llvm::sys::fs::access(dir, llvm::sys::fs::AccessMode::Write))
      return fail("cannot write '" + output + "': directory '" + dir +
                  "' is not writable");
    return success();
  }

  /// Canonicalization, decomposition and fusion on the tcc dialect.
  LogicalResult runGraphPasses() {
    int64_t imported = countKernels(module);
    // A dynamic batch becomes slabs of fixed sizes (tcc-specialize-batch),
    // bounded by --dim.
    if (!opts.dimBounds.empty()) {
      Builder b(&ctx);
      SmallVector<NamedAttribute> bounds;
      for (const auto &entry : opts.dimBounds)
        bounds.push_back(b.getNamedAttr(
            entry.getKey(), b.getDenseI64ArrayAttr({entry.getValue().first,
                                                    entry.getValue().second})));
      module->setAttr("tcc.dim_bounds", b.getDictionaryAttr(bounds));
    }
    // A dynamic dimension whose elements interact (a sequence) becomes
    // padded buckets (tcc-pad-dynamic-dims); a batch, slabs.
    if (failed(runPipeline(
            [](OpPassManager &pm) {
              pm.addPass(createTccPadDynamicDims());
              pm.addPass(createTccSpecializeBatch());
            },
            "dynamic dimensions")))
      return failure();
    bool symbolic =
        module->hasAttr("tcc.batch") || module->hasAttr("tcc.padded");
    if (!opts.dimBounds.empty() && !symbolic)
      return fail("--dim " + opts.dimBounds.begin()->getKey() +
                  " names no dynamic dimension: the model's inputs are "
                  "static (make one dynamic with --input-shape, e.g. " +
                  "x=" + opts.dimBounds.begin()->getKey() + "x3x224x224)");
    if (cuda() && symbolic)
      return fail("symbolic dimensions are CPU-only for now: give "
                  "--target=cuda models fixed shapes (--input-shape)");
    if (failed(runPipeline(buildTccGraphPipeline, "graph passes")))
      return failure();
    if (opts.stats)
      llvm::outs() << "ops after import: " << imported
                   << "\nkernels after fusion: " << countKernels(module)
                   << "\n";
    return success();
  }

  /// The artifact's interface (names, shapes, dtypes), recorded before the
  /// lowering erases it, and the target machine.
  LogicalResult describeInterface() {
    FailureOr<ArtifactInfo> described = describeArtifact(module);
    if (failed(described))
      return failure();
    info = std::move(*described);
    if (info.modelName.empty())
      info.modelName = llvm::sys::path::stem(opts.inputPath).str();
    info.symbolPrefix = !opts.name.empty() ? opts.name
                        : emit == EmitKind::Executable
                            ? "tcc"
                            : symbolPrefixFor(output);
    // Its names must not reach LLVM as attributes.
    module->walk([](func::FuncOp f) {
      f.setAllArgAttrs(ArrayRef<DictionaryAttr>());
      f.setAllResultAttrs(ArrayRef<DictionaryAttr>());
    });
    machine = createCpuTargetMachine(opts.mcpu, opts.optLevel, error);
    if (!machine)
      return fail(error);
    info.target = describeTarget(*machine);
    if (cuda()) {
      // The host code runs on this CPU; contractions go to cuBLAS.
      info.cudaArch = opts.cudaArch;
      info.target = "cuda:" + opts.cudaArch + "+" + info.target;
      isa = UkernelIsa::none;
      return success();
    }
    std::optional<UkernelIsa> chosen = opts.ukernels == "auto"
                                           ? ukernelIsaFor(*machine)
                                           : parseUkernelIsa(opts.ukernels);
    if (!chosen)
      return fail("unknown micro-kernel ISA '" + opts.ukernels +
                  "' (auto, none, generic, avx2, avx512)");
    isa = *chosen;
    return success();
  }

  LogicalResult lowerToLinalg() {
    if (failed(describeInterface()))
      return failure();
    CpuPipelineOptions pipeline;
    pipeline.ukernels = isa;
    return runPipeline(
        [&](OpPassManager &pm) { buildTccToLinalgPipeline(pm, pipeline); },
        "tcc to linalg");
  }

  /// Bufferization, the memory plan and the LLVM dialect.
  LogicalResult lowerToLLVMDialect() {
    if (cuda())
      return lowerToCuda();
    if (failed(runPipeline(
            [&](OpPassManager &pm) {
              buildLinalgToLLVMPipeline(pm, opts.profile);
            },
            "linalg to LLVM")))
      return failure();
    if (auto bytes = module->getAttrOfType<IntegerAttr>("tcc.workspace_bytes"))
      info.setArena(bytes.getInt());
    if (!opts.memoryReport.empty())
      printMemoryReport(module, info.modelName, opts.memoryReport == "json");
    return success();
  }

  /// Kernels to PTX, host code to the LLVM dialect (tcc-cuda-pipeline).
  LogicalResult lowerToCuda() {
    // The architectures, oldest first (CompileOptions::cudaArch): the PTX
    // is the oldest's, which the newer ones' GPUs also run.
    SmallVector<StringRef> parts;
    StringRef(opts.cudaArch).split(parts, ',');
    std::vector<std::string> archs(parts.begin(), parts.end());
    CudaPipelineOptions pipeline;
    pipeline.chip = archs.front();
    pipeline.emulate = opts.cudaArch == "emulate";
    if (pipeline.emulate && emit == EmitKind::Ptx)
      return fail("--cuda-arch=emulate makes no PTX");
    if (failed(runPipeline(
            [&](OpPassManager &pm) { buildLinalgToCudaPipeline(pm, pipeline); },
            "linalg to CUDA")))
      return failure();
    if (auto bytes = module->getAttrOfType<IntegerAttr>("tcc.workspace_bytes"))
      info.workspaceBytes = bytes.getInt();
    if (auto ptx = module->getAttrOfType<StringAttr>("tcc.cuda.ptx"))
      info.cudaPtx = ptx.str();
    // The cubin (or, for several architectures, a fat binary of one for
    // each) beside the PTX, when the toolkit is here (not for the text
    // stages, which stop before it).
    if (!pipeline.emulate && !isTextStage(emit)) {
      TimingScope scope = rootTiming.nest("ptxas");
      if (failed(
              assembleDeviceCode(info.cudaPtx, archs, info.cudaCubin, error)))
        return fail(error);
    }
    if (auto names = module->getAttrOfType<ArrayAttr>("tcc.cuda.kernels"))
      for (Attribute name : names)
        info.cudaKernels.push_back(cast<StringAttr>(name).str());
    if (auto bytes =
            module->getAttrOfType<IntegerAttr>("tcc.cuda.weights_bytes"))
      info.cudaWeightsBytes = bytes.getInt();
    if (!opts.memoryReport.empty())
      printMemoryReport(module, info.modelName, opts.memoryReport == "json");
    return success();
  }

  /// LLVM IR with the artifact's entry point, optimized; and the kernel
  /// object it links with.
  LogicalResult translate() {
    TimingScope translateTiming = rootTiming.nest("translate to LLVM IR");
    llvmModule = tcc::translateToLLVMIR(module, llvmContext, *machine);
    translateTiming.stop();
    if (!llvmModule)
      return failure();
    // The micro-kernels come precompiled (one object per ISA level) and are
    // linked with the model's object, so compiling a model never
    // re-optimizes them; --emit=llvm-ir and asm show the model's code alone.
    // Without kernels the object still provides the parallel loops' runtime.
    UkernelIsa objectIsa =
        isa == UkernelIsa::none ? ukernelIsaFor(*machine) : isa;
    if (failed(findUkernelObject(*llvmModule, opts.libDir, objectIsa,
                                 ukernelObject, error)) ||
        failed(addArtifactEntry(*llvmModule, info, "main",
                                emit != EmitKind::Object, error)))
      return fail(error);
    if (jobs() > 1)
      return success(); // Optimized in pieces as link() compiles them.
    TimingScope scope = rootTiming.nest("LLVM optimization");
    optimizeLLVMModule(*llvmModule, *machine, opts.optLevel);
    addBFloatConversions(*llvmModule);
    return success();
  }

  /// Pieces the module is optimized and compiled in at once: for what
  /// link() makes (a library, an executable, or an object linked with the
  /// kernels, whose hidden symbols objcopy then makes local, so the pieces'
  /// cannot clash with another artifact's).
  unsigned jobs() const {
    if (emit != EmitKind::Library && emit != EmitKind::Executable &&
        !(emit == EmitKind::Object && !ukernelObject.empty()))
      return 1;
    if (opts.jobs)
      return opts.jobs;
    return std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  }

  LogicalResult emitCode(StringRef path, bool assembly) {
    TimingScope scope = rootTiming.nest("machine code");
    return writeAtomically(
        path,
        [&](llvm::raw_pwrite_stream &os) {
          return emitMachineCode(*llvmModule, *machine, os, assembly, error);
        },
        error);
  }

  LogicalResult writeHeader() {
    SmallString<256> header(output);
    llvm::sys::path::replace_extension(header, ".h");
    if (failed(writeAtomically(
            header,
            [&](llvm::raw_pwrite_stream &os) {
              os << artifactHeader(info,
                                   llvm::sys::path::filename(opts.inputPath));
              return success();
            },
            error)))
      return fail(error);
    return success();
  }

  /// LLVM IR, assembly, an object, a library or an executable.
  LogicalResult writeCode() {
    switch (emit) {
    case EmitKind::LLVMIR:
      if (failed(writeAtomically(
              output,
              [&](llvm::raw_pwrite_stream &os) {
                llvmModule->print(os, nullptr);
                return success();
              },
              error)))
        return fail(error);
      return success();
    case EmitKind::Asm:
      return failed(emitCode(output, /*assembly=*/true)) ? fail(error)
                                                         : success();
    case EmitKind::Object:
      if (ukernelObject.empty()) {
        if (failed(emitCode(output, false)))
          return fail(error);
        return writeHeader();
      }
      return link();
    case EmitKind::Library:
    case EmitKind::Executable:
      return link();
    default:
      llvm_unreachable("text stages are written before code generation");
    }
  }

  /// The model's object linked with the kernels (and, for an executable,
  /// the runtime). Object and link output go to temporary files; only a
  /// finished artifact is renamed into place.
  LogicalResult link() {
    std::vector<std::string> objects;
    auto removeObjects = llvm::make_scope_exit([&] {
      for (const std::string &o : objects)
        if (!o.empty())
          llvm::sys::fs::remove(o);
    });
    if (jobs() > 1) {
      TimingScope scope =
          rootTiming.nest("LLVM optimization and machine code (" +
                          std::to_string(jobs()) + " pieces)");
      std::string machineError;
      if (failed(emitObjectsInParallel(
              *llvmModule,
              [&] {
                return createCpuTargetMachine(opts.mcpu, opts.optLevel,
                                              machineError);
              },
              opts.optLevel, jobs(), objects, error)))
        return fail(error);
    } else {
      SmallString<128> object;
      int fd;
      if (llvm::sys::fs::createTemporaryFile("tcc", "o", fd, object))
        return fail("cannot create a temporary object file");
      llvm::sys::Process::SafelyCloseFileDescriptor(fd);
      objects.push_back(object.str().str());
      if (failed(emitCode(object, false)))
        return fail(error);
    }
    SmallString<256> linked = llvm::sys::path::parent_path(output);
    llvm::sys::path::append(linked, ".tcc-link-%%%%%%.tmp");
    llvm::sys::fs::createUniquePath(linked, linked, /*MakeAbsolute=*/false);
    std::vector<std::string> inputs = objects;
    if (!ukernelObject.empty())
      inputs.push_back(ukernelObject);
    LogicalResult linkedOk = success();
    TimingScope linkTiming = rootTiming.nest("link");
    if (emit == EmitKind::Library)
      linkedOk = linkSharedLibrary(inputs, linked, error);
    else if (emit == EmitKind::Object)
      linkedOk = linkRelocatable(inputs, linked, error);
    else
      linkedOk = linkExecutable(inputs,
                                {opts.libDir + "/libtccrt_main.a",
                                 opts.libDir + "/libtccrt_static.a"},
                                linked, error);
    if (failed(linkedOk)) {
      llvm::sys::fs::remove(linked);
      return fail(error);
    }
    if (std::error_code ec = llvm::sys::fs::rename(linked, output)) {
      llvm::sys::fs::remove(linked);
      return fail("cannot write '" + output + "': " + ec.message());
    }
    return emit == EmitKind::Executable ? success() : writeHeader();
  }

  ModuleOp module;
  MLIRContext &ctx;
  const CompileOptions &opts;
  DefaultTimingManager timing;
  TimingScope rootTiming;
  OpPrintingFlags printFlags;
  std::string error;
  std::string output;
  EmitKind emit = EmitKind::Executable;
  ArtifactInfo info;
  std::unique_ptr<llvm::TargetMachine> machine;
  UkernelIsa isa = UkernelIsa::none;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  std::string ukernelObject;
};
} // namespace

LogicalResult tcc::compileModule(ModuleOp module, const CompileOptions &opts) {
  return Compilation(module, opts).run();
}
