// winograd.cc - 3x3 stride-1 convolutions as Winograd F(2x2, 3x3): each 2x2
// block of outputs ("tile") is computed from a 4x4 block of inputs with 16
// multiplications per channel pair instead of 36, as 16 independent GEMMs
// over the channels (Lavin and Gray, "Fast Algorithms for Convolutional
// Neural Networks", 2016):
//
//   V[xi][c, t] = (B^T d_{c,t} B)[xi]     the input tiles, transformed
//   U[xi][f, c] = (G g_{f,c} G^T)[xi]     the weights, at compile time
//   M[xi]       = U[xi] * V[xi]           16 GEMMs, F x P x C
//   y_{f,t}     = A^T M_{f,t} A           the 2x2 outputs of tile t
//
// with xi = 4i + j over the 4x4 transform domain and P the tiles of an
// image. The transforms of F(2x2, 3x3) only add and subtract (the 1/2 of G
// goes into the weights), so the result is as accurate as a direct
// convolution to within a small constant factor.
//
// The weights are packed per xi as the GEMM's A panels; V is written
// straight into the GEMM's packed-B layout, so the 16 GEMMs run the tile
// kernels without packing anything. Threads: one parallel_for per step
// (channels; the 16 GEMMs, one each; output channels), which splits evenly
// whatever the image size.
#include "simd.h"

