// Runs the model the installed tcc compiled (sum = a * b + b over 2x3
// floats) through tcc::runtime's C++ API and checks every element.
#include "tcc/runtime.hpp"

#include <cstdio>
#include <cstring>
#include <exception>

int main() {
  try {
    tcc::Model model = tcc::Model::load(MODEL_PATH);
    tcc::Context context(model, 1);
    tcc::Tensor a = tcc::Tensor::create(TCC_DTYPE_F32, {2, 3});
    tcc::Tensor b = tcc::Tensor::create(TCC_DTYPE_F32, {2, 3});
    for (int i = 0; i < 6; ++i) {
      a.data<float>()[i] = float(i);
      b.data<float>()[i] = float(10 + i);
    }
    std::vector<tcc::Tensor> out = context.run({a, b});
    for (int i = 0; i < 6; ++i) {
      float want = float(i) * float(10 + i) + float(10 + i);
      if (out[0].data<float>()[i] != want) {
        std::printf("sum[%d] = %g, expected %g\n", i, out[0].data<float>()[i],
                    want);
        return 1;
      }
    }
    std::printf("run_model: ok, runtime %s, model by tcc %s\n",
                tcc_runtime_version(), model.version().c_str());
    return std::strcmp(tcc_runtime_version(), model.version().c_str()) == 0 ? 0
                                                                            : 1;
  } catch (const std::exception &e) {
    std::printf("run_model: %s\n", e.what());
    return 1;
  }
}
