// Two SGD steps of a linear classifier through tcc::tracer (the installed
// libtcc_tracer.so): each step is recorded, compiled by the tcc inside the
// library (linking the micro-kernels it finds beside itself) and run; the
// loss must fall.
#include "tcc/tracer.h"

#include <cmath>
#include <cstdio>
#include <memory>

int main() {
  try {
    tcc::manualSeed(7);
    auto model = std::make_shared<tcc::nn::Linear>(16, 4);
    tcc::optim::SGD sgd(model->parameters(), 0.5);
    tcc::Tensor x = tcc::Tensor::randn({8, 16});
    tcc::Tensor y = tcc::Tensor::fromInts({0, 1, 2, 3, 0, 1, 2, 3}, {8});
    double losses[2];
    for (double &loss : losses) {
      sgd.zeroGrad();
      tcc::Tensor l = tcc::crossEntropy((*model)(x), y);
      l.backward();
      sgd.step();
      loss = l.item();
    }
    std::printf("train: losses %.5f %.5f\n", losses[0], losses[1]);
    return std::isfinite(losses[1]) && losses[1] < losses[0] ? 0 : 1;
  } catch (const tcc::Error &e) {
    std::printf("train: %s\n", e.what());
    return 1;
  }
}
