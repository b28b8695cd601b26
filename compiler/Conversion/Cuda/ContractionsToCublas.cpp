//===- ContractionsToCublas.cpp - GEMMs as cuBLAS calls -------------------===//
//
// A contraction on buffers is C[b, m, n] (+)= sum_k A[b, m, k] * B[b, k, n]
// with each operand strided. cuBLAS multiplies column-major matrices; a
// row-major C is the column-major C^T = B^T A^T, and a matrix with a unit
// stride in either dimension is a column-major matrix or its transpose. The
// call carries that description; the runtime hands it to
// cublasSgemmStridedBatched.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Cuda/Address.h"
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCCONTRACTIONSTOCUBLAS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;

namespace {
/// One operand as cuBLAS sees it: whether it is stored transposed, its
/// leading dimension and its batch stride (in elements).
struct Matrix {
  bool transposed = false;
  int64_t ld = 0;
  int64_t batchStride = 0;
};

/// Describes the (r x c) matrix of a buffer whose dimensions r and c have
/// strides sr and sc, as the column-major operand op(X) of shape r x c.
std::optional<Matrix> describe(int64_t r, int64_t c, int64_t sr, int64_t sc) {
  Matrix m;
  if (sr == 1 || r == 1) {
    // Column-major r x c with leading dimension sc.
    m.ld = c == 1 ? std::max<int64_t>(r, 1) : sc;
    if (m.ld < std::max<int64_t>(r, 1))
      return std::nullopt;
    return m;
  }
  if (sc == 1 || c == 1) {
    // Column-major c x r with leading dimension sr, transposed.
    m.transposed = true;
    m.ld = r == 1 ? std::max<int64_t>(c, 1) : sr;
    if (m.ld < std::max<int64_t>(c, 1))
      return std::nullopt;
    return m;
  }
  return std::nullopt;
}

/// The strides of `value`'s type along the dimensions `dims` of the op's
/// iteration space (0 where the operand does not use the dimension).
std::optional<SmallVector<int64_t>>
stridesAlong(linalg::LinalgOp op, OpOperand &operand, ArrayRef<unsigned> dims) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type)
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic) ||
      ShapedType::isDynamic(offset))
    return std::nullopt;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<int64_t> out;
  for (unsigned d : dims) {
    int64_t s = 0;
    for (auto [i, e] : llvm::enumerate(map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(e); dim && dim.getPosition() == d)
        s = strides[i];
      else if (e.isFunctionOfDim(d))
        return std::nullopt;
    out.push_back(s);
  }
  return out;
}

/// The linalg.transpose that alone fills `buffer` before `user`, if any.
linalg::TransposeOp soleTransposeInto(Value buffer, Operation *user) {
  linalg::TransposeOp found;
  for (Operation *u : buffer.getUsers()) {
    if (u == user)
      continue;
    auto t = dyn_cast<linalg::TransposeOp>(u);
    if (!t || t.getInit() != buffer || found ||
        t->getBlock() != user->getBlock() || !t->isBeforeInBlock(user))
      return {};
    found = t;
  }
  return found;
}

struct TccContractionsToCublasPass
    : tcc::impl::TccContractionsToCublasBase<TccContractionsToCublasPass> {
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    SmallVector<linalg::LinalgOp> candidates;
    f.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumDpsInputs() == 2 &&
          op.getNumDpsInits() == 1 && linalg::isaContractionOpInterface(op))
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates)
      (void)convert(op);
  }

  LogicalResult convert(linalg::LinalgOp op) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims))
      return failure();
    // Two m (or n) dimensions and no batch: the outer one, which only one
    // input has, is a batch dimension with stride 0 in the other (an
    // im2col convolution's images share its filter).
    for (SmallVector<unsigned, 2> *v : {&dims->m, &dims->n}) {
      if (v->size() != 2 || !dims->batch.empty())
        continue;
      auto out = stridesAlong(op, *op.getDpsInitOperand(0), *v);
      if (!out)
        return failure();
      unsigned inner = (*out)[0] <= (*out)[1] ? 0 : 1;
      dims->batch.push_back((*v)[1 - inner]);
      *v = {(*v)[inner]};
    }
    if (dims->m.size() != 1 || dims->n.size() != 1 || dims->k.size() != 1 ||
        dims->batch.size() > 1)
      return failure();
    for (Value v : op->getOperands())
      if (!cast<ShapedType>(v.getType()).getElementType().isF32())
        return failure();
    OpBuilder b(op);
    Location loc = op.getLoc();
    // A transpose that only feeds this op becomes a strided view of its
    // source (the contraction reads through it).
    for (OpOperand *in : op.getDpsInputOperands()) {
      linalg::TransposeOp t = soleTransposeInto(in->get(), op);
      if (!t || !isa<MemRefType>(t.getInput().getType()))
        continue;
      // result[i] = input[perm[i]]: the view's dimension i is the input's
      // perm[i].
      AffineMap map =
          AffineMap::getPermutationMap(t.getPermutation(), b.getContext());
      OpBuilder vb(t);
      Value view = vb.create<memref::TransposeOp>(t.getLoc(), t.getInput(),
                                                  AffineMapAttr::get(map));
      in->set(view);
      t.erase();
    }
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    unsigned m = dims->m[0], n = dims->n[0], k = dims->k[0];
    std::optional<unsigned> batch;
    if (!dims->batch.empty())
      batch = dims->batch[0];
    for (int64_t r : ranges)
      if (ShapedType::isDynamic(r))
        return failure();
    SmallVector<unsigned> order = {m, n, k};
    if (batch)
      order.push_back(*batch);
    auto sa = stridesAlong(op, *op.getDpsInputOperand(0), order);
    auto sb = stridesAlong(op, *op.getDpsInputOperand(1), order);
    auto sc = stridesAlong(op, *op.getDpsInitOperand(0), order);
    if (!sa || !sb || !sc)
      return failure();
    // Which input is A (m x k) and which B (k x n).
    auto uses = [&](ArrayRef<int64_t> s, unsigned i) { return s[i] != 0; };
    Value aValue = op.getDpsInputOperand(0)->get();
    Value bValue = op.getDpsInputOperand(1)->get();
    if (!uses(*sa, 0) && uses(*sb, 0)) {
      std::swap(sa, sb);
      std::swap(aValue, bValue);
    }
    int64_t M = ranges[m], N = ranges[n], K = ranges[k];
    int64_t batchCount = batch ? ranges[*batch] : 1;
    int64_t sAm = (*sa)[0], sAk = (*sa)[2], sBk = (*sb)[2], sBn = (*sb)[1];
    int64_t sCm = (*sc)[0], sCn = (*sc)[1];
    // The output must be a column-major matrix: C (sCm == 1) or C^T.
    bool swapped = !(sCm == 1 || M == 1) && (sCn == 1 || N == 1);
    std::optional<Matrix> first, second, out;
    int64_t rows, cols;
    if (swapped) {
      // C^T (n x m) = B^T (n x k) * A^T (k x m).
      out = describe(N, M, sCn, sCm);
      first = describe(N, K, sBn, sBk);
      second = describe(K, M, sAk, sAm);
      rows = N;
      cols = M;
    } else {
      out = describe(M, N, sCm, sCn);
      first = describe(M, K, sAm, sAk);
      second = describe(K, N, sBk, sBn);
      rows = M;
      cols = N;
    }
    if (!first || !second || !out || out->transposed)
      return failure();
    Value firstValue = swapped ? bValue : aValue;
    Value secondValue = swapped ? aValue : bValue;
    if (batch) {
      int64_t batchIndex = 3;
      first->batchStride = swapped ? (*sb)[batchIndex] : (*sa)[batchIndex];
      second->batchStride = swapped ? (*sa)[batchIndex] : (*sb)[batchIndex];
      out->batchStride = (*sc)[batchIndex];
    }
    // A zero fill of the whole output just before: beta = 0.
    Value cValue = op.getDpsInitOperand(0)->get();
    float beta = 1.0f;
    if (auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
        fill && fill.getOutputs()[0] == cValue &&
        matchPattern(fill.getInputs()[0], m_AnyZeroFloat())) {
      fill.erase();
      beta = 0.0f;
    }
    b.setInsertionPoint(op);
    auto i32 = b.getI32Type();
    auto i64 = b.getI64Type();
    auto c32 = [&](int64_t v) -> Value {
      return b.create<arith::ConstantIntOp>(loc, v, i32);
    };
    auto c64 = [&](int64_t v) -> Value {
      return b.create<arith::ConstantIntOp>(loc, v, i64);
    };
    // The address of element 0 of a buffer: aligned base + static offset.
    auto address = [&](Value v) -> Value {
      auto type = cast<MemRefType>(v.getType());
      SmallVector<int64_t> strides;
      int64_t offset;
      (void)getStridesAndOffset(type, strides, offset);
      Value base = tcc::alignedAddress(b, loc, v);
      Value p = b.create<arith::IndexCastOp>(loc, i64, base);
      if (offset == 0)
        return p;
      return b.create<arith::AddIOp>(loc, p, c64(offset * 4));
    };
    SmallVector<Value> args = {
        c32(first->transposed),
        c32(second->transposed),
        c64(rows),
        c64(cols),
        c64(K),
        address(firstValue),
        c64(first->ld),
        c64(first->batchStride),
        address(secondValue),
        c64(second->ld),
        c64(second->batchStride),
        address(cValue),
        c64(out->ld),
        c64(out->batchStride),
        c64(batchCount),
        b.create<arith::ConstantFloatOp>(loc, APFloat(beta), b.getF32Type())};
    func::FuncOp callee =
        tcc::declareEntryPoint(op->getParentOfType<ModuleOp>(), "tcc_cuda_gemm",
                               ValueRange(args).getTypes(), loc);
    b.create<func::CallOp>(loc, callee, args);
    op->erase();
    return success();
  }
};
} // namespace
