//===- Tensor.cpp - tcc::Tensor: creation, reading, autograd, ops ---------===//

#include "compiler/Frontends/Tracer/Recorder.h"

#include "dialects/Tcc/IR/TccBuilder.h"
#include "dialects/Tcc/IR/TccShapes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>

namespace m = mlir;
namespace td = mlir::tcc;
namespace shapes = mlir::tcc::shapes;

namespace tcc {
using detail::recorder;
using detail::Recorder;
using detail::Storage;
using detail::TensorImpl;

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::f32:
    return "f32";
  case DType::f64:
    return "f64";
  case DType::i64:
    return "i64";
  case DType::boolean:
    return "bool";
  }
  return "?";
}

static std::string typeStr(DType dtype, const Shape &shape) {
  std::string s = std::string(dtypeName(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s + "]";
}

static int64_t count(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw Error("tcc: negative dimension in " + typeStr(DType::f32, shape));
    n *= d;
  }
  return n;
}

static bool isFloat(DType d) { return d == DType::f32 || d == DType::f64; }

Tensor::Tensor() = default;
Tensor::Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

static const TensorImpl &need(const Tensor &t, const char *what) {
  if (!t.defined())
    throw Error(std::string("tcc::") + what + ": the tensor is undefined");
  return *t.impl();
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

template <typename T>
static Tensor fromHost(const std::vector<T> &values, Shape shape, DType dtype,
                       const char *what) {
  if (static_cast<int64_t>(values.size()) != count(shape))
    throw Error(std::string("tcc::Tensor::") + what + ": " +
                std::to_string(values.size()) + " values for " +
                typeStr(dtype, shape));
  auto data = recorder().allocate(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(data->data, values.data(), values.size() * sizeof(T));
  return Tensor(recorder().leaf(dtype, std::move(shape), std::move(data)));
}

Tensor Tensor::fromVector(const std::vector<float> &values, Shape shape) {
  return fromHost(values, std::move(shape), DType::f32, "fromVector");
}
Tensor Tensor::fromDoubles(const std::vector<double> &values, Shape shape) {
  return fromHost(values, std::move(shape), DType::f64, "fromDoubles");
}
Tensor Tensor::fromInts(const std::vector<int64_t> &values, Shape shape) {
  return fromHost(values, std::move(shape), DType::i64, "fromInts");
}

template <typename Fn>
static Tensor generate(Shape shape, DType dtype, Fn &&next) {
  int64_t n = count(shape);
  auto data = recorder().allocate(n * detail::dtypeBytes(dtype));
  for (int64_t i = 0; i < n; ++i) {
    double v = next();
    switch (dtype) {
    case DType::f32:
      static_cast<float *>(data->data)[i] = static_cast<float>(v);
      break;
    case DType::f64:
      static_cast<double *>(data->data)[i] = v;
      break;
    case DType::i64:
      static_cast<int64_t *>(data->data)[i] = static_cast<int64_t>(v);
      break;
    case DType::boolean:
      static_cast<uint8_t *>(data->data)[i] = v != 0;
      break;
    }
  }
  return Tensor(recorder().leaf(dtype, std::move(shape), std::move(data)));
}

Tensor Tensor::full(Shape shape, double value, DType dtype) {
  return generate(std::move(shape), dtype, [&] { return value; });
}
Tensor Tensor::zeros(Shape shape, DType dtype) {
  return full(std::move(shape), 0, dtype);
}
Tensor Tensor::ones(Shape shape, DType dtype) {
  return full(std::move(shape), 1, dtype);
}
Tensor Tensor::scalar(double value, DType dtype) {
  return full({}, value, dtype);
}
Tensor Tensor::uniform(Shape shape, double low, double high, DType dtype) {
  std::uniform_real_distribution<double> dist(low, high);
  return generate(std::move(shape), dtype,
                  [&] { return dist(recorder().rng()); });
}
Tensor Tensor::randn(Shape shape, DType dtype) {
  std::normal_distribution<double> dist(0.0, 1.0);
  return generate(std::move(shape), dtype,
                  [&] { return dist(recorder().rng()); });
}

void manualSeed(uint64_t seed) { recorder().rng().seed(seed); }

//===----------------------------------------------------------------------===//
// Properties, autograd, reading
//===----------------------------------------------------------------------===//

const Shape &Tensor::shape() const { return need(*this, "shape").shape; }
DType Tensor::dtype() const { return need(*this, "dtype").dtype; }
int64_t Tensor::numel() const { return count(shape()); }
int64_t Tensor::size(int64_t d) const {
  int64_t rank = dim();
  if (d < -rank || d >= rank)
    throw Error("tcc::Tensor::size: dimension " + std::to_string(d) +
                " is out of range for " + typeStr(dtype(), shape()));
  return shape()[d < 0 ? d + rank : d];
}
bool Tensor::isMaterialized() const {
  return need(*this, "isMaterialized").data != nullptr;
}

bool Tensor::requiresGrad() const {
  return recorder().isActive(need(*this, "requiresGrad").value);
}
bool Tensor::isLeaf() const {
  const TensorImpl &impl = need(*this, "isLeaf");
  return impl.requiresGrad || !recorder().isActive(impl.value);
}

Tensor &Tensor::requiresGrad_(bool requires) {
  need(*this, "requiresGrad_");
  TensorImpl &impl = *impl_;
  if (!isFloat(impl.dtype))
    throw Error("tcc::Tensor::requiresGrad_: only floating-point tensors can "
                "require gradients; this one is " +
                typeStr(impl.dtype, impl.shape));
  if (!isLeaf())
    throw Error("tcc::Tensor::requiresGrad_: only leaves can; this tensor is "
                "computed from one that requires grad (use detach())");
  Recorder &r = recorder();
  if (!requires) {
    impl.requiresGrad = false;
    return *this;
  }
  // A leaf is a block argument: compute a pending value first.
  if (impl.value.getDefiningOp() && !r.argData(impl.value))
    r.sync();
  if (impl.value.getDefiningOp())
    throw Error("tcc::Tensor::requiresGrad_: internal error: not a leaf");
  impl.requiresGrad = true;
  r.markActive(impl.value);
  return *this;
}

Tensor Tensor::grad() const {
  const TensorImpl &impl = need(*this, "grad");
  return impl.grad ? Tensor(impl.grad) : Tensor();
}

void Tensor::setGrad(const Tensor &grad) {
  need(*this, "setGrad");
  if (grad.defined() && (grad.shape() != shape() || grad.dtype() != dtype()))
    throw Error("tcc::Tensor::setGrad: the gradient is " +
                typeStr(grad.dtype(), grad.shape()) + ", the tensor " +
                typeStr(dtype(), shape()));
  impl_->grad = grad.impl();
}

void Tensor::backward(const Tensor &gradient) const {
  need(*this, "backward");
  recorder().backward(*impl_,
                      gradient.defined() ? gradient.impl().get() : nullptr);
}

/// A value of its own equal to `x` (a reshape to the same shape, which the
/// one builder would skip).
static Tensor identity(const Tensor &x) {
  Recorder &r = recorder();
  const TensorImpl &impl = *x.impl();
  m::Value v = r.build("detach", [&]() -> m::FailureOr<m::Value> {
    return r.builder()
        .create<td::ReshapeOp>(r.loc(), impl.value.getType(), impl.value)
        .getResult();
  });
  return Tensor(r.result(v, {}));
}

Tensor Tensor::detach() const {
  need(*this, "detach");
  Recorder &r = recorder();
  if (impl_->data)
    return Tensor(r.leaf(impl_->dtype, impl_->shape, impl_->data));
  return identity(*this);
}

Tensor &Tensor::assign(const Tensor &value) {
  need(*this, "assign");
  need(value, "assign");
  if (value.shape() != shape() || value.dtype() != dtype())
    throw Error("tcc::Tensor::assign: cannot assign " +
                typeStr(value.dtype(), value.shape()) + " to " +
                typeStr(dtype(), shape()));
  Recorder &r = recorder();
  if (impl_->requiresGrad && r.gradEnabled())
    throw Error("tcc::Tensor::assign: a leaf that requires grad can be "
                "assigned only under NoGradGuard");
  if (!impl_->requiresGrad) {
    impl_->value = value.impl()->value;
    impl_->data = value.impl()->data;
    return *this;
  }
  // A leaf that requires grad needs a value of its own to stay a leaf.
  Tensor own = identity(value);
  impl_->value = own.impl()->value;
  impl_->data = nullptr;
  r.markActive(impl_->value);
  return *this;
}

static const Storage &read(const Tensor &t, const char *what) {
  need(t, what);
  return recorder().dataOf(*t.impl());
}

template <typename T>
static std::vector<T> convert(const Tensor &t, const char *what) {
  const Storage &s = read(t, what);
  int64_t n = t.numel();
  std::vector<T> out(n);
  for (int64_t i = 0; i < n; ++i) {
    switch (t.dtype()) {
    case DType::f32:
      out[i] = static_cast<T>(static_cast<const float *>(s.data)[i]);
      break;
    case DType::f64:
      out[i] = static_cast<T>(static_cast<const double *>(s.data)[i]);
      break;
    case DType::i64:
      out[i] = static_cast<T>(static_cast<const int64_t *>(s.data)[i]);
      break;
    case DType::boolean:
      out[i] = static_cast<T>(static_cast<const uint8_t *>(s.data)[i]);
      break;
    }
  }
  return out;
}

double Tensor::item() const {
  need(*this, "item");
  if (numel() != 1)
    throw Error("tcc::Tensor::item: the tensor has " + std::to_string(numel()) +
                " elements (" + typeStr(dtype(), shape()) + "), not one");
  return convert<double>(*this, "item")[0];
}
std::vector<float> Tensor::toVector() const {
  return convert<float>(*this, "toVector");
}
std::vector<double> Tensor::toDoubles() const {
  return convert<double>(*this, "toDoubles");
}
std::vector<int64_t> Tensor::toInts() const {
  return convert<int64_t>(*this, "toInts");
}

std::string Tensor::str() const {
  if (!defined())
    return "Tensor(undefined)";
  std::vector<double> v = toDoubles();
  std::ostringstream os;
  os << "Tensor(" << typeStr(dtype(), shape()) << ", [";
  for (size_t i = 0; i < v.size() && i < 16; ++i)
    os << (i ? ", " : "") << v[i];
  if (v.size() > 16)
    os << ", ...";
  os << "])";
  return os.str();
}

void sync() { recorder().sync(); }

Stats stats() { return recorder().stats; }

void setCompileConfig(const CompileConfig &config) {
  recorder().config = config;
}

NoGradGuard::NoGradGuard() { ++recorder().noGradDepth; }
NoGradGuard::~NoGradGuard() { --recorder().noGradDepth; }
bool isGradEnabled() { return recorder().gradEnabled(); }

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

namespace {
/// Builds the ops of one tensor operation, named `what` in errors, through
/// the one builder; a failure's diagnostic becomes the Error thrown.
struct OpBuilder {
  explicit OpBuilder(const char *what)
      : what(what), r(recorder()), tb(r.builder(), r.loc()) {
    tb.setFolding(false); // every op a tensor of its own, as recorded
  }
  const char *what;
  Recorder &r;
  td::TccBuilder tb;
  m::Type elementType(DType dtype) {
    return m::cast<m::RankedTensorType>(r.tensorType(dtype, {}))
        .getElementType();
  }
  Tensor make(const std::function<m::FailureOr<m::Value>()> &fn,
              std::vector<const TensorImpl *> inputs) {
    m::Value v = r.build(what, fn);
    return Tensor(r.result(v, std::move(inputs)));
  }
  [[noreturn]] void fail(const std::string &message) {
    throw Error(std::string("tcc::") + what + ": " + message);
  }
};
} // namespace

static m::Value val(const Tensor &t) { return t.impl()->value; }

/// A constant tensor (scalars for arithmetic with doubles, iotas...).
static Tensor constant(DType dtype, const Shape &shape,
                       const std::vector<double> &values) {
  OpBuilder ob("constant");
  return ob.make(
      [&] { return ob.tb.constant(shape, ob.elementType(dtype), values); }, {});
}

static Tensor scalarLike(const Tensor &t, double v) {
  return constant(t.dtype(), {}, {v});
}

/// Both operands defined and of one dtype.
static void needSameDtype(OpBuilder &ob, const Tensor &a, const Tensor &c) {
  need(a, ob.what);
  need(c, ob.what);
  if (a.dtype() != c.dtype())
    ob.fail("operands are " + typeStr(a.dtype(), a.shape()) + " and " +
            typeStr(c.dtype(), c.shape()) + "; their dtypes differ");
}

template <typename OpTy>
static Tensor binary(const char *what, const Tensor &a, const Tensor &c) {
  OpBuilder ob(what);
  needSameDtype(ob, a, c);
  return ob.make([&] { return ob.tb.binary<OpTy>(val(a), val(c)); },
                 {a.impl().get(), c.impl().get()});
}

Tensor operator+(const Tensor &a, const Tensor &b) {
  return binary<td::AddOp>("add", a, b);
}
Tensor operator-(const Tensor &a, const Tensor &b) {
  return binary<td::SubOp>("sub", a, b);
}
Tensor operator*(const Tensor &a, const Tensor &b) {
  return binary<td::MulOp>("mul", a, b);
}
Tensor operator/(const Tensor &a, const Tensor &b) {
  return binary<td::DivOp>("div", a, b);
}
Tensor operator+(const Tensor &a, double b) { return a + scalarLike(a, b); }
Tensor operator-(const Tensor &a, double b) { return a - scalarLike(a, b); }
Tensor operator*(const Tensor &a, double b) { return a * scalarLike(a, b); }
Tensor operator/(const Tensor &a, double b) { return a / scalarLike(a, b); }
Tensor operator+(double a, const Tensor &b) { return scalarLike(b, a) + b; }
Tensor operator-(double a, const Tensor &b) { return scalarLike(b, a) - b; }
Tensor operator*(double a, const Tensor &b) { return scalarLike(b, a) * b; }
Tensor operator/(double a, const Tensor &b) { return scalarLike(b, a) / b; }
Tensor maximum(const Tensor &a, const Tensor &b) {
  return binary<td::MaxOp>("maximum", a, b);
}
Tensor minimum(const Tensor &a, const Tensor &b) {
  return binary<td::MinOp>("minimum", a, b);
}

static Tensor compare(const char *what, td::ComparePredicate predicate,
                      const Tensor &a, const Tensor &c) {
  OpBuilder ob(what);
  needSameDtype(ob, a, c);
  return ob.make([&] { return ob.tb.compare(predicate, val(a), val(c)); }, {});
}
Tensor eq(const Tensor &a, const Tensor &b) {
  return compare("eq", td::ComparePredicate::eq, a, b);
}
Tensor gt(const Tensor &a, const Tensor &b) {
  return compare("gt", td::ComparePredicate::gt, a, b);
}
Tensor lt(const Tensor &a, const Tensor &b) {
  return compare("lt", td::ComparePredicate::lt, a, b);
}

Tensor where(const Tensor &condition, const Tensor &a, const Tensor &c) {
  OpBuilder ob("where");
  need(condition, "where");
  if (condition.dtype() != DType::boolean)
    ob.fail("the condition is " +
            typeStr(condition.dtype(), condition.shape()) + ", not bool");
  if (a.dtype() != c.dtype())
    ob.fail("the branches' dtypes differ");
  return ob.make([&] { return ob.tb.select(val(condition), val(a), val(c)); },
                 {a.impl().get(), c.impl().get()});
}

template <typename OpTy>
static Tensor unary(const char *what, const Tensor &x, bool floatOnly = true) {
  OpBuilder ob(what);
  need(x, what);
  if (floatOnly && !isFloat(x.dtype()))
    ob.fail("needs a floating-point tensor, not " +
            typeStr(x.dtype(), x.shape()));
  return ob.make([&] { return ob.tb.unary<OpTy>(val(x)); }, {x.impl().get()});
}

Tensor Tensor::operator-() const {
  return unary<td::NegOp>("neg", *this, /*floatOnly=*/false);
}
Tensor Tensor::relu() const { return unary<td::ReluOp>("relu", *this); }
Tensor Tensor::tanh() const { return unary<td::TanhOp>("tanh", *this); }
Tensor Tensor::sigmoid() const {
  return unary<td::SigmoidOp>("sigmoid", *this);
}
Tensor Tensor::exp() const { return unary<td::ExpOp>("exp", *this); }
Tensor Tensor::log() const { return unary<td::LogOp>("log", *this); }
Tensor Tensor::sqrt() const { return unary<td::SqrtOp>("sqrt", *this); }
Tensor Tensor::abs() const {
  return unary<td::AbsOp>("abs", *this, /*floatOnly=*/false);
}

Tensor Tensor::gelu(bool tanhApproximation) const {
  OpBuilder ob("gelu");
  need(*this, "gelu");
  if (!isFloat(dtype()))
    ob.fail("needs a floating-point tensor");
  auto kind = td::GeluApproximationAttr::get(
      &ob.r.context(), tanhApproximation ? td::GeluApproximation::tanh
                                         : td::GeluApproximation::none);
  return ob.make(
      [&] {
        return ob.tb.build<td::GeluOp>({val(*this)},
                                       {ob.tb.attr("approximate", kind)});
      },
      {impl_.get()});
}

Tensor Tensor::pow(double exponent) const {
  if (exponent == 2)
    return *this * *this;
  return binary<td::PowOp>("pow", *this, scalarLike(*this, exponent));
}

Tensor Tensor::clamp(double min, double max) const {
  OpBuilder ob("clamp");
  need(*this, "clamp");
  if (min > max)
    ob.fail("min " + std::to_string(min) + " exceeds max " +
            std::to_string(max));
  return ob.make([&] { return ob.tb.clamp(val(*this), min, max); },
                 {impl_.get()});
}

Tensor Tensor::to(DType target) const {
  need(*this, "to");
  if (target == dtype())
    return *this;
  OpBuilder ob("to");
  return ob.make([&] { return ob.tb.cast(val(*this), ob.elementType(target)); },
                 {impl_.get()});
}

static int64_t normDim(const char *what, int64_t d, int64_t rank) {
  if (d < -rank || d >= rank)
    throw Error(std::string("tcc::") + what + ": dimension " +
                std::to_string(d) + " is out of range for rank " +
                std::to_string(rank));
  return d < 0 ? d + rank : d;
}

Tensor Tensor::reshape(Shape target) const {
  OpBuilder ob("reshape");
  need(*this, "reshape");
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (inferred >= 0)
        ob.fail("only one dimension can be -1");
      inferred = static_cast<int64_t>(i);
    } else if (target[i] < 0) {
      ob.fail("negative dimension " + std::to_string(target[i]));
    } else {
      known *= target[i];
    }
  }
  if (inferred >= 0 && known > 0 && numel() % known == 0)
    target[inferred] = numel() / known;
  if ((inferred >= 0 && (known == 0 || numel() % known != 0)) ||
      (inferred < 0 && known != numel())) {
    std::string to;
    for (size_t i = 0; i < target.size(); ++i)
      to += (i ? "x" : "") + std::to_string(target[i]);
    ob.fail("cannot reshape " + typeStr(dtype(), shape()) + " (" +
            std::to_string(numel()) + " elements) to [" + to + "]");
  }
  if (target == shape())
    return *this;
  return ob.make([&] { return ob.tb.reshape(val(*this), target); },
                 {impl_.get()});
}

Tensor Tensor::flatten(int64_t startDim) const {
  int64_t start = normDim("flatten", startDim, std::max<int64_t>(dim(), 1));
  Shape target(shape().begin(), shape().begin() + std::min(start, dim()));
  target.push_back(-1);
  return reshape(target);
}

Tensor Tensor::permute(std::vector<int64_t> dims) const {
  OpBuilder ob("permute");
  need(*this, "permute");
  if (static_cast<int64_t>(dims.size()) != dim())
    ob.fail(std::to_string(dims.size()) + " dimensions for a tensor of rank " +
            std::to_string(dim()));
  for (int64_t &d : dims)
    d = normDim("permute", d, dim());
  return ob.make([&] { return ob.tb.transpose(val(*this), dims); },
                 {impl_.get()});
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  int64_t rank = need(*this, "transpose").shape.size();
  dim0 = normDim("transpose", dim0, rank);
  dim1 = normDim("transpose", dim1, rank);
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[dim0], perm[dim1]);
  return permute(perm);
}

