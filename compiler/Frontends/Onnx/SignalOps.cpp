//===- SignalOps.cpp - ONNX DFT, STFT, window functions, MelWeightMatrix ==//
//
// A DFT of static length N is a product with cos/sin matrices computed at
// compile time ([length, bins], f64 rounded to the element type): forward,
// inverse (scaled by 1/N) and the one-sided inverse (irfft, Hermitian
// weights) are different matrices. STFT gathers its frames with constant
// indices, applies the window, then the same matrices. Window functions and
// MelWeightMatrix depend only on their scalar inputs and are constants.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

/// Moves `axis` of `x` to the last position (or back with `inverse`).
static Value moveAxisLast(NodeContext &ctx, Value x, int64_t axis,
                          bool inverse = false) {
  int64_t rank = shapeOf(x).size();
  if (axis == rank - 1)
    return x;
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  if (inverse) {
    SmallVector<int64_t> inv(rank);
    for (int64_t i = 0; i < rank; ++i)
      inv[perm[i]] = i;
    perm = inv;
  }
  return ctx.transpose(x, perm);
}

namespace {
enum class DftKind { Forward, Inverse, InverseOneSided };
} // namespace

/// The real and imaginary parts of DFTs along the last axis of `re` (and
/// `im`, null for a real signal) of length N, giving `bins` outputs.
static std::pair<Value, Value> dftLast(NodeContext &ctx, Value re, Value im,
                                       int64_t n, int64_t bins, DftKind kind) {
  Type et = elementTypeOf(re);
  int64_t len = shapeOf(re).back();
  // The DFT matrices are built in doubles: they must fit the caps first.
  if (failed(checkTensorSize({len, bins}, ctx.b.getF64Type(), ctx.limits,
                             "the DFT matrix", ctx.errorFn())))
    return {};
  SmallVector<double> cosM(len * bins), sinM(len * bins);
  for (int64_t t = 0; t < len; ++t)
    for (int64_t k = 0; k < bins; ++k) {
      double theta = 2 * M_PI * double((t * k) % n) / n;
      double c = std::cos(theta), s = std::sin(theta);
      if (kind == DftKind::Inverse) {
        c /= n;
        s /= n;
      }
      cosM[t * bins + k] = c;
      sinM[t * bins + k] = s;
    }
  Value cosv = ctx.constant({len, bins}, et, cosM);
  Value sinv = ctx.constant({len, bins}, et, sinM);
  auto mm = [&](Value a, Value m) { return ctx.matmul(a, m); };
  if (kind == DftKind::Forward) {
    // (re + i im)(cos - i sin)
    Value yr = mm(re, cosv), yi = ctx.unary<NegOp>(mm(re, sinv));
    if (im) {
      yr = ctx.binary<AddOp>(yr, mm(im, sinv));
      yi = ctx.binary<AddOp>(yi, mm(im, cosv));
    }
    return {yr, yi};
  }
  // (re + i im)(cos + i sin) / N
  Value yr = mm(re, cosv), yi = mm(re, sinv);
  if (im) {
    yr = ctx.binary<SubOp>(yr, mm(im, sinv));
    yi = ctx.binary<AddOp>(yi, mm(im, cosv));
  }
  return {yr, yi};
}

