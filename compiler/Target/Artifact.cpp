//===- Artifact.cpp - descriptor, entry point and header of an artifact ---===//

#include "compiler/Target/Artifact.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FormatVariadic.h"

#include "compiler/Target/AbiHeader.inc"
#include "runtime/include/tcc/abi.h"

using namespace mlir;
using namespace mlir::tcc;

#ifndef TCC_VERSION_STRING
#error "TCC_VERSION_STRING must be defined by the build"
#endif

int32_t tcc::dtypeOf(Type t) {
  if (t.isF32())
    return TCC_DTYPE_F32;
  if (t.isF64())
    return TCC_DTYPE_F64;
  if (t.isF16())
    return TCC_DTYPE_F16;
  if (t.isBF16())
    return TCC_DTYPE_BF16;
  if (t.isInteger(1))
    return TCC_DTYPE_BOOL;
  auto i = dyn_cast<IntegerType>(t);
  if (!i)
    return TCC_DTYPE_INVALID;
  bool u = i.isUnsigned();
  switch (i.getWidth()) {
  case 8:
    return u ? TCC_DTYPE_U8 : TCC_DTYPE_I8;
  case 16:
    return u ? TCC_DTYPE_U16 : TCC_DTYPE_I16;
  case 32:
    return u ? TCC_DTYPE_U32 : TCC_DTYPE_I32;
  case 64:
    return u ? TCC_DTYPE_U64 : TCC_DTYPE_I64;
  default:
    return TCC_DTYPE_INVALID;
  }
}

StringRef tcc::dtypeName(int32_t dtype) {
  switch (dtype) {
  case TCC_DTYPE_F32:
    return "float32";
  case TCC_DTYPE_U8:
    return "uint8";
  case TCC_DTYPE_I8:
    return "int8";
  case TCC_DTYPE_U16:
    return "uint16";
  case TCC_DTYPE_I16:
    return "int16";
  case TCC_DTYPE_I32:
    return "int32";
  case TCC_DTYPE_I64:
    return "int64";
  case TCC_DTYPE_BOOL:
    return "bool";
  case TCC_DTYPE_F16:
    return "float16";
  case TCC_DTYPE_F64:
    return "float64";
  case TCC_DTYPE_U32:
    return "uint32";
  case TCC_DTYPE_U64:
    return "uint64";
  case TCC_DTYPE_BF16:
    return "bfloat16";
  default:
    return "invalid";
  }
}

/// The C type a header uses for one element of `dtype`.
static StringRef cTypeOf(int32_t dtype) {
  switch (dtype) {
  case TCC_DTYPE_F32:
    return "float";
  case TCC_DTYPE_F64:
    return "double";
  case TCC_DTYPE_U8:
  case TCC_DTYPE_BOOL:
    return "uint8_t";
  case TCC_DTYPE_I8:
    return "int8_t";
  case TCC_DTYPE_U16:
  case TCC_DTYPE_F16:
  case TCC_DTYPE_BF16:
    return "uint16_t";
  case TCC_DTYPE_I16:
    return "int16_t";
  case TCC_DTYPE_I32:
    return "int32_t";
  case TCC_DTYPE_I64:
    return "int64_t";
  case TCC_DTYPE_U32:
    return "uint32_t";
  case TCC_DTYPE_U64:
    return "uint64_t";
  default:
    return "void";
  }
}

FailureOr<ArtifactInfo> tcc::describeArtifact(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return module.emitError() << "the module has no @main function";
  ArtifactInfo info;
  if (auto name = module->getAttrOfType<StringAttr>("tcc.model_name"))
    info.modelName = name.str();
  auto describe = [&](Type type, DictionaryAttr attrs, const Twine &fallback,
                      std::vector<TensorInfo> &out) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return main.emitError()
             << "the interface tensor '" << fallback << "' has type " << type
             << "; artifacts need statically shaped tensors "
                "(fix dynamic dimensions with --input-shape)";
    TensorInfo t;
    auto name = attrs ? attrs.getAs<StringAttr>("tcc.name") : StringAttr();
    t.name = name ? name.str() : fallback.str();
    t.dtype = dtypeOf(tensor.getElementType());
    if (!t.dtype)
      return main.emitError()
             << "tensor '" << t.name << "' has element type "
             << tensor.getElementType() << ", which artifacts cannot carry";
    t.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    out.push_back(std::move(t));
    return success();
  };
  FunctionType type = main.getFunctionType();
  for (unsigned i = 0; i < type.getNumInputs(); ++i)
    if (failed(describe(type.getInput(i), main.getArgAttrDict(i),
                        "input" + Twine(i), info.inputs)))
      return failure();
  for (unsigned i = 0; i < type.getNumResults(); ++i)
    if (failed(describe(type.getResult(i), main.getResultAttrDict(i),
                        "output" + Twine(i), info.outputs)))
      return failure();
  return info;
}

