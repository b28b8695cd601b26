//===- TccShapes.cpp - shape rules of tcc ops -----------------------------===//

#include "dialects/Tcc/IR/TccShapes.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

#include <limits>

using namespace mlir;
using namespace mlir::tcc;
using llvm::ArrayRef;

static constexpr int64_t kDyn = ShapedType::kDynamic;

std::string shapes::str(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string out;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      out += 'x';
    out += d == kDyn ? "?" : std::to_string(d);
  }
  return out;
}

int64_t shapes::rowSplit(ArrayRef<int64_t> full, ArrayRef<int64_t> reduced) {
  if (full.size() != reduced.size() || full == reduced)
    return -1;
  int64_t a = full.size();
  while (a > 0 && reduced[a - 1] == 1)
    --a;
  for (int64_t i = 0; i < a; ++i)
    if (reduced[i] != full[i])
      return -1;
  return a;
}

int64_t shapes::numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d == kDyn)
      return kDyn;
    // Saturates: a product past int64_t is "too many" to every caller, and
    // a later 0 still makes it 0.
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      n = std::numeric_limits<int64_t>::max();
    else
      n *= d;
  }
  return n;
}

FailureOr<shapes::Shape> shapes::broadcast(ArrayRef<ArrayRef<int64_t>> all,
                                           EmitErrorFn emitError) {
  size_t rank = 0;
  for (ArrayRef<int64_t> s : all)
    rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (ArrayRef<int64_t> s : all) {
    size_t lead = rank - s.size();
    for (auto [i, d] : llvm::enumerate(s)) {
      int64_t &o = out[lead + i];
      if (d == 1 || d == o)
        continue;
      if (o == 1) {
        o = d;
      } else if (d == kDyn || o == kDyn) {
        // A dynamic size against a static one: the static one wins unless
        // it is 1 (handled above), and the run time checks the rest.
        if (o == kDyn)
          o = d;
      } else {
        std::string msg;
        for (auto [k, t] : llvm::enumerate(all))
          msg += (k ? ", " : "") + str(t);
        emitError() << "shapes " << msg << " do not broadcast (dimension "
                    << lead + i << ": " << o << " vs " << d << ")";
        return failure();
      }
    }
  }
  return out;
}

bool shapes::broadcastsTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t lead = to.size() - from.size();
  for (auto [i, d] : llvm::enumerate(from)) {
    int64_t t = to[lead + i];
    if (d != 1 && d != t && d != kDyn && t != kDyn)
      return false;
  }
  return true;
}

FailureOr<shapes::Shape> shapes::matmul(ArrayRef<int64_t> lhs,
                                        ArrayRef<int64_t> rhs,
                                        EmitErrorFn emitError) {
  if (lhs.empty() || rhs.empty()) {
    emitError() << "matmul operands must have rank >= 1";
    return failure();
  }
  Shape a(lhs), b(rhs);
  bool vecLhs = a.size() == 1, vecRhs = b.size() == 1;
  if (vecLhs)
    a.insert(a.begin(), 1);
  if (vecRhs)
    b.push_back(1);
  int64_t k1 = a.back(), k2 = b[b.size() - 2];
  if (k1 != kDyn && k2 != kDyn && k1 != k2) {
    emitError() << "matmul contraction sizes differ: " << str(lhs) << " * "
                << str(rhs) << " (" << k1 << " vs " << k2 << ")";
    return failure();
  }
  ArrayRef<int64_t> batchA = ArrayRef<int64_t>(a).drop_back(2);
  ArrayRef<int64_t> batchB = ArrayRef<int64_t>(b).drop_back(2);
  FailureOr<Shape> batch = broadcast({batchA, batchB}, [&] {
    return emitError() << "matmul batch dimensions: ";
  });
  if (failed(batch))
    return failure();
  Shape out = *batch;
  if (!vecLhs)
    out.push_back(a[a.size() - 2]);
  if (!vecRhs)
    out.push_back(b.back());
  return out;
}

