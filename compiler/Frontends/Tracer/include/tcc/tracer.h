//===- tcc/tracer.h - define-by-run tensors with autograd -------*- C++ -*-===//
//
// PyTorch-style tensors whose operations are recorded into the tcc dialect
// instead of being run one by one. Reading a value (item(), to_vector())
// compiles what was recorded into one native artifact, cached by the
// graph's structure, and runs it (LazyTensor style); tcc::compile captures a
// whole function, its backward pass and optimizer update included, as one
// artifact. See docs/tracer.md.
//
//   tcc::Tensor x = tcc::randn({64, 784});
//   tcc::Tensor w = tcc::randn({784, 10}).requires_grad_();
//   tcc::Tensor loss = tcc::matmul(x, w).relu().sum();
//   loss.backward();
//   std::vector<float> g = w.grad().to_vector<float>();
//
// Misuse (mismatched shapes, backward through a released graph, reading a
// value inside tcc::compile) throws tcc::TracerError with a message naming
// the operation, the shapes and the module it happened in.
//
// Not thread-safe: one thread records and runs at a time.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_TRACER_H
#define TCC_TRACER_H

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcc {

/// Element types, numbered as tcc's artifacts number them (ONNX's
/// TensorProto.DataType).
enum class DType : int32_t {
  Float32 = 1,
  Int32 = 6,
  Int64 = 7,
  Bool = 9,
  Float64 = 11,
};
constexpr DType kFloat32 = DType::Float32;
constexpr DType kFloat64 = DType::Float64;
constexpr DType kInt32 = DType::Int32;
constexpr DType kInt64 = DType::Int64;
constexpr DType kBool = DType::Bool;
const char *dtypeName(DType dtype);
bool isFloatingPoint(DType dtype);

using Shape = std::vector<int64_t>;

/// A misuse of the API or a failure to compile or run what was recorded.
class TracerError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

enum class Reduction { None, Mean, Sum };

namespace detail {
struct TensorImpl;
} // namespace detail

class Tensor;
using Tensors = std::vector<Tensor>;

/// A handle on a tensor: copies share it (as PyTorch tensors do). Its value
/// is either known (materialized) or pending in the recording.
class Tensor {
public:
  /// An undefined tensor (defined() is false), e.g. a missing gradient.
  Tensor() = default;
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl);

  bool defined() const { return impl_ != nullptr; }
  const Shape &shape() const;
  const Shape &sizes() const { return shape(); }
  /// Size of dimension `dim` (negative counts from the end).
  int64_t size(int64_t dim) const;
  int64_t dim() const;
  int64_t numel() const;
  DType dtype() const;
  /// "float32[64, 784]" and whether it requires grad; never materializes.
  std::string toString() const;
  /// The name artifacts give this tensor when it is captured (parameters
  /// are named after their module path).
  const std::string &name() const;
  Tensor &setName(std::string name);

  // Values. Reading a pending value runs the recording.
  /// The single element, converted to double.
  double item() const;
  template <typename T> T item() const { return static_cast<T>(item()); }
  /// Every element in row-major order, converted to T.
  template <typename T> std::vector<T> to_vector() const;
  bool is_materialized() const;

  // Autograd.
  bool requires_grad() const;
  /// Makes a leaf require (or stop requiring) gradients; returns *this.
  Tensor &requires_grad_(bool requiresGrad = true);
  /// The accumulated gradient of a leaf (undefined before backward()).
  Tensor grad() const;
  void set_grad(const Tensor &grad);
  bool is_leaf() const;
  /// Adds d(this)/d(leaf) . `grad` to the .grad() of every leaf that
  /// requires grad. `grad` may be omitted for a one-element tensor. The
  /// graph is released unless `retainGraph`.
  void backward(const Tensor &grad = Tensor(), bool retainGraph = false) const;
  /// The same value without history.
  Tensor detach() const;

  // Conversions and shapes.
  Tensor to(DType dtype) const;
  /// One dimension may be -1.
  Tensor reshape(const Shape &shape) const;
  Tensor view(const Shape &shape) const { return reshape(shape); }
  Tensor flatten(int64_t startDim = 0, int64_t endDim = -1) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(int64_t dim) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor permute(const Shape &dims) const;
  /// Transpose of a matrix.
  Tensor t() const;
  Tensor expand(const Shape &shape) const;
  /// Elements [start, end) with `step` along `dim`; negative start/end count
  /// from the end and are clamped as in Python.
  Tensor slice(int64_t dim, int64_t start, int64_t end,
               int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  /// Index `index` of `dim`, which disappears.
  Tensor select(int64_t dim, int64_t index) const;

  // Math.
  Tensor sum() const;
  Tensor sum(const Shape &dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(const Shape &dims, bool keepdim = false) const;
  Tensor amax(const Shape &dims, bool keepdim = false) const;
  Tensor amin(const Shape &dims, bool keepdim = false) const;
  Tensor max() const;
  Tensor min() const;
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  Tensor matmul(const Tensor &other) const;
  Tensor relu() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor abs() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor pow(double exponent) const;
  Tensor clamp(double min, double max) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;

  // In-place updates: the tensor's value is replaced (other handles on the
  // same tensor see the new value). A leaf that requires grad may only be
  // updated under NoGradGuard.
  Tensor &add_(const Tensor &other, double alpha = 1.0);
  Tensor &sub_(const Tensor &other, double alpha = 1.0);
  Tensor &mul_(const Tensor &other);
  Tensor &mul_(double factor);
  Tensor &div_(const Tensor &other);
  /// Takes `source`'s value (broadcast and converted to this tensor's shape
  /// and dtype).
  Tensor &copy_(const Tensor &source);
  Tensor &fill_(double value);
  Tensor &zero_() { return fill_(0.0); }
  Tensor &operator+=(const Tensor &other) { return add_(other); }
  Tensor &operator-=(const Tensor &other) { return sub_(other); }
  Tensor &operator*=(const Tensor &other) { return mul_(other); }
  Tensor &operator/=(const Tensor &other) { return div_(other); }

  detail::TensorImpl *impl() const { return impl_.get(); }
  const std::shared_ptr<detail::TensorImpl> &implPtr() const { return impl_; }

private:
  std::shared_ptr<detail::TensorImpl> impl_;
};

extern template std::vector<float> Tensor::to_vector<float>() const;
extern template std::vector<double> Tensor::to_vector<double>() const;
extern template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
extern template std::vector<int32_t> Tensor::to_vector<int32_t>() const;
extern template std::vector<bool> Tensor::to_vector<bool>() const;

//===----------------------------------------------------------------------===//
// Creating tensors (materialized at once; random numbers come from tcc's
// own generator, seeded by manual_seed)
//===----------------------------------------------------------------------===//

/// `values` in row-major order; `shape` defaults to [values.size()].
Tensor tensor(const std::vector<float> &values, Shape shape = {});
Tensor tensor(const std::vector<double> &values, Shape shape = {});
Tensor tensor(const std::vector<int64_t> &values, Shape shape = {});
/// A rank-0 tensor.
Tensor scalar_tensor(double value, DType dtype = kFloat32);
Tensor zeros(const Shape &shape, DType dtype = kFloat32);
Tensor ones(const Shape &shape, DType dtype = kFloat32);
Tensor full(const Shape &shape, double value, DType dtype = kFloat32);
Tensor zeros_like(const Tensor &like);
Tensor ones_like(const Tensor &like);
/// 0, 1, ..., end-1.
Tensor arange(int64_t end, DType dtype = kInt64);
/// Uniform in [0, 1).
Tensor rand(const Shape &shape, DType dtype = kFloat32);
/// Standard normal.
Tensor randn(const Shape &shape, DType dtype = kFloat32);
/// Uniform in [low, high).
Tensor uniform(const Shape &shape, double low, double high,
               DType dtype = kFloat32);
/// Integers uniform in [low, high), int64.
Tensor randint(int64_t low, int64_t high, const Shape &shape);
void manual_seed(uint64_t seed);
/// A .npy (or .pb) file, and back.
Tensor load(const std::string &path);
void save(const Tensor &tensor, const std::string &path);

//===----------------------------------------------------------------------===//
// Operations (recorded; operands broadcast numpy-style; mixed dtypes
// promote: bool < integers < float32 < float64)
//===----------------------------------------------------------------------===//

Tensor operator+(const Tensor &a, const Tensor &b);
Tensor operator-(const Tensor &a, const Tensor &b);
Tensor operator*(const Tensor &a, const Tensor &b);
Tensor operator/(const Tensor &a, const Tensor &b);
Tensor operator+(const Tensor &a, double b);
Tensor operator-(const Tensor &a, double b);
Tensor operator*(const Tensor &a, double b);
Tensor operator/(const Tensor &a, double b);
Tensor operator+(double a, const Tensor &b);
Tensor operator-(double a, const Tensor &b);
Tensor operator*(double a, const Tensor &b);
Tensor operator/(double a, const Tensor &b);
Tensor operator-(const Tensor &a);
/// Elementwise comparisons give bool tensors.
Tensor operator<(const Tensor &a, const Tensor &b);
Tensor operator<=(const Tensor &a, const Tensor &b);
Tensor operator>(const Tensor &a, const Tensor &b);
Tensor operator>=(const Tensor &a, const Tensor &b);
Tensor operator==(const Tensor &a, const Tensor &b);
Tensor operator!=(const Tensor &a, const Tensor &b);
Tensor operator<(const Tensor &a, double b);
Tensor operator>(const Tensor &a, double b);
Tensor operator==(const Tensor &a, double b);

Tensor add(const Tensor &a, const Tensor &b, double alpha = 1.0);
Tensor sub(const Tensor &a, const Tensor &b, double alpha = 1.0);
Tensor mul(const Tensor &a, const Tensor &b);
Tensor div(const Tensor &a, const Tensor &b);
Tensor fmod(const Tensor &a, const Tensor &b);
Tensor pow(const Tensor &a, const Tensor &exponent);
Tensor pow(const Tensor &a, double exponent);
Tensor maximum(const Tensor &a, const Tensor &b);
Tensor minimum(const Tensor &a, const Tensor &b);
/// `condition ? a : b`.
Tensor where(const Tensor &condition, const Tensor &a, const Tensor &b);
Tensor clamp(const Tensor &x, double min, double max);
Tensor clamp_min(const Tensor &x, double min);

Tensor neg(const Tensor &x);
Tensor abs(const Tensor &x);
Tensor sign(const Tensor &x);
Tensor relu(const Tensor &x);
/// `approximate`: "none" (exact, through erf) or "tanh".
Tensor gelu(const Tensor &x, const std::string &approximate = "none");
Tensor exp(const Tensor &x);
Tensor log(const Tensor &x);
Tensor sqrt(const Tensor &x);
Tensor rsqrt(const Tensor &x);
Tensor reciprocal(const Tensor &x);
Tensor tanh(const Tensor &x);
Tensor sigmoid(const Tensor &x);
Tensor erf(const Tensor &x);
Tensor sin(const Tensor &x);
Tensor cos(const Tensor &x);
Tensor tan(const Tensor &x);
Tensor asin(const Tensor &x);
Tensor acos(const Tensor &x);
Tensor atan(const Tensor &x);
Tensor sinh(const Tensor &x);
Tensor cosh(const Tensor &x);
Tensor asinh(const Tensor &x);
Tensor acosh(const Tensor &x);
Tensor atanh(const Tensor &x);
Tensor floor(const Tensor &x);
Tensor ceil(const Tensor &x);
Tensor round(const Tensor &x);

/// Sums over `dims` (all of them when empty).
Tensor sum(const Tensor &x, const Shape &dims = {}, bool keepdim = false);
Tensor mean(const Tensor &x, const Shape &dims = {}, bool keepdim = false);
Tensor amax(const Tensor &x, const Shape &dims = {}, bool keepdim = false);
Tensor amin(const Tensor &x, const Shape &dims = {}, bool keepdim = false);
Tensor prod(const Tensor &x, const Shape &dims = {}, bool keepdim = false);
Tensor argmax(const Tensor &x, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor &x, int64_t dim, bool keepdim = false);
Tensor cumsum(const Tensor &x, int64_t dim);
Tensor cumprod(const Tensor &x, int64_t dim);
/// The k largest elements along `dim` and their (int64) indices.
Tensors topk(const Tensor &x, int64_t k, int64_t dim = -1);

/// numpy.matmul (1-D operands, broadcast batches).
Tensor matmul(const Tensor &a, const Tensor &b);
/// x @ weight^T + bias (PyTorch's layout: weight is [out, in]).
Tensor linear(const Tensor &x, const Tensor &weight,
              const Tensor &bias = Tensor());
/// NCHW input, [out, in/groups, kh, kw] weight.
Tensor conv2d(const Tensor &input, const Tensor &weight,
              const Tensor &bias = Tensor(), Shape stride = {1, 1},
              Shape padding = {0, 0}, Shape dilation = {1, 1},
              int64_t groups = 1);
/// `stride` defaults to the kernel.
Tensor max_pool2d(const Tensor &input, Shape kernel, Shape stride = {},
                  Shape padding = {0, 0}, Shape dilation = {1, 1},
                  bool ceilMode = false);
Tensor avg_pool2d(const Tensor &input, Shape kernel, Shape stride = {},
                  Shape padding = {0, 0}, bool ceilMode = false,
                  bool countIncludePad = true);
Tensor softmax(const Tensor &x, int64_t dim);
Tensor log_softmax(const Tensor &x, int64_t dim);
/// Normalizes over the trailing `normalizedShape.size()` dimensions.
Tensor layer_norm(const Tensor &x, const Shape &normalizedShape,
                  const Tensor &weight = Tensor(),
                  const Tensor &bias = Tensor(), double eps = 1e-5);
/// Inference batch norm with given statistics (NCHW, channels on dim 1).
Tensor batch_norm(const Tensor &x, const Tensor &runningMean,
                  const Tensor &runningVar, const Tensor &weight,
                  const Tensor &bias, double eps = 1e-5);
/// `logits` [N, C]; `target` int64 class indices [N] or float probabilities
/// [N, C].
Tensor cross_entropy(const Tensor &logits, const Tensor &target,
                     Reduction reduction = Reduction::Mean);
/// `logProbs` [N, C], `target` int64 [N].
Tensor nll_loss(const Tensor &logProbs, const Tensor &target,
                Reduction reduction = Reduction::Mean);
Tensor mse_loss(const Tensor &input, const Tensor &target,
                Reduction reduction = Reduction::Mean);
/// Class indices to float one-hot rows.
Tensor one_hot(const Tensor &indices, int64_t numClasses,
               DType dtype = kFloat32);

Tensor reshape(const Tensor &x, const Shape &shape);
Tensor transpose(const Tensor &x, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor &x, const Shape &dims);
Tensor cat(const Tensors &tensors, int64_t dim = 0);
Tensor stack(const Tensors &tensors, int64_t dim = 0);
/// Pieces of `sizes` along `dim`.
Tensors split(const Tensor &x, const Shape &sizes, int64_t dim = 0);
/// Rows of `x` along `dim` picked by the int64 `indices` (index_select).
Tensor index_select(const Tensor &x, int64_t dim, const Tensor &indices);
/// Constant padding: `pads` lists (begin, end) per dimension from the last
/// one backwards, as torch.nn.functional.pad.
Tensor pad(const Tensor &x, const Shape &pads, double value = 0.0);

//===----------------------------------------------------------------------===//
// Autograd mode
//===----------------------------------------------------------------------===//

/// While one lives, operations record no history (optimizer updates,
/// evaluation).
class NoGradGuard {
public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard &) = delete;
  NoGradGuard &operator=(const NoGradGuard &) = delete;

private:
  bool previous;
};
bool is_grad_enabled();

/// Names the scope operations are recorded in (nn::Module does this), for
/// error messages and the locations of the recorded IR.
class ScopeGuard {
public:
  explicit ScopeGuard(const std::string &name);
  ~ScopeGuard();
  ScopeGuard(const ScopeGuard &) = delete;
  ScopeGuard &operator=(const ScopeGuard &) = delete;
};

//===----------------------------------------------------------------------===//
// Running what was recorded
//===----------------------------------------------------------------------===//

/// How recorded graphs are compiled and run.
struct TracerOptions {
  /// LLVM optimization level of the artifacts.
  int optLevel = 3;
  /// Threads each run may use (0: one per CPU; TCC_NUM_THREADS overrides).
  int numThreads = 0;
  /// The recording is run by itself once it holds this many ops, so that
  /// a loop that never reads a value does not grow one endless graph.
  int maxPendingOps = 20000;
};
void setOptions(const TracerOptions &options);
const TracerOptions &options();

/// Materializes every pending tensor that is still referenced: the
/// recording is compiled (or found in the cache) and run as one graph.
void sync();

struct TracerStats {
  int64_t compiles = 0;  ///< Graphs compiled.
  int64_t cacheHits = 0; ///< Graphs found already compiled.
  int64_t runs = 0;      ///< Artifact runs.
  double compileSeconds = 0;
  double runSeconds = 0;
};
TracerStats stats();
/// The tcc IR (before the compiler's passes) of the graph run last.
std::string lastGraphIR();

/// A function captured once (per input signature) as one artifact: its
/// forward computation, backward() calls and in-place updates (optimizer
/// steps) all in one graph. Each call runs the artifact: the inputs and
/// every tensor the function read (parameters, gradients, optimizer state)
/// go in; what it returns and every tensor it updated in place (and every
/// .grad it set) come out and are written back. See docs/tracer.md for what
/// is and is not captured.
class CompiledFunction {
public:
  using Fn = std::function<Tensors(const Tensors &)>;
  CompiledFunction() = default;
  explicit CompiledFunction(Fn fn, std::string name = "step");

  Tensors operator()(const Tensors &inputs);
  template <typename... T> Tensors operator()(const T &...inputs) {
    return (*this)(Tensors{inputs...});
  }

  /// The captured function in the tcc dialect (what `tcc --emit=tcc`
  /// compiles), for the signature called last (or traced with trace()).
  std::string ir() const;
  /// Writes that IR to a .mlir file.
  void saveIR(const std::string &path) const;
  /// Copies the artifact to `path` (a .so the runtime loads by itself; its
  /// inputs and outputs are named: explicit inputs "input<i>", state by the
  /// tensors' names, updated state "<name>.next", gradients "<name>.grad",
  /// results "output<i>").
  void save(const std::string &path) const;
  /// Captures (if not done for this signature) without running.
  void trace(const Tensors &exampleInputs);
  /// How many signatures were captured.
  int numTraces() const;

  struct Impl;

private:
  std::shared_ptr<Impl> impl_;
};

/// Captures `fn` on its first call with each input signature.
CompiledFunction compile(CompiledFunction::Fn fn,
                         const std::string &name = "step");
/// Captures `fn` now, for the signature of `exampleInputs`.
CompiledFunction trace(CompiledFunction::Fn fn, const Tensors &exampleInputs,
                       const std::string &name = "step");

} // namespace tcc

#endif // TCC_TRACER_H
