// winograd.cc - 3x3 stride-1 convolutions as Winograd F(m x m, 3x3), m = 2
// or 4: each m x m block of outputs ("tile") is computed from an a x a block
// of inputs (a = m + 2) with a^2 multiplications per channel pair instead of
// 9 m^2, as a^2 independent GEMMs over the channels (Lavin and Gray, "Fast
// Algorithms for Convolutional Neural Networks", 2016):
//
//   V[xi][c, t] = (B^T d_{c,t} B)[xi]     the input tiles, transformed
//   U[xi][f, c] = (G g_{f,c} G^T)[xi]     the weights, at packing time
//   M[xi]       = U[xi] * V[xi]           a^2 GEMMs, F x P x C
//   y_{f,t}     = A^T M_{f,t} A           the m x m outputs of tile t
//
// with xi = a i + j over the transform domain and P the tiles of an image.
// F(2x2, 3x3) (16 products for 4 outputs) only adds and subtracts in its
// transforms (the 1/2 of G goes into the weights); F(4x4, 3x3) (36 for 16,
// interpolation points 0, +-1, +-2) needs a little over half the products
// per output but scales by up to 8 in its transforms and makes U four times
// the weights, so it serves the layers with few channels and many tiles.
//
// The weights are packed per xi as the GEMM's A panels; V is written
// straight into the GEMM's packed-B layout, so the GEMMs run the tile
// kernels without packing anything.
#include "simd.h"

#include <stdlib.h>

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {
namespace {

/// The geometry of F(M x M, 3x3).
template <int M> struct Wino {
  static constexpr int kIn = M + 2;    // input tile a
  static constexpr int kT = kIn * kIn; // transformed values per tile
  /// Tiles of a block in the blocked mode: two column panels, one for
  /// F(4x4) whose V and M are 36 matrices a block.
  static constexpr int64_t kBlock = (M == 2 ? 2 : 1) * kNR;
};
/// Tile rows wider than this (images over ~2000 columns) use im2col: the
/// transforms keep a few rows of tiles on the stack.
constexpr int64_t kMaxTileCols = 1024;

struct Tiles {
  int64_t th, tw, p; // tile rows, tile columns, tiles of an image
};

Tiles tilesOf(const ConvShape &s, int m) {
  Tiles t;
  t.th = ceilDiv(s.oh, m);
  t.tw = ceilDiv(s.ow, m);
  t.p = t.th * t.tw;
  return t;
}

int64_t roundUp(int64_t x, int64_t m) { return ceilDiv(x, m) * m; }

/// A stride between the (m+2)^2 matrices of V or M: `floats` rounded up
/// to a cache line, and one line more where that is a multiple of 2 KB.
/// The transforms write (and read) one vector in each of the 16 or 36
/// matrices in turn; 4 KB apart (a batch of 8 at 32 -> 64 channels: blocks
/// of 32 x 96 floats, 12 KB), they would all fall in one set of the L1.
int64_t spread(int64_t floats) {
  const int64_t r = roundUp(floats, 16);
  return r % 512 == 0 ? r + 16 : r;
}

/// Floats of one xi's V: the packed-B panels of a C x P matrix, P rounded
/// up to two panels (at least the blocked mode's blocks).
int64_t vFloats(int32_t isa, const ConvShape &s, const Tiles &t) {
  const int64_t nr = tilesFor(isa).nr;
  return spread(roundUp(t.p, 2 * nr) * s.c);
}

/// Floats of one slot of the blocked mode: V and M of a block of `block`
/// tiles (M's stride from the block's tiles, at most `block`).
int64_t slotFloats(const ConvShape &s, int transformed, int64_t block) {
  return transformed * (spread(s.c * block) + spread(s.f * block));
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
  // The blocked mode: blocks of tiles of every image of the batch, dealt
  // out in `slots` runs, each through a slice of the scratch of its own.
  const float *input;
  float *output;
  const float *residual;
  int64_t blocksPerImage, blocks, slots;
};

#if TCC_UK_NATIVE_ISA == 2
/// The permutation that moves lane (l + shift) mod 16 to lane l.
TCC_UK_INLINE __m512i rotatedLanes(int64_t shift) {
  return _mm512_and_si512(
      _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                         12, 13, 14, 15),
                       _mm512_set1_epi32(static_cast<int>(shift))),
      _mm512_set1_epi32(15));
}
#endif

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
  const int first = static_cast<int>(kNR - lane);
