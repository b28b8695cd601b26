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
  ArtifactInfo info;
  // A dynamic batch: the interface of its largest slab, with the leading
  // dimension of the batched tensors made the symbol's (index 0). A padded
  // dimension: the largest bucket's, its dimensions the symbol's (after
  // the batch's). Both: the largest slab of the largest bucket.
  auto batch = module->getAttrOfType<DictionaryAttr>("tcc.batch");
  auto padded = module->getAttrOfType<DictionaryAttr>("tcc.padded");
  ArrayAttr batchedInputs, batchedOutputs, paddedInputs, paddedOutputs;
  std::string mainName = "main";
  if (padded) {
    auto buckets = padded.getAs<DenseI64ArrayAttr>("buckets");
    paddedInputs = padded.getAs<ArrayAttr>("inputs");
    paddedOutputs = padded.getAs<ArrayAttr>("outputs");
    if (!buckets || buckets.empty() || !padded.getAs<StringAttr>("name") ||
        !padded.getAs<IntegerAttr>("min") ||
        !padded.getAs<IntegerAttr>("max") || !paddedInputs || !paddedOutputs)
      return module.emitError() << "malformed tcc.padded attribute " << padded;
    info.buckets.assign(buckets.asArrayRef().begin(),
                        buckets.asArrayRef().end());
    mainName += "_pad" + std::to_string(info.buckets.front());
  }
  if (batch) {
    auto chunks = batch.getAs<DenseI64ArrayAttr>("chunks");
    auto name = batch.getAs<StringAttr>("name");
    auto lo = batch.getAs<IntegerAttr>("min");
    auto hi = batch.getAs<IntegerAttr>("max");
    batchedInputs = batch.getAs<ArrayAttr>("inputs");
    batchedOutputs = batch.getAs<ArrayAttr>("outputs");
    if (!chunks || chunks.empty() || !name || !lo || !hi || !batchedInputs ||
        !batchedOutputs)
      return module.emitError() << "malformed tcc.batch attribute " << batch;
    info.chunks.assign(chunks.asArrayRef().begin(), chunks.asArrayRef().end());
    info.symbols.push_back({name.str(), lo.getInt(), hi.getInt()});
    mainName += "_chunk" + std::to_string(info.chunks.front());
  }
  bool computed = padded && padded.get("computed");
  // Sizes the graph computes: one symbol each (their order is the order of
  // the sizes the graph returns last).
  unsigned numComputed = 0;
  ArrayAttr outputSymbols;
  if (computed) {
    auto names = padded.getAs<ArrayAttr>("computed_names");
    auto maxima = padded.getAs<DenseI64ArrayAttr>("computed_max");
    outputSymbols = padded.getAs<ArrayAttr>("output_symbols");
    if (!names || !maxima || names.size() != maxima.size() || names.empty() ||
        !outputSymbols)
      return module.emitError() << "malformed tcc.padded attribute " << padded;
    for (auto [name, max] : llvm::zip_equal(names, maxima.asArrayRef())) {
      auto s = dyn_cast<StringAttr>(name);
      if (!s)
        return module.emitError()
               << "malformed tcc.padded attribute " << padded;
      info.symbols.push_back({s.str(), 0, max, true});
    }
    numComputed = names.size();
  } else if (padded) {
    info.symbols.push_back({padded.getAs<StringAttr>("name").str(),
                            padded.getAs<IntegerAttr>("min").getInt(),
                            padded.getAs<IntegerAttr>("max").getInt()});
  }
  func::FuncOp main = module.lookupSymbol<func::FuncOp>(mainName);
  if (!main)
    return module.emitError()
           << "the module has no @" << mainName << " function";
  if (auto name = module->getAttrOfType<StringAttr>("tcc.model_name"))
    info.modelName = name.str();
  auto batched = [&](ArrayAttr flags, unsigned i) {
    auto flag =
        flags && i < flags.size() ? dyn_cast<BoolAttr>(flags[i]) : BoolAttr();
    return flag && flag.getValue();
  };
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
    // Booleans take a byte.
    t.elementBytes = (tensor.getElementTypeBitWidth() + 7) / 8;
    out.push_back(std::move(t));
    return success();
  };
  FunctionType type = main.getFunctionType();
  auto makeSymbolic = [](TensorInfo &t) {
    t.shape[0] = -1;
    t.symbols.assign(t.shape.size(), -1);
    t.symbols[0] = 0;
  };
  // The padded dimensions of tensor `i` of `list` (tcc.padded), with the
  // symbols of the sizes the graph computes from `syms` (else the one
  // padded symbol's).
  int32_t paddedSymbol = info.symbols.size() - std::max(numComputed, 1u);
  auto makePadded = [&](TensorInfo &t, ArrayAttr list, unsigned i,
                        ArrayAttr syms = {}) -> LogicalResult {
    auto dims = list && i < list.size() ? dyn_cast<DenseI64ArrayAttr>(list[i])
                                        : DenseI64ArrayAttr();
    if (!dims || dims.empty())
      return success();
    auto which = syms && i < syms.size() ? dyn_cast<DenseI64ArrayAttr>(syms[i])
                                         : DenseI64ArrayAttr();
    if (syms && (!which || which.size() != dims.size()))
      return module.emitError() << "malformed tcc.padded attribute " << padded;
    if (t.symbols.empty())
      t.symbols.assign(t.shape.size(), -1);
    for (auto [k, d] : llvm::enumerate(dims.asArrayRef())) {
      int64_t sym = which ? which[k] : 0;
      if (d < 0 || d >= int64_t(t.shape.size()) || sym < 0 ||
          sym >= int64_t(std::max(numComputed, 1u)))
        return module.emitError()
               << "malformed tcc.padded attribute " << padded;
      t.shape[d] = -1;
      t.symbols[d] = paddedSymbol + sym;
    }
    return success();
  };
  // A padded graph's last input is the run's size, not a tensor of the
  // interface; a computed size is its last result instead.
  unsigned inputs = type.getNumInputs() - (paddedInputs && !computed ? 1 : 0);
  for (unsigned i = 0; i < inputs; ++i) {
    if (failed(describe(type.getInput(i), main.getArgAttrDict(i),
                        "input" + Twine(i), info.inputs)))
      return failure();
    if (batched(batchedInputs, i))
      makeSymbolic(info.inputs.back());
    if (failed(makePadded(info.inputs.back(), paddedInputs, i)))
      return failure();
  }
  for (unsigned i = 0; i < type.getNumResults() - numComputed; ++i) {
    if (failed(describe(type.getResult(i), main.getResultAttrDict(i),
                        "output" + Twine(i), info.outputs)))
      return failure();
    if (batched(batchedOutputs, i))
      makeSymbolic(info.outputs.back());
    if (failed(
            makePadded(info.outputs.back(), paddedOutputs, i, outputSymbols)))
      return failure();
  }
  return info;
}

uint64_t ArtifactInfo::bytesAt(const TensorInfo &t,
                               ArrayRef<int64_t> symbolSizes) {
  uint64_t bytes = t.elementBytes;
  for (auto [d, size] : llvm::enumerate(t.shape))
    bytes *= size < 0 ? symbolSizes[t.symbols[d]] : size;
  return bytes;
}

bool ArtifactInfo::isPadded(const TensorInfo &t) const {
  // (The padded symbol, or the sizes the graph computes, come after the
  // batch's.)
  int32_t first = chunks.empty() ? 0 : 1;
  return !buckets.empty() &&
         llvm::any_of(t.symbols, [&](int32_t s) { return s >= first; });
}

uint64_t ArtifactInfo::stagingBytes(int64_t bucket,
                                    SmallVectorImpl<uint64_t> *offsets) const {
  // Staged a slab at a time: the largest slab of a batch beside it; sizes
  // the graph computes, at their bounds.
  SmallVector<int64_t> sizes;
  for (auto [k, s] : llvm::enumerate(symbols))
    sizes.push_back(k == 0 && !chunks.empty() ? chunks.front()
                    : s.computed              ? s.max
                                              : bucket);
  uint64_t at = 0;
  for (const TensorInfo &t : llvm::concat<const TensorInfo>(inputs, outputs)) {
    bool staged = isPadded(t);
    if (offsets)
      offsets->push_back(staged ? at : 0);
    if (staged)
      at += llvm::alignTo(bytesAt(t, sizes), workspaceAlign);
  }
  return at;
}

void ArtifactInfo::setArena(uint64_t bytes) {
  arenaBytes = bytes;
  workspaceBytes = bytes;
  if (!buckets.empty())
    workspaceBytes =
        llvm::alignTo(bytes, workspaceAlign) + stagingBytes(buckets.front());
}

namespace {
/// Builds the constant data of the descriptor.
class DescriptorBuilder {
public:
  DescriptorBuilder(llvm::Module &module, StringRef prefix)
      : module(module), ctx(module.getContext()), prefix(prefix),
        ptr(llvm::PointerType::get(ctx, 0)), i32(llvm::Type::getInt32Ty(ctx)),
        i64(llvm::Type::getInt64Ty(ctx)) {
    tensorType = llvm::StructType::create(ctx, {ptr, i32, i32, ptr, ptr},
                                          "tcc_tensor_desc_t");
    symbolType = llvm::StructType::create(ctx, {ptr, i64, i64, i32},
                                          "tcc_symbol_desc_t");
    descType = llvm::StructType::create(ctx,
                                        {i32, i32, ptr, ptr, ptr, i32, i32, ptr,
                                         ptr, i64, i64, ptr, i32, ptr, ptr},
                                        "tcc_artifact_desc_t");
  }

  llvm::Constant *global(llvm::Constant *init, const Twine &name) {
    return new llvm::GlobalVariable(
        module, init->getType(), /*isConstant=*/true,
        llvm::GlobalValue::PrivateLinkage, init, prefix + "." + name);
  }

  /// A global array of `values`, or null when there are none.
  template <typename T>
  llvm::Constant *arrayOrNull(ArrayRef<T> values, const Twine &name) {
    if (values.empty())
      return llvm::ConstantPointerNull::get(ptr);
    return global(llvm::ConstantDataArray::get(ctx, values), name);
  }

  llvm::Constant *string(StringRef s, const Twine &name) {
    return global(llvm::ConstantDataArray::getString(ctx, s), name);
  }

  llvm::Constant *tensors(const std::vector<TensorInfo> &list, StringRef kind) {
    if (list.empty())
      return llvm::ConstantPointerNull::get(ptr);
    std::vector<llvm::Constant *> entries;
    for (auto [i, t] : llvm::enumerate(list)) {
      llvm::Constant *shape = arrayOrNull<uint64_t>(
          SmallVector<uint64_t>(t.shape.begin(), t.shape.end()),
          kind + Twine(i) + ".shape");
      llvm::Constant *symbols = arrayOrNull<uint32_t>(
          SmallVector<uint32_t>(t.symbols.begin(), t.symbols.end()),
          kind + Twine(i) + ".symbols");
      entries.push_back(llvm::ConstantStruct::get(
          tensorType,
          {string(t.name, kind + Twine(i) + ".name"),
           llvm::ConstantInt::get(i32, t.dtype),
           llvm::ConstantInt::get(i32, t.shape.size()), shape, symbols}));
    }
    return global(
        llvm::ConstantArray::get(
            llvm::ArrayType::get(tensorType, entries.size()), entries),
        kind);
  }

