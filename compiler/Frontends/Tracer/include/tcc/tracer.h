//===- tracer.h - define-by-run tensors with autograd, compiled by tcc
//-----===//
//
// The public C++ API of the tracer (docs/tracer.md). Programs are written the
// way PyTorch users write them; every operation is recorded into the `tcc`
// dialect instead of being run. Reading a value (item(), to_vector(), sync())
// compiles everything still pending into one artifact, cached by the graph's
// structure, and runs it: a training loop compiles its forward pass,
// backward pass and optimizer update once, then reuses the artifact every
// step. backward() differentiates the recorded ops with the dialect's own
// vector-Jacobian rules, the same ones the tcc-autodiff pass uses.
//
// This header includes no MLIR or LLVM header.
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
#include <utility>
#include <vector>

namespace tcc {

/// Every misuse (a shape mismatch, backward() on a non-scalar without a
/// gradient, reading a traced input...) throws this, with what happened and
/// where.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

using Shape = std::vector<int64_t>;

enum class DType { f32, f64, i64, boolean };
const char *dtypeName(DType dtype);

namespace detail {
struct TensorImpl;
} // namespace detail

class Tensor {
public:
  /// An undefined tensor (as a missing gradient).
  Tensor();

  //===--- Creation (on the host; a new leaf) ---------------------------===//
  static Tensor fromVector(const std::vector<float> &values, Shape shape);
  static Tensor fromDoubles(const std::vector<double> &values, Shape shape);
  static Tensor fromInts(const std::vector<int64_t> &values, Shape shape);
  static Tensor scalar(double value, DType dtype = DType::f32);
  static Tensor zeros(Shape shape, DType dtype = DType::f32);
  static Tensor ones(Shape shape, DType dtype = DType::f32);
  static Tensor full(Shape shape, double value, DType dtype = DType::f32);
  /// Uniform in [low, high) / standard normal, from a seeded generator
  /// (tcc::manualSeed).
  static Tensor uniform(Shape shape, double low, double high,
                        DType dtype = DType::f32);
  static Tensor randn(Shape shape, DType dtype = DType::f32);

  //===--- Properties ---------------------------------------------------===//
  bool defined() const { return impl_ != nullptr; }
  const Shape &shape() const;
  int64_t dim() const { return static_cast<int64_t>(shape().size()); }
  /// Size of dimension `d` (negative counts from the end).
  int64_t size(int64_t d) const;
  int64_t numel() const;
  DType dtype() const;
  /// Whether the value is known on the host without running anything.
  bool isMaterialized() const;

  //===--- Autograd ----------------------------------------------------===//
  bool requiresGrad() const;
  /// Makes this tensor a leaf that gradients accumulate into. Only leaves
  /// (tensors no gradient flows through) and floating-point tensors can.
  Tensor &requiresGrad_(bool requires = true);
  bool isLeaf() const;
  /// The accumulated gradient of a leaf; undefined before backward().
  Tensor grad() const;
  void setGrad(const Tensor &grad);
  /// Accumulates d(this)/d(leaf) * gradient into every leaf's grad().
  /// `gradient` may be omitted only when this tensor has one element.
  void backward(const Tensor &gradient = Tensor()) const;
  /// The same value, cut from the graph (no gradient flows through it).
  Tensor detach() const;
  /// In place: this tensor now holds `value` (same shape and dtype). A
  /// leaf stays a leaf; meant for optimizer updates under NoGradGuard.
  Tensor &assign(const Tensor &value);

  //===--- Reading (runs what is pending) ------------------------------===//
  double item() const;
  std::vector<float> toVector() const;
  std::vector<double> toDoubles() const;
  std::vector<int64_t> toInts() const;
  std::string str() const;

  //===--- Operations (recorded) ---------------------------------------===//
  Tensor operator-() const;
  Tensor matmul(const Tensor &other) const;
  Tensor relu() const;
  Tensor gelu(bool tanhApproximation = false) const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor abs() const;
  Tensor pow(double exponent) const;
  Tensor clamp(double min, double max) const;
  Tensor to(DType dtype) const;
  Tensor reshape(Shape shape) const; ///< one dimension may be -1
  Tensor view(Shape shape) const { return reshape(std::move(shape)); }
  Tensor flatten(int64_t startDim = 0) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const { return transpose(0, 1); }
  Tensor permute(std::vector<int64_t> dims) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(int64_t dim) const;
  Tensor expand(Shape shape) const;
  /// Elements start, start+step, ... < end along `dim` (Python slicing,
  /// negative indices from the end, clamped).
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor sum() const;
  Tensor sum(std::vector<int64_t> dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(std::vector<int64_t> dims, bool keepdim = false) const;
  Tensor max(int64_t dim, bool keepdim = false) const;
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  Tensor softmax(int64_t dim) const;
  Tensor logSoftmax(int64_t dim) const;

  /// The implementation, for the library's own code.
  const std::shared_ptr<detail::TensorImpl> &impl() const { return impl_; }
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl);

private:
  std::shared_ptr<detail::TensorImpl> impl_;
};

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
Tensor maximum(const Tensor &a, const Tensor &b);
Tensor minimum(const Tensor &a, const Tensor &b);
/// Element-wise comparisons: bool tensors.
Tensor eq(const Tensor &a, const Tensor &b);
Tensor gt(const Tensor &a, const Tensor &b);
Tensor lt(const Tensor &a, const Tensor &b);
Tensor where(const Tensor &condition, const Tensor &a, const Tensor &b);

Tensor matmul(const Tensor &a, const Tensor &b);
/// y = x W^T + b (W is out x in), as torch.nn.functional.linear.
Tensor linear(const Tensor &x, const Tensor &weight,
              const Tensor &bias = Tensor());
/// NCHW input, weight out x in/groups x kh x kw.
Tensor conv2d(const Tensor &input, const Tensor &weight,
              const Tensor &bias = Tensor(),
              std::vector<int64_t> stride = {1, 1},
              std::vector<int64_t> padding = {0, 0},
              std::vector<int64_t> dilation = {1, 1}, int64_t groups = 1);
Tensor maxPool2d(const Tensor &input, std::vector<int64_t> kernel,
                 std::vector<int64_t> stride = {},
                 std::vector<int64_t> padding = {0, 0});
Tensor avgPool2d(const Tensor &input, std::vector<int64_t> kernel,
                 std::vector<int64_t> stride = {},
                 std::vector<int64_t> padding = {0, 0});
Tensor cat(const std::vector<Tensor> &tensors, int64_t dim = 0);
Tensor softmax(const Tensor &x, int64_t dim);
Tensor logSoftmax(const Tensor &x, int64_t dim);
/// Mean negative log-likelihood of `targets` (class indices, i64, shape
/// [N]) under `logits` ([N, C]), as torch.nn.functional.cross_entropy.
Tensor crossEntropy(const Tensor &logits, const Tensor &targets);
Tensor mseLoss(const Tensor &input, const Tensor &target);
/// Normalizes over the trailing dimensions `normalizedShape`.
Tensor layerNorm(const Tensor &x, const Shape &normalizedShape,
                 const Tensor &weight = Tensor(), const Tensor &bias = Tensor(),
                 double eps = 1e-5);

/// Gradients are not recorded while one is alive (optimizer updates,
/// evaluation).
class NoGradGuard {
public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard &) = delete;
  NoGradGuard &operator=(const NoGradGuard &) = delete;
};
bool isGradEnabled();

/// Seeds the generator of uniform() and randn().
void manualSeed(uint64_t seed);

/// Runs everything pending now (as reading any value does).
void sync();

/// What the tracer's compile cache did so far (this thread).
struct Stats {
  int64_t compiles = 0;      ///< graphs compiled
  int64_t cacheHits = 0;     ///< runs that reused a compiled graph
  int64_t runs = 0;          ///< artifact runs
  double compileSeconds = 0; ///< time spent compiling
};
Stats stats();

/// Options of every compile (tcc's CLI flags of the same names).
struct CompileConfig {
  std::string mcpu;              ///< "" = the host
  std::string ukernels = "auto"; ///< auto, none, generic, avx2, avx512
  int32_t numThreads = 0;        ///< threads a run uses; 0 = all CPUs
  /// Where graphs compiled from now on are kept (created if missing);
  /// "" = a folder of the process's own under $TMPDIR, removed at exit.
  std::string cacheDir;
};
void setCompileConfig(const CompileConfig &config);

//===----------------------------------------------------------------------===//
// Whole-function capture
//===----------------------------------------------------------------------===//

/// A function captured by trace(): one artifact computing its outputs (and
/// the new values of its state) from its inputs (and the old ones).
class Function {
public:
  Function();
  ~Function();
  Function(Function &&) noexcept;
  Function &operator=(Function &&) noexcept;

  /// Runs the artifact. Inputs must match the example inputs' shapes and
  /// dtypes; state tensors are updated in place.
  std::vector<Tensor> operator()(const std::vector<Tensor> &inputs);
  /// The captured program in the tcc dialect (func.func @main); `tcc` takes
  /// it as a .mlir input (`tcc f.mlir --emit=tcc` shows it after fusion).
  std::string mlir() const;
  void saveMlir(const std::string &path) const;
  /// Writes a shared library (and its C header next to it) that the
  /// runtime runs alone: inputs first, then state; outputs first, then the
  /// new state.
  void save(const std::string &path) const;
  size_t numInputs() const;
  size_t numOutputs() const;

  struct Impl;

private:
  explicit Function(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend Function
  trace(const std::function<std::vector<Tensor>(const std::vector<Tensor> &)> &,
        const std::vector<Tensor> &, const std::vector<Tensor> &);
};

/// Records `fn` once on placeholders shaped like `exampleInputs` and
/// compiles it into one artifact. `state` lists tensors that `fn` reads and
/// updates in place (parameters, optimizer moments): they become inputs
/// and outputs of the artifact instead of constants, so a whole training
/// step (forward, backward, update) is one compiled function. Tensors `fn`
/// reads that are neither become constants. Reading a value inside `fn`
/// is an error: what runs must not depend on the data.
Function
trace(const std::function<std::vector<Tensor>(const std::vector<Tensor> &)> &fn,
      const std::vector<Tensor> &exampleInputs,
      const std::vector<Tensor> &state = {});

//===----------------------------------------------------------------------===//
// Modules
//===----------------------------------------------------------------------===//

namespace nn {

class Module {
public:
  virtual ~Module();
  virtual Tensor forward(const Tensor &input) = 0;
  Tensor operator()(const Tensor &input) { return forward(input); }
  /// This module's parameters, then its children's, in registration order.
  std::vector<Tensor> parameters() const;
  std::vector<std::pair<std::string, Tensor>> namedParameters() const;
  void zeroGrad();

protected:
  /// Makes `value` a parameter (requiresGrad_) and returns a handle to it.
  Tensor registerParameter(const std::string &name, Tensor value);
  void registerModule(const std::string &name, std::shared_ptr<Module> child);

private:
  std::vector<std::pair<std::string, Tensor>> params_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

/// y = x W^T + b, initialized as torch.nn.Linear (uniform in +-1/sqrt(in)).
class Linear : public Module {
public:
  Linear(int64_t inFeatures, int64_t outFeatures, bool bias = true);
  Tensor forward(const Tensor &input) override;
  /// Handles sharing the parameters' storage (an undefined bias if none).
  Tensor weight() const { return weight_; }
  Tensor bias() const { return bias_; }

private:
  Tensor weight_, bias_;
};

class Conv2d : public Module {
public:
  Conv2d(int64_t inChannels, int64_t outChannels, int64_t kernelSize,
         int64_t stride = 1, int64_t padding = 0, bool bias = true);
  Tensor forward(const Tensor &input) override;
  Tensor weight() const { return weight_; }
  Tensor bias() const { return bias_; }

private:
  int64_t stride_, padding_;
  Tensor weight_, bias_;
};

/// A module made of a function (ReLU, flattening...).
class Lambda : public Module {
public:
  explicit Lambda(std::function<Tensor(const Tensor &)> fn)
      : fn_(std::move(fn)) {}
  Tensor forward(const Tensor &input) override { return fn_(input); }

private:
  std::function<Tensor(const Tensor &)> fn_;
};

class ReLU : public Lambda {
public:
  ReLU() : Lambda([](const Tensor &x) { return x.relu(); }) {}
};

class Sequential : public Module {
public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  Sequential &add(std::shared_ptr<Module> module);
  Tensor forward(const Tensor &input) override;
  size_t size() const { return modules_.size(); }

private:
  std::vector<std::shared_ptr<Module>> modules_;
};

} // namespace nn

//===----------------------------------------------------------------------===//
// Optimizers (updates are recorded like everything else)
//===----------------------------------------------------------------------===//

namespace optim {

class Optimizer {
public:
  explicit Optimizer(std::vector<Tensor> params);
  virtual ~Optimizer();
  virtual void step() = 0;
  /// Drops every parameter's gradient (set to none, as PyTorch 2 does).
  void zeroGrad();
  const std::vector<Tensor> &params() const { return params_; }
  /// The optimizer's own tensors (momenta, step count): pass them with the
  /// parameters as trace()'s state.
  virtual std::vector<Tensor> state() const = 0;

protected:
  std::vector<Tensor> params_;
};

/// torch.optim.SGD: momentum, dampening 0, weight decay, optional Nesterov.
class SGD : public Optimizer {
public:
  SGD(std::vector<Tensor> params, double lr, double momentum = 0,
      double weightDecay = 0, bool nesterov = false);
  void step() override;
  std::vector<Tensor> state() const override;

private:
  double lr_, momentum_, weightDecay_;
  bool nesterov_;
  std::vector<Tensor> buffers_;
};

/// torch.optim.AdamW (decoupled weight decay, bias correction).
class AdamW : public Optimizer {
public:
  AdamW(std::vector<Tensor> params, double lr = 1e-3, double beta1 = 0.9,
        double beta2 = 0.999, double eps = 1e-8, double weightDecay = 1e-2);
  void step() override;
  std::vector<Tensor> state() const override;

private:
  double lr_, beta1_, beta2_, eps_, weightDecay_;
  Tensor step_; ///< f32 scalar, so every step records the same graph
  std::vector<Tensor> m_, v_;
};

} // namespace optim
} // namespace tcc

#endif // TCC_TRACER_H