#if TCC_UK_NATIVE_ISA == 2
  // The lanes past this panel moved down to the next one's start, in
  // registers: a vector stored and read back with masked loads waits on
  // store forwarding (rows of 7 tiles cross a panel every 48 columns).
  vstoreMask(dst, x, vmaskFirst(first));
  vstoreMask(dst + (C - 1) * kNR + kNR - lane,
             _mm512_permutexvar_ps(rotatedLanes(first), x),
             vmaskFirst(n - first));
#else
  alignas(64) float tmp[kVL];
  vstore(tmp, x);
  copyShort(dst, tmp, first);
  copyShort(dst + (C - 1) * kNR + kNR - lane, tmp + first, n - first);
#endif
}

/// The 1-D input transform B^T of F(M x M, 3x3) on in[0..M+2).
template <int M> TCC_UK_INLINE void inputTransform1(const vf *in, vf *out) {
  if (M == 2) {
    out[0] = vsub(in[0], in[2]);
    out[1] = vadd(in[1], in[2]);
    out[2] = vsub(in[2], in[1]);
    out[3] = vsub(in[1], in[3]);
  } else {
    const vf four = vset1(4.0f), five = vset1(-5.0f), two = vset1(2.0f);
    const vf p12 = vadd(in[1], in[2]), m12 = vsub(in[1], in[2]);
    const vf m13 = vsub(in[1], in[3]), d4m2 = vsub(in[4], in[2]);
    out[0] = vfma(four, in[0], vfma(five, in[2], in[4]));
    out[1] = vsub(vadd(in[3], in[4]), vmul(four, p12));
    out[2] = vfma(four, m12, vsub(in[4], in[3]));
    out[3] = vsub(d4m2, vmul(two, m13));
    out[4] = vfma(two, m13, d4m2);
    out[5] = vfma(four, in[1], vfma(five, in[3], in[5]));
  }
}

/// The 1-D output transform A^T of F(M x M, 3x3): M values from M + 2.
template <int M> TCC_UK_INLINE void outputTransform1(const vf *in, vf *out) {
  if (M == 2) {
    out[0] = vadd(vadd(in[0], in[1]), in[2]);
    out[1] = vsub(vsub(in[1], in[2]), in[3]);
  } else {
    const vf p12 = vadd(in[1], in[2]), m12 = vsub(in[1], in[2]);
    const vf p34 = vadd(in[3], in[4]), m34 = vsub(in[3], in[4]);
    out[0] = vadd(vadd(in[0], p12), p34);
    out[1] = vfma(vset1(2.0f), m34, m12);
    out[2] = vfma(vset1(4.0f), p34, p12);
    out[3] = vadd(vfma(vset1(8.0f), m34, m12), in[5]);
  }
}

/// The M + 2 input columns of kVL tiles of one input row: d[q], lane l =
/// xrow[base + M l + q], zeros outside [0, w).
#if TCC_UK_NATIVE_ISA == 2
template <int M>
TCC_UK_INLINE void gatherTaps(const float *xrow, int64_t w, int64_t base,
                              vf *d) {
  if (M == 2) {
    // Columns base + [0, 32) and base + 2 + [0, 32), split by parity.
    loadColsByParity(xrow, w, base, d[0], d[1]);
    loadColsByParity(xrow, w, base + 2, d[2], d[3]);
  } else {
    // Columns base + [0, 80) in five loads. Tap q < 4 is every fourth
    // column from q: lanes 0-7 from the first two loads, 8-15 from the
    // next two. Taps 4 and 5 are taps 0 and 1 moved down a lane (column
    // q + 4l = (q - 4) + 4(l + 1)), their last lanes columns 64 and 65:
    // five loads a row, not two masked ones for each half of each tap (24).
    const __m512 c0 = loadCols(xrow, w, base);
    const __m512 c1 = loadCols(xrow, w, base + 16);
    const __m512 c2 = loadCols(xrow, w, base + 32);
    const __m512 c3 = loadCols(xrow, w, base + 48);
    const __m512i c4 = _mm512_castps_si512(loadCols(xrow, w, base + 64));
    const __m512i four = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8,
                                           12, 16, 20, 24, 28);
    for (int q = 0; q < 4; ++q) {
      const __m512i idx = _mm512_add_epi32(four, _mm512_set1_epi32(q));
      const __m512 lo = _mm512_permutex2var_ps(c0, idx, c1);
      const __m512 hi = _mm512_permutex2var_ps(c2, idx, c3);
      d[q] = _mm512_shuffle_f32x4(lo, hi, 0x44);
    }
    d[4] = _mm512_castsi512_ps(
        _mm512_alignr_epi32(c4, _mm512_castps_si512(d[0]), 1));
    d[5] = _mm512_castsi512_ps(_mm512_alignr_epi32(
        _mm512_alignr_epi32(c4, c4, 1), _mm512_castps_si512(d[1]), 1));
  }
}
#else
template <int M>
TCC_UK_INLINE void gatherTaps(const float *xrow, int64_t w, int64_t base,
                              vf *d) {
  alignas(64) float col[M + 2][kVL];
  for (int l = 0; l < kVL; ++l)
    for (int q = 0; q < M + 2; ++q) {
      const int64_t ix = base + M * l + q;
      col[q][l] = ix >= 0 && ix < w ? xrow[ix] : 0.0f;
    }
  for (int q = 0; q < M + 2; ++q)
    d[q] = vload(col[q]);
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
  const float *x; // the image
  float *y;       // its output
  const float *res;
};

