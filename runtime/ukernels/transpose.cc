// transpose.cc - a batch of 2-D transposes of 32-bit elements:
//
//   out[b, c, r] = in[b, r, c]    (rows x cols -> cols x rows per problem)
//
// what a permutation of a tensor's dimensions is once the dimensions that
// stay together are merged, when the innermost one moves (NHWC <-> NCHW,
// [tokens, heads, d] -> [heads, d, tokens]). On AVX-512 a whole 16 x 16
// block is loaded and transposed by vtransposeLoad and stored as sixteen
// rows, an edge block through masked loads, vtranspose and masked stores; the
// blocks of a stripe of 16 input columns (16 output rows) go down the
// rows, so each output row is written front to back. The edges of the
// matrix take masked loads and stores. Elsewhere 8 rows of scalar moves at
// a time. Threads take stripes.
#include "simd.h"

#if TCC_UK_NATIVE_ISA != 0
#include <immintrin.h>
#endif

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {
namespace {

/// Columns a stripe (a task's unit).
constexpr int64_t kStripe = 16;
/// Below about this many elements a transpose stays on the caller: handing
/// a stripe to another thread costs more than moving it.
constexpr int64_t kMinParallelElements = 16384;

struct TransposeJob {
  const uint32_t *in;
  uint32_t *out;
  int64_t rows, cols, stripes;
};

#if TCC_UK_NATIVE_ISA == 2
/// Rows [r0, r0 + nr) and columns [c0, c0 + nc) of one problem (nr, nc <=
/// 16): the block's row i is input row r0 + i, its transpose's row j goes
/// to output row c0 + j.
TCC_UK_INLINE void block16(const TransposeJob &job, const uint32_t *in,
                           uint32_t *out, int64_t r0, int64_t c0, int nr,
                           int nc) {
  const __mmask16 colMask = static_cast<__mmask16>((1u << nc) - 1u);
  const __mmask16 rowMask = static_cast<__mmask16>((1u << nr) - 1u);
  __m512 r[16];
  if (nr == 16 && nc == 16) {
    // A whole block: its lane moves made by the loads (vtransposeLoad).
    const float *rows[16];
    TCC_UK_UNROLL
    for (int i = 0; i < 16; ++i)
      rows[i] = reinterpret_cast<const float *>(in + (r0 + i) * job.cols + c0);
    vtransposeLoad(r, rows);
    TCC_UK_UNROLL
    for (int j = 0; j < 16; ++j)
      _mm512_storeu_ps(
          reinterpret_cast<float *>(out + (c0 + j) * job.rows + r0), r[j]);
    return;
  }
  TCC_UK_UNROLL
  for (int i = 0; i < 16; ++i)
    r[i] = i < nr ? _mm512_castsi512_ps(_mm512_maskz_loadu_epi32(
                        colMask, in + (r0 + i) * job.cols + c0))
                  : _mm512_setzero_ps();
  vtranspose(r); // r[j]: column j
  TCC_UK_UNROLL
  for (int j = 0; j < 16; ++j)
    if (j < nc)
      _mm512_mask_storeu_epi32(out + (c0 + j) * job.rows + r0, rowMask,
                               _mm512_castps_si512(r[j]));
}
#endif

/// Stripes [begin, end): stripe s is columns [16 q, 16 q + 16) of problem
/// s / stripes (q = s % stripes), all its rows: whole output rows, so a
/// thread writes rows that a consumer splitting its work by rows (a layer
/// norm, a GEMM's A, a convolution's planes) reads on the same core; split
/// by input rows, an NCHW -> NHWC before a layer norm was slower than
/// linalg's loop over output rows (docs/ukernels.md, "Transposes").
void runStripes(void *ctx, int64_t begin, int64_t end) {
  const TransposeJob &job = *static_cast<const TransposeJob *>(ctx);
  const int64_t size = job.rows * job.cols;
  for (int64_t s = begin; s < end; ++s) {
    const int64_t b = s / job.stripes;
    const int64_t c0 = (s % job.stripes) * kStripe;
    const int nc = static_cast<int>(minI(kStripe, job.cols - c0));
    const uint32_t *in = job.in + b * size;
    uint32_t *out = job.out + b * size;
#if TCC_UK_NATIVE_ISA == 2
    for (int64_t r0 = 0; r0 < job.rows; r0 += 16)
      block16(job, in, out, r0, c0, static_cast<int>(minI(16, job.rows - r0)),
              nc);
#else
    for (int64_t r0 = 0; r0 < job.rows; r0 += 8) {
      const int64_t r1 = minI(job.rows, r0 + 8);
      for (int64_t c = c0; c < c0 + nc; ++c)
        for (int64_t r = r0; r < r1; ++r)
          out[c * job.rows + r] = in[r * job.cols + c];
    }
#endif
  }
}

} // namespace
} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc

using namespace tcc::uk;

extern "C" int32_t tcc_uk_transpose32(const tcc_host_api_t *host, int64_t batch,
                                      int64_t rows, int64_t cols,
                                      const void *input, void *output) {
  if (batch < 0 || rows < 0 || cols < 0 ||
      ((batch && rows && cols) && (!input || !output)))
    return -1;
  if (!batch || !rows || !cols)
    return 0;
  TransposeJob job = {static_cast<const uint32_t *>(input),
                      static_cast<uint32_t *>(output), rows, cols,
                      ceilDiv(cols, kStripe)};
  const int64_t tasks = batch * job.stripes;
  if (batch * rows * cols < kMinParallelElements)
    runStripes(&job, 0, tasks);
  else
    parallelFor(host, tasks, 1, runStripes, &job);
  return 0;
}