namespace {
/// Builds the constant data of the descriptor.
class DescriptorBuilder {
public:
  DescriptorBuilder(llvm::Module &module, StringRef prefix)
      : module(module), ctx(module.getContext()), prefix(prefix),
        ptr(llvm::PointerType::get(ctx, 0)), i32(llvm::Type::getInt32Ty(ctx)),
        i64(llvm::Type::getInt64Ty(ctx)) {
    tensorType = llvm::StructType::create(ctx, {ptr, i32, i32, ptr},
                                          "tcc_tensor_desc_t");
    descType = llvm::StructType::create(
        ctx, {i32, i32, ptr, ptr, ptr, i32, i32, ptr, ptr, i64, i64, ptr},
        "tcc_artifact_desc_t");
  }

  llvm::Constant *global(llvm::Constant *init, const Twine &name) {
    return new llvm::GlobalVariable(
        module, init->getType(), /*isConstant=*/true,
        llvm::GlobalValue::PrivateLinkage, init, prefix + "." + name);
  }

  llvm::Constant *string(StringRef s, const Twine &name) {
    return global(llvm::ConstantDataArray::getString(ctx, s), name);
  }

  llvm::Constant *tensors(const std::vector<TensorInfo> &list, StringRef kind) {
    if (list.empty())
      return llvm::ConstantPointerNull::get(ptr);
    std::vector<llvm::Constant *> entries;
    for (auto [i, t] : llvm::enumerate(list)) {
      SmallVector<uint64_t> dims(t.shape.begin(), t.shape.end());
      llvm::Constant *shape =
          dims.empty() ? static_cast<llvm::Constant *>(
                             llvm::ConstantPointerNull::get(ptr))
                       : global(llvm::ConstantDataArray::get(ctx, dims),
                                kind + Twine(i) + ".shape");
      entries.push_back(llvm::ConstantStruct::get(
          tensorType, {string(t.name, kind + Twine(i) + ".name"),
                       llvm::ConstantInt::get(i32, t.dtype),
                       llvm::ConstantInt::get(i32, t.shape.size()), shape}));
    }
    return global(
        llvm::ConstantArray::get(
            llvm::ArrayType::get(tensorType, entries.size()), entries),
        kind);
  }

  llvm::Module &module;
  llvm::LLVMContext &ctx;
  std::string prefix;
  llvm::PointerType *ptr;
  llvm::IntegerType *i32, *i64;
  llvm::StructType *tensorType, *descType;
};
} // namespace