/// Zeros the columns of the range's last panel past its tiles that the
/// tile kernels load: never stored, but computed on, and left as they were
/// they could be anything (denormals slow the products down). Only up to
/// the end of the last vector: the narrow kernels of AVX-512 (a panel of up
/// to 4 columns) load none. Zeroing all of the panel's padding (47 columns
/// of 36 matrices for 49 tiles) would be serial work for nothing.
void zeroPanelTail(const Range &rg, int64_t c, int transformed) {
  const int64_t n = rg.t1 - rg.t0, w = n % kNR;
  if (w == 0)
    return;
  int64_t end = minI(kNR, ceilDiv(w, kVL) * kVL);
#if TCC_UK_NATIVE_ISA == 2
  if (w <= kNarrow)
    end = w;
#endif
  if (end == w)
    return;
  for (int xi = 0; xi < transformed; ++xi) {
    float *last = rg.v + xi * rg.vStride + (n / kNR) * c * kNR;
    for (int64_t k = 0; k < c; ++k)
      zeroShort(last + k * kNR + w, end - w);
  }
}

/// Calls fn(ty, txBegin, txEnd) for the runs of tiles [t0, t1) within
/// each tile row.
template <typename Fn>
TCC_UK_INLINE void forTileRuns(const Tiles &t, int64_t t0, int64_t t1, Fn fn) {
  for (int64_t at = t0; at < t1;) {
    const int64_t ty = at / t.tw, tx = at % t.tw;
    const int64_t end = minI(t.tw, tx + (t1 - at));
    fn(ty, tx, end);
    at += end - tx;
  }
}

/// Tile rows a vector holds at once: on AVX-512 a narrow image's rows
/// (at most half a vector of tiles each: 14x14 outputs are 7 tiles of
/// F(2x2), 4 of F(4x4)) share the transforms' vectors, whole rows side by
/// side; else 1, a vector within one tile row.
int64_t rowsPerVector(const Tiles &t) {
#if TCC_UK_NATIVE_ISA == 2
  return 2 * t.tw <= kVL ? kVL / t.tw : 1;
#else
  (void)t;
  return 1;
#endif
}

/// forTileRuns, but whole tile rows, up to `group` of them, as one call
/// fn(ty, 0, tw, rows) where the range holds them; fn(ty, txa, txb, 1)
/// for the other runs.
template <typename Fn>
TCC_UK_INLINE void forTileGroups(const Tiles &t, int64_t t0, int64_t t1,
                                 int64_t group, Fn fn) {
  for (int64_t at = t0; at < t1;) {
    const int64_t ty = at / t.tw, tx = at % t.tw;
    const int64_t rows = tx == 0 ? minI(group, (t1 - at) / t.tw) : 0;
    if (rows > 1) {
      fn(ty, int64_t(0), t.tw, rows);
      at += rows * t.tw;
      continue;
    }
    const int64_t end = minI(t.tw, tx + (t1 - at));
    fn(ty, tx, end, int64_t(1));
    at += end - tx;
  }
}

#if TCC_UK_NATIVE_ISA == 2
/// Lanes [g tw, (g + 1) tw) of `into` from lanes [0, tw) of `x`.
TCC_UK_INLINE vf placeRow(vf into, vf x, int64_t g, int64_t tw) {
  const __mmask16 lanes = static_cast<__mmask16>(((1u << tw) - 1) << (g * tw));
  return _mm512_mask_permutexvar_ps(into, lanes, rotatedLanes(-g * tw), x);
}

/// Lanes [0, tw) from lanes [g tw, (g + 1) tw) of `x`.
TCC_UK_INLINE vf takeRow(vf x, int64_t g, int64_t tw) {
  return _mm512_permutexvar_ps(rotatedLanes(g * tw), x);
}
#endif

