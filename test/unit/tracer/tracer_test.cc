// Tests of the define-by-run tracer (compiler/Frontends/Tracer): values of
// recorded ops against plain C++ loops, gradients against hand-derived ones,
// misuse errors and their messages, the compile cache, and trace() with saved
// artifacts run by the runtime alone. Training against PyTorch is in
// test/tracer/test_training.py.
#include "tcc/runtime.h"
#include "tcc/tracer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

using tcc::DType;
using tcc::Tensor;

namespace {

void expectNear(const std::vector<float> &got, const std::vector<float> &want,
                float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "at " << i;
}

std::string errorOf(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const tcc::Error &e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Tracer, ArithmeticBroadcastsAndReads) {
  Tensor a = Tensor::fromVector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::fromVector({10, 20, 30}, {3});
  Tensor c = (a + b) * 2.0 - 1.0;
  EXPECT_FALSE(c.isMaterialized());
  expectNear(c.toVector(), {21, 43, 65, 27, 49, 71});
  EXPECT_TRUE(c.isMaterialized());
  EXPECT_EQ(c.shape(), (tcc::Shape{2, 3}));
  expectNear((a / b).toVector(), {0.1f, 0.1f, 0.1f, 0.4f, 0.25f, 0.2f});
  EXPECT_DOUBLE_EQ(a.sum().item(), 21);
  expectNear(a.sum({0}).toVector(), {5, 7, 9});
  expectNear(a.mean({1}, true).toVector(), {2, 5});
  EXPECT_EQ(a.mean({1}, true).shape(), (tcc::Shape{2, 1}));
  expectNear(a.max(1).toVector(), {3, 6});
  EXPECT_EQ(a.argmax(1).toInts(), (std::vector<int64_t>{2, 2}));
}

TEST(Tracer, ShapesAndIndexing) {
  Tensor a = Tensor::fromVector({0, 1, 2, 3, 4, 5}, {2, 3});
  expectNear(a.t().toVector(), {0, 3, 1, 4, 2, 5});
  EXPECT_EQ(a.reshape({3, -1}).shape(), (tcc::Shape{3, 2}));
  expectNear(a.slice(1, 1, 3).toVector(), {1, 2, 4, 5});
  expectNear(a.slice(1, 0, 3, 2).toVector(), {0, 2, 3, 5});
  expectNear(a.slice(0, -1, 100).toVector(), {3, 4, 5});
  expectNear(tcc::cat({a, a.slice(0, 0, 1)}, 0).toVector(),
             {0, 1, 2, 3, 4, 5, 0, 1, 2});
  EXPECT_EQ(a.unsqueeze(0).shape(), (tcc::Shape{1, 2, 3}));
  EXPECT_EQ(a.flatten().shape(), (tcc::Shape{6}));
  expectNear(a.slice(0, 0, 1).expand({2, 3}).toVector(), {0, 1, 2, 0, 1, 2});
}

TEST(Tracer, NeuralNetworkOps) {
  Tensor x = Tensor::fromVector({1, 2, 3, 1, 1, 1}, {2, 3});
  std::vector<float> sm = x.softmax(1).toVector();
  float z = std::exp(1.f) + std::exp(2.f) + std::exp(3.f);
  expectNear(sm, {std::exp(1.f) / z, std::exp(2.f) / z, std::exp(3.f) / z,
                  1 / 3.f, 1 / 3.f, 1 / 3.f});
  expectNear(x.logSoftmax(1).toVector(),
             {std::log(sm[0]), std::log(sm[1]), std::log(sm[2]),
              std::log(1 / 3.f), std::log(1 / 3.f), std::log(1 / 3.f)});
  // Cross-entropy of class 2 and class 0.
  Tensor targets = Tensor::fromInts({2, 0}, {2});
  EXPECT_NEAR(tcc::crossEntropy(x, targets).item(),
              -(std::log(sm[2]) + std::log(1 / 3.f)) / 2, 1e-5);
  Tensor w = Tensor::fromVector({1, 0, -1, 0.5f, 0.5f, 0.5f}, {2, 3});
  Tensor bias = Tensor::fromVector({1, -1}, {2});
  expectNear(tcc::linear(x, w, bias).toVector(), {-1, 2, 1, 0.5f});
  // A 1x1x3x3 image, a 2x2 kernel of ones: sums of windows.
  Tensor img = Tensor::fromVector({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  Tensor k = Tensor::ones({1, 1, 2, 2});
  expectNear(tcc::conv2d(img, k).toVector(), {12, 16, 24, 28});
  expectNear(tcc::maxPool2d(img, {2}, {1}).toVector(), {5, 6, 8, 9});
  Tensor ln = tcc::layerNorm(x, {3});
  float s = std::sqrt(2.f / 3.f + 1e-5f);
  expectNear(ln.toVector(), {-1 / s, 0, 1 / s, 0, 0, 0}, 1e-4f);
  expectNear(tcc::mseLoss(x, Tensor::zeros({2, 3})).toVector(),
             {(1 + 4 + 9 + 3) / 6.f});
}

TEST(Tracer, BackwardOfElementwiseAndReductions) {
  Tensor x = Tensor::fromVector({1, -2, 3}, {3});
  x.requiresGrad_();
  Tensor y = (x * x).sum() + x.relu().sum() * 3.0;
  EXPECT_TRUE(y.requiresGrad());
  EXPECT_FALSE(y.isLeaf());
  y.backward();
  // d/dx (x^2 + 3 relu(x)) = 2x + 3 [x > 0].
  expectNear(x.grad().toVector(), {5, -4, 9});
  // Gradients accumulate.
  (x * 2.0).sum().backward();
  expectNear(x.grad().toVector(), {7, -2, 11});
}

TEST(Tracer, BackwardOfMatmulBroadcastAndLoss) {
  Tensor a = Tensor::fromVector({1, 2, 3, 4}, {2, 2});
  Tensor b = Tensor::fromVector({1, -1}, {2});
  a.requiresGrad_();
  b.requiresGrad_();
  Tensor w = Tensor::fromVector({0.5f, 1, -1, 2}, {2, 2});
  // L = sum(a @ w + b): dL/da = ones @ w^T, dL/db = column count.
  Tensor loss = (a.matmul(w) + b).sum();
  loss.backward();
  expectNear(a.grad().toVector(), {1.5f, 1, 1.5f, 1});
  expectNear(b.grad().toVector(), {2, 2});
  EXPECT_FALSE(w.grad().defined());
  // a @ w = [[-1.5, 5], [-2.5, 11]]; b adds 1 - 1 per row.
  EXPECT_NEAR(loss.item(), 12, 1e-5);
}

TEST(Tracer, NoGradAndDetach) {
  Tensor x = Tensor::fromVector({2}, {1});
  x.requiresGrad_();
  {
    tcc::NoGradGuard guard;
    EXPECT_FALSE(tcc::isGradEnabled());
    EXPECT_FALSE((x * 3.0).requiresGrad());
  }
  EXPECT_TRUE((x * 3.0).requiresGrad());
  EXPECT_FALSE((x * 3.0).detach().requiresGrad());
  Tensor y = x * x.detach(); // d/dx = x.detach() = 2
  y.sum().backward();
  expectNear(x.grad().toVector(), {2});
}

TEST(Tracer, BackwardAfterReadingTheLoss) {
  Tensor x = Tensor::fromVector({3}, {1});
  x.requiresGrad_();
  Tensor y = (x * x * x).sum();
  EXPECT_NEAR(y.item(), 27, 1e-5); // computed, but keeps its history
  y.backward();
  expectNear(x.grad().toVector(), {27});
}

TEST(Tracer, ErrorsSayWhatAndWhere) {
  Tensor a = Tensor::zeros({2, 3});
  Tensor b = Tensor::zeros({4, 5});
  EXPECT_EQ(errorOf([&] { a + b; }),
            "tcc::add: shapes 2x3, 4x5 do not broadcast (dimension 0: 2 vs 4)");
  EXPECT_NE(errorOf([&] { a.matmul(b); }).find("tcc::matmul:"),
            std::string::npos);
  EXPECT_EQ(errorOf([&] { a.reshape({4, 2}); }),
            "tcc::reshape: cannot reshape f32[2x3] (6 elements) to [4x2]");
  Tensor x = Tensor::zeros({2, 3});
  x.requiresGrad_();
  EXPECT_EQ(errorOf([&] { (x * 2.0).backward(); }),
            "tcc::backward: a gradient can be implied only for a tensor of "
            "one element; this one is f32[2x3]: pass backward(gradient)");
  EXPECT_NE(errorOf([&] { a.sum().backward(); }).find("does not require grad"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              Tensor::zeros({2}, DType::i64).requiresGrad_();
            }).find("only floating-point"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { (x * 2.0).requiresGrad_(); }).find("only leaves"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { a.item(); }).find("has 6 elements"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { x.assign(x * 2.0); }).find("NoGradGuard"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { a.transpose(0, 2); }).find("out of range"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              Tensor::fromVector({1, 2}, {3});
            }).find("2 values for f32[3]"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              tcc::crossEntropy(a, Tensor::zeros({2}));
            }).find("targets must be i64[2]"),
            std::string::npos);
  EXPECT_EQ(errorOf([&] { Tensor().requiresGrad_(); }),
            "tcc::requiresGrad_: the tensor is undefined");
  EXPECT_EQ(errorOf([&] { Tensor() + a; }),
            "tcc::add: the tensor is undefined");
  // A failed op leaves the recorder usable.
  expectNear((a + 1.0).sum({1}).toVector(), {3, 3});
}

TEST(Tracer, SameGraphCompilesOnce) {
  tcc::Stats before = tcc::stats();
  for (int i = 0; i < 4; ++i) {
    Tensor x = Tensor::full({8}, i);
    EXPECT_NEAR((x * x + 1.0).sum().item(), 8 * (i * i + 1), 1e-4);
  }
  tcc::Stats after = tcc::stats();
  EXPECT_EQ(after.compiles - before.compiles, 1);
  EXPECT_EQ(after.cacheHits - before.cacheHits, 3);
}

// A define-by-run training loop: SGD with momentum on a linear model. The
// whole step (forward, backward, update) is one cached graph.
TEST(Tracer, SgdStepsMatchTheClosedForm) {
  Tensor w = Tensor::fromVector({0.5f}, {1, 1});
  w.requiresGrad_();
  Tensor x = Tensor::fromVector({1, 2, 3, 4}, {4, 1});
  Tensor y = x * 3.0;
  tcc::optim::SGD opt({w}, 0.01, 0.9);
  double wRef = 0.5, buf = 0;
  tcc::Stats before;
  for (int step = 0; step < 5; ++step) {
    // The first graph also computes y; from the second step on, every step
    // is the same graph.
    if (step == 2)
      before = tcc::stats();
    opt.zeroGrad();
    Tensor loss = tcc::mseLoss(x.matmul(w), y);
    loss.backward();
    opt.step();
    tcc::sync();
    // loss = mean((x w - 3x)^2); dL/dw = 2 mean(x^2) (w - 3) = 15 (w - 3).
    double g = 15 * (wRef - 3);
    buf = 0.9 * buf + g;
    wRef -= 0.01 * buf;
    EXPECT_NEAR(w.item(), wRef, 1e-5) << "step " << step;
  }
  EXPECT_EQ(tcc::stats().compiles - before.compiles, 0);
  EXPECT_EQ(tcc::stats().cacheHits - before.cacheHits, 3);
}

TEST(Tracer, AdamWMatchesTheFormula) {
  Tensor p = Tensor::fromVector({1, -2}, {2});
  p.requiresGrad_();
  tcc::optim::AdamW opt({p}, 0.1, 0.9, 0.999, 1e-8, 0.01);
  double ref[2] = {1, -2}, m[2] = {0, 0}, v[2] = {0, 0};
  for (int t = 1; t <= 3; ++t) {
    opt.zeroGrad();
    (p * p).sum().backward(); // grad 2p
    opt.step();
    std::vector<float> got = p.toVector();
    for (int i = 0; i < 2; ++i) {
      double g = 2 * ref[i];
      ref[i] *= 1 - 0.1 * 0.01;
      m[i] = 0.9 * m[i] + 0.1 * g;
      v[i] = 0.999 * v[i] + 0.001 * g * g;
      double mh = m[i] / (1 - std::pow(0.9, t));
      double vh = v[i] / (1 - std::pow(0.999, t));
      ref[i] -= 0.1 * mh / (std::sqrt(vh) + 1e-8);
      EXPECT_NEAR(got[i], ref[i], 1e-5) << "step " << t << " element " << i;
    }
  }
}

TEST(Tracer, ModulesRegisterParameters) {
  tcc::manualSeed(7);
  auto net = std::make_shared<tcc::nn::Sequential>(
      std::initializer_list<std::shared_ptr<tcc::nn::Module>>{
          std::make_shared<tcc::nn::Linear>(4, 3),
          std::make_shared<tcc::nn::ReLU>(),
          std::make_shared<tcc::nn::Linear>(3, 2)});
  auto named = net->namedParameters();
  ASSERT_EQ(named.size(), 4u);
  EXPECT_EQ(named[0].first, "0.weight");
  EXPECT_EQ(named[3].first, "2.bias");
  EXPECT_EQ(named[0].second.shape(), (tcc::Shape{3, 4}));
  for (float v : named[0].second.toVector())
    EXPECT_LE(std::fabs(v), 0.5f); // U(+-1/sqrt(4))
  Tensor out = (*net)(Tensor::ones({5, 4}));
  EXPECT_EQ(out.shape(), (tcc::Shape{5, 2}));
  out.sum().backward();
  for (const Tensor &p : net->parameters())
    EXPECT_TRUE(p.grad().defined());
  net->zeroGrad();
  EXPECT_FALSE(net->parameters()[0].grad().defined());
}

// trace(): a whole SGD step as one function with the parameters and the
// momenta as state; it must agree with the same steps run define-by-run, and
// its saved .so must run under the runtime alone.
TEST(Tracer, TracedTrainStepMatchesDefineByRun) {
  auto makeModel = [] {
    tcc::manualSeed(3);
    return std::make_shared<tcc::nn::Linear>(3, 2);
  };
  Tensor x = Tensor::fromVector({1, 2, 3, -1, 0, 1}, {2, 3});
  Tensor target = Tensor::fromInts({1, 0}, {2});

  auto eager = makeModel();
  tcc::optim::SGD eagerOpt(eager->parameters(), 0.1, 0.9);
  for (int i = 0; i < 3; ++i) {
    eagerOpt.zeroGrad();
    tcc::crossEntropy((*eager)(x), target).backward();
    eagerOpt.step();
  }

  auto model = makeModel();
  tcc::optim::SGD opt(model->parameters(), 0.1, 0.9);
  std::vector<Tensor> state = model->parameters();
  for (const Tensor &s : opt.state())
    state.push_back(s);
  tcc::Function step = tcc::trace(
      [&](const std::vector<Tensor> &in) {
        opt.zeroGrad();
        Tensor loss = tcc::crossEntropy((*model)(in[0]), in[1]);
        loss.backward();
        opt.step();
        return std::vector<Tensor>{loss};
      },
      {x, target}, state);
  EXPECT_EQ(step.numInputs(), 2u);
  EXPECT_EQ(step.numOutputs(), 1u);
  std::string ir = step.mlir();
  EXPECT_NE(ir.find("tcc.matmul"), std::string::npos);
  EXPECT_NE(ir.find("tcc.log_softmax"), std::string::npos);
  EXPECT_NE(ir.find("\"new_state0\""), std::string::npos);
  // Tracing changed nothing.
  expectNear(model->weight().toVector(), makeModel()->weight().toVector(), 0);
  double firstLoss = 0;
  for (int i = 0; i < 3; ++i) {
    double loss = step({x, target})[0].item();
    if (i == 0)
      firstLoss = loss;
  }
  EXPECT_GT(firstLoss, 0);
  expectNear(model->weight().toVector(), eager->weight().toVector(), 1e-5f);
  expectNear(model->bias().toVector(), eager->bias().toVector(), 1e-5f);

  // The saved artifact: inputs x, target, then the state; outputs the loss,
  // then the new state.
  char dir[] = "/tmp/tcc-tracer-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string so = std::string(dir) + "/step.so";
  step.save(so);
  tcc_model_t *artifact = nullptr;
  ASSERT_EQ(tcc_model_load(so.c_str(), &artifact), nullptr);
  EXPECT_EQ(tcc_model_num_inputs(artifact), 2u + 4u);
  EXPECT_EQ(tcc_model_num_outputs(artifact), 1u + 4u);
  EXPECT_STREQ(tcc_model_input(artifact, 0)->name, "input0");
  EXPECT_STREQ(tcc_model_output(artifact, 1)->name, "new_state0");
  tcc_model_free(artifact);
  step.saveMlir(std::string(dir) + "/step.mlir");
  EXPECT_EQ(access((std::string(dir) + "/step.mlir").c_str(), R_OK), 0);
  std::remove(so.c_str());
  std::remove((std::string(dir) + "/step.h").c_str());
  std::remove((std::string(dir) + "/step.mlir").c_str());
  rmdir(dir);
}

// Every other misuse the API reports, each with its message.
TEST(Tracer, MoreMisuseErrors) {
  Tensor a = Tensor::zeros({2, 3});
  auto has = [](const std::string &msg, const char *part) {
    return msg.find(part) != std::string::npos;
  };
  EXPECT_TRUE(
      has(errorOf([&] { a.size(2); }), "tcc::Tensor::size: dimension 2"));
  EXPECT_TRUE(has(errorOf([&] { a.reshape({-1, -1}); }),
                  "tcc::reshape: only one dimension can be -1"));
  EXPECT_TRUE(has(errorOf([&] { a.permute({0}); }),
                  "tcc::permute: 1 dimensions for a tensor of rank 2"));
  EXPECT_TRUE(has(errorOf([&] { a.slice(1, 0, 2, 0); }),
                  "tcc::slice: the step must be positive"));
  EXPECT_TRUE(has(errorOf([&] { a.expand({4, 3}); }),
                  "does not broadcast to f32[4x3]"));
  EXPECT_TRUE(has(errorOf([&] { a.sum({1, 1}); }), "listed twice"));
  EXPECT_TRUE(has(errorOf([&] { a.clamp(1, 0); }), "exceeds max"));
  EXPECT_TRUE(has(errorOf([&] { tcc::cat({}); }), "no tensors to concatenate"));
  EXPECT_TRUE(has(errorOf([&] { tcc::where(a, a, a); }), "not bool"));
  EXPECT_TRUE(has(errorOf([&] { tcc::conv2d(a, a); }), "needs a 4-d input"));
  EXPECT_TRUE(has(errorOf([&] { tcc::maxPool2d(a, {2}); }),
                  "tcc::maxPool2d: needs a 4-d input"));
  EXPECT_TRUE(has(errorOf([&] { tcc::layerNorm(a, {2}); }),
                  "trailing dimensions of f32[2x3]"));
  EXPECT_TRUE(has(errorOf([&] { tcc::mseLoss(a, Tensor::zeros({3})); }),
                  "tcc::mseLoss: the input is f32[2x3]"));
  EXPECT_TRUE(has(errorOf([&] { a + Tensor::zeros({3}, DType::f64); }),
                  "their dtypes differ"));
  EXPECT_TRUE(has(errorOf([&] { Tensor::fromInts({1}, {1}).exp(); }),
                  "tcc::exp: needs a floating-point tensor"));
  EXPECT_TRUE(has(errorOf([&] { a.setGrad(Tensor::zeros({3})); }),
                  "tcc::Tensor::setGrad: the gradient is f32[3]"));
  EXPECT_TRUE(has(errorOf([&] { a.assign(Tensor::zeros({3})); }),
                  "tcc::Tensor::assign: cannot assign f32[3] to f32[2x3]"));
  EXPECT_TRUE(has(errorOf([&] { tcc::nn::Linear(0, 3); }),
                  "tcc::nn::Linear: sizes must be positive"));
  EXPECT_TRUE(has(errorOf([&] { tcc::optim::SGD({a}, 0.1); }),
                  "every parameter must be a leaf with requiresGrad_()"));
  Tensor p = Tensor::zeros({2});
  p.requiresGrad_();
  EXPECT_TRUE(
      has(errorOf([&] { tcc::optim::SGD({p}, -1); }), "must not be negative"));
  EXPECT_TRUE(has(errorOf([&] { tcc::optim::SGD({p}, 0.1, 0, 0, true); }),
                  "Nesterov momentum needs a momentum"));
  EXPECT_TRUE(has(errorOf([&] { tcc::optim::AdamW({p}, 0.1, 1.0); }),
                  "betas in [0, 1)"));
  EXPECT_TRUE(
      has(errorOf([&] { tcc::Function()({}); }), "tcc::Function: empty"));
}

TEST(Tracer, TraceAndFunctionErrors) {
  Tensor w = Tensor::fromVector({1, 2}, {2});
  w.requiresGrad_();
  auto scale = [&](const std::vector<Tensor> &in) {
    return std::vector<Tensor>{in[0] * w};
  };
  tcc::Function f = tcc::trace(scale, {Tensor::ones({2})});
  EXPECT_EQ(errorOf([&] { f({}); }),
            "tcc::Function: 0 inputs given, the function takes 1");
  EXPECT_EQ(errorOf([&] { f({Tensor::ones({3})}); }),
            "tcc::Function: input 0 must be f32 of the traced shape");
  expectNear(f({Tensor::fromVector({3, 4}, {2})})[0].toVector(), {3, 8});

  EXPECT_TRUE(errorOf([&] {
                tcc::trace(scale, {Tensor::ones({2})}, {w * 2.0});
              }).find("state tensors must be leaves") != std::string::npos);
  EXPECT_EQ(errorOf([&] {
              tcc::trace(
                  [&](const std::vector<Tensor> &in) {
                    tcc::trace(scale, in);
                    return in;
                  },
                  {Tensor::ones({2})});
            }),
            "tcc::trace: already tracing (trace() does not nest)");
  // A failed trace leaves the state as it was.
  tcc::optim::SGD opt({w}, 0.5);
  EXPECT_EQ(errorOf([&] {
              tcc::trace(
                  [&](const std::vector<Tensor> &in) {
                    (in[0] * w).sum().backward();
                    opt.step();
                    return std::vector<Tensor>{Tensor()};
                  },
                  {Tensor::ones({2})}, {w});
            }),
            "tcc::trace: the function returned an undefined tensor");
  expectNear(w.toVector(), {1, 2});
  EXPECT_FALSE(w.grad().defined());
}

// TCC_TRACER_DUMP keeps the IR of each graph compiled, and
// CompileConfig::cacheDir puts the compiled graphs where it says.
TEST(Tracer, DumpAndCacheFolder) {
  char dump[] = "/tmp/tcc-tracer-dump-XXXXXX";
  ASSERT_NE(mkdtemp(dump), nullptr);
  std::string cache = std::string(dump) + "/cache";
  tcc::CompileConfig config;
  config.cacheDir = cache;
  tcc::setCompileConfig(config);
  setenv("TCC_TRACER_DUMP", dump, 1);
  // A graph no other test compiles: it is compiled here, whatever ran
  // before in this process.
  Tensor x = Tensor::full({7}, 0.5);
  EXPECT_NEAR(x.tanh().sigmoid().sum().item(),
              7 / (1 + std::exp(-std::tanh(0.5))), 1e-5);
  unsetenv("TCC_TRACER_DUMP");
  bool dumped = false, cached = false;
  auto files = [](const std::string &dir) {
    std::vector<std::string> names;
    if (DIR *d = opendir(dir.c_str())) {
      while (dirent *e = readdir(d))
        names.push_back(dir + "/" + e->d_name);
      closedir(d);
    }
    return names;
  };
  for (const std::string &path : files(dump)) {
    if (path.size() < 5 || path.substr(path.size() - 5) != ".mlir")
      continue;
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    dumped |= text.find("func.func @main") != std::string::npos &&
              text.find("tcc.tanh") != std::string::npos;
    std::remove(path.c_str());
  }
  for (const std::string &path : files(cache))
    cached |= path.size() > 3 && path.substr(path.size() - 3) == ".so";
  EXPECT_TRUE(dumped) << "no graph with tcc.tanh dumped in " << dump;
  EXPECT_TRUE(cached) << "no compiled graph in " << cache;
  tcc::setCompileConfig(tcc::CompileConfig());
}

TEST(Tracer, ReadingInsideTraceIsAnError) {
  Tensor x = Tensor::ones({2});
  std::string msg = errorOf([&] {
    tcc::trace(
        [](const std::vector<Tensor> &in) {
          if (in[0].sum().item() > 0) // data-dependent: not capturable
            return std::vector<Tensor>{in[0]};
          return std::vector<Tensor>{in[0] * 2.0};
        },
        {x});
  });
  EXPECT_NE(msg.find("read while tracing"), std::string::npos) << msg;
  // The recorder still works.
  expectNear((x + 1.0).toVector(), {2, 2});
}

} // namespace

namespace {

// Gradient checks of the tracer's backward() in f64: each case is a loss
// sum(op(inputs) * r) with a fixed random r; backward()'s gradient of every
// input element is compared with central finite differences of the same
// recorded function (eps 1e-6, atol 1e-5, rtol 1e-3, as gradcheck). Every
// evaluation records the same graph, so all but the first are cache hits.
using Fn = std::function<Tensor(const std::vector<Tensor> &)>;

Tensor randomDoubles(tcc::Shape shape, double lo, double hi) {
  return Tensor::uniform(std::move(shape), lo, hi, DType::f64);
}

void gradcheck(const char *name, const Fn &op, std::vector<Tensor> inputs) {
  Tensor probe = op(inputs);
  Tensor r = randomDoubles(probe.shape(), -1, 1);
  auto loss = [&](const std::vector<Tensor> &in) { return (op(in) * r).sum(); };
  // Fresh leaves (the callers share inputs between cases, and gradients
  // accumulate).
  for (Tensor &t : inputs) {
    t = t.detach();
    t.requiresGrad_();
  }
  loss(inputs).backward();
  const double eps = 1e-6;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<double> base = inputs[i].toDoubles();
    std::vector<double> grad = inputs[i].grad().toDoubles();
    ASSERT_EQ(grad.size(), base.size()) << name;
    for (size_t k = 0; k < base.size(); ++k) {
      auto at = [&](double delta) {
        tcc::NoGradGuard guard;
        std::vector<double> moved = base;
        moved[k] += delta;
        std::vector<Tensor> in;
        for (size_t j = 0; j < inputs.size(); ++j)
          in.push_back(j == i ? Tensor::fromDoubles(moved, inputs[i].shape())
                              : inputs[j].detach());
        return loss(in).item();
      };
      double numeric = (at(eps) - at(-eps)) / (2 * eps);
      EXPECT_NEAR(grad[k], numeric, 1e-5 + 1e-3 * std::fabs(numeric))
          << name << ": input " << i << " element " << k;
    }
  }
}

TEST(TracerGradcheck, ElementwiseOps) {
  tcc::manualSeed(11);
  Tensor x = randomDoubles({2, 3}, -2, 2), y = randomDoubles({3}, 0.5, 2);
  gradcheck("tanh", [](auto &in) { return in[0].tanh(); }, {x});
  gradcheck("sigmoid", [](auto &in) { return in[0].sigmoid(); }, {x});
  gradcheck("gelu", [](auto &in) { return in[0].gelu(); }, {x});
  gradcheck("gelu tanh", [](auto &in) { return in[0].gelu(true); }, {x});
  gradcheck("exp", [](auto &in) { return in[0].exp(); }, {x});
  gradcheck("log sqrt", [](auto &in) { return in[0].log() + in[0].sqrt(); },
            {y});
  gradcheck("pow", [](auto &in) { return in[0].pow(3.0); }, {y});
  gradcheck("div broadcast", [](auto &in) { return in[0] / in[1]; }, {x, y});
  gradcheck("maximum", [](auto &in) { return tcc::maximum(in[0], in[1]); },
            {x, randomDoubles({2, 3}, -2, 2)});
}

TEST(TracerGradcheck, ReductionsAndShapes) {
  tcc::manualSeed(12);
  Tensor x = randomDoubles({2, 3, 4}, -1, 1);
  gradcheck("sum dims", [](auto &in) { return in[0].sum({0, 2}, true); }, {x});
  gradcheck("mean", [](auto &in) { return in[0].mean({1}); }, {x});
  gradcheck("softmax", [](auto &in) { return in[0].softmax(2); }, {x});
  gradcheck("logSoftmax", [](auto &in) { return in[0].logSoftmax(1); }, {x});
  gradcheck("permute reshape",
            [](auto &in) { return in[0].permute({2, 0, 1}).reshape({4, 6}); },
            {x});
  gradcheck("slice cat",
            [](auto &in) {
              return tcc::cat({in[0].slice(2, 1, 4, 2), in[0].slice(2, 0, 1)},
                              2);
            },
            {x});
  gradcheck("layerNorm",
            [](auto &in) { return tcc::layerNorm(in[0], {4}, in[1], in[2]); },
            {x, randomDoubles({4}, 0.5, 1.5), randomDoubles({4}, -1, 1)});
}

TEST(TracerGradcheck, ContractionsAndLosses) {
  tcc::manualSeed(13);
  gradcheck("matmul", [](auto &in) { return in[0].matmul(in[1]); },
            {randomDoubles({3, 4}, -1, 1), randomDoubles({4, 2}, -1, 1)});
  gradcheck("linear", [](auto &in) { return tcc::linear(in[0], in[1], in[2]); },
            {randomDoubles({2, 3}, -1, 1), randomDoubles({4, 3}, -1, 1),
             randomDoubles({4}, -1, 1)});
  gradcheck(
      "conv2d stride pad",
      [](auto &in) { return tcc::conv2d(in[0], in[1], in[2], {2, 1}, {1, 0}); },
      {randomDoubles({2, 2, 5, 4}, -1, 1), randomDoubles({3, 2, 3, 2}, -1, 1),
       randomDoubles({3}, -1, 1)});
  gradcheck("avgPool2d", [](auto &in) { return tcc::avgPool2d(in[0], {2}); },
            {randomDoubles({1, 2, 4, 4}, -1, 1)});
  // Distinct values far apart: no ties for finite differences to cross.
  std::vector<double> v(32);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>((i * 7) % 32) * 0.1;
  gradcheck("maxPool2d", [](auto &in) { return tcc::maxPool2d(in[0], {2}); },
            {Tensor::fromDoubles(v, {1, 2, 4, 4})});
  Tensor targets = Tensor::fromInts({2, 0, 1}, {3});
  gradcheck("crossEntropy",
            [&](auto &in) { return tcc::crossEntropy(in[0], targets); },
            {randomDoubles({3, 4}, -2, 2)});
  gradcheck("mseLoss", [](auto &in) { return tcc::mseLoss(in[0], in[1]); },
            {randomDoubles({2, 3}, -1, 1), randomDoubles({2, 3}, -1, 1)});
}

} // namespace