Tensor Tensor::unsqueeze(int64_t d) const {
  d = normDim("unsqueeze", d, dim() + 1);
  Shape s = shape();
  s.insert(s.begin() + d, 1);
  return reshape(s);
}

Tensor Tensor::squeeze(int64_t d) const {
  d = normDim("squeeze", d, dim());
  Shape s = shape();
  if (s[d] != 1)
    return *this;
  s.erase(s.begin() + d);
  return reshape(s);
}

Tensor Tensor::expand(Shape target) const {
  OpBuilder ob("expand");
  need(*this, "expand");
  if (!shapes::broadcastsTo(shape(), target))
    ob.fail(typeStr(dtype(), shape()) + " does not broadcast to " +
            typeStr(dtype(), target));
  if (target == shape())
    return *this;
  return ob.make([&] { return ob.tb.broadcastTo(val(*this), target); },
                 {impl_.get()});
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end,
                     int64_t step) const {
  OpBuilder ob("slice");
  need(*this, "slice");
  d = normDim("slice", d, dim());
  if (step <= 0)
    ob.fail("the step must be positive, not " + std::to_string(step));
  int64_t n = shape()[d];
  auto clampIndex = [&](int64_t i) {
    if (i < 0)
      i += n;
    return std::min(std::max<int64_t>(i, 0), n);
  };
  start = clampIndex(start);
  end = clampIndex(end);
  int64_t len = end > start ? (end - start + step - 1) / step : 0;
  return ob.make(
      [&] { return ob.tb.sliceAxis(val(*this), d, start, len, step); },
      {impl_.get()});
}