/// Checks the per-spatial-dimension attribute lists of conv and pool.
static LogicalResult checkWindowAttrs(StringRef what, size_t spatial,
                                      ArrayRef<int64_t> strides,
                                      ArrayRef<int64_t> padding,
                                      ArrayRef<int64_t> dilations,
                                      shapes::EmitErrorFn emitError) {
  if (strides.size() != spatial || dilations.size() != spatial ||
      padding.size() != 2 * spatial) {
    emitError() << what << " over " << spatial << " spatial dimensions needs "
                << spatial << " strides, " << spatial << " dilations and "
                << 2 * spatial << " pads; got " << strides.size() << ", "
                << dilations.size() << " and " << padding.size();
    return failure();
  }
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d < 1; })) {
    emitError() << what << " strides and dilations must be >= 1";
    return failure();
  }
  if (llvm::any_of(padding, [](int64_t p) { return p < 0; })) {
    emitError() << what << " pads must be >= 0";
    return failure();
  }
  return success();
}

FailureOr<shapes::Shape> shapes::conv(ArrayRef<int64_t> input,
                                      ArrayRef<int64_t> weight,
                                      ArrayRef<int64_t> strides,
                                      ArrayRef<int64_t> padding,
                                      ArrayRef<int64_t> dilations,
                                      int64_t groups, EmitErrorFn emitError) {
  if (input.size() < 3 || weight.size() != input.size()) {
    emitError() << "convolution needs input and weight of the same rank >= 3"
                << "; got " << str(input) << " and " << str(weight);
    return failure();
  }
  size_t spatial = input.size() - 2;
  if (failed(checkWindowAttrs("convolution", spatial, strides, padding,
                              dilations, emitError)))
    return failure();
  if (groups < 1) {
    emitError() << "convolution groups must be >= 1; got " << groups;
    return failure();
  }
  int64_t channels = input[1], filters = weight[0], perGroup = weight[1];
  if (filters != kDyn && filters % groups != 0) {
    emitError() << "convolution filters (" << filters
                << ") are not divisible by groups (" << groups << ")";
    return failure();
  }
  if (channels != kDyn && perGroup != kDyn && channels != perGroup * groups) {
    emitError() << "convolution input has " << channels
                << " channels but weight " << str(weight) << " with " << groups
                << " group(s) expects " << perGroup * groups;
    return failure();
  }
  Shape out = {input[0], filters};
  for (size_t i = 0; i < spatial; ++i) {
    int64_t d = input[i + 2], k = weight[i + 2];
    if (d == kDyn || k == kDyn) {
      out.push_back(kDyn);
      continue;
    }
    int64_t span = dilations[i] * (k - 1) + 1;
    int64_t padded = d + padding[i] + padding[i + spatial];
    if (padded < span) {
      emitError() << "convolution window (" << span
                  << ") is larger than padded spatial dimension " << i << " ("
                  << padded << ")";
      return failure();
    }
    out.push_back((padded - span) / strides[i] + 1);
  }
  return out;
}

int64_t shapes::pooledSize(int64_t size, int64_t kernel, int64_t stride,
                           int64_t padBegin, int64_t padEnd, int64_t dilation,
                           bool ceilMode) {
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t room = size + padBegin + padEnd - span;
  int64_t out = (ceilMode ? (room + stride - 1) / stride : room / stride) + 1;
  // With ceil_mode, a window that would start in the end padding is dropped.
  if (ceilMode && (out - 1) * stride >= size + padBegin)
    --out;
  return out;
}

FailureOr<shapes::Shape> shapes::pool(ArrayRef<int64_t> input,
                                      ArrayRef<int64_t> kernel,
                                      ArrayRef<int64_t> strides,
                                      ArrayRef<int64_t> padding,
                                      ArrayRef<int64_t> dilations,
                                      bool ceilMode, EmitErrorFn emitError) {
  if (input.size() < 3) {
    emitError() << "pooling needs an input of rank >= 3; got " << str(input);
    return failure();
  }
  size_t spatial = input.size() - 2;
  if (kernel.size() != spatial) {
    emitError() << "pooling over " << spatial << " spatial dimensions needs "
                << spatial << " kernel sizes; got " << kernel.size();
    return failure();
  }
  if (llvm::any_of(kernel, [](int64_t k) { return k < 1; })) {
    emitError() << "pooling kernel sizes must be >= 1";
    return failure();
  }
  if (failed(checkWindowAttrs("pooling", spatial, strides, padding, dilations,
                              emitError)))
    return failure();
  Shape out(input.take_front(2));
  for (size_t i = 0; i < spatial; ++i) {
    int64_t d = input[i + 2];
    if (d == kDyn) {
      out.push_back(kDyn);
      continue;
    }
    int64_t span = dilations[i] * (kernel[i] - 1) + 1;
    if (d + padding[i] + padding[i + spatial] < span) {
      emitError() << "pooling window (" << span
                  << ") is larger than padded spatial dimension " << i;
      return failure();
    }
    out.push_back(pooledSize(d, kernel[i], strides[i], padding[i],
                             padding[i + spatial], dilations[i], ceilMode));
  }
  return out;
}