static LogicalResult importDFT(NodeContext &ctx) {
  Value x = ctx.input(0);
  bool inverse = ctx.getInt("inverse", 0), onesided = ctx.getInt("onesided", 0);
  int64_t axisValue = ctx.opset >= 20 ? -2 : 1;
  if (ctx.opset < 20) {
    axisValue = ctx.getInt("axis", 1);
  } else if (ctx.input(2)) {
    FailureOr<double> a = ctx.constScalar(2);
    if (failed(a))
      return failure();
    axisValue = saturatingInt(*a);
  }
  if (ctx.hasError() || failed(ctx.requireFloat(x)))
    return failure();
  if (!cast<RankedTensorType>(x.getType()).hasStaticShape())
    return ctx.emitError() << "the signal needs a static shape";
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  if (rank < 2 || (shape.back() != 1 && shape.back() != 2))
    return ctx.emitError() << "the signal's last dimension must be 1 or 2";
  FailureOr<int64_t> axis = ctx.normalizeAxis(axisValue, rank);
  if (failed(axis))
    return failure();
  if (*axis == rank - 1)
    return ctx.emitError() << "axis must not be the complex dimension";
  int64_t len = shape[*axis];
  int64_t n = inverse && onesided ? 2 * (len - 1) : len;
  if (ctx.input(1)) {
    FailureOr<double> l = ctx.constScalar(1);
    if (failed(l))
      return failure();
    n = saturatingInt(*l);
  }
  if (n < 1)
    return ctx.emitError() << "dft_length " << n << " must be positive";
  // [..., len] real and imaginary parts with the axis last.
  SmallVector<int64_t> partShape(shape.drop_back());
  Value re = ctx.reshape(ctx.slice(x, rank - 1, 0, 1), partShape);
  Value im = shape.back() == 2
                 ? ctx.reshape(ctx.slice(x, rank - 1, 1, 1), partShape)
                 : Value();
  re = moveAxisLast(ctx, re, *axis);
  if (im)
    im = moveAxisLast(ctx, im, *axis);
  // Zero-pad or cut the signal to the DFT length (irfft reads n/2+1 bins).
  int64_t want = inverse && onesided ? n / 2 + 1 : n;
  auto fit = [&](Value v) -> Value {
    if (!v)
      return v;
    int64_t have = shapeOf(v).back(), last = shapeOf(v).size() - 1;
    if (have > want)
      return ctx.slice(v, last, 0, want);
    if (have == want)
      return v;
    SmallVector<int64_t> zeroShape(shapeOf(v));
    zeroShape.back() = want - have;
    return ctx.concat({v, ctx.constant(zeroShape, elementTypeOf(v), {0.0})},
                      last);
  };
  re = fit(re);
  im = fit(im);
  if (!re)
    return failure();
  Value y;
  int64_t last = shapeOf(re).size() - 1;
  if (inverse && onesided) {
    // irfft: y[t] = sum_k w_k (re cos - im sin) / n over the one-sided
    // bins, w = 2 except for bin 0 and (even n) bin n/2.
    Type et = elementTypeOf(re);
    int64_t m = want;
    if (failed(checkTensorSize({m, n}, ctx.b.getF64Type(), ctx.limits,
                               "the DFT matrix", ctx.errorFn())))
      return failure();
    SmallVector<double> cosM(m * n), sinM(m * n);
    for (int64_t k = 0; k < m; ++k) {
      double w = (k == 0 || (n % 2 == 0 && k == n / 2)) ? 1.0 : 2.0;
      for (int64_t t = 0; t < n; ++t) {
        double theta = 2 * M_PI * double((t * k) % n) / n;
        cosM[k * n + t] = w * std::cos(theta) / n;
        sinM[k * n + t] = w * std::sin(theta) / n;
      }
    }
    y = ctx.matmul(re, ctx.constant({m, n}, et, cosM));
    if (im)
      y = ctx.binary<SubOp>(y, ctx.matmul(im, ctx.constant({m, n}, et, sinM)));
    y = moveAxisLast(ctx, y, *axis, /*inverse=*/true);
    SmallVector<int64_t> s(shapeOf(y));
    s.push_back(1);
    y = ctx.reshape(y, s);
  } else {
    int64_t bins = onesided ? n / 2 + 1 : n;
    auto [yr, yi] = dftLast(ctx, re, im, n, bins,
                            inverse ? DftKind::Inverse : DftKind::Forward);
    if (!yr || !yi)
      return failure();
    SmallVector<int64_t> s(shapeOf(yr));
    s.push_back(1);
    y = ctx.concat({ctx.reshape(yr, s), ctx.reshape(yi, s)}, last + 1);
    // The transformed axis (now at r-2) moves back; the complex dimension
    // stays last.
    int64_t r = last + 2;
    SmallVector<int64_t> order;
    for (int64_t d = 0; d < r - 2; ++d)
      order.push_back(d);
    order.insert(order.begin() + *axis, r - 2);
    order.push_back(r - 1);
    y = ctx.transpose(y, order);
  }
  return ctx.result(y);
}