template <typename OpTy>
static Tensor reduce(const char *what, const Tensor &x,
                     std::vector<int64_t> dims, bool keepdim,
                     bool floatOnly = false) {
  OpBuilder ob(what);
  need(x, what);
  if (floatOnly && !isFloat(x.dtype()))
    ob.fail("needs a floating-point tensor");
  for (int64_t &d : dims)
    d = normDim(what, d, x.dim());
  std::sort(dims.begin(), dims.end());
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end())
    ob.fail("a dimension is listed twice");
  return ob.make([&] { return ob.tb.reduce<OpTy>(val(x), dims, keepdim); },
                 {x.impl().get()});
}

static std::vector<int64_t> allDims(const Tensor &t) {
  std::vector<int64_t> dims(t.dim());
  std::iota(dims.begin(), dims.end(), 0);
  return dims;
}

Tensor Tensor::sum() const { return sum(allDims(*this), false); }
Tensor Tensor::sum(std::vector<int64_t> dims, bool keepdim) const {
  return reduce<td::ReduceSumOp>("sum", *this, std::move(dims), keepdim);
}
Tensor Tensor::mean() const { return mean(allDims(*this), false); }
Tensor Tensor::mean(std::vector<int64_t> dims, bool keepdim) const {
  return reduce<td::ReduceMeanOp>("mean", *this, std::move(dims), keepdim,
                                  /*floatOnly=*/true);
}
Tensor Tensor::max(int64_t d, bool keepdim) const {
  return reduce<td::ReduceMaxOp>("max", *this, {d}, keepdim);
}

