//===- Nn.cpp - modules, optimizers and whole-function tracing ------------===//

#include "compiler/Frontends/Tracer/Recorder.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace m = mlir;

namespace tcc {
using detail::recorder;
using detail::Storage;
using detail::TensorImpl;

//===----------------------------------------------------------------------===//
// Modules
//===----------------------------------------------------------------------===//

namespace nn {

Module::~Module() = default;

Tensor Module::registerParameter(const std::string &name, Tensor value) {
  value.requiresGrad_(true);
  params_.emplace_back(name, std::move(value));
  return params_.back().second;
}

void Module::registerModule(const std::string &name,
                            std::shared_ptr<Module> child) {
  children_.emplace_back(name, std::move(child));
}

std::vector<std::pair<std::string, Tensor>> Module::namedParameters() const {
  std::vector<std::pair<std::string, Tensor>> out(params_.begin(),
                                                  params_.end());
  for (const auto &[name, child] : children_)
    for (auto &[sub, t] : child->namedParameters())
      out.emplace_back(name + "." + sub, t);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto &[name, t] : namedParameters())
    out.push_back(t);
  return out;
}

void Module::zeroGrad() {
  for (Tensor &t : parameters())
    t.setGrad(Tensor());
}

Linear::Linear(int64_t in, int64_t out, bool bias) {
  if (in <= 0 || out <= 0)
    throw Error("tcc::nn::Linear: sizes must be positive, not " +
                std::to_string(in) + " and " + std::to_string(out));
  // torch.nn.Linear: kaiming_uniform(a=sqrt(5)) = U(+-1/sqrt(in)), and the
  // same bound for the bias.
  double bound = 1.0 / std::sqrt(static_cast<double>(in));
  weight_ =
      registerParameter("weight", Tensor::uniform({out, in}, -bound, bound));
  if (bias)
    bias_ = registerParameter("bias", Tensor::uniform({out}, -bound, bound));
}

Tensor Linear::forward(const Tensor &input) {
  return linear(input, weight_, bias_);
}

Conv2d::Conv2d(int64_t in, int64_t out, int64_t k, int64_t stride,
               int64_t padding, bool bias)
    : stride_(stride), padding_(padding) {
  if (in <= 0 || out <= 0 || k <= 0 || stride <= 0 || padding < 0)
    throw Error("tcc::nn::Conv2d: invalid sizes");
  double bound = 1.0 / std::sqrt(static_cast<double>(in * k * k));
  weight_ = registerParameter("weight",
                              Tensor::uniform({out, in, k, k}, -bound, bound));
  if (bias)
    bias_ = registerParameter("bias", Tensor::uniform({out}, -bound, bound));
}

Tensor Conv2d::forward(const Tensor &input) {
  return conv2d(input, weight_, bias_, {stride_, stride_},
                {padding_, padding_});
}

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> mods) {
  for (const auto &mod : mods)
    add(mod);
}

Sequential &Sequential::add(std::shared_ptr<Module> module) {
  registerModule(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
  return *this;
}

Tensor Sequential::forward(const Tensor &input) {
  Tensor x = input;
  for (auto &mod : modules_)
    x = mod->forward(x);
  return x;
}

} // namespace nn

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

namespace optim {

Optimizer::Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {
  for (const Tensor &p : params_)
    if (!p.defined() || !p.impl()->requiresGrad)
      throw Error("tcc::optim: every parameter must be a leaf with "
                  "requiresGrad_()");
}

Optimizer::~Optimizer() = default;

void Optimizer::zeroGrad() {
  for (Tensor &p : params_)
    p.setGrad(Tensor());
}

SGD::SGD(std::vector<Tensor> params, double lr, double momentum,
         double weightDecay, bool nesterov)
    : Optimizer(std::move(params)), lr_(lr), momentum_(momentum),
      weightDecay_(weightDecay), nesterov_(nesterov) {
  if (lr < 0 || momentum < 0 || weightDecay < 0)
    throw Error("tcc::optim::SGD: lr, momentum and weight decay must not be "
                "negative");
  if (nesterov && momentum == 0)
    throw Error("tcc::optim::SGD: Nesterov momentum needs a momentum");
  // Zero momenta give PyTorch's first step (buf = grad) and let every step
  // record the same graph.
  if (momentum_ != 0)
    for (const Tensor &p : params_)
      buffers_.push_back(Tensor::zeros(p.shape(), p.dtype()));
}

void SGD::step() {
  NoGradGuard guard;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor &p = params_[i];
    Tensor g = p.grad();
    if (!g.defined())
      continue;
    if (weightDecay_ != 0)
      g = g + p * weightDecay_;
    if (momentum_ != 0) {
      Tensor &buf = buffers_[i];
      buf.assign(buf * momentum_ + g);
      g = nesterov_ ? g + buf * momentum_ : buf;
    }
    p.assign(p - g * lr_);
  }
}

std::vector<Tensor> SGD::state() const { return buffers_; }