/// V of channels [c0, c1) for the range's tiles: each input block d
/// becomes B^T d B, kVL tiles of a tile row at a time (or, on AVX-512,
/// several narrow tile rows side by side: rowsPerVector).
template <int M>
void transformInput(const Job &job, const Range &rg, int64_t c0, int64_t c1) {
  constexpr int A = Wino<M>::kIn;
  const ConvShape &s = *job.s;
  const int64_t tw = job.t.tw, group = rowsPerVector(job.t);
  for (int64_t c = c0; c < c1; ++c) {
    const float *xc = rg.x + c * s.h * s.w;
    // The taps of input row r of tile row ty (lanes from tile tx on).
    auto taps = [&](int64_t ty, int r, int64_t tx, vf *d) {
      const int64_t iy = M * ty - s.pt + r;
      if (iy < 0 || iy >= s.h) {
        for (int q = 0; q < A; ++q)
          d[q] = vzero();
      } else {
        gatherTaps<M>(xc + iy * s.w, s.w, M * tx - s.pl, d);
      }
    };
    forTileGroups(
        job.t, rg.t0, rg.t1, group,
        [&](int64_t ty, int64_t txa, int64_t txb, int64_t rows) {
          for (int64_t tx = txa; tx < txb; tx += kVL) {
            const int n =
                static_cast<int>(rows > 1 ? rows * tw : minI(kVL, txb - tx));
            vf h[A][A]; // h[r][j]: (d B)[r][j], per input row r
            for (int r = 0; r < A; ++r) {
              vf d[A];
              taps(ty, r, tx, d);
#if TCC_UK_NATIVE_ISA == 2
              for (int64_t g = 1; g < rows; ++g) { // whole rows side by side
                vf e[A];
                taps(ty + g, r, 0, e);
                for (int q = 0; q < A; ++q)
                  d[q] = placeRow(d[q], e[q], g, tw);
              }
#endif
              inputTransform1<M>(d, h[r]);
            }
            const int64_t col = ty * tw + tx - rg.t0;
            for (int j = 0; j < A; ++j) { // B^T (d B), column j
              vf in[A], v[A];
              for (int r = 0; r < A; ++r)
                in[r] = h[r][j];
              inputTransform1<M>(in, v);
              for (int i = 0; i < A; ++i)
                storeV(rg.v + (A * i + j) * rg.vStride, c, s.c, col, n, v[i]);
            }
          }
        });
  }
}