#include <stdlib.h>

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {
namespace {

constexpr int kTransformed = 16; // 4x4
/// Tile rows wider than this (images over ~2000 columns) use im2col: the
/// transforms keep a few rows of tiles on the stack.
constexpr int64_t kMaxTileCols = 1024;

struct Tiles {
  int64_t th, tw, p; // tile rows, tile columns, tiles of an image
};

Tiles tilesOf(const ConvShape &s) {
  Tiles t;
  t.th = (s.oh + 1) / 2;
  t.tw = (s.ow + 1) / 2;
  t.p = t.th * t.tw;
  return t;
}

int64_t roundUp(int64_t x, int64_t m) { return ceilDiv(x, m) * m; }

/// Floats of one xi's V: the packed-B panels of a C x P matrix, P rounded
/// up to blocks of two panels (the blocked mode's).
int64_t vFloats(int32_t isa, const ConvShape &s, const Tiles &t) {
  const int64_t nr = tilesFor(isa).nr;
  return roundUp(roundUp(t.p, 2 * nr) * s.c, 16);
}

/// Floats of one xi's packed weights: the A panels of an F x C matrix.
int64_t uFloats(int32_t isa, const ConvShape &s) {
  return tcc_uk_pack_a_bytes(isa, s.f, s.c) /
         static_cast<int64_t>(sizeof(float));
}

struct Job {
  const ConvShape *s;
  Tiles t;
  const float *x; // the image
  const float *u; // packed weights
  float *v, *m;   // scratch: V and M of every xi
  int64_t vStride, uStride;
  float *y; // the image's output
  const float *res;
  const tcc_uk_epilogue_t *ep;
  bool accumulate;
};

/// Stores n lanes of `x` as columns t0.. of row c of one xi's V, in the
/// packed-B layout (panels of NR columns, C rows of NR floats each).
TCC_UK_INLINE void storeV(float *v, int64_t c, int64_t C, int64_t t0, int n,
                          vf x) {
  const int64_t lane = t0 % kNR;
  float *dst = v + (t0 / kNR) * C * kNR + c * kNR + lane;
  if (lane + n <= kNR) {
    if (n == kVL)
      vstore(dst, x);
    else
      vstoreMask(dst, x, vmaskFirst(n));
    return;
  }
  alignas(64) float tmp[kVL];
  vstore(tmp, x);
  const int first = static_cast<int>(kNR - lane);
  copyShort(dst, tmp, first);
  copyShort(dst + (C - 1) * kNR + kNR - lane, tmp + first, n - first);
}

/// d B for one input row (row 2ty - pt + r of a channel) and kVL tile
/// columns from tx: h[j] over the tiles. Each tile reads four input columns
/// from 2tx - pl; those outside the row are zeros.
#if TCC_UK_NATIVE_ISA == 2
TCC_UK_INLINE void rowTransform(const float *xrow, int64_t w, int64_t base,
                                vf h[4]) {
  // Columns base + [0, 32) and base + 2 + [0, 32), read under masks that
  // zero what lies outside [0, w); then split by parity in registers (no
  // trip through memory, whose masked stores would stall the loads).
  auto load = [&](int64_t at) {
    const int64_t lo = at < 0 ? minI(16, -at) : 0;
    const int64_t hi = maxI(0, minI(16, w - at));
    const __mmask16 m = hi > lo ? static_cast<__mmask16>(
                                      ((1u << hi) - 1u) & ~((1u << lo) - 1u))
                                : 0;
    return _mm512_maskz_loadu_ps(m, xrow + at);
  };
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
                                         20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512 a0 = load(base), a1 = load(base + 16);
  const __m512 b0 = load(base + 2), b1 = load(base + 18);
  const vf e0 = _mm512_permutex2var_ps(a0, even, a1);
  const vf o0 = _mm512_permutex2var_ps(a0, odd, a1);
  const vf e1 = _mm512_permutex2var_ps(b0, even, b1);
  const vf o1 = _mm512_permutex2var_ps(b0, odd, b1);
  h[0] = vsub(e0, e1);
  h[1] = vadd(o0, e1);
  h[2] = vsub(e1, o0);
  h[3] = vsub(o0, o1);
}
#else
TCC_UK_INLINE void rowTransform(const float *xrow, int64_t w, int64_t base,
                                vf h[4]) {
  alignas(64) float col[4][kVL];
  for (int l = 0; l < kVL; ++l)
    for (int q = 0; q < 4; ++q) {
      const int64_t ix = base + 2 * l + q;
      col[q][l] = ix >= 0 && ix < w ? xrow[ix] : 0.0f;
    }
  const vf d0 = vload(col[0]), d1 = vload(col[1]);
  const vf d2 = vload(col[2]), d3 = vload(col[3]);
  h[0] = vsub(d0, d2);
  h[1] = vadd(d1, d2);
  h[2] = vsub(d2, d1);
  h[3] = vsub(d1, d3);
}
#endif

/// Where one step works: tiles [t0, t1) of the image, whose V sits at
/// column t - t0 of the panels at v (one xi every vStride floats) and whose
/// M at column t - t0 of rows ldm floats long at m (one xi every mStride).
struct Range {
  int64_t t0, t1;
  float *v;
  int64_t vStride;
  float *m;
  int64_t mStride, ldm;
};

/// Zeros the columns of the range's last panel past its tiles: never
/// stored, but computed on, and left as they were they could be anything
/// (denormals slow the products down).
void zeroPanelTail(const Range &rg, int64_t c) {
  const int64_t n = rg.t1 - rg.t0, pad = ceilDiv(n, kNR) * kNR - n;
  if (pad == 0)
    return;
  for (int xi = 0; xi < kTransformed; ++xi) {
    float *last = rg.v + xi * rg.vStride + (n / kNR) * c * kNR;
    for (int64_t k = 0; k < c; ++k)
      zeroShort(last + k * kNR + kNR - pad, pad);
  }
}

/// Calls fn(ty, txBegin, txEnd) for the runs of tiles [t0, t1) within
/// each tile row.
template <typename Fn>
TCC_UK_INLINE void forTileRuns(const Tiles &t, int64_t t0, int64_t t1,
                               Fn fn) {
  for (int64_t at = t0; at < t1;) {
    const int64_t ty = at / t.tw, tx = at % t.tw;
    const int64_t end = minI(t.tw, tx + (t1 - at));
    fn(ty, tx, end);
    at += end - tx;
  }
}

/// V of channels [c0, c1) for the range's tiles: each 4x4 input block d
/// becomes B^T d B, kVL tiles of a tile row at a time.
void transformInput(const Job &job, const Range &rg, int64_t c0, int64_t c1) {
  const ConvShape &s = *job.s;
  for (int64_t c = c0; c < c1; ++c) {
    const float *xc = job.x + c * s.h * s.w;
    forTileRuns(job.t, rg.t0, rg.t1, [&](int64_t ty, int64_t txa, int64_t txb) {
      for (int64_t tx = txa; tx < txb; tx += kVL) {
        const int n = static_cast<int>(minI(kVL, txb - tx));
        vf h[4][4];
        for (int r = 0; r < 4; ++r) {
          const int64_t iy = 2 * ty - s.pt + r;
          if (iy < 0 || iy >= s.h) {
            h[r][0] = h[r][1] = h[r][2] = h[r][3] = vzero();
            continue;
          }
          rowTransform(xc + iy * s.w, s.w, 2 * tx - s.pl, h[r]);
        }
        const int64_t col = ty * job.t.tw + tx - rg.t0;
        for (int j = 0; j < 4; ++j) { // B^T (d B)
          const vf v[4] = {vsub(h[0][j], h[2][j]), vadd(h[1][j], h[2][j]),
                           vsub(h[2][j], h[1][j]), vsub(h[1][j], h[3][j])};
          for (int i = 0; i < 4; ++i)
            storeV(rg.v + (4 * i + j) * rg.vStride, c, s.c, col, n, v[i]);
        }
      }
    });
  }
}

/// M[xi] = U[xi] * V[xi] over the range's tiles for xi in [x0, x1), each
/// on the calling thread.
void multiply(const Job &job, const Range &rg, int64_t x0, int64_t x1) {
  const ConvShape &s = *job.s;
  for (int64_t xi = x0; xi < x1; ++xi) {
    GemmArgs g = {};
    g.m = s.f;
    g.n = rg.t1 - rg.t0;
    g.k = s.c;
    g.a = job.u + xi * job.uStride;
    g.packedA = true;
    g.bPacked = rg.v + xi * rg.vStride;
    g.c = rg.m + xi * rg.mStride;
    g.ldc = rg.ldm;
    runGemm(NULL, g, NULL);
  }
}

/// dst[2t] = a[t], dst[2t+1] = b[t] for t < n.
TCC_UK_INLINE void interleave(const float *a, const float *b, float *dst,
                              int64_t n) {
  int64_t t = 0;
#if TCC_UK_NATIVE_ISA == 2
  const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5,
                                       21, 6, 22, 7, 23);
  const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
  for (; t + 16 <= n; t += 16) {
    const __m512 x = _mm512_loadu_ps(a + t), y = _mm512_loadu_ps(b + t);
    _mm512_storeu_ps(dst + 2 * t, _mm512_permutex2var_ps(x, lo, y));
    _mm512_storeu_ps(dst + 2 * t + 16, _mm512_permutex2var_ps(x, hi, y));
  }
#endif
  for (; t < n; ++t) {
    dst[2 * t] = a[t];
    dst[2 * t + 1] = b[t];
  }
}

/// The outputs of channels [f0, f1) in the range's tiles: each tile's 4x4
/// M becomes A^T M A, then the epilogue, a run of a tile row at a time.
void transformOutput(const Job &job, const Range &rg, int64_t f0, int64_t f1) {
  const ConvShape &s = *job.s;
  // y[r][q][tx]: output (2ty + r, 2tx + q) of the run; then the rows.
  float y[2][2][kMaxTileCols + 16];
  float out[2][2 * kMaxTileCols + 32];
  const tcc_uk_epilogue_t *ep = job.ep;
  const bool clamp = ep && ep->has_clamp;
  const vf lo = vset1(clamp ? ep->clamp_min : 0.0f);
  const vf hi = vset1(clamp ? ep->clamp_max : 0.0f);
  for (int64_t f = f0; f < f1; ++f) {
    const float *mf = rg.m + f * rg.ldm;
    const vf bias = vset1(ep && ep->bias ? ep->bias[f] : 0.0f);
    forTileRuns(job.t, rg.t0, rg.t1, [&](int64_t ty, int64_t txa, int64_t txb) {
      const int64_t len = txb - txa;
      for (int64_t k = 0; k < len; k += kVL) {
        const vmask mask = vmaskFirst(static_cast<int>(minI(kVL, len - k)));
        const float *at = mf + ty * job.t.tw + txa + k - rg.t0;
        vf s0[4], s1[4];
        for (int j = 0; j < 4; ++j) { // A^T M, per column of M
          const vf m0 = vloadMask(at + j * rg.mStride, mask);
          const vf m1 = vloadMask(at + (4 + j) * rg.mStride, mask);
          const vf m2 = vloadMask(at + (8 + j) * rg.mStride, mask);
          const vf m3 = vloadMask(at + (12 + j) * rg.mStride, mask);
          s0[j] = vadd(vadd(m0, m1), m2);
          s1[j] = vsub(vsub(m1, m2), m3);
        }
        // (A^T M) A
        vstore(y[0][0] + k, vadd(vadd(s0[0], s0[1]), s0[2]));
        vstore(y[0][1] + k, vsub(vsub(s0[1], s0[2]), s0[3]));
        vstore(y[1][0] + k, vadd(vadd(s1[0], s1[1]), s1[2]));
        vstore(y[1][1] + k, vsub(vsub(s1[1], s1[2]), s1[3]));
      }
      const int64_t ox0 = 2 * txa, ox1 = minI(s.ow, 2 * txb);
      for (int r = 0; r < 2 && 2 * ty + r < s.oh; ++r) {
        const int64_t oy = 2 * ty + r;
        interleave(y[r][0], y[r][1], out[r], len);
        float *dst = job.y + (f * s.oh + oy) * s.ow + ox0;
        const float *res =
            job.res ? job.res + (f * s.oh + oy) * s.ow + ox0 : NULL;
        for (int64_t ox = 0; ox < ox1 - ox0; ox += kVL) {
          const vmask m =
              vmaskFirst(static_cast<int>(minI(kVL, ox1 - ox0 - ox)));
          vf x = vload(out[r] + ox);
          if (job.accumulate)
            x = vadd(vloadMask(dst + ox, m), x);
          x = vadd(x, bias);
          if (res)
            x = vadd(x, vloadMask(res + ox, m));
          if (clamp)
            x = vclamp(x, lo, hi);
          vstoreMask(dst + ox, x, m);
        }
      }
    });
  }
}

/// The whole image as one range, each step split across threads.
Range wholeImage(const Job &job) {
  return {0, job.t.p, job.v, job.vStride, job.m, job.s->f * job.t.p, job.t.p};
}
void inputTransform(void *ctx, int64_t c0, int64_t c1) {
  const Job &job = *static_cast<const Job *>(ctx);
  transformInput(job, wholeImage(job), c0, c1);
}
void products(void *ctx, int64_t x0, int64_t x1) {
  const Job &job = *static_cast<const Job *>(ctx);
  multiply(job, wholeImage(job), x0, x1);
}
void outputTransform(void *ctx, int64_t f0, int64_t f1) {
  const Job &job = *static_cast<const Job *>(ctx);
  transformOutput(job, wholeImage(job), f0, f1);
}

/// Tiles a block of the blocked mode: two column panels.
constexpr int64_t kBlockTiles = 2 * kNR;

/// Blocks [b0, b1) of kBlockTiles tiles, each through all three steps on
/// one thread, its V and M in a slice of the scratch of their own (about
/// 16 * (c + f) * 96 floats: they stay in the thread's L2 between steps).
void blocks(void *ctx, int64_t b0, int64_t b1) {
  const Job &job = *static_cast<const Job *>(ctx);
  const ConvShape &s = *job.s;
  for (int64_t b = b0; b < b1; ++b) {
    Range rg;
    rg.t0 = b * kBlockTiles;
    rg.t1 = minI(job.t.p, rg.t0 + kBlockTiles);
    rg.vStride = s.c * kBlockTiles;
    rg.v = job.v + b * kTransformed * rg.vStride;
    rg.ldm = rg.t1 - rg.t0;
    rg.mStride = s.f * rg.ldm;
    rg.m = job.m + kTransformed * s.f * rg.t0;
    transformInput(job, rg, 0, s.c);
    zeroPanelTail(rg, s.c);
    multiply(job, rg, 0, kTransformed);
    transformOutput(job, rg, 0, s.f);
  }
}

} // namespace