  llvm::Constant *symbols(const std::vector<SymbolInfo> &list) {
    if (list.empty())
      return llvm::ConstantPointerNull::get(ptr);
    std::vector<llvm::Constant *> entries;
    for (auto [i, s] : llvm::enumerate(list))
      entries.push_back(llvm::ConstantStruct::get(
          symbolType, {string(s.name, "symbol" + Twine(i) + ".name"),
                       llvm::ConstantInt::get(i64, s.min),
                       llvm::ConstantInt::get(i64, s.max),
                       llvm::ConstantInt::get(i32, s.computed ? 1 : 0)}));
    return global(
        llvm::ConstantArray::get(
            llvm::ArrayType::get(symbolType, entries.size()), entries),
        "symbols");
  }

  llvm::Module &module;
  llvm::LLVMContext &ctx;
  std::string prefix;
  llvm::PointerType *ptr;
  llvm::IntegerType *i32, *i64;
  llvm::StructType *tensorType, *symbolType, *descType;
};
} // namespace

namespace {
/// What the run entry of a CUDA artifact needs of its CUDA entry points.
struct CudaEntryPoints {
  llvm::GlobalVariable *tls = nullptr; ///< the running thread's host API
  llvm::StructType *apiType = nullptr; ///< tcc_cuda_api_t
  llvm::Value *weights = nullptr;      ///< loaded in the run entry
};
} // namespace

/// tcc_host_api_t as LLVM sees it, up to `cuda`.
static llvm::StructType *hostApiType(llvm::LLVMContext &ctx, llvm::Type *ptr) {
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  return llvm::StructType::get(ctx, {i32, i32, ptr, ptr, ptr, ptr});
}

/// host->cuda, or null when `host` is null or too old to have it.
static llvm::Value *cudaApiOf(llvm::IRBuilder<> &b, llvm::Value *host,
                              llvm::Type *ptr) {
  llvm::LLVMContext &ctx = b.getContext();
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::StructType *hostType = hostApiType(ctx, ptr);
  llvm::BasicBlock *from = b.GetInsertBlock();
  auto *check = llvm::BasicBlock::Create(ctx, "host_size", f);
  auto *load = llvm::BasicBlock::Create(ctx, "host_cuda", f);
  auto *done = llvm::BasicBlock::Create(ctx, "host_done", f);
  b.CreateCondBr(b.CreateIsNull(host), done, check);
  b.SetInsertPoint(check);
  const llvm::DataLayout &layout = f->getParent()->getDataLayout();
  uint64_t needed = layout.getStructLayout(hostType)->getSizeInBytes();
  llvm::Value *size = b.CreateLoad(b.getInt32Ty(), host);
  b.CreateCondBr(b.CreateICmpUGE(size, b.getInt32(needed)), load, done);
  b.SetInsertPoint(load);
  llvm::Value *api = b.CreateLoad(ptr, b.CreateStructGEP(hostType, host, 5));
  b.CreateBr(done);
  b.SetInsertPoint(done);
  llvm::PHINode *phi = b.CreatePHI(ptr, 3);
  llvm::Constant *null =
      llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(ptr));
  phi->addIncoming(null, from);
  phi->addIncoming(null, check);
  phi->addIncoming(api, load);
  return phi;
}

/// host->cuda, returning 3 from the function being built when there is
/// none; `b` continues where it is present.
static llvm::Value *requireCudaApi(llvm::IRBuilder<> &b, llvm::Value *host,
                                   llvm::Type *ptr) {
  llvm::LLVMContext &ctx = b.getContext();
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::Value *api = cudaApiOf(b, host, ptr);
  auto *ready = llvm::BasicBlock::Create(ctx, "cuda_ready", f);
  auto *missing = llvm::BasicBlock::Create(ctx, "no_cuda", f);
  b.CreateCondBr(b.CreateIsNull(api), missing, ready);
  llvm::IRBuilder<>(missing).CreateRet(b.getInt32(3));
  b.SetInsertPoint(ready);
  return api;
}

/// Defines the functions the CUDA host code calls (declared by the
/// pipeline): each forwards to the thread's tcc_cuda_api_t.
static CudaEntryPoints defineCudaEntryPoints(llvm::Module &module,
                                             llvm::PointerType *ptr) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *f32 = llvm::Type::getFloatTy(ctx);
  CudaEntryPoints e;
  e.tls = new llvm::GlobalVariable(
      module, ptr, false, llvm::GlobalValue::InternalLinkage,
      llvm::ConstantPointerNull::get(ptr), "tcc_cuda_host", nullptr,
      llvm::GlobalValue::GeneralDynamicTLSModel);
  // struct_size, self, weights, launch, gemm, copy_h2d.
  e.apiType = llvm::StructType::get(ctx, {i32, ptr, ptr, ptr, ptr, ptr});
  auto define = [&](StringRef name, unsigned field,
                    function_ref<void(llvm::IRBuilder<> &, llvm::Function *,
                                      SmallVectorImpl<llvm::Value *> &)>
                        convert,
                    llvm::FunctionType *calleeType) {
    llvm::Function *f = module.getFunction(name);
    if (!f || !f->isDeclaration())
      return;
    f->setLinkage(llvm::GlobalValue::InternalLinkage);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
    llvm::Value *host = b.CreateLoad(ptr, e.tls);
    llvm::Value *api =
        b.CreateLoad(ptr, b.CreateStructGEP(hostApiType(ctx, ptr), host, 5));
    llvm::Value *self = b.CreateLoad(ptr, b.CreateStructGEP(e.apiType, api, 1));
    llvm::Value *fn =
        b.CreateLoad(ptr, b.CreateStructGEP(e.apiType, api, field));
    SmallVector<llvm::Value *> args = {self};
    convert(b, f, args);
    b.CreateCall(calleeType, fn, args);
    b.CreateRetVoid();
  };
  // tcc_cuda_launch(kernel, gx, gy, gz, bx, by, bz, slots, count): i64s.
  define(
      "tcc_cuda_launch", 3,
      [&](llvm::IRBuilder<> &b, llvm::Function *f,
          SmallVectorImpl<llvm::Value *> &args) {
        for (unsigned i = 0; i < 7; ++i)
          args.push_back(b.CreateTrunc(f->getArg(i), i32));
        args.push_back(b.CreateIntToPtr(f->getArg(7), ptr));
        args.push_back(b.CreateTrunc(f->getArg(8), i32));
      },
      llvm::FunctionType::get(
          i32, {ptr, i32, i32, i32, i32, i32, i32, i32, ptr, i32}, false));
  // tcc_cuda_gemm: the same arguments after self.
  define(
      "tcc_cuda_gemm", 4,
      [&](llvm::IRBuilder<> &, llvm::Function *f,
          SmallVectorImpl<llvm::Value *> &args) {
        for (llvm::Argument &a : f->args())
          args.push_back(&a);
      },
      llvm::FunctionType::get(i32,
                              {ptr, i32, i32, i64, i64, i64, i64, i64, i64, i64,
                               i64, i64, i64, i64, i64, i64, f32},
                              false));
  // tcc_cuda_h2d(dst, src, bytes): addresses as integers.
  define(
      "tcc_cuda_h2d", 5,
      [&](llvm::IRBuilder<> &b, llvm::Function *f,
          SmallVectorImpl<llvm::Value *> &args) {
        args.push_back(b.CreateIntToPtr(f->getArg(0), ptr));
        args.push_back(b.CreateIntToPtr(f->getArg(1), ptr));
        args.push_back(f->getArg(2));
      },
      llvm::FunctionType::get(i32, {ptr, ptr, ptr, i64}, false));
  return e;
}