Tensor Tensor::argmax(int64_t d, bool keepdim) const {
  OpBuilder ob("argmax");
  need(*this, "argmax");
  d = normDim("argmax", d, dim());
  return ob.make(
      [&] { return ob.tb.argReduce<td::ArgMaxOp>(val(*this), d, keepdim); },
      {});
}

template <typename OpTy>
static Tensor softmaxLike(const char *what, const Tensor &x, int64_t d) {
  OpBuilder ob(what);
  need(x, what);
  if (!isFloat(x.dtype()))
    ob.fail("needs a floating-point tensor");
  d = normDim(what, d, x.dim());
  return ob.make([&] { return ob.tb.softmax<OpTy>(val(x), d); },
                 {x.impl().get()});
}

Tensor Tensor::softmax(int64_t d) const {
  return softmaxLike<td::SoftmaxOp>("softmax", *this, d);
}
Tensor Tensor::logSoftmax(int64_t d) const {
  return softmaxLike<td::LogSoftmaxOp>("logSoftmax", *this, d);
}
Tensor softmax(const Tensor &x, int64_t dim) { return x.softmax(dim); }
Tensor logSoftmax(const Tensor &x, int64_t dim) { return x.logSoftmax(dim); }

Tensor Tensor::matmul(const Tensor &other) const {
  OpBuilder ob("matmul");
  needSameDtype(ob, *this, other);
  return ob.make([&] { return ob.tb.matmul(val(*this), val(other)); },
                 {impl_.get(), other.impl().get()});
}
Tensor matmul(const Tensor &a, const Tensor &b) { return a.matmul(b); }

Tensor linear(const Tensor &x, const Tensor &weight, const Tensor &bias) {
  Tensor y = x.matmul(weight.t());
  return bias.defined() ? y + bias : y;
}

static std::vector<int64_t> pair(const char *what, const char *name,
                                 std::vector<int64_t> v) {
  if (v.size() == 1)
    v.push_back(v[0]);
  if (v.size() != 2)
    throw Error(std::string("tcc::") + what + ": " + name +
                " needs 1 or 2 values, not " + std::to_string(v.size()));
  return v;
}

Tensor conv2d(const Tensor &input, const Tensor &weight, const Tensor &bias,
              std::vector<int64_t> stride, std::vector<int64_t> padding,
              std::vector<int64_t> dilation, int64_t groups) {
  OpBuilder ob("conv2d");
  need(input, "conv2d");
  need(weight, "conv2d");
  stride = pair("conv2d", "stride", stride);
  padding = pair("conv2d", "padding", padding);
  dilation = pair("conv2d", "dilation", dilation);
  if (input.dim() != 4 || weight.dim() != 4)
    ob.fail("needs a 4-d input and weight, not " +
            typeStr(input.dtype(), input.shape()) + " and " +
            typeStr(weight.dtype(), weight.shape()));
  if (input.dtype() != weight.dtype() ||
      (bias.defined() && bias.dtype() != input.dtype()))
    ob.fail("the operands' dtypes differ");
  std::vector<int64_t> pads = {padding[0], padding[1], padding[0], padding[1]};
  return ob.make(
      [&] {
        return ob.tb.conv(val(input), val(weight),
                          bias.defined() ? val(bias) : m::Value(), stride, pads,
                          dilation, groups);
      },
      {input.impl().get(), weight.impl().get(),
       bias.defined() ? bias.impl().get() : nullptr});
}