static LogicalResult importSTFT(NodeContext &ctx) {
  Value signal = ctx.input(0), window = ctx.input(2);
  bool onesided = ctx.getInt("onesided", 1);
  FailureOr<double> step = ctx.constScalar(1);
  if (ctx.hasError() || failed(step) || failed(ctx.requireFloat(signal)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(signal);
  if (shape.size() != 3 || (shape[2] != 1 && shape[2] != 2) ||
      !cast<RankedTensorType>(signal.getType()).hasStaticShape())
    return ctx.emitError() << "the signal must be a static [batch, length, 1 "
                              "or 2] tensor";
  int64_t frameLength;
  if (ctx.input(3)) {
    FailureOr<double> l = ctx.constScalar(3);
    if (failed(l))
      return failure();
    frameLength = saturatingInt(*l);
  } else if (window) {
    if (shapeOf(window).size() != 1)
      return ctx.emitError()
             << "the window must be 1-D; got " << shapes::str(shapeOf(window));
    frameLength = shapeOf(window)[0];
  } else {
    return ctx.emitError() << "either window or frame_length is required";
  }
  int64_t hop = saturatingInt(*step), length = shape[1];
  if (hop < 1 || frameLength < 1 || frameLength > length)
    return ctx.emitError() << "frame_step " << hop << " and frame_length "
                           << frameLength << " do not fit the signal";
  int64_t frames = (length - frameLength) / hop + 1;
  if (!ctx.tensorType({frames, frameLength}, ctx.b.getF64Type()))
    return failure();
  SmallVector<double> idx;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t t = 0; t < frameLength; ++t)
      idx.push_back(f * hop + t);
  Value at = ctx.constant({frames, frameLength}, ctx.b.getI64Type(), idx);
  auto part = [&](int64_t k) {
    Value p = ctx.reshape(ctx.slice(signal, 2, k, 1), {shape[0], length});
    p = ctx.gather(p, at, 1); // [batch, frames, frameLength]
    if (window)
      p = ctx.binary<MulOp>(p, ctx.castTo(window, elementTypeOf(signal)));
    return p;
  };
  Value re = part(0), im = shape[2] == 2 ? part(1) : Value();
  int64_t bins = onesided ? frameLength / 2 + 1 : frameLength;
  auto [yr, yi] = dftLast(ctx, re, im, frameLength, bins, DftKind::Forward);
  if (!yr || !yi)
    return failure();
  SmallVector<int64_t> s = {shape[0], frames, bins, 1};
  Value y = ctx.concat({ctx.reshape(yr, s), ctx.reshape(yi, s)}, 3);
  return ctx.result(y);
}

/// The element type of `output_datatype` (float by default).
static Type outputType(NodeContext &ctx) {
  int32_t dtype = ctx.getInt("output_datatype", 1);
  Type et = convertDataType(ctx.b.getContext(), dtype);
  if (!et && !ctx.hasError())
    ctx.emitError() << "output_datatype " << dataTypeName(dtype)
                    << " is not supported";
  return et;
}

enum class Window { Hann, Hamming, Blackman };

template <Window kind> static LogicalResult importWindow(NodeContext &ctx) {
  FailureOr<double> sizeValue = ctx.constScalar(0);
  bool periodic = ctx.getInt("periodic", 1);
  Type et = outputType(ctx);
  if (failed(sizeValue) || !et || ctx.hasError())
    return failure();
  int64_t size = saturatingInt(*sizeValue);
  if (size < 1 || size > kMaxElements)
    return ctx.emitError() << "size " << size << " is out of range";
  if (!ctx.tensorType({size}, ctx.b.getF64Type()))
    return failure();
  double n1 = periodic ? size : size - 1;
  SmallVector<double> w;
  for (int64_t i = 0; i < size; ++i) {
    double x = i * 2 * M_PI / n1;
    switch (kind) {
    case Window::Hann: {
      double s = std::sin(M_PI * i / n1);
      w.push_back(s * s);
      break;
    }
    case Window::Hamming:
      w.push_back(25.0 / 46.0 - std::cos(x) * (21.0 / 46.0));
      break;
    case Window::Blackman:
      w.push_back(0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x));
      break;
    }
  }
  ctx.setResult(0, ctx.constant({size}, et, w));
  return success();
}

static LogicalResult importMelWeightMatrix(NodeContext &ctx) {
  FailureOr<double> bins = ctx.constScalar(0), dft = ctx.constScalar(1),
                    rate = ctx.constScalar(2), low = ctx.constScalar(3),
                    high = ctx.constScalar(4);
  Type et = outputType(ctx);
  if (failed(bins) || failed(dft) || failed(rate) || failed(low) ||
      failed(high) || !et || ctx.hasError())
    return failure();
  int64_t numMel = saturatingInt(*bins), dftLength = saturatingInt(*dft);
  int64_t sampleRate = saturatingInt(*rate);
  if (numMel < 1 || dftLength < 1 || sampleRate < 1 || numMel > 100000 ||
      dftLength > 100000)
    return ctx.emitError() << "the sizes are out of range";
  int64_t spectrogramBins = dftLength / 2 + 1;
  double lowMel = 2595 * std::log1p(*low / 700) / std::log(10.0);
  double highMel = 2595 * std::log1p(*high / 700) / std::log(10.0);
  double melStep = (highMel - lowMel) / (numMel + 2);
  SmallVector<int64_t> freq;
  for (int64_t i = 0; i < numMel + 2; ++i) {
    double f = i * melStep + lowMel;
    f = 700 * std::expm1(f / 2595 * std::log(10.0));
    freq.push_back((int64_t)std::floor((dftLength + 1) * f / sampleRate));
  }
  SmallVector<double> out(spectrogramBins * numMel, 0.0);
  auto at = [&](int64_t j, int64_t i) -> double & {
    return out[j * numMel + i];
  };
  for (int64_t i = 0; i < numMel; ++i) {
    int64_t lo = freq[i], center = freq[i + 1], hi = freq[i + 2];
    if (lo < 0 || hi > spectrogramBins || center >= spectrogramBins)
      return ctx.emitError() << "the mel bins fall outside the spectrogram";
    if (center == lo)
      at(center, i) = 1;
    else
      for (int64_t j = lo; j <= center; ++j)
        at(j, i) = double(j - lo) / double(center - lo);
    if (hi > center)
      for (int64_t j = center; j < hi; ++j)
        at(j, i) = double(hi - j) / double(hi - center);
  }
  ctx.setResult(0, ctx.constant({spectrogramBins, numMel}, et, out));
  return success();
}

void mlir::tcc::onnx::registerSignalOps(OpTable &t) {
  t.add("DFT", 17, 1, 2, 1, importDFT);
  t.add("DFT", 20, 1, 3, 1, importDFT);
  t.add("STFT", 17, 2, 4, 1, importSTFT);
  t.add("HannWindow", 17, 1, 1, 1, importWindow<Window::Hann>);
  t.add("HammingWindow", 17, 1, 1, 1, importWindow<Window::Hamming>);
  t.add("BlackmanWindow", 17, 1, 1, 1, importWindow<Window::Blackman>);
  t.add("MelWeightMatrix", 17, 5, 5, 1, importMelWeightMatrix);
}