LogicalResult tcc::addArtifactEntry(llvm::Module &module,
                                    const ArtifactInfo &info,
                                    StringRef graphFunction,
                                    bool exportGenericGetter,
                                    std::string &error) {
  llvm::Function *graph = module.getFunction(graphFunction);
  size_t tensors = info.inputs.size() + info.outputs.size();
  size_t arity = tensors + (info.workspaceBytes > 0);
  if (!graph || graph->arg_size() != arity) {
    error = "internal error: the compiled graph '" + graphFunction.str() +
            "' does not take one pointer per input and output (and the "
            "workspace)";
    return failure();
  }
  // Only the getters are visible from outside.
  for (llvm::Function &f : module)
    if (!f.isDeclaration())
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable &g : module.globals())
    if (!g.isDeclaration())
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
  graph->setName(info.symbolPrefix + "_graph");

  DescriptorBuilder d(module, info.symbolPrefix);
  llvm::LLVMContext &ctx = module.getContext();

  // int32_t run(const tcc_run_args_t *args): unpack the pointer arrays and
  // call the graph with bare pointers.
  auto *runType = llvm::FunctionType::get(d.i32, {d.ptr}, false);
  auto *run =
      llvm::Function::Create(runType, llvm::GlobalValue::InternalLinkage,
                             info.symbolPrefix + "_run_entry", module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", run));
  llvm::Value *args = run->getArg(0);
  auto *argsType = llvm::StructType::get(ctx, {d.ptr, d.ptr, d.ptr, d.ptr});
  // The caller's thread pool reaches the micro-kernels for this run. The
  // kernels are linked in later as an object, so the module only declares
  // the entry points it calls: declare the setter beside them.
  llvm::Function *setHost = nullptr;
  if (llvm::any_of(module.functions(), [](const llvm::Function &f) {
        return f.isDeclaration() && (f.getName().starts_with("tcc_ukabi_") ||
                                     f.getName().starts_with("__kmpc_"));
      }))
    setHost = llvm::cast<llvm::Function>(
        module
            .getOrInsertFunction(
                "tcc_ukabi_set_host",
                llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {d.ptr},
                                        false))
            .getCallee());
  if (setHost)
    b.CreateCall(setHost,
                 {b.CreateLoad(d.ptr, b.CreateStructGEP(argsType, args, 3))});
  llvm::Value *ins = b.CreateLoad(d.ptr, b.CreateStructGEP(argsType, args, 0));
  llvm::Value *outs = b.CreateLoad(d.ptr, b.CreateStructGEP(argsType, args, 1));
  SmallVector<llvm::Value *> callArgs;
  for (size_t i = 0; i < tensors; ++i) {
    bool isInput = i < info.inputs.size();
    size_t index = isInput ? i : i - info.inputs.size();
    llvm::Value *slot =
        b.CreateConstGEP1_64(d.ptr, isInput ? ins : outs, index);
    callArgs.push_back(b.CreateLoad(d.ptr, slot));
  }
  if (info.workspaceBytes > 0)
    callArgs.push_back(
        b.CreateLoad(d.ptr, b.CreateStructGEP(argsType, args, 2)));
  b.CreateCall(graph, callArgs);
  if (setHost)
    b.CreateCall(setHost, {llvm::ConstantPointerNull::get(d.ptr)});
  b.CreateRet(llvm::ConstantInt::get(d.i32, 0));

  llvm::Constant *desc = d.global(
      llvm::ConstantStruct::get(
          d.descType,
          {llvm::ConstantInt::get(d.i32, 1 /*TCC_ABI_VERSION*/),
           llvm::ConstantInt::get(d.i32, 0),
           d.string(TCC_VERSION_STRING, "version"),
           d.string(info.target, "target"),
           d.string(info.modelName, "model_name"),
           llvm::ConstantInt::get(d.i32, info.inputs.size()),
           llvm::ConstantInt::get(d.i32, info.outputs.size()),
           d.tensors(info.inputs, "inputs"), d.tensors(info.outputs, "outputs"),
           llvm::ConstantInt::get(d.i64, info.workspaceBytes),
           llvm::ConstantInt::get(d.i64, info.workspaceAlign), run}),
      "desc");

  auto addGetter = [&](const Twine &name) {
    auto *getter = llvm::Function::Create(llvm::FunctionType::get(d.ptr, false),
                                          llvm::GlobalValue::ExternalLinkage,
                                          name, module);
    llvm::IRBuilder<> gb(llvm::BasicBlock::Create(ctx, "entry", getter));
    gb.CreateRet(desc);
  };
  addGetter(info.symbolPrefix + "_artifact_get");
  if (exportGenericGetter && info.symbolPrefix != "tcc")
    addGetter("tcc_artifact_get");
  return success();
}

/// A C identifier from a tensor name, unique within `used`.
static std::string cIdentifier(StringRef name, llvm::StringSet<> &used) {
  static const llvm::StringSet<> keywords = {
      "auto",     "break",    "case",     "char",   "const",   "continue",
      "default",  "do",       "double",   "else",   "enum",    "extern",
      "float",    "for",      "goto",     "if",     "inline",  "int",
      "long",     "register", "restrict", "return", "short",   "signed",
      "sizeof",   "static",   "struct",   "switch", "typedef", "union",
      "unsigned", "void",     "volatile", "while",  "bool",    "true",
      "false",    "class",    "new",      "delete", "this",    "operator",
      "template", "typename", "private",  "public", "nullptr", "asm"};
  std::string id;
  for (char c : name)
    id += llvm::isAlnum(c) ? c : '_';
  // Keywords, names reserved to the implementation (__x, _X) and the
  // header's own tcc_ names would not compile as parameters.
  if (id.empty() || llvm::isDigit(id[0]) || keywords.contains(id) ||
      StringRef(id).starts_with("tcc_") || StringRef(id).starts_with("__") ||
      (id[0] == '_' && id.size() > 1 && llvm::isUpper(id[1])))
    id = "t_" + id;
  std::string unique = id;
  for (int i = 1; !used.insert(unique).second; ++i)
    unique = id + "_" + std::to_string(i);
  return unique;
}