/// M[xi] = U[xi] * V[xi] over the range's tiles for xi in [x0, x1), each
/// on the calling thread.
inline void multiply(const Job &job, const Range &rg, int64_t x0, int64_t x1) {
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

#if TCC_UK_NATIVE_ISA != 2
/// The stack rows of transformOutput interleaved into output rows (AVX-512
/// does it in registers, interleaveRegs).
/// dst[2t] = a[t], dst[2t+1] = b[t] for t < n.
TCC_UK_INLINE void interleave(const float *a, const float *b, float *dst,
                              int64_t n) {
  for (int64_t t = 0; t < n; ++t) {
    dst[2 * t] = a[t];
    dst[2 * t + 1] = b[t];
  }
}

/// dst[4t + q] = src[q][t] for t < n.
TCC_UK_INLINE void interleave4(const float *const *src, float *dst, int64_t n) {
  for (int64_t t = 0; t < n; ++t)
    for (int q = 0; q < 4; ++q)
      dst[4 * t + q] = src[q][t];
}

#endif

#if TCC_UK_NATIVE_ISA == 2
/// x[p] lane i = output column 16 p + i of M vectors o[q] (lane t: column
/// M t + q), in registers: interleave and interleave4 without the stack.
template <int M> TCC_UK_INLINE void interleaveRegs(const vf *o, vf *x) {
  const __m512i lo =
      _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
  if (M == 2) {
    x[0] = _mm512_permutex2var_ps(o[0], lo, o[1]);
    x[1] = _mm512_permutex2var_ps(o[0], hi, o[1]);
  } else {
    const __m512i plo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
    const __m512i phi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
    const __m512d ab0 =
        _mm512_castps_pd(_mm512_permutex2var_ps(o[0], lo, o[1]));
    const __m512d ab1 =
        _mm512_castps_pd(_mm512_permutex2var_ps(o[0], hi, o[1]));
    const __m512d cd0 =
        _mm512_castps_pd(_mm512_permutex2var_ps(o[2], lo, o[3]));
    const __m512d cd1 =
        _mm512_castps_pd(_mm512_permutex2var_ps(o[2], hi, o[3]));
    x[0] = _mm512_castpd_ps(_mm512_permutex2var_pd(ab0, plo, cd0));
    x[1] = _mm512_castpd_ps(_mm512_permutex2var_pd(ab0, phi, cd0));
    x[2] = _mm512_castpd_ps(_mm512_permutex2var_pd(ab1, plo, cd1));
    x[3] = _mm512_castpd_ps(_mm512_permutex2var_pd(ab1, phi, cd1));
  }
}
#endif

/// The outputs of channels [f0, f1) in the range's tiles: each tile's
/// M becomes A^T M A, then the epilogue, a run of a tile row at a time.
template <int M>
void transformOutput(const Job &job, const Range &rg, int64_t f0, int64_t f1) {
  constexpr int A = Wino<M>::kIn;
  const ConvShape &s = *job.s;
#if TCC_UK_NATIVE_ISA != 2
  // y[r][q][k]: output (M ty + r, M (txa + k) + q) of the run; then the rows.
  float y[M][M][kMaxTileCols + 16];
  float out[M * kMaxTileCols + 32];
#endif
  const tcc_uk_epilogue_t *ep = job.ep;
  const bool clamp = ep && ep->has_clamp;
  const int act = ep ? ep->activation : TCC_UK_ACT_NONE;
  const vf lo = vset1(clamp ? ep->clamp_min : 0.0f);
  const vf hi = vset1(clamp ? ep->clamp_max : 0.0f);
  const int64_t group = rowsPerVector(job.t);
  for (int64_t f = f0; f < f1; ++f) {
    const float *mf = rg.m + f * rg.ldm;
    const vf bias = vset1(ep && ep->bias ? ep->bias[f] : 0.0f);
    forTileGroups(
        job.t, rg.t0, rg.t1, group,
        [&](int64_t ty, int64_t txa, int64_t txb, int64_t rows) {
          // (Whole rows side by side, from AVX-512's rowsPerVector, are one
          // vector: rows * tw <= kVL.)
          const int64_t len = rows > 1 ? rows * job.t.tw : txb - txa;
          for (int64_t k = 0; k < len; k += kVL) {
            const vmask mask = vmaskFirst(static_cast<int>(minI(kVL, len - k)));
            const float *at = mf + ty * job.t.tw + txa + k - rg.t0;
            vf cols[M][A]; // (A^T M)[r][j]
            for (int j = 0; j < A; ++j) {
              vf in[A], o[M];
              for (int i = 0; i < A; ++i)
                in[i] = vloadMask(at + (A * i + j) * rg.mStride, mask);
              outputTransform1<M>(in, o);
              for (int r = 0; r < M; ++r)
                cols[r][j] = o[r];
            }
#if TCC_UK_NATIVE_ISA == 2
            // Each output row's M x 16 columns interleaved in registers, the
            // epilogue applied and stored: through stack rows read back at
            // once, every load would wait on the stores before it.
            // Only this vector's tiles of the run: a range may end inside a
            // tile row, and the tiles past it are another range's.
            // Side by side rows: tile row ty + g from lanes g tw on.
            vf done[M][M]; // (A^T M A)[r][q]
            for (int r = 0; r < M; ++r)
              outputTransform1<M>(cols[r], done[r]);
            for (int64_t g = 0; g < rows; ++g) {
              const int64_t oty = ty + g;
              const int64_t oxa = M * (txa + k);
              const int64_t tiles = rows > 1 ? job.t.tw : minI(kVL, len - k);
              const int64_t width = minI(M * tiles, s.ow - oxa);
              for (int r = 0; r < M && M * oty + r < s.oh; ++r) {
                vf o[M], x[M];
                for (int q = 0; q < M; ++q)
                  o[q] =
                      rows > 1 ? takeRow(done[r][q], g, job.t.tw) : done[r][q];
                interleaveRegs<M>(o, x);
                const int64_t row = (f * s.oh + M * oty + r) * s.ow + oxa;
                float *dst = rg.y + row;
                const float *res = rg.res ? rg.res + row : NULL;
                for (int p = 0; p < M && kVL * p < width; ++p) {
                  const vmask m =
                      vmaskFirst(static_cast<int>(minI(kVL, width - kVL * p)));
                  vf v = x[p];
                  if (job.accumulate)
                    v = vadd(vloadMask(dst + kVL * p, m), v);
                  v = vadd(v, bias);
                  if (res)
                    v = vadd(v, vloadMask(res + kVL * p, m));
                  if (act)
                    v = vactivate(act, v);
                  if (clamp)
                    v = vclamp(v, lo, hi);
                  vstoreMask(dst + kVL * p, v, m);
                }
              }
            }
#else
            for (int r = 0; r < M; ++r) { // (A^T M) A
              vf o[M];
              outputTransform1<M>(cols[r], o);
              for (int q = 0; q < M; ++q)
                vstore(y[r][q] + k, o[q]);
            }
#endif
          }
#if TCC_UK_NATIVE_ISA != 2
          const int64_t ox0 = M * txa, ox1 = minI(s.ow, M * txb);
          for (int r = 0; r < M && M * ty + r < s.oh; ++r) {
            const int64_t oy = M * ty + r;
            if (M == 2) {
              interleave(y[r][0], y[r][1], out, len);
            } else {
              const float *src[4] = {y[r][0], y[r][1], y[r][2], y[r][3]};
              interleave4(src, out, len);
            }
            float *dst = rg.y + (f * s.oh + oy) * s.ow + ox0;
            const float *res =
                rg.res ? rg.res + (f * s.oh + oy) * s.ow + ox0 : NULL;
            for (int64_t ox = 0; ox < ox1 - ox0; ox += kVL) {
              const vmask m =
                  vmaskFirst(static_cast<int>(minI(kVL, ox1 - ox0 - ox)));
              vf x = vload(out + ox);
              if (job.accumulate)
                x = vadd(vloadMask(dst + ox, m), x);
              x = vadd(x, bias);
              if (res)
                x = vadd(x, vloadMask(res + ox, m));
              if (act)
                x = vactivate(act, x);
              if (clamp)
                x = vclamp(x, lo, hi);
              vstoreMask(dst + ox, x, m);
            }
          }
#endif
        });
  }
}

/// The whole image as one range, each step split across threads.
Range wholeImage(const Job &job) {
  return {
      0,       job.t.p, job.v, job.vStride, job.m, spread(job.s->f * job.t.p),
      job.t.p, job.x,   job.y, job.res};
}
template <int M> void inputTransform(void *ctx, int64_t c0, int64_t c1) {
  const Job &job = *static_cast<const Job *>(ctx);
  transformInput<M>(job, wholeImage(job), c0, c1);
}
void products(void *ctx, int64_t x0, int64_t x1) {
  const Job &job = *static_cast<const Job *>(ctx);
  multiply(job, wholeImage(job), x0, x1);
}
template <int M> void outputTransform(void *ctx, int64_t f0, int64_t f1) {
  const Job &job = *static_cast<const Job *>(ctx);
  transformOutput<M>(job, wholeImage(job), f0, f1);
}

/// The blocked mode's slots [i0, i1): each takes its share of the blocks
/// of Wino<M>::kBlock tiles of every image, each block through all three
/// steps on one thread, its V and M in the slot's slice of the scratch
/// (about a^2 (c + f) kBlock floats: they stay in the thread's L2 between
/// steps). Blocks of several images in one pass: a batch of small images
/// (8 x 14x14, two blocks each) keeps the threads busy without a barrier
/// per image and step.
template <int M> void blocks(void *ctx, int64_t i0, int64_t i1) {
  constexpr int T = Wino<M>::kT;
  constexpr int64_t kB = Wino<M>::kBlock;
  const Job &job = *static_cast<const Job *>(ctx);
  const ConvShape &s = *job.s;
  const int64_t ohw = s.oh * s.ow;
  for (int64_t slot = i0; slot < i1; ++slot) {
    float *slice = job.v + slot * slotFloats(s, T, kB);
    const int64_t g0 = slot * job.blocks / job.slots;
    const int64_t g1 = (slot + 1) * job.blocks / job.slots;
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t img = g / job.blocksPerImage;
      const int64_t b = g % job.blocksPerImage;
      Range rg;
      rg.t0 = b * kB;
      rg.t1 = minI(job.t.p, rg.t0 + kB);
      rg.vStride = spread(s.c * kB);
      rg.v = slice;
      rg.ldm = rg.t1 - rg.t0;
      rg.mStride = spread(s.f * rg.ldm);
      rg.m = slice + T * rg.vStride;
      rg.x = job.input + img * s.c * s.h * s.w;
      rg.y = job.output + img * s.f * ohw;
      rg.res = job.residual ? job.residual + img * s.f * ohw : NULL;
      transformInput<M>(job, rg, 0, s.c);
      zeroPanelTail(rg, s.c, T);
      multiply(job, rg, 0, T);
      transformOutput<M>(job, rg, 0, s.f);
    }
  }
}