template <typename OpTy>
static Tensor pool2d(const char *what, const Tensor &input,
                     std::vector<int64_t> kernel, std::vector<int64_t> stride,
                     std::vector<int64_t> padding) {
  OpBuilder ob(what);
  need(input, what);
  kernel = pair(what, "kernel", kernel);
  stride = stride.empty() ? kernel : pair(what, "stride", stride);
  padding = pair(what, "padding", padding);
  if (input.dim() != 4)
    ob.fail("needs a 4-d input, not " + typeStr(input.dtype(), input.shape()));
  std::vector<int64_t> pads = {padding[0], padding[1], padding[0], padding[1]};
  std::vector<int64_t> dilations = {1, 1};
  return ob.make(
      [&] {
        return ob.tb.pool<OpTy>(val(input), kernel, stride, pads, dilations,
                                /*ceilMode=*/false);
      },
      {input.impl().get()});
}

Tensor maxPool2d(const Tensor &input, std::vector<int64_t> kernel,
                 std::vector<int64_t> stride, std::vector<int64_t> padding) {
  return pool2d<td::MaxPoolOp>("maxPool2d", input, kernel, stride, padding);
}
Tensor avgPool2d(const Tensor &input, std::vector<int64_t> kernel,
                 std::vector<int64_t> stride, std::vector<int64_t> padding) {
  return pool2d<td::AvgPoolOp>("avgPool2d", input, kernel, stride, padding);
}