/// Text from the model (names are hostile input) made safe inside a C
/// comment: no control characters, no "*/" that would end the comment and
/// let the rest become code, and no "/*" that compilers warn about.
static std::string commentText(StringRef text) {
  std::string out;
  for (char c : text) {
    if ((unsigned char)c < 0x20 || c == 0x7f)
      c = '?';
    if (!out.empty() &&
        ((c == '/' && out.back() == '*') || (c == '*' && out.back() == '/')))
      out += ' ';
    out += c;
  }
  return out;
}

std::string tcc::artifactHeader(const ArtifactInfo &info, StringRef source) {
  std::string upper = StringRef(info.symbolPrefix).upper();
  const std::string &p = info.symbolPrefix;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "/* " << p << ".h - generated by tcc " << TCC_VERSION_STRING << " from "
     << commentText(source) << " for " << commentText(info.target) << ". */\n"
     << "#ifndef TCC_GENERATED_" << upper << "_H\n#define TCC_GENERATED_"
     << upper << "_H\n\n"
     << kAbiHeader << "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  auto list = [&](StringRef kind, const std::vector<TensorInfo> &tensors) {
    os << " * " << kind << ":\n";
    for (auto [i, t] : llvm::enumerate(tensors)) {
      os << " *   " << i << " \"" << commentText(t.name)
         << "\": " << dtypeName(t.dtype) << "[";
      llvm::interleave(t.shape, os, ",");
      os << "]\n";
    }
  };
  os << "/* Model \"" << commentText(info.modelName) << "\".\n";
  list("Inputs", info.inputs);
  list("Outputs", info.outputs);
  os << " */\n#define " << upper << "_NUM_INPUTS " << info.inputs.size()
     << "\n#define " << upper << "_NUM_OUTPUTS " << info.outputs.size()
     << "\n#define " << upper << "_WORKSPACE_BYTES " << info.workspaceBytes
     << "u\n\nconst tcc_artifact_desc_t *" << p << "_artifact_get(void);\n\n";

  llvm::StringSet<> used = {"workspace", "inputs", "outputs", "args"};
  std::vector<std::string> inNames, outNames;
  for (const TensorInfo &t : info.inputs)
    inNames.push_back(cIdentifier(t.name, used));
  for (const TensorInfo &t : info.outputs)
    outNames.push_back(cIdentifier(t.name, used));
  os << "/* Runs the model once on the calling thread. Each buffer holds its\n"
        " * whole tensor, dense and row-major, aligned to 64 bytes; workspace\n"
        " * holds "
     << upper
     << "_WORKSPACE_BYTES bytes (NULL when that is 0).\n"
        " * Returns 0 on success. */\nstatic inline int32_t "
     << p << "_run(";
  for (auto [i, t] : llvm::enumerate(info.inputs))
    os << "const " << cTypeOf(t.dtype) << " *" << inNames[i] << ", ";
  for (auto [i, t] : llvm::enumerate(info.outputs))
    os << cTypeOf(t.dtype) << " *" << outNames[i] << ", ";
  os << "void *workspace) {\n";
  auto array = [&](StringRef name, const std::vector<std::string> &ids) {
    os << "  void *const " << name << "[] = {";
    if (ids.empty())
      os << "0";
    for (auto [i, id] : llvm::enumerate(ids))
      os << (i ? ", " : "") << "(void *)" << id;
    os << "};\n";
  };
  array("inputs", inNames);
  array("outputs", outNames);
  os << "  tcc_run_args_t args = {inputs, outputs, workspace, 0};\n"
     << "  return " << p << "_artifact_get()->run(&args);\n}\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return s;
}