AdamW::AdamW(std::vector<Tensor> params, double lr, double beta1, double beta2,
             double eps, double weightDecay)
    : Optimizer(std::move(params)), lr_(lr), beta1_(beta1), beta2_(beta2),
      eps_(eps), weightDecay_(weightDecay) {
  if (lr < 0 || eps < 0 || weightDecay < 0 || beta1 < 0 || beta1 >= 1 ||
      beta2 < 0 || beta2 >= 1)
    throw Error("tcc::optim::AdamW: needs lr, eps, weight decay >= 0 and "
                "betas in [0, 1)");
  DType dtype = params_.empty() ? DType::f32 : params_[0].dtype();
  step_ = Tensor::scalar(0, dtype);
  for (const Tensor &p : params_) {
    m_.push_back(Tensor::zeros(p.shape(), p.dtype()));
    v_.push_back(Tensor::zeros(p.shape(), p.dtype()));
  }
}

void AdamW::step() {
  NoGradGuard guard;
  step_.assign(step_ + 1.0);
  // Bias corrections from the step count in the graph: 1 - beta^t.
  Tensor c1 = 1.0 - (step_ * std::log(beta1_)).exp();
  Tensor c2 = 1.0 - (step_ * std::log(beta2_)).exp();
  Tensor stepSize = lr_ / c1;
  Tensor c2Sqrt = c2.sqrt();
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor &p = params_[i];
    Tensor g = p.grad();
    if (!g.defined())
      continue;
    if (weightDecay_ != 0)
      p.assign(p * (1.0 - lr_ * weightDecay_));
    m_[i].assign(m_[i] * beta1_ + g * (1.0 - beta1_));
    v_[i].assign(v_[i] * beta2_ + g * g * (1.0 - beta2_));
    Tensor denom = v_[i].sqrt() / c2Sqrt + eps_;
    p.assign(p - stepSize * m_[i] / denom);
  }
}

std::vector<Tensor> AdamW::state() const {
  std::vector<Tensor> out{step_};
  out.insert(out.end(), m_.begin(), m_.end());
  out.insert(out.end(), v_.begin(), v_.end());
  return out;
}

} // namespace optim

//===----------------------------------------------------------------------===//
// trace()
//===----------------------------------------------------------------------===//

struct Function::Impl {
  m::OwningOpRef<m::ModuleOp> module;
  std::unique_ptr<detail::Compiled> compiled;
  std::vector<detail::TensorType> inputTypes, outputTypes;
  std::vector<Tensor> state;
  size_t numOutputs = 0; ///< the function's own, before the state's
};

Function::Function() = default;
Function::~Function() = default;
Function::Function(Function &&) noexcept = default;
Function &Function::operator=(Function &&) noexcept = default;
Function::Function(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

static Function::Impl &needImpl(const std::unique_ptr<Function::Impl> &impl) {
  if (!impl)
    throw Error("tcc::Function: empty (made by the default constructor)");
  return *impl;
}

size_t Function::numInputs() const {
  return needImpl(impl_).inputTypes.size() - impl_->state.size();
}
size_t Function::numOutputs() const { return needImpl(impl_).numOutputs; }

std::string Function::mlir() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  needImpl(impl_).module->print(os);
  return text;
}

static void writeAtomically(const std::string &path, const std::string &text) {
  std::string tmp = path + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      throw Error("tcc::Function: cannot write '" + path +
                  "': " + ec.message());
    os << text;
    os.close();
    if (os.has_error()) {
      llvm::sys::fs::remove(tmp);
      throw Error("tcc::Function: cannot write '" + path + "'");
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    throw Error("tcc::Function: cannot write '" + path + "': " + ec.message());
  }
}

void Function::saveMlir(const std::string &path) const {
  writeAtomically(path, mlir());
}

void Function::save(const std::string &path) const {
  Impl &impl = needImpl(impl_);
  // compile() writes through a temporary file and loads the result; a
  // failure leaves nothing at `path`.
  std::unique_ptr<detail::Compiled> compiled =
      recorder().compile(*impl.module, path);
  compiled->path.clear(); // keep the files
}

std::vector<Tensor> Function::operator()(const std::vector<Tensor> &inputs) {
  Impl &impl = needImpl(impl_);
  auto &r = recorder();
  size_t nIn = impl.inputTypes.size() - impl.state.size();
  if (inputs.size() != nIn)
    throw Error("tcc::Function: " + std::to_string(inputs.size()) +
                " inputs given, the function takes " + std::to_string(nIn));
  std::vector<const Storage *> inPtrs;
  for (size_t i = 0; i < nIn; ++i) {
    const Tensor &t = inputs[i];
    const detail::TensorType &want = impl.inputTypes[i];
    if (!t.defined() || t.shape() != want.shape || t.dtype() != want.dtype)
      throw Error("tcc::Function: input " + std::to_string(i) + " must be " +
                  dtypeName(want.dtype) + " of the traced shape");
  }
  std::vector<Tensor> all(inputs.begin(), inputs.end());
  all.insert(all.end(), impl.state.begin(), impl.state.end());
  for (const Tensor &t : all)
    inPtrs.push_back(&r.dataOf(*t.impl()));
  std::vector<std::shared_ptr<Storage>> outData;
  std::vector<Storage *> outPtrs;
  for (const detail::TensorType &t : impl.outputTypes) {
    outData.push_back(r.allocate(t.bytes()));
    outPtrs.push_back(outData.back().get());
  }
  r.run(*impl.compiled, impl.inputTypes, inPtrs, impl.outputTypes, outPtrs);
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < impl.numOutputs; ++i)
    outputs.emplace_back(r.leaf(impl.outputTypes[i].dtype,
                                impl.outputTypes[i].shape, outData[i]));
  // The state now holds its new values (leaves keep requiring grad).
  for (size_t i = 0; i < impl.state.size(); ++i) {
    TensorImpl &s = *impl.state[i].impl();
    auto fresh = r.leaf(s.dtype, s.shape, outData[impl.numOutputs + i]);
    s.value = fresh->value;
    s.data = fresh->data;
    s.grad.reset();
    if (s.requiresGrad)
      r.markActive(s.value);
  }
  // The state's previous values (and their data) are garbage now.
  r.collect();
  return outputs;
}

Function
trace(const std::function<std::vector<Tensor>(const std::vector<Tensor> &)> &fn,
      const std::vector<Tensor> &exampleInputs,
      const std::vector<Tensor> &state) {
  auto &r = recorder();
  if (r.tracing)
    throw Error("tcc::trace: already tracing (trace() does not nest)");
  r.sync();
  auto impl = std::make_unique<Function::Impl>();
  llvm::SmallVector<m::Value> fixed;
  std::vector<Tensor> placeholders;
  for (const Tensor &t : exampleInputs) {
    if (!t.defined())
      throw Error("tcc::trace: an example input is undefined");
    placeholders.emplace_back(r.placeholder(t.dtype(), t.shape()));
    fixed.push_back(placeholders.back().impl()->value);
    impl->inputTypes.push_back(placeholders.back().impl()->type());
  }
  // The state as it is now: its values, gradients and data are restored
  // after tracing, so that tracing changes nothing.
  struct Saved {
    m::Value value;
    std::shared_ptr<Storage> data;
    std::shared_ptr<TensorImpl> grad;
  };
  std::vector<Saved> saved;
  for (const Tensor &s : state) {
    if (!s.defined())
      throw Error("tcc::trace: a state tensor is undefined");
    TensorImpl &si = *s.impl();
    if (si.value.getDefiningOp())
      throw Error("tcc::trace: state tensors must be leaves (parameters, "
                  "optimizer state), not results of operations");
    saved.push_back({si.value, si.data, si.grad});
    fixed.push_back(si.value);
    impl->inputTypes.push_back(si.type());
  }

  auto restore = [&] {
    for (size_t i = 0; i < state.size(); ++i) {
      state[i].impl()->value = saved[i].value;
      state[i].impl()->data = saved[i].data;
      state[i].impl()->grad = saved[i].grad;
    }
  };
  std::vector<Tensor> outputs;
  r.tracing = true;
  try {
    outputs = fn(placeholders);
  } catch (...) {
    r.tracing = false;
    restore();
    throw;
  }
  r.tracing = false;

  llvm::SmallVector<m::Value> results;
  for (const Tensor &t : outputs) {
    if (!t.defined()) {
      restore();
      throw Error("tcc::trace: the function returned an undefined tensor");
    }
    results.push_back(t.impl()->value);
    impl->outputTypes.push_back(t.impl()->type());
  }
  impl->numOutputs = outputs.size();
  for (const Tensor &s : state) {
    results.push_back(s.impl()->value);
    impl->outputTypes.push_back(s.impl()->type());
  }
  restore();

  llvm::SmallVector<m::Value> inputs;
  impl->module = r.extract(results, inputs, &fixed);
  // Names in the artifact's header.
  auto main = impl->module->lookupSymbol<m::func::FuncOp>("main");
  m::Builder nb(&r.context());
  for (size_t i = 0; i < fixed.size(); ++i)
    main.setArgAttr(
        i, "tcc.name",
        nb.getStringAttr(i < exampleInputs.size()
                             ? "input" + std::to_string(i)
                             : "state" +
                                   std::to_string(i - exampleInputs.size())));
  for (size_t i = 0; i < results.size(); ++i)
    main.setResultAttr(
        i, "tcc.name",
        nb.getStringAttr(i < outputs.size()
                             ? "output" + std::to_string(i)
                             : "new_state" +
                                   std::to_string(i - outputs.size())));
  outputs.clear();
  placeholders.clear();
  r.collect();
  impl->state = state;
  impl->compiled = r.compile(*impl->module, r.freshPath("trace", ".so"));
  return Function(std::move(impl));
}

} // namespace tcc
