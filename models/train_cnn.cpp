// Trains a small CNN (two 3x3 convolutions with ReLU and 2x2 max pooling,
// then a linear layer; 1x16x16 images, batch 32, 10 classes) on synthetic
// data with the tracer, define-by-run and as one traced training step.
// Options and outputs as tcc-train-mlp's.
#include "train_common.h"

static const char kUsage[] =
    "usage: tcc-train-cnn [--steps N] [--batches N] [--optimizer sgd|adamw] "
    "[--mode eager|traced|both] [--out DIR] [--threads N]\n";

int main(int argc, char **argv) {
  train::Options options = train::parse(argc, argv, kUsage);
  try {
    return train::main(
        options, "cnn",
        [] {
          tcc::manualSeed(42);
          using namespace tcc::nn;
          auto pool = [](const tcc::Tensor &x) {
            return tcc::maxPool2d(x, {2});
          };
          auto net = std::make_shared<Sequential>();
          net->add(std::make_shared<Conv2d>(1, 8, 3, 1, 1))
              .add(std::make_shared<ReLU>())
              .add(std::make_shared<Lambda>(pool))
              .add(std::make_shared<Conv2d>(8, 16, 3, 1, 1))
              .add(std::make_shared<ReLU>())
              .add(std::make_shared<Lambda>(pool))
              .add(std::make_shared<Lambda>(
                  [](const tcc::Tensor &x) { return x.flatten(1); }))
              .add(std::make_shared<Linear>(16 * 4 * 4, 10));
          return net;
        },
        {32, 1, 16, 16}, 10);
  } catch (const tcc::Error &e) {
    std::fprintf(stderr, "tcc-train-cnn: %s\n", e.what());
    return 1;
  }
}