/// Most runs of blocks the blocked mode deals out at once: what its
/// scratch holds (winogradScratchBytes), as many as 16 threads can use.
constexpr int64_t kMaxSlots = 16;

template <int M>
void run(const tcc_host_api_t *host, Job &job, const float *input,
         float *output) {
  constexpr int T = Wino<M>::kT;
  const ConvShape &s = *job.s;
  const int64_t ohw = s.oh * s.ow;
  const tcc_uk_epilogue_t *ep = job.ep;
  // Enough blocks of tiles (in the whole batch) to keep every thread busy:
  // each thread takes whole blocks through all three steps, in its own
  // cache. Otherwise each step is split across the threads (channels, the
  // products, filters), an image at a time.
  job.input = input;
  job.output = output;
  job.residual = ep ? ep->residual : NULL;
  job.blocksPerImage = ceilDiv(job.t.p, Wino<M>::kBlock);
  job.blocks = s.n * job.blocksPerImage;
  job.slots = minI(job.blocks, kMaxSlots);
  if (job.blocks >= 2 * hostThreads(host) && job.blocks > 1) {
    parallelFor(host, job.slots, 1, blocks<M>, &job);
    return;
  }
  for (int64_t img = 0; img < s.n; ++img) {
    job.x = input + img * s.c * s.h * s.w;
    job.y = output + img * s.f * ohw;
    job.res = job.residual ? job.residual + img * s.f * ohw : NULL;
    parallelFor(host, s.c, 1, inputTransform<M>, &job);
    if (img == 0)
      zeroPanelTail(wholeImage(job), s.c, T);
    parallelFor(host, T, 1, products, &job);
    parallelFor(host, s.f, 1, outputTransform<M>, &job);
  }
}