FailureOr<shapes::Shape> shapes::reduce(ArrayRef<int64_t> input,
                                        ArrayRef<int64_t> axes, bool keepdims,
                                        EmitErrorFn emitError) {
  int64_t rank = input.size();
  for (auto [i, a] : llvm::enumerate(axes)) {
    if (a < 0 || a >= rank) {
      emitError() << "axis " << a << " is out of range for rank " << rank;
      return failure();
    }
    if (i && axes[i - 1] >= a) {
      emitError() << "axes must be sorted and unique";
      return failure();
    }
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!llvm::is_contained(axes, i))
      out.push_back(input[i]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

FailureOr<shapes::Shape> shapes::transpose(ArrayRef<int64_t> input,
                                           ArrayRef<int64_t> perm,
                                           EmitErrorFn emitError) {
  if (perm.size() != input.size()) {
    emitError() << "permutation has " << perm.size()
                << " entries for a tensor of rank " << input.size();
    return failure();
  }
  llvm::SmallVector<bool> seen(perm.size(), false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)perm.size() || seen[p]) {
      emitError() << "perm is not a permutation of [0, " << perm.size() << ")";
      return failure();
    }
    seen[p] = true;
    out.push_back(input[p]);
  }
  return out;
}

FailureOr<shapes::Shape> shapes::concat(ArrayRef<ArrayRef<int64_t>> inputs,
                                        int64_t axis, EmitErrorFn emitError) {
  if (inputs.empty()) {
    emitError() << "concat needs at least one input";
    return failure();
  }
  int64_t rank = inputs[0].size();
  if (axis < 0 || axis >= rank) {
    emitError() << "axis " << axis << " is out of range for rank " << rank;
    return failure();
  }
  Shape out(inputs[0]);
  for (ArrayRef<int64_t> s : inputs.drop_front()) {
    if ((int64_t)s.size() != rank) {
      emitError() << "concat inputs differ in rank: " << str(inputs[0])
                  << " and " << str(s);
      return failure();
    }
    for (int64_t i = 0; i < rank; ++i) {
      if (i == axis) {
        out[i] = (out[i] == kDyn || s[i] == kDyn) ? kDyn : out[i] + s[i];
      } else if (out[i] != s[i] && out[i] != kDyn && s[i] != kDyn) {
        emitError() << "concat inputs " << str(inputs[0]) << " and " << str(s)
                    << " differ in dimension " << i;
        return failure();
      }
    }
  }
  return out;
}

FailureOr<shapes::Shape> shapes::gather(ArrayRef<int64_t> data,
                                        ArrayRef<int64_t> indices, int64_t axis,
                                        EmitErrorFn emitError) {
  if (axis < 0 || axis >= (int64_t)data.size()) {
    emitError() << "axis " << axis << " is out of range for rank "
                << data.size();
    return failure();
  }
  Shape out(data.take_front(axis));
  out.append(indices.begin(), indices.end());
  out.append(data.begin() + axis + 1, data.end());
  return out;
}

FailureOr<shapes::Shape> shapes::pad(ArrayRef<int64_t> input,
                                     ArrayRef<int64_t> low,
                                     ArrayRef<int64_t> high,
                                     EmitErrorFn emitError) {
  if (low.size() != input.size() || high.size() != input.size()) {
    emitError() << "pad needs " << input.size()
                << " low and high pads for rank " << input.size() << "; got "
                << low.size() << " and " << high.size();
    return failure();
  }
  Shape out;
  for (auto [d, l, h] : llvm::zip_equal(input, low, high)) {
    if (l < 0 || h < 0) {
      emitError() << "pads must be >= 0";
      return failure();
    }
    out.push_back(d == kDyn ? kDyn : d + l + h);
  }
  return out;
}