/// The tcc_cuda_image_t of a CUDA artifact (null for a CPU one), with its
/// upload_weights function.
template <typename Builder>
static llvm::Constant *cudaImage(llvm::Module &module, Builder &d,
                                 const ArtifactInfo &info,
                                 const CudaEntryPoints &cuda) {
  if (info.cudaArch.empty())
    return llvm::ConstantPointerNull::get(d.ptr);
  llvm::LLVMContext &ctx = module.getContext();
  // int32_t upload_weights(const tcc_host_api_t *host, void *weights)
  auto *upload = llvm::Function::Create(
      llvm::FunctionType::get(d.i32, {d.ptr, d.ptr}, false),
      llvm::GlobalValue::InternalLinkage,
      info.symbolPrefix + "_cuda_upload_entry", module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", upload));
  llvm::Value *host = upload->getArg(0);
  requireCudaApi(b, host, d.ptr);
  if (llvm::Function *copy = module.getFunction("tcc_cuda_upload_weights")) {
    b.CreateStore(host, cuda.tls);
    b.CreateCall(copy, {upload->getArg(1)});
    b.CreateStore(llvm::ConstantPointerNull::get(d.ptr), cuda.tls);
  }
  b.CreateRet(llvm::ConstantInt::get(d.i32, 0));

  std::vector<llvm::Constant *> names;
  for (auto [i, name] : llvm::enumerate(info.cudaKernels))
    names.push_back(d.string(name, "kernel" + Twine(i)));
  llvm::Constant *nameArray =
      names.empty()
          ? llvm::ConstantPointerNull::get(d.ptr)
          : d.global(llvm::ConstantArray::get(
                         llvm::ArrayType::get(d.ptr, names.size()), names),
                     "kernels");
  auto *imageType = llvm::StructType::get(
      ctx, {d.ptr, d.ptr, d.i64, d.i32, d.ptr, d.i64, d.ptr, d.ptr, d.i64});
  llvm::Constant *cubin =
      info.cudaCubin.empty()
          ? llvm::ConstantPointerNull::get(d.ptr)
          : d.global(llvm::ConstantDataArray::getString(ctx, info.cudaCubin,
                                                        /*AddNull=*/false),
                     "cubin");
  return d.global(
      llvm::ConstantStruct::get(
          imageType,
          {d.string(info.cudaArch, "cuda_arch"), d.string(info.cudaPtx, "ptx"),
           llvm::ConstantInt::get(d.i64, info.cudaPtx.size()),
           llvm::ConstantInt::get(d.i32, names.size()), nameArray,
           llvm::ConstantInt::get(d.i64, info.cudaWeightsBytes), upload, cubin,
           llvm::ConstantInt::get(d.i64, info.cudaCubin.size())}),
      "cuda");
}

/// Copies the first `n[s]` elements along each dimension of tensor `t`
/// that symbol s sizes from `src` (those dimensions at `srcSize[s]`) to
/// `dst` (at `dstSize[s]`): one memcpy per run of elements contiguous in
/// both, the tensor's dimensions after its last symbolic one.
static void emitBoxCopy(llvm::IRBuilder<> &b, const TensorInfo &t,
                        llvm::Value *dst, ArrayRef<llvm::Value *> dstSize,
                        llvm::Value *src, ArrayRef<llvm::Value *> srcSize,
                        ArrayRef<llvm::Value *> n) {
  llvm::LLVMContext &ctx = b.getContext();
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::Type *i64 = b.getInt64Ty();
  int64_t last = -1;
  for (int64_t d = 0; d < int64_t(t.shape.size()); ++d)
    if (t.shape[d] < 0)
      last = d;
  uint64_t chunk = t.elementBytes;
  for (int64_t d = last + 1; d < int64_t(t.shape.size()); ++d)
    chunk *= t.shape[d];
  auto dim = [&](int64_t d, ArrayRef<llvm::Value *> size) -> llvm::Value * {
    return t.shape[d] < 0 ? size[t.symbols[d]]
                          : llvm::ConstantInt::get(i64, t.shape[d]);
  };
  // Byte strides of dimensions 0..last on each side, and the rows to copy.
  SmallVector<llvm::Value *> srcStride(last + 1), dstStride(last + 1);
  llvm::Value *ss = llvm::ConstantInt::get(i64, chunk), *ds = ss;
  llvm::Value *rows = llvm::ConstantInt::get(i64, 1);
  for (int64_t d = last; d >= 0; --d) {
    srcStride[d] = ss, dstStride[d] = ds;
    ss = b.CreateMul(ss, dim(d, srcSize));
    ds = b.CreateMul(ds, dim(d, dstSize));
    rows = b.CreateMul(rows, dim(d, n));
  }
  llvm::BasicBlock *pre = b.GetInsertBlock();
  auto *loop = llvm::BasicBlock::Create(ctx, "copy_row", f);
  auto *done = llvm::BasicBlock::Create(ctx, "copy_done", f);
  b.CreateCondBr(b.CreateICmpSGT(rows, llvm::ConstantInt::get(i64, 0)), loop,
                 done);
  b.SetInsertPoint(loop);
  llvm::PHINode *r = b.CreatePHI(i64, 2, "r");
  r->addIncoming(llvm::ConstantInt::get(i64, 0), pre);
  llvm::Value *rest = r;
  llvm::Value *from = llvm::ConstantInt::get(i64, 0), *to = from;
  for (int64_t d = last; d >= 0; --d) {
    llvm::Value *extent = dim(d, n);
    llvm::Value *index = d == 0 ? rest : b.CreateURem(rest, extent);
    rest = b.CreateUDiv(rest, extent);
    from = b.CreateAdd(from, b.CreateMul(index, srcStride[d]));
    to = b.CreateAdd(to, b.CreateMul(index, dstStride[d]));
  }
  b.CreateMemCpy(b.CreateGEP(b.getInt8Ty(), dst, to), llvm::MaybeAlign(1),
                 b.CreateGEP(b.getInt8Ty(), src, from), llvm::MaybeAlign(1),
                 chunk);
  llvm::Value *next = b.CreateAdd(r, llvm::ConstantInt::get(i64, 1));
  r->addIncoming(next, b.GetInsertBlock());
  b.CreateCondBr(b.CreateICmpULT(next, rows), loop, done);
  b.SetInsertPoint(done);
}

LogicalResult tcc::addArtifactEntry(llvm::Module &module,
                                    const ArtifactInfo &info,
                                    StringRef graphFunction,
                                    bool exportGenericGetter,
                                    std::string &error) {
  size_t tensors = info.inputs.size() + info.outputs.size();
  // The graph, or one per slab size of a dynamic batch (largest first).
  SmallVector<llvm::Function *> graphs;
  SmallVector<std::string> names;
  // (Buckets of a padded dimension, each in slabs of a batch beside it:
  // bucket-major, largest first.)
  SmallVector<std::string> prefixes;
  if (info.buckets.empty())
    prefixes.push_back(graphFunction.str());
  for (int64_t size : info.buckets)
    prefixes.push_back((graphFunction + "_pad" + Twine(size)).str());
  for (const std::string &prefix : prefixes) {
    if (info.chunks.empty())
      names.push_back(prefix);
    for (int64_t rows : info.chunks)
      names.push_back(prefix + "_chunk" + std::to_string(rows));
  }
  for (const std::string &name : names) {
    llvm::Function *graph = module.getFunction(name);
    // Each takes its workspace only if its plan has buffers (and a CUDA
    // graph its weight buffer last).
    // (and a padded graph the run's size after its inputs, or the sizes it
    // computes after its outputs).
    size_t computedSizes = llvm::count_if(
        info.symbols, [](const SymbolInfo &s) { return s.computed; });
    size_t extra =
        (info.cudaArch.empty() ? 0 : 1) +
        (info.buckets.empty() ? 0 : std::max<size_t>(computedSizes, 1));
    if (!graph || (graph->arg_size() != tensors + extra &&
                   !(info.workspaceBytes > 0 &&
                     graph->arg_size() == tensors + extra + 1))) {
      error = "internal error: the compiled graph '" + name +
              "' does not take one pointer per input and output (and the "
              "workspace)";
      return failure();
    }
    graphs.push_back(graph);
  }
  // Only the getters are visible from outside.
  for (llvm::Function &f : module)
    if (!f.isDeclaration())
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable &g : module.globals())
    if (!g.isDeclaration())
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (auto [i, graph] : llvm::enumerate(graphs))
    graph->setName(info.symbolPrefix + "_graph" +
                   names[i].substr(graphFunction.size()));

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
  auto *argsType =
      llvm::StructType::get(ctx, {d.ptr, d.ptr, d.ptr, d.ptr, d.ptr});
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
  // A CUDA graph reaches the caller's device services through a
  // thread-local pointer to them (runs on several threads stay apart).
  CudaEntryPoints cuda;
  if (!info.cudaArch.empty()) {
    cuda = defineCudaEntryPoints(module, d.ptr);
    llvm::Value *host =
        b.CreateLoad(d.ptr, b.CreateStructGEP(argsType, args, 3));
    llvm::Value *api = requireCudaApi(b, host, d.ptr);
    b.CreateStore(host, cuda.tls);
    cuda.weights = b.CreateLoad(d.ptr, b.CreateStructGEP(cuda.apiType, api, 2));
  }
  llvm::Value *ins = b.CreateLoad(d.ptr, b.CreateStructGEP(argsType, args, 0));
  llvm::Value *outs = b.CreateLoad(d.ptr, b.CreateStructGEP(argsType, args, 1));
  SmallVector<llvm::Value *> pointers;
  SmallVector<const TensorInfo *> described;
  for (size_t i = 0; i < tensors; ++i) {
    bool isInput = i < info.inputs.size();
    size_t index = isInput ? i : i - info.inputs.size();
    llvm::Value *slot =
        b.CreateConstGEP1_64(d.ptr, isInput ? ins : outs, index);
    pointers.push_back(b.CreateLoad(d.ptr, slot));
    described.push_back(isInput ? &info.inputs[index] : &info.outputs[index]);
  }
  llvm::Value *workspace =
      b.CreateLoad(d.ptr, b.CreateStructGEP(argsType, args, 2));
  auto finish = [&](llvm::IRBuilder<> &fb, int32_t code) {
    if (setHost)
      fb.CreateCall(setHost, {llvm::ConstantPointerNull::get(d.ptr)});
    if (cuda.tls)
      fb.CreateStore(llvm::ConstantPointerNull::get(d.ptr), cuda.tls);
    fb.CreateRet(llvm::ConstantInt::get(d.i32, code));
  };
  auto constant = [&](int64_t v) { return llvm::ConstantInt::get(d.i64, v); };
  bool hasBatch = !info.chunks.empty(), hasPad = !info.buckets.empty();
  // Sizes the graph computes (one bucket, returning them last).
  bool computed = !info.symbols.empty() && info.symbols.back().computed;
  // A padded graph takes the run's size (a tensor<i64>) after its inputs.
  llvm::Value *nSlot =
      hasPad ? b.CreateAlloca(d.i64, nullptr, "padded_size") : nullptr;
  // The computed sizes' slots (the first is nSlot), in symbol order.
  SmallVector<llvm::Value *> computedSlots;
  size_t firstComputed = info.symbols.size();
  if (computed) {
    while (firstComputed > 0 && info.symbols[firstComputed - 1].computed)
      --firstComputed;
    computedSlots.push_back(nSlot);
    for (size_t k = firstComputed + 1; k < info.symbols.size(); ++k)
      computedSlots.push_back(b.CreateAlloca(d.i64, nullptr, "computed_size"));
  }
  // The call of `graph` on tensors at `tensorPointers`.
  auto callGraph = [&](llvm::IRBuilder<> &cb, llvm::Function *graph,
                       ArrayRef<llvm::Value *> tensorPointers) {
    SmallVector<llvm::Value *> callArgs(
        tensorPointers.take_front(info.inputs.size()));
    if (nSlot && !computed)
      callArgs.push_back(nSlot);
    llvm::append_range(callArgs, tensorPointers.drop_front(info.inputs.size()));
    if (computed) // (its last results)
      llvm::append_range(callArgs, computedSlots);
    if (graph->arg_size() > callArgs.size() + (cuda.tls ? 1 : 0))
      callArgs.push_back(workspace);
    if (cuda.tls)
      callArgs.push_back(cuda.weights);
    cb.CreateCall(graph, callArgs);
  };
  if (!hasBatch && !hasPad) {
    callGraph(b, graphs.front(), pointers);
    finish(b, 0);
  } else {
    // The symbols' sizes (the batch's first, the padded one's last), each
    // within its bounds (the runtime checks them before it calls run; a
    // size outside returns 2).
    llvm::Value *sizes =
        b.CreateLoad(d.ptr, b.CreateStructGEP(argsType, args, 4));
    auto *bad = llvm::BasicBlock::Create(ctx, "out_of_bounds", run);
    auto *check = llvm::BasicBlock::Create(ctx, "check", run);
    b.CreateCondBr(b.CreateIsNull(sizes), bad, check);
    b.SetInsertPoint(check);
    SmallVector<llvm::Value *> sym;
    llvm::Value *inBounds = b.getTrue();
    for (auto [k, s] : llvm::enumerate(info.symbols)) {
      sym.push_back(b.CreateLoad(d.i64, b.CreateConstGEP1_64(d.i64, sizes, k)));
      if (s.computed)
        continue; // (written by the run)
      inBounds = b.CreateAnd(
          inBounds, b.CreateAnd(b.CreateICmpSGE(sym.back(), constant(s.min)),
                                b.CreateICmpSLE(sym.back(), constant(s.max))));
    }
    if (nSlot)
      b.CreateStore(sym.back(), nSlot);
    auto *start = llvm::BasicBlock::Create(ctx, "start", run);
    b.CreateCondBr(inBounds, start, bad);
    // Bytes of one batch row of `t` with the symbols at `at`.
    auto rowBytes = [&](llvm::IRBuilder<> &rb, const TensorInfo &t,
                        ArrayRef<llvm::Value *> at) {
      llvm::Value *bytes = constant(t.elementBytes);
      for (size_t k = 1; k < t.shape.size(); ++k)
        bytes = rb.CreateMul(bytes, t.shape[k] < 0 ? at[t.symbols[k]]
                                                   : constant(t.shape[k]));
      return bytes;
    };
    // `p` advanced to batch row `row` of `t` (symbols at `at`).
    auto atRow = [&](llvm::IRBuilder<> &rb, llvm::Value *p, const TensorInfo &t,
                     llvm::Value *row,
                     ArrayRef<llvm::Value *> at) -> llvm::Value * {
      if (!row || !hasBatch || t.symbols.empty() || t.symbols[0] != 0)
        return p;
      return rb.CreateGEP(rb.getInt8Ty(), p,
                          rb.CreateMul(row, rowBytes(rb, t, at)));
    };
    // Runs `body` on the batch as slabs, largest first: while n - row >=
    // size, slab k of that size at `row`. From `from` (unterminated);
    // returns the block after the last slab.
    auto emitSlabs =
        [&](llvm::BasicBlock *from,
            llvm::function_ref<void(llvm::IRBuilder<> &, size_t, llvm::Value *)>
                body) {
          llvm::Value *n = sym.front(), *row = constant(0);
          auto *test = llvm::BasicBlock::Create(ctx, "slabs", run);
          llvm::IRBuilder<>(from).CreateBr(test);
          for (size_t k = 0; k < info.chunks.size(); ++k) {
            auto *slab = llvm::BasicBlock::Create(ctx, "slab", run);
            auto *next = llvm::BasicBlock::Create(ctx, "next", run);
            llvm::IRBuilder<> tb(test);
            llvm::PHINode *at = tb.CreatePHI(d.i64, 2, "row");
            at->addIncoming(row, from);
            tb.CreateCondBr(
                tb.CreateICmpSGE(tb.CreateSub(n, at), constant(info.chunks[k])),
                slab, next);
            llvm::IRBuilder<> sb(slab);
            body(sb, k, at);
            at->addIncoming(sb.CreateAdd(at, constant(info.chunks[k])),
                            sb.GetInsertBlock());
            sb.CreateBr(test);
            from = test;
            row = at;
            test = next;
          }
          return test;
        };
    if (computed) {
      // The one bucket, its outputs in the workspace after the arena; the
      // sizes it returns, reported.
      int64_t size = info.buckets.front();
      SmallVector<uint64_t> offsets;
      info.stagingBytes(size, &offsets);
      llvm::IRBuilder<> cb(start);
      llvm::Value *base = cb.CreateConstGEP1_64(
          cb.getInt8Ty(), workspace,
          llvm::alignTo(info.arenaBytes, info.workspaceAlign));
      SmallVector<llvm::Value *> staging(pointers);
      for (auto [i, t] : llvm::enumerate(described))
        if (info.isPadded(*t))
          staging[i] = cb.CreateConstGEP1_64(cb.getInt8Ty(), base, offsets[i]);
      callGraph(cb, graphs.front(), staging);
      // Each size reported (the runtime names one outside its bounds), then
      // checked against its bound.
      SmallVector<llvm::Value *> user(sym), copy(sym);
      llvm::Value *fits = cb.getTrue();
      for (auto [j, slot] : llvm::enumerate(computedSlots)) {
        size_t k = firstComputed + j;
        llvm::Value *n = cb.CreateLoad(d.i64, slot);
        cb.CreateStore(n, cb.CreateConstGEP1_64(d.i64, sizes, k));
        fits = cb.CreateAnd(
            fits,
            cb.CreateAnd(cb.CreateICmpSGE(n, constant(info.symbols[k].min)),
                         cb.CreateICmpSLE(n, constant(info.symbols[k].max))));
        user[k] = n;
        copy[k] = constant(info.symbols[k].max);
      }
      auto *report = llvm::BasicBlock::Create(ctx, "report", run);
      auto *broken = llvm::BasicBlock::Create(ctx, "size_out_of_bounds", run);
      cb.CreateCondBr(fits, report, broken);
      // The first that many of each output copied to the caller's buffers
      // (sized for the bounds).
      llvm::IRBuilder<> rb(report);
      for (auto [i, t] : llvm::enumerate(described))
        if (i >= info.inputs.size() && info.isPadded(*t))
          emitBoxCopy(rb, *t, pointers[i], user, staging[i], copy, user);
      finish(rb, 0);
      // A size past its bound: the run fails (abi.md), the outputs unset.
      llvm::IRBuilder<> xb(broken);
      finish(xb, 3);
    } else if (!hasPad) {
      // A batch: n rows as slabs, each on its rows of the batched tensors.
      llvm::BasicBlock *done = emitSlabs(
          start, [&](llvm::IRBuilder<> &sb, size_t k, llvm::Value *row) {
            SmallVector<llvm::Value *> at;
            for (auto [p, t] : llvm::zip_equal(pointers, described))
              at.push_back(atRow(sb, p, *t, row, sym));
            callGraph(sb, graphs[k], at);
          });
      llvm::IRBuilder<> db(done);
      finish(db, 0);
    } else {
      // A padded dimension: the smallest bucket that holds n; its inputs
      // padded into the workspace after the arena and its outputs
      // computed there, unless n is the bucket's size (a slab at a time
      // beside a batch).
      llvm::Value *n = sym.back();
      size_t perBucket = hasBatch ? info.chunks.size() : 1;
      llvm::BasicBlock *test = start;
      for (size_t bk = info.buckets.size(); bk-- > 0;) {
        int64_t size = info.buckets[bk];
        llvm::Value *bucket = constant(size);
        auto *fits = llvm::BasicBlock::Create(ctx, "bucket", run);
        auto *direct = llvm::BasicBlock::Create(ctx, "bucket_exact", run);
        auto *staged = llvm::BasicBlock::Create(ctx, "bucket_padded", run);
        auto *next =
            bk == 0 ? bad : llvm::BasicBlock::Create(ctx, "bucket_test", run);
        llvm::IRBuilder<> tb(test);
        tb.CreateCondBr(tb.CreateICmpSLE(n, bucket), fits, next);
        llvm::IRBuilder<> fb(fits);
        fb.CreateCondBr(fb.CreateICmpEQ(n, bucket), direct, staged);
        SmallVector<uint64_t> offsets;
        info.stagingBytes(size, &offsets);
        // Slab k at batch row `row` (null without a batch); `exact`: the
        // caller's buffers, else padded copies.
        auto runOn = [&](llvm::IRBuilder<> &cb, size_t k, llvm::Value *row,
                         bool exact) {
          llvm::Function *graph = graphs[bk * perBucket + k];
          SmallVector<llvm::Value *> at;
          for (auto [p, t] : llvm::zip_equal(pointers, described))
            at.push_back(atRow(cb, p, *t, row, sym));
          if (exact)
            return callGraph(cb, graph, at);
          // The symbols' sizes in the caller's slab and in the copies.
          SmallVector<llvm::Value *> user(sym), copy(sym);
          SmallVector<int64_t> copySizes(info.symbols.size(), size);
          if (hasBatch) {
            user.front() = copy.front() = constant(info.chunks[k]);
            copySizes.front() = info.chunks[k];
          }
          copy.back() = bucket;
          llvm::Value *base = cb.CreateConstGEP1_64(
              cb.getInt8Ty(), workspace,
              llvm::alignTo(info.arenaBytes, info.workspaceAlign));
          SmallVector<llvm::Value *> staging(at);
          for (auto [i, t] : llvm::enumerate(described)) {
            if (!info.isPadded(*t))
              continue;
            staging[i] =
                cb.CreateConstGEP1_64(cb.getInt8Ty(), base, offsets[i]);
            if (i >= info.inputs.size())
              continue;
            // Padding reads as zeros (masked where it matters, never NaN).
            cb.CreateMemSet(staging[i], cb.getInt8(0),
                            ArtifactInfo::bytesAt(*t, copySizes),
                            llvm::MaybeAlign(1));
            emitBoxCopy(cb, *t, staging[i], copy, at[i], user, user);
          }
          callGraph(cb, graph, staging);
          for (auto [i, t] : llvm::enumerate(described))
            if (i >= info.inputs.size() && info.isPadded(*t))
              emitBoxCopy(cb, *t, at[i], user, staging[i], copy, user);
        };
        for (auto [block, exact] :
             {std::pair(direct, true), std::pair(staged, false)}) {
          if (hasBatch) {
            llvm::BasicBlock *done = emitSlabs(
                block, [&](llvm::IRBuilder<> &sb, size_t k, llvm::Value *row) {
                  runOn(sb, k, row, exact);
                });
            llvm::IRBuilder<> db(done);
            finish(db, 0);
          } else {
            llvm::IRBuilder<> cb(block);
            runOn(cb, 0, nullptr, exact);
            finish(cb, 0);
          }
        }
        test = next;
      }
    }
    llvm::IRBuilder<> eb(bad);
    finish(eb, 2);
  }

  llvm::Constant *desc = d.global(
      llvm::ConstantStruct::get(
          d.descType,
          {llvm::ConstantInt::get(d.i32, TCC_ABI_VERSION),
           llvm::ConstantInt::get(d.i32, 0),
           d.string(TCC_VERSION_STRING, "version"),
           d.string(info.target, "target"),
           d.string(info.modelName, "model_name"),
           llvm::ConstantInt::get(d.i32, info.inputs.size()),
           llvm::ConstantInt::get(d.i32, info.outputs.size()),
           d.tensors(info.inputs, "inputs"), d.tensors(info.outputs, "outputs"),
           llvm::ConstantInt::get(d.i64, info.workspaceBytes),
           llvm::ConstantInt::get(d.i64, info.workspaceAlign), run,
           llvm::ConstantInt::get(d.i32, info.symbols.size()),
           d.symbols(info.symbols), cudaImage(module, d, info, cuda)}),
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
      for (auto [k, d] : llvm::enumerate(t.shape)) {
        os << (k ? "," : "");
        if (d < 0)
          os << commentText(info.symbols[t.symbols[k]].name);
        else
          os << d;
      }
      os << "]\n";
    }
  };
  os << "/* Model \"" << commentText(info.modelName) << "\".\n";
  list("Inputs", info.inputs);
  list("Outputs", info.outputs);
  if (!info.symbols.empty()) {
    os << " * Sizes given at run time:\n";
    for (const SymbolInfo &sym : info.symbols)
      os << " *   " << commentText(sym.name) << ": " << sym.min << " to "
         << sym.max << "\n";
  }
  os << " */\n#define " << upper << "_NUM_INPUTS " << info.inputs.size()
     << "\n#define " << upper << "_NUM_OUTPUTS " << info.outputs.size()
     << "\n#define " << upper << "_WORKSPACE_BYTES " << info.workspaceBytes
     << "u\n\nconst tcc_artifact_desc_t *" << p << "_artifact_get(void);\n\n";

  llvm::StringSet<> used = {"workspace", "inputs", "outputs", "args", "sizes"};
  std::vector<std::string> inNames, outNames, symbolNames;
  for (const TensorInfo &t : info.inputs)
    inNames.push_back(cIdentifier(t.name, used));
  for (const TensorInfo &t : info.outputs)
    outNames.push_back(cIdentifier(t.name, used));
  for (const SymbolInfo &sym : info.symbols)
    symbolNames.push_back(cIdentifier(sym.name, used));
  os << "/* Runs the model once on the calling thread. Each buffer holds "
        "its\n"
        " * whole tensor, dense and row-major, aligned to 64 bytes; "
        "workspace\n"
        " * holds "
     << upper << "_WORKSPACE_BYTES bytes (NULL when that is 0).\n"
     << (info.symbols.empty()
             ? ""
             : " * The sizes after the buffers are those of the symbolic\n"
               " * dimensions; 2 is returned for one outside its bounds.\n")
     << " * Returns 0 on success. */\nstatic inline int32_t " << p << "_run(";
  for (auto [i, t] : llvm::enumerate(info.inputs))
    os << "const " << cTypeOf(t.dtype) << " *" << inNames[i] << ", ";
  for (auto [i, t] : llvm::enumerate(info.outputs))
    os << cTypeOf(t.dtype) << " *" << outNames[i] << ", ";
  for (const std::string &name : symbolNames)
    os << "int64_t " << name << ", ";
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
  if (symbolNames.empty()) {
    os << "  tcc_run_args_t args = {inputs, outputs, workspace, 0, 0};\n";
  } else {
    os << "  const int64_t sizes[] = {";
    llvm::interleaveComma(symbolNames, os);
    os << "};\n  tcc_run_args_t args = {inputs, outputs, workspace, 0, "
          "sizes};\n";
  }
  os << "  return " << p << "_artifact_get()->run(&args);\n}\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return s;
}