/// F(4x4) or F(2x2) for a 3x3 stride-1 convolution, or 0 for neither, for
/// the kernels of `isa` (packing and runs must agree: both ask with theirs).
int tileSize(int32_t isa, const ConvShape &s) {
  if (s.kh != 3 || s.kw != 3 || s.sh != 1 || s.sw != 1 || s.dh != 1 ||
      s.dw != 1 || s.groups != 1 || s.pt > 2 || s.pl > 2 || s.pb > 2 ||
      s.pr > 2 || s.oh < 2 || s.ow < 2 || s.c < 16 || s.f < 16)
    return 0;
  // F(4x4) where there are tiles enough and few channels: its U is four
  // times the weights, read once a run, which the wide layers cannot afford
  // (64- and 128-channel layers at 56x56 and 28x28 take it; 256- and
  // 512-channel ones at 14x14 and 7x7 do not). The tiles of every image
  // count: the blocked mode runs them in one pass. And where a tile row
  // fills at least 40% of a vector: the transforms run a vector across a
  // row of tiles, and F(4x4)'s, which cost about three times F(2x2)'s a
  // vector, lose on narrow images what the products gain (14x14 outputs
  // are 4 tiles a row: 25% of AVX-512's lanes, F(2x2) 7; a batch of 8 at
  // 32 -> 64 channels took 0.35 ms as F(4x4), 0.26 as F(2x2) on 2
  // threads; at 10x10, 37.5% of AVX2's lanes, F(2x2) won too, and F(4x4)
  // from 7 of 16 and 4 of 8 lanes; tcc-ukernel-bench, docs/convolutions.md).
  const Tiles t4 = tilesOf(s, 4);
  if (s.n * t4.p >= 32 && t4.tw <= kMaxTileCols && s.c <= 128 && s.f <= 128 &&
      5 * t4.tw >= 2 * tilesFor(isa).vl)
    return 4;
  // Small problems: the transforms would cost more than they save. From 16
  // tiles (a 7x7 output: 4x4 tiles) the GEMMs fill a vector of
  // columns. But with under 32 tiles each byte of U serves few products,
  // and a U past 8 MB comes from memory every run, so such layers
  // (512 -> 512 channels at 7x7: U 16.8 MB) run as im2col GEMMs.
  const Tiles t2 = tilesOf(s, 2);
  const int64_t uBytes = int64_t(16) * s.c * s.f * int64_t(sizeof(float));
  if (s.n * t2.p < 32 && uBytes > (int64_t(8) << 20))
    return 0;
  return t2.tw <= kMaxTileCols && t2.p >= 16 ? 2 : 0;
}

int transformedOf(int m) { return (m + 2) * (m + 2); }

} // namespace

bool winogradFits(const ConvShape &s) {
  return tileSize(TCC_UK_NATIVE_ISA, s) != 0;
}

bool winoFiltersFits(int32_t isa, const ConvShape &s) {
  // Padded input rows of at most 16 columns: tile rows of at most 7
  // tiles (a 3x3 stride-1 window: w + pl = ow + 2 - pr <= 16). And U within 512
  // KB (c f <= 8192): a group of at most 14 tiles makes 28 FMAs of each 128
  // bytes of U, so U from outside the core's caches (a model's weights, read
  // once a run, come from L3 or memory) keeps the products waiting where the
  // tiles along the vectors, 96 to a block, do not. Weights and inputs cold, 2
  // threads: 128 -> 32 at 14x14 (U 256 KB) 0.048 against 0.074 ms, 48 -> 192 at
  // 13x13 (576 KB) 0.112 against 0.099, 128 -> 128 at 14x14 (1 MB) 0.183
  // against 0.158 (tcc-ukernel-bench, docs/convolutions.md).
  const int64_t uBytes = winoFiltersWeightBytes(s);
  return isa == TCC_UK_ISA_AVX512 && tileSize(isa, s) == 2 && s.f % 16 == 0 &&
         tilesOf(s, 2).tw <= 7 && uBytes <= (1 << 19);
}

int64_t winogradWeightBytes(int32_t isa, const ConvShape &s) {
  if (winoFiltersFits(isa, s))
    return winoFiltersWeightBytes(s);
  return transformedOf(tileSize(isa, s)) * uFloats(isa, s) *
         static_cast<int64_t>(sizeof(float));
}

void winogradFilter(int m, const float *g, float *u) {
  // U = G g G^T in double. F(2x2): G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2;
  // 0 0 1].
  static const double G2[4][3] = {
      {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static const double G4[6][3] = {{1.0 / 4, 0, 0},
                                  {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                  {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                  {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                  {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                  {0, 0, 1}};
  const int a = m + 2;
  const double(*G)[3] = m == 4 ? G4 : G2;
  for (int i = 0; i < a; ++i)
    for (int j = 0; j < a; ++j) {
      double acc = 0;
      for (int p = 0; p < 3; ++p)
        for (int q = 0; q < 3; ++q)
          acc += G[i][p] * g[p * 3 + q] * G[j][q];
      u[a * i + j] = static_cast<float>(acc);
    }
}

void winogradPackWeights(int32_t isa, const ConvShape &s, const float *w,
                         float *out) {
  if (winoFiltersFits(isa, s))
    return winoFiltersPackWeights(s, w, out);
  // One F x C matrix per xi, each packed as A panels.
  const int m = tileSize(isa, s), a = m + 2, t = a * a;
  const int64_t fc = s.f * s.c;
  float *u = static_cast<float *>(malloc(sizeof(float) * fc * t));
  if (!u)
    return;
  for (int64_t k = 0; k < fc; ++k) {
    float one[36];
    winogradFilter(m, w + k * 9, one);
    for (int xi = 0; xi < t; ++xi)
      u[xi * fc + k] = one[xi];
  }
  for (int xi = 0; xi < t; ++xi)
    tcc_uk_pack_a(isa, s.f, s.c, u + xi * fc, s.c, 0,
                  out + xi * uFloats(isa, s));
  free(u);
}

int64_t winogradScratchBytes(int32_t isa, const ConvShape &s) {
  if (winoFiltersFits(isa, s))
    return winoFiltersScratchBytes(s);
  const int m = tileSize(isa, s), t = transformedOf(m);
  const Tiles tiles = tilesOf(s, m);
  // An image's V and M (the split steps), or the blocked mode's slots.
  const int64_t block = (m == 2 ? 2 : 1) * tilesFor(isa).nr;
  const int64_t slots = minI(s.n * ceilDiv(tiles.p, block), kMaxSlots);
  const int64_t floats =
      maxI(t * vFloats(isa, s, tiles) + t * spread(s.f * tiles.p),
           slots * slotFloats(s, t, block));
  return floats * static_cast<int64_t>(sizeof(float)) + 64;
}

void winogradConv(const tcc_host_api_t *host, const ConvShape &s,
                  const float *input, const float *weight, float *output,
                  bool accumulate, const tcc_uk_epilogue_t *ep, void *scratch) {
  if (winoFiltersFits(TCC_UK_NATIVE_ISA, s))
    return winoFiltersConv(host, s, input, weight, output, accumulate, ep,
                           scratch);
  const int m = tileSize(TCC_UK_NATIVE_ISA, s);
  Job job = {};
  job.s = &s;
  job.t = tilesOf(s, m);
  job.u = weight;
  job.uStride = uFloats(TCC_UK_NATIVE_ISA, s);
  job.vStride = vFloats(TCC_UK_NATIVE_ISA, s, job.t);
  job.v = alignScratch(scratch);
  job.m = job.v + transformedOf(m) * job.vStride;
  job.ep = ep;
  job.accumulate = accumulate;
  if (m == 4)
    run<4>(host, job, input, output);
  else
    run<2>(host, job, input, output);
}

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc
