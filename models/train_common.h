// Shared by models/train_mlp.cpp and models/train_cnn.cpp: command line,
// synthetic data, the two ways of running a training step (define-by-run
// and one traced function), timing, and writing tensors as .npy for the
// comparison with PyTorch (test/tracer/test_training.py, bench/train.py).
#ifndef TCC_MODELS_TRAIN_COMMON_H
#define TCC_MODELS_TRAIN_COMMON_H

#include "tcc/runtime.h"
#include "tcc/tracer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace train {

struct Options {
  int steps = 30;
  int batches = 4; ///< distinct batches, cycled
  std::string out; ///< where to write .npy files ("" = nowhere)
  std::string optimizer = "sgd";
  std::string mode = "both"; ///< eager (define-by-run), traced, both
  int threads = 0;
};

inline Options parse(int argc, char **argv, const char *usage) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n%s", argv[0], a.c_str(),
                     usage);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--steps")
      o.steps = std::atoi(value().c_str());
    else if (a == "--batches")
      o.batches = std::atoi(value().c_str());
    else if (a == "--out")
      o.out = value();
    else if (a == "--optimizer")
      o.optimizer = value();
    else if (a == "--mode")
      o.mode = value();
    else if (a == "--threads")
      o.threads = std::atoi(value().c_str());
    else {
      std::fprintf(stderr, "%s: unknown argument '%s'\n%s", argv[0], a.c_str(),
                   usage);
      std::exit(2);
    }
  }
  if (o.steps <= 0 || o.batches <= 0 ||
      (o.optimizer != "sgd" && o.optimizer != "adamw") ||
      (o.mode != "eager" && o.mode != "traced" && o.mode != "both")) {
    std::fprintf(stderr, "%s: invalid arguments\n%s", argv[0], usage);
    std::exit(2);
  }
  return o;
}

/// Writes `t` as a .npy file through the runtime.
inline void save(const tcc::Tensor &t, const std::string &path) {
  std::vector<float> v;
  std::vector<int64_t> ints;
  void *data;
  size_t bytes;
  int32_t dtype;
  if (t.dtype() == tcc::DType::i64) {
    ints = t.toInts();
    data = ints.data();
    bytes = ints.size() * sizeof(int64_t);
    dtype = TCC_DTYPE_I64;
  } else {
    v = t.toVector();
    data = v.data();
    bytes = v.size() * sizeof(float);
    dtype = TCC_DTYPE_F32;
  }
  tcc_tensor_t *w = nullptr;
  tcc_status_t s = tcc_tensor_wrap(dtype, static_cast<int32_t>(t.dim()),
                                   t.shape().data(), data, bytes, &w);
  if (!s)
    s = tcc_tensor_save_file(w, path.c_str());
  tcc_tensor_free(w);
  if (s) {
    std::fprintf(stderr, "cannot write %s: %s\n", path.c_str(),
                 tcc_status_message(s));
    std::exit(1);
  }
}

struct Batch {
  tcc::Tensor x, y;
};

/// Inputs ~ N(0, 1); labels from a fixed random linear teacher, so that the
/// task is learnable.
inline std::vector<Batch> makeData(int batches, tcc::Shape xShape,
                                   int64_t classes) {
  tcc::manualSeed(1234);
  int64_t n = xShape[0];
  int64_t features = 1;
  for (size_t i = 1; i < xShape.size(); ++i)
    features *= xShape[i];
  tcc::Tensor teacher = tcc::Tensor::randn({features, classes});
  std::vector<Batch> data;
  for (int b = 0; b < batches; ++b) {
    tcc::Tensor x = tcc::Tensor::randn(xShape);
    tcc::Tensor y = x.reshape({n, features}).matmul(teacher).argmax(1);
    y.toInts(); // computed now, outside any training graph
    data.push_back({x, y});
  }
  return data;
}

using ModelFactory = std::function<std::shared_ptr<tcc::nn::Module>()>;

struct Run {
  std::vector<double> losses;
  std::vector<tcc::Tensor> params;
  double msPerStep = 0; ///< median after the warm-up steps
};

inline std::unique_ptr<tcc::optim::Optimizer>
makeOptimizer(const Options &o, std::vector<tcc::Tensor> params) {
  if (o.optimizer == "adamw")
    return std::make_unique<tcc::optim::AdamW>(std::move(params), 1e-3, 0.9,
                                               0.999, 1e-8, 1e-2);
  return std::make_unique<tcc::optim::SGD>(std::move(params), 0.05, 0.9);
}

inline double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Define-by-run: each step is ordinary C++; reading the loss runs the
/// recorded step (compiled once, then from the cache).
inline Run runEager(const Options &o, const ModelFactory &make,
                    const std::vector<Batch> &data) {
  auto model = make();
  auto opt = makeOptimizer(o, model->parameters());
  Run run;
  std::vector<double> times;
  for (int step = 0; step < o.steps; ++step) {
    const Batch &b = data[step % data.size()];
    auto start = std::chrono::steady_clock::now();
    opt->zeroGrad();
    tcc::Tensor loss = tcc::crossEntropy((*model)(b.x), b.y);
    loss.backward();
    opt->step();
    run.losses.push_back(loss.item());
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (step >= 3)
      times.push_back(ms);
  }
  run.params = model->parameters();
  run.msPerStep = median(times);
  return run;
}

/// The same step captured by tcc::trace: forward, backward and the update
/// are one compiled function over (batch, parameters, optimizer state).
inline Run runTraced(const Options &o, const ModelFactory &make,
                     const std::vector<Batch> &data, const std::string &save) {
  auto model = make();
  auto opt = makeOptimizer(o, model->parameters());
  std::vector<tcc::Tensor> state = model->parameters();
  for (const tcc::Tensor &s : opt->state())
    state.push_back(s);
  tcc::Function step = tcc::trace(
      [&](const std::vector<tcc::Tensor> &in) {
        opt->zeroGrad();
        tcc::Tensor loss = tcc::crossEntropy((*model)(in[0]), in[1]);
        loss.backward();
        opt->step();
        return std::vector<tcc::Tensor>{loss};
      },
      {data[0].x, data[0].y}, state);
  if (!save.empty()) {
    step.saveMlir(save + ".mlir");
    step.save(save + ".so");
  }
  // The first step's inputs and outputs, in the artifact's order, as a
  // test data set for tcc-run: the saved step.so must compute the same
  // under the runtime alone.
  std::string stepData = save.empty() ? "" : save + "_data";
  if (!stepData.empty()) {
    std::filesystem::create_directories(stepData);
    std::vector<tcc::Tensor> in = {data[0].x, data[0].y};
    in.insert(in.end(), state.begin(), state.end());
    for (size_t i = 0; i < in.size(); ++i)
      train::save(in[i], stepData + "/input_" + std::to_string(i) + ".npy");
  }
  Run run;
  std::vector<double> times;
  for (int i = 0; i < o.steps; ++i) {
    const Batch &b = data[i % data.size()];
    auto start = std::chrono::steady_clock::now();
    std::vector<tcc::Tensor> out = step({b.x, b.y});
    run.losses.push_back(out[0].item());
    if (i == 0 && !stepData.empty()) {
      out.insert(out.end(), state.begin(), state.end());
      for (size_t k = 0; k < out.size(); ++k)
        train::save(out[k], stepData + "/output_" + std::to_string(k) + ".npy");
    }
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (i >= 3)
      times.push_back(ms);
  }
  run.params = model->parameters();
  run.msPerStep = median(times);
  return run;
}

inline void saveRun(const Run &run, const std::string &dir,
                    const std::string &prefix) {
  for (size_t i = 0; i < run.params.size(); ++i)
    save(run.params[i],
         dir + "/" + prefix + "_param" + std::to_string(i) + ".npy");
  std::vector<double> l = run.losses;
  save(tcc::Tensor::fromDoubles(l, {static_cast<int64_t>(l.size())})
           .to(tcc::DType::f32),
       dir + "/" + prefix + "_losses.npy");
}

/// Runs what the options ask, prints a summary line (JSON) and writes the
/// .npy files. Returns the exit code: 1 when the loss did not fall.
inline int main(const Options &o, const char *name, const ModelFactory &make,
                tcc::Shape xShape, int64_t classes) {
  tcc::CompileConfig config;
  config.numThreads = o.threads;
  tcc::setCompileConfig(config);
  std::vector<Batch> data = makeData(o.batches, xShape, classes);
  if (!o.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.out, ec);
    if (ec) {
      std::fprintf(stderr, "%s: cannot create '%s': %s\n", name, o.out.c_str(),
                   ec.message().c_str());
      return 1;
    }
    auto init = make();
    auto params = init->parameters();
    for (size_t i = 0; i < params.size(); ++i)
      save(params[i], o.out + "/init_param" + std::to_string(i) + ".npy");
    for (size_t b = 0; b < data.size(); ++b) {
      save(data[b].x, o.out + "/x" + std::to_string(b) + ".npy");
      save(data[b].y, o.out + "/y" + std::to_string(b) + ".npy");
    }
  }
  std::string json = std::string("{\"model\": \"") + name +
                     "\", \"optimizer\": \"" + o.optimizer +
                     "\", \"steps\": " + std::to_string(o.steps);
  bool fell = true;
  auto report = [&](const char *mode, const Run &run) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  ", \"%s_first_loss\": %.6f, \"%s_last_loss\": %.6f, "
                  "\"%s_ms_per_step\": %.4f",
                  mode, run.losses.front(), mode, run.losses.back(), mode,
                  run.msPerStep);
    json += buf;
    fell &= run.losses.back() < run.losses.front();
    if (!o.out.empty())
      saveRun(run, o.out, mode);
  };
  if (o.mode != "traced")
    report("eager", runEager(o, make, data));
  if (o.mode != "eager")
    report("traced",
           runTraced(o, make, data, o.out.empty() ? "" : o.out + "/step"));
  tcc::Stats s = tcc::stats();
  char buf[128];
  std::snprintf(buf, sizeof buf,
                ", \"compiles\": %lld, \"compile_seconds\": %.3f}",
                static_cast<long long>(s.compiles), s.compileSeconds);
  std::printf("%s%s\n", json.c_str(), buf);
  if (!fell)
    std::fprintf(stderr, "%s: the loss did not fall\n", name);
  return fell ? 0 : 1;
}

} // namespace train

#endif // TCC_MODELS_TRAIN_COMMON_H
