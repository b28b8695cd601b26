//===- EinsumOp.cpp - ONNX Einsum -----------------------------------------===//
//
// Each operand's repeated labels are reduced to their diagonal (a mask of
// equal indices and a sum), then every operand is laid out over all labels
// of the equation (output labels first, summed ones after; a label it lacks
// is a unit dimension), the operands are multiplied with broadcasting, and
// the summed labels are reduced. Ellipses stand for broadcast dimensions,
// aligned at the right as numpy aligns them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

/// Labels of a term; ellipsis dimensions become labels 1..E (counted from
/// the right), letters stay letters. Fails on anything else.
static FailureOr<SmallVector<char>> parseTerm(NodeContext &ctx, StringRef term,
                                              int64_t rank, int64_t &ellipsis) {
  SmallVector<char> labels;
  size_t dots = term.find("...");
  StringRef before = dots == StringRef::npos ? term : term.take_front(dots);
  StringRef after =
      dots == StringRef::npos ? StringRef() : term.drop_front(dots + 3);
  for (StringRef part : {before, after})
    for (char c : part)
      if (!llvm::isAlpha(c)) {
        ctx.emitError() << "equation term '" << term << "' is malformed";
        return failure();
      }
  int64_t letters = before.size() + after.size();
  int64_t e = dots == StringRef::npos ? 0 : rank - letters;
  if (e < 0 || e + letters != rank) {
    ctx.emitError() << "equation term '" << term << "' does not match rank "
                    << rank;
    return failure();
  }
  ellipsis = std::max(ellipsis, e);
  labels.append(before.begin(), before.end());
  for (int64_t k = e; k >= 1; --k)
    labels.push_back((char)k);
  labels.append(after.begin(), after.end());
  return labels;
}

static LogicalResult importEinsum(NodeContext &ctx) {
  std::string eq = ctx.getString("equation", "");
  if (ctx.hasError())
    return failure();
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  StringRef equation(eq);
  size_t arrow = equation.find("->");
  StringRef lhs = equation.take_front(arrow);
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != ctx.numInputs())
    return ctx.emitError() << "equation '" << eq << "' has " << terms.size()
                           << " terms for " << ctx.numInputs() << " inputs";
  int64_t ellipsis = 0;
  SmallVector<Value> operands;
  SmallVector<SmallVector<char>> labels;
  std::map<char, int64_t> sizes, counts;
  for (auto [i, term] : llvm::enumerate(terms)) {
    Value v = ctx.input(i);
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
      return ctx.emitError() << "inputs need static shapes";
    FailureOr<SmallVector<char>> l =
        parseTerm(ctx, term, shapeOf(v).size(), ellipsis);
    if (failed(l))
      return failure();
    // Repeated labels: keep the diagonal.
    for (size_t p = 0; p < l->size(); ++p)
      for (size_t q = l->size() - 1; q > p; --q) {
        if ((*l)[q] != (*l)[p])
          continue;
        int64_t r = shapeOf(v).size();
        if (shapeOf(v)[p] != shapeOf(v)[q])
          return ctx.emitError()
                 << "label '" << (*l)[p] << "' has different sizes";
        Type i64 = ctx.b.getI64Type();
        Value diag = ctx.compare(ComparePredicate::eq,
                                 ctx.iota(shapeOf(v)[p], i64, p, r),
                                 ctx.iota(shapeOf(v)[q], i64, q, r));
        v = ctx.reduce<ReduceSumOp>(ctx.select(diag, v, ctx.scalarLike(v, 0)),
                                    {(int64_t)q}, false);
        l->erase(l->begin() + q);
      }
    for (auto [d, c] : llvm::enumerate(*l)) {
      int64_t s = shapeOf(v)[d];
      auto it = sizes.find(c);
      if (it != sizes.end() && it->second != s && it->second != 1 && s != 1)
        return ctx.emitError() << "label '" << c << "' has sizes " << it->second
                               << " and " << s;
      sizes[c] = it == sizes.end() ? s : std::max(it->second, s);
      counts[c] += 1;
    }
    operands.push_back(v);
    labels.push_back(*l);
  }
  // The output's labels.
  SmallVector<char> out;
  if (arrow != StringRef::npos) {
    StringRef rhs = equation.drop_front(arrow + 2);
    size_t dots = rhs.find("...");
    StringRef before = dots == StringRef::npos ? rhs : rhs.take_front(dots);
    StringRef after =
        dots == StringRef::npos ? StringRef() : rhs.drop_front(dots + 3);
    out.append(before.begin(), before.end());
    if (dots != StringRef::npos)
      for (int64_t k = ellipsis; k >= 1; --k)
        out.push_back((char)k);
    out.append(after.begin(), after.end());
  } else {
    for (int64_t k = ellipsis; k >= 1; --k)
      out.push_back((char)k);
    for (auto [c, n] : counts)
      if (n == 1 && llvm::isAlpha(c))
        out.push_back(c);
  }
  for (char c : out)
    if (!sizes.count(c))
      return ctx.emitError()
             << "output label '" << c << "' is not in any input";
  SmallVector<char> all(out);
  for (auto [c, n] : sizes)
    if (!llvm::is_contained(all, c))
      all.push_back(c);
  int64_t total = all.size();
  Value product;
  for (auto [v, l] : llvm::zip(operands, labels)) {
    // Transpose to the global order, then insert unit dimensions.
    SmallVector<int64_t> perm, shape;
    for (char c : all) {
      auto it = llvm::find(l, c);
      if (it != l.end())
        perm.push_back(it - l.begin());
    }
    Value t = ctx.transpose(v, perm);
    for (char c : all) {
      auto it = llvm::find(l, c);
      shape.push_back(it == l.end() ? 1 : shapeOf(v)[it - l.begin()]);
    }
    t = ctx.reshape(t, shape);
    product = product ? ctx.binary<MulOp>(product, t) : t;
  }
  if (!product)
    return failure();
  // Broadcast a lone operand's unit dimensions of output labels.
  SmallVector<int64_t> full;
  for (char c : all)
    full.push_back(sizes[c]);
  if (shapeOf(product) != ArrayRef<int64_t>(full))
    product = ctx.broadcastTo(product, full);
  SmallVector<int64_t> summed =
      llvm::to_vector(llvm::seq<int64_t>(out.size(), total));
  Value y = summed.empty() ? product
                           : ctx.reduce<ReduceSumOp>(product, summed, false);
  return ctx.result(y);
}

void mlir::tcc::onnx::registerEinsumOps(OpTable &t) {
  t.add("Einsum", 12, 1, kVariadic, 1, importEinsum);
}