Tensor cat(const std::vector<Tensor> &tensors, int64_t d) {
  OpBuilder ob("cat");
  if (tensors.empty())
    ob.fail("no tensors to concatenate");
  std::vector<const TensorImpl *> inputs;
  llvm::SmallVector<m::Value> values;
  for (const Tensor &t : tensors) {
    need(t, "cat");
    if (t.dtype() != tensors[0].dtype())
      ob.fail("the tensors' dtypes differ");
    inputs.push_back(t.impl().get());
    values.push_back(val(t));
  }
  d = normDim("cat", d, tensors[0].dim());
  return ob.make([&] { return ob.tb.concat(values, d); }, inputs);
}

Tensor crossEntropy(const Tensor &logits, const Tensor &targets) {
  OpBuilder ob("crossEntropy");
  need(logits, "crossEntropy");
  need(targets, "crossEntropy");
  if (logits.dim() != 2)
    throw Error("tcc::crossEntropy: the logits must be [N, C], not " +
                typeStr(logits.dtype(), logits.shape()));
  if (targets.dtype() != DType::i64 || targets.dim() != 1 ||
      targets.size(0) != logits.size(0))
    throw Error("tcc::crossEntropy: the targets must be i64[" +
                std::to_string(logits.size(0)) + "] class indices, not " +
                typeStr(targets.dtype(), targets.shape()));
  Tensor logProbs = logits.logSoftmax(1);
  return ob.make(
      [&] {
        return ob.tb.nllLoss(val(logProbs), val(targets), m::Value(),
                             td::LossReduction::mean, std::nullopt);
      },
      {logProbs.impl().get()});
}

Tensor mseLoss(const Tensor &input, const Tensor &target) {
  need(input, "mseLoss");
  need(target, "mseLoss");
  if (input.shape() != target.shape())
    throw Error("tcc::mseLoss: the input is " +
                typeStr(input.dtype(), input.shape()) + ", the target " +
                typeStr(target.dtype(), target.shape()));
  Tensor d = input - target;
  return (d * d).mean();
}

Tensor layerNorm(const Tensor &x, const Shape &normalizedShape,
                 const Tensor &weight, const Tensor &bias, double eps) {
  OpBuilder ob("layerNorm");
  need(x, "layerNorm");
  int64_t k = static_cast<int64_t>(normalizedShape.size());
  if (k == 0 || k > x.dim() ||
      !std::equal(normalizedShape.begin(), normalizedShape.end(),
                  x.shape().end() - k))
    ob.fail("the normalized shape must be the trailing dimensions of " +
            typeStr(x.dtype(), x.shape()));
  Tensor scale = weight.defined()
                     ? weight
                     : constant(x.dtype(), normalizedShape,
                                std::vector<double>(count(normalizedShape), 1));
  llvm::SmallVector<m::Value, 3> operands = {val(x), val(scale)};
  if (bias.defined())
    operands.push_back(val(bias));
  m::OpBuilder &b = ob.r.builder();
  return ob.make(
      [&] {
        return ob.tb.build<td::LayerNormOp>(
            operands, {ob.tb.attr("axis", b.getI64IntegerAttr(x.dim() - k)),
                       ob.tb.attr("epsilon", b.getF64FloatAttr(eps))});
      },
      {x.impl().get(), scale.impl().get(),
       bias.defined() ? bias.impl().get() : nullptr});
}

} // namespace tcc
