// compiler_abi.cc - the entry points compiled artifacts call.
//
// Generated code has no structs or pointers at the point it calls a kernel:
// it passes addresses as integers and every parameter as a scalar, and these
// adapters rebuild the kernels' arguments. The thread pool the caller of an
// artifact offers (tcc_run_args_t::host) reaches the kernels through a
// thread-local set by the artifact's entry point for the duration of a run.
// Only linked into artifacts (LLVM bitcode), never into the test variants.

#include "ukernels.h"

namespace {
__thread const tcc_host_api_t *currentHost;

template <typename T> T *ptr(int64_t address) {
  return reinterpret_cast<T *>(static_cast<intptr_t>(address));
}

tcc_uk_epilogue_t epilogue(int64_t bias, int64_t biasPerRow, int64_t hasClamp,
                           float clampMin, float clampMax, int64_t residual,
                           int64_t ldr) {
  tcc_uk_epilogue_t e = {};
  e.bias = ptr<const float>(bias);
  e.bias_per_row = static_cast<int32_t>(biasPerRow);
  e.has_clamp = static_cast<int32_t>(hasClamp);
  e.clamp_min = clampMin;
  e.clamp_max = clampMax;
  e.residual = ptr<const float>(residual);
  e.ldr = ldr;
  return e;
}
} // namespace

extern "C" {

void tcc_ukabi_set_host(const tcc_host_api_t *host) { currentHost = host; }

/// `batch` products C_i = A_i * B_i (+ epilogue), the i-th operands at
/// element offsets i * stride (a stride of 0 broadcasts an operand).
int32_t tcc_ukabi_sgemm(int64_t batch, int64_t m, int64_t n, int64_t k,
                        int64_t a, int64_t lda, int64_t strideA, int64_t b,
                        int64_t ldb, int64_t strideB, int64_t c, int64_t ldc,
                        int64_t strideC, int64_t flags, int64_t bias,
                        int64_t biasPerRow, int64_t hasClamp, float clampMin,
                        float clampMax, int64_t residual, int64_t ldr,
                        int64_t strideR, int64_t scratch) {
  for (int64_t i = 0; i < batch; ++i) {
    tcc_uk_epilogue_t e =
        epilogue(bias, biasPerRow, hasClamp, clampMin, clampMax,
                 residual ? residual + 4 * i * strideR : 0, ldr);
    int32_t rc = tcc_uk_sgemm(
        currentHost, m, n, k, ptr<const float>(a) + i * strideA, lda,
        ptr<const float>(b) + i * strideB, ldb, ptr<float>(c) + i * strideC,
        ldc, static_cast<uint32_t>(flags), &e, ptr<void>(scratch));
    if (rc)
      return rc;
  }
  return 0;
}

int32_t tcc_ukabi_conv2d(int64_t input, int64_t weight, int64_t output,
                         int64_t bias, int64_t residual, int64_t scratch,
                         int64_t n, int64_t c, int64_t h, int64_t w,
                         int64_t f, int64_t kh, int64_t kw, int64_t strideH,
                         int64_t strideW, int64_t dilationH,
                         int64_t dilationW, int64_t padTop, int64_t padLeft,
                         int64_t padBottom, int64_t padRight, int64_t groups,
                         int64_t flags, int64_t hasClamp, float clampMin,
                         float clampMax) {
  tcc_uk_conv2d_params_t p = {};
  p.n = n, p.c = c, p.h = h, p.w = w, p.f = f, p.kh = kh, p.kw = kw;
  p.stride_h = strideH, p.stride_w = strideW;
  p.dilation_h = dilationH, p.dilation_w = dilationW;
  p.pad_top = padTop, p.pad_left = padLeft;
  p.pad_bottom = padBottom, p.pad_right = padRight;
  p.groups = groups;
  p.flags = static_cast<uint32_t>(flags);
  p.scratch = ptr<void>(scratch);
  tcc_uk_epilogue_t e =
      epilogue(bias, 1, hasClamp, clampMin, clampMax, residual, 0);
  return tcc_uk_conv2d_nchw(currentHost, &p, ptr<const float>(input),
                            ptr<const float>(weight), ptr<float>(output), &e);
}

} // extern "C"