bool winogradFits(const ConvShape &s) {
  if (s.kh != 3 || s.kw != 3 || s.sh != 1 || s.sw != 1 || s.dh != 1 ||
      s.dw != 1 || s.groups != 1 || s.pt > 2 || s.pl > 2 || s.pb > 2 ||
      s.pr > 2 || s.oh < 2 || s.ow < 2)
    return false;
  const Tiles t = tilesOf(s);
  // Small problems: the transforms would cost more than they save. From 16
  // tiles (resnet's 7x7 layers: 4x4 tiles) the GEMMs fill a vector of
  // columns; measured on resnet18, taking those too saved 7%.
  return t.tw <= kMaxTileCols && t.p >= 16 && s.c >= 16 && s.f >= 16;
}

int64_t winogradWeightBytes(int32_t isa, const ConvShape &s) {
  return kTransformed * uFloats(isa, s) * static_cast<int64_t>(sizeof(float));
}

void winogradPackWeights(int32_t isa, const ConvShape &s, const float *w,
                         float *out) {
  // U = G g G^T, with G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], in
  // double, one F x C matrix per xi, each packed as A panels.
  const int64_t fc = s.f * s.c;
  float *u = static_cast<float *>(malloc(sizeof(float) * fc));
  if (!u)
    return;
  static const double G[4][3] = {
      {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  for (int xi = 0; xi < kTransformed; ++xi) {
    const int i = xi / 4, j = xi % 4;
    for (int64_t k = 0; k < fc; ++k) {
      const float *g = w + k * 9;
      double acc = 0;
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
          acc += G[i][a] * g[a * 3 + b] * G[j][b];
      u[k] = static_cast<float>(acc);
    }
    tcc_uk_pack_a(isa, s.f, s.c, u, s.c, 0, out + xi * uFloats(isa, s));
  }
  free(u);
}

int64_t winogradScratchBytes(int32_t isa, const ConvShape &s) {
  const Tiles t = tilesOf(s);
  return (kTransformed * vFloats(isa, s, t) + kTransformed * s.f * t.p) *
             static_cast<int64_t>(sizeof(float)) +
         64;
}

void winogradConv(const tcc_host_api_t *host, const ConvShape &s,
                  const float *input, const float *weight, float *output,
                  bool accumulate, const tcc_uk_epilogue_t *ep,
                  void *scratch) {
  Job job = {};
  job.s = &s;
  job.t = tilesOf(s);
  job.u = weight;
  job.uStride = uFloats(TCC_UK_NATIVE_ISA, s);
  job.vStride = vFloats(TCC_UK_NATIVE_ISA, s, job.t);
  job.v = alignScratch(scratch);
  job.m = job.v + kTransformed * job.vStride;
  job.ep = ep;
  job.accumulate = accumulate;
  // Enough blocks of tiles to keep every thread busy: each thread takes
  // whole blocks through all three steps, in its own cache. Otherwise each
  // step is split across the threads (channels, the 16 products, filters).
  const int64_t nblocks = ceilDiv(job.t.p, kBlockTiles);
  const bool blocked = nblocks >= 2 * hostThreads(host) && nblocks > 1;
  const int64_t ohw = s.oh * s.ow;
  for (int64_t img = 0; img < s.n; ++img) {
    job.x = input + img * s.c * s.h * s.w;
    job.y = output + img * s.f * ohw;
    job.res = ep && ep->residual ? ep->residual + img * s.f * ohw : NULL;
    if (blocked) {
      parallelFor(host, nblocks, 1, blocks, &job);
      continue;
    }
    parallelFor(host, s.c, 1, inputTransform, &job);
    if (img == 0)
      zeroPanelTail(wholeImage(job), s.c);
    parallelFor(host, kTransformed, 1, products, &job);
    parallelFor(host, s.f, 1, outputTransform, &job);
  }
}

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc
