// Trains an MLP (784-512-256-10, batch 64) on synthetic data with the
// tracer, define-by-run and as one traced training step.
//
//   tcc-train-mlp [--steps N] [--optimizer sgd|adamw] [--mode
//   eager|traced|both]
//                 [--out DIR] [--threads N]
//
// Prints one JSON line (losses, ms per step, compiles); with --out writes
// the initial and final parameters, the data and the losses as .npy, plus
// the traced step as step.mlir and step.so. Exits 1 if the loss did not fall.
#include "train_common.h"

static const char kUsage[] =
    "usage: tcc-train-mlp [--steps N] [--batches N] [--optimizer sgd|adamw] "
    "[--mode eager|traced|both] [--out DIR] [--threads N]\n";

int main(int argc, char **argv) {
  train::Options options = train::parse(argc, argv, kUsage);
  try {
    return train::main(
        options, "mlp",
        [] {
          tcc::manualSeed(42);
          using namespace tcc::nn;
          auto net = std::make_shared<Sequential>();
          net->add(std::make_shared<Linear>(784, 512))
              .add(std::make_shared<ReLU>())
              .add(std::make_shared<Linear>(512, 256))
              .add(std::make_shared<ReLU>())
              .add(std::make_shared<Linear>(256, 10));
          return net;
        },
        {64, 784}, 10);
  } catch (const tcc::Error &e) {
    std::fprintf(stderr, "tcc-train-mlp: %s\n", e.what());
    return 1;
  }
}
