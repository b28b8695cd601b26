// microkernel.cc - the register-blocked inner kernels: the MR x NR tile
// kernel of the packed GEMM, and the row-streaming kernel of the unpacked
// small-m path.
#include "simd.h"

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {
namespace {

/// acc[i][v] = fn(acc[i][v], i, v) over the tile, unrolled.
template <int MRe, int NVe, typename Fn>
TCC_UK_INLINE void eachAcc(vf (&acc)[MRe][NVe], Fn fn) {
  TCC_UK_UNROLL
  for (int i = 0; i < MRe; ++i)
    TCC_UK_UNROLL
  for (int v = 0; v < NVe; ++v)
    acc[i][v] = fn(acc[i][v], i, v);
}

/// Stores one tile of accumulators, applying the tail. Full vectors but the
/// last, which holds nr - (NV-1)*VL columns. The tail is read once and
/// applied a step at a time over the whole tile (C, bias, residual,
/// activation, clamp: each element sees them in that order, as one pass
/// per element would), so each step is one test and straight-line code.
/// Per element, re-reading the tail (stores to C might alias it) and
/// branching on every field and activation made the epilogue of a 1x1
/// expansion over 16 channels (a 16-step K loop) 30% of its time.
template <int MRe, int NVe>
TCC_UK_INLINE void storeTile(vf (&acc)[MRe][NVe], float *c, int64_t ldc, int nr,
                             const Tail *tail) {
  const int lastN = nr - (NVe - 1) * kVL;
  const bool lastFull = lastN == kVL;
  const vmask lastMask = vmaskFirst(lastN);
  auto load = [&](const float *p, int v) {
    return v < NVe - 1 || lastFull ? vload(p) : vloadMask(p, lastMask);
  };
  if (tail) {
    const Tail t = *tail;
    if (t.loadC)
      eachAcc(acc, [&](vf x, int i, int v) {
        return vadd(load(c + i * ldc + v * kVL, v), x);
      });
    if (t.bias && t.biasPerRow)
      eachAcc(acc, [&](vf x, int i, int) { return vadd(x, vset1(t.bias[i])); });
    else if (t.bias)
      eachAcc(acc, [&](vf x, int, int v) {
        return vadd(x, load(t.bias + v * kVL, v));
      });
    if (t.res)
      eachAcc(acc, [&](vf x, int i, int v) {
        return vadd(x, load(t.res + i * t.ldr + v * kVL, v));
      });
    switch (t.act) {
    case TCC_UK_ACT_GELU:
      eachAcc(acc, [](vf x, int, int) { return vgelu(x); });
      break;
    case TCC_UK_ACT_GELU_TANH:
      eachAcc(acc, [](vf x, int, int) { return vgeluTanh(x); });
      break;
    case TCC_UK_ACT_SILU:
      eachAcc(acc, [](vf x, int, int) { return vsilu(x); });
      break;
    case TCC_UK_ACT_HARDSWISH:
      eachAcc(acc, [](vf x, int, int) { return vhardswish(x); });
      break;
    default:
      break;
    }
    if (t.clamp) {
      const vf lo = vset1(t.lo), hi = vset1(t.hi);
      eachAcc(acc, [&](vf x, int, int) { return vclamp(x, lo, hi); });
    }
  }
  TCC_UK_UNROLL
  for (int i = 0; i < MRe; ++i)
    TCC_UK_UNROLL
  for (int v = 0; v < NVe; ++v) {
    if (v < NVe - 1 || lastFull)
      vstore(c + i * ldc + v * kVL, acc[i][v]);
    else
      vstoreMask(c + i * ldc + v * kVL, acc[i][v], lastMask);
  }
}

/// Floats ahead of a k step at which the tile kernels prefetch their A
/// panel (64 steps of 8 floats, 2 KB): a panel of prepacked weights
/// streams from L3 or memory (a 512 -> 512 channel 3x3 layer reads
/// 9.4 MB of them a call, each row panel's K block 12 KB), and the
/// hardware prefetchers stop at every 4 KB page. Past the block's end it
/// fetches the panel's next block, which the next pass over K reads. Only
/// even steps prefetch: two steps take a line, and the odd step's prefetch
/// of the same line took a load slot for nothing (docs/ukernels.md).
constexpr int64_t kPrefetchA = 512;

/// Rows of B ahead of a k step at which the tile kernels prefetch it: a
/// prepacked B (a linear layer's weights, 48 floats a row) streams from L3
/// or memory like a prepacked A, a packed or direct one from L2 (rows
/// ldbp apart).
constexpr int64_t kPrefetchB = 12;

/// Rows of B ahead of a k step at which a one-row tile also prefetches it
/// into L2. A one-row tile (a linear layer of one row, at batch 1) does 3
/// FMAs a row of B, so its prepacked weights stream from L3 at the rate the
/// core keeps lines in flight, and the L1 prefetch kPrefetchB rows ahead
/// keeps too few. Tiles of more rows reuse each row of B enough that the
/// extra prefetches cost more than they bring (docs/ukernels.md).
constexpr int64_t kPrefetchBFar = 64;

/// The tile is stored after the K block's steps: start fetching its lines
/// of C (to write them) now, and those of the residual its tail adds. A
/// residual written layers before comes from L3, and the epilogue had
/// waited on each of its lines in turn (docs/ukernels.md, "Prefetches").
template <int MRe, int NVe>
TCC_UK_INLINE void prefetchTile(float *c, int64_t ldc, const Tail *tail) {
  TCC_UK_UNROLL
  for (int i = 0; i < MRe; ++i)
    TCC_UK_UNROLL
  for (int v = 0; v < NVe * kVL; v += 16)
    __builtin_prefetch(c + i * ldc + v, 1, 3);
  if (!tail || !tail->res)
    return;
  TCC_UK_UNROLL
  for (int i = 0; i < MRe; ++i)
    TCC_UK_UNROLL
  for (int v = 0; v < NVe * kVL; v += 16)
    __builtin_prefetch(tail->res + i * tail->ldr + v, 0, 3);
}

/// Prefetches the NVe vectors of B's row kPrefetchB ahead of step p of a
/// K block of kc steps, while that row lies inside the block: read where
/// it lies, B ends there (a 1x1 expansion's 16 input channels).
template <int NVe>
TCC_UK_INLINE void prefetchB(const float *b, int64_t ldbp, int64_t p,
                             int64_t kc) {
  if (p + kPrefetchB >= kc)
    return;
  TCC_UK_UNROLL
  for (int v = 0; v < NVe; ++v)
    __builtin_prefetch(b + kPrefetchB * ldbp + v * kVL, 0, 3);
}

/// The tile kernel: MRe rows (<= MR) by NVe vectors (<= NV) of C. Each k
/// step loads NVe vectors of the B panel and broadcasts MRe values of the A
/// panel; every element is one chain of FMAs in k order, so edge tiles
/// compute exactly what full tiles would.
template <int MRe, int NVe, bool Side>
TCC_UK_INLINE void
tileLoop(int64_t kc, const float *__restrict a, const float *__restrict b,
         int64_t ldbp, float *__restrict c, int64_t ldc, int nr,
         const Tail *tail, const char *side, int64_t sideLines, int64_t every) {
  prefetchTile<MRe, NVe>(c, ldc, tail);
  vf acc[MRe][NVe];
  TCC_UK_UNROLL
  for (int i = 0; i < MRe; ++i)
    TCC_UK_UNROLL
  for (int v = 0; v < NVe; ++v)
    acc[i][v] = vzero();
  int64_t sideAt = 0; // the k step of the next side prefetch
  for (int64_t p = 0; p < kc; ++p) {
    if (!(p & 1))
      __builtin_prefetch(a + kPrefetchA, 0, 3);
    prefetchB<NVe>(b, ldbp, p, kc);
    if (MRe == 1 && p + kPrefetchBFar < kc) {
      TCC_UK_UNROLL
      for (int v = 0; v < NVe; ++v)
        __builtin_prefetch(b + kPrefetchBFar * ldbp + v * kVL, 0, 2);
    }
    if (Side && p == sideAt && sideLines > 0) {
      __builtin_prefetch(side, 0, 2);
      side += 64;
      --sideLines;
      sideAt += every;
    }
    vf bv[NVe];
    TCC_UK_UNROLL
    for (int v = 0; v < NVe; ++v)
      bv[v] = vload(b + v * kVL);
    TCC_UK_UNROLL
    for (int i = 0; i < MRe; ++i) {
      const vf av = vset1(a[i]);
      TCC_UK_UNROLL
      for (int v = 0; v < NVe; ++v)
        acc[i][v] = vfma(av, bv[v], acc[i][v]);
    }
    a += kMR;
    b += ldbp;
  }
  storeTile<MRe, NVe>(acc, c, ldc, nr, tail);
}

template <int MRe, int NVe>
void tileKernel(int64_t kc, const float *__restrict a,
                const float *__restrict b, int64_t ldbp, float *__restrict c,
                int64_t ldc, int nr, const Tail *tail) {
  tileLoop<MRe, NVe, false>(kc, a, b, ldbp, c, ldc, nr, tail, nullptr, 0, 1);
}

/// tileKernel, and a prefetch into L2 of the line at `side` every `every`
/// k steps, sideLines lines in all (SideKernelFn).
template <int MRe, int NVe>
void sideTileKernel(int64_t kc, const float *__restrict a,
                    const float *__restrict b, int64_t ldbp,
                    float *__restrict c, int64_t ldc, int nr, const Tail *tail,
                    const char *side, int64_t sideLines, int64_t every) {
  tileLoop<MRe, NVe, true>(kc, a, b, ldbp, c, ldc, nr, tail, side, sideLines,
                           every);
}

#if TCC_UK_NATIVE_ISA == 2

/// Stores column j of a narrow tile: x holds its MRe rows (lanes past them
/// are ignored), the tail applied as storeTile applies it.
template <int MRe>
TCC_UK_INLINE void narrowStore(__m512 x, int j, float *__restrict c,
                               int64_t ldc, const Tail *tail) {
  const __mmask16 rows = static_cast<__mmask16>((1u << MRe) - 1u);
  // A column of C (or of the residual) as a vector of rows.
  auto column = [&](const float *q, int64_t ld) {
    alignas(64) float t[16];
    TCC_UK_UNROLL
    for (int i = 0; i < MRe; ++i)
      t[i] = q[i * ld];
    return _mm512_maskz_load_ps(rows, t);
  };
  if (tail) {
    if (tail->loadC)
      x = _mm512_add_ps(column(c + j, ldc), x);
    if (tail->bias)
      x = _mm512_add_ps(x, tail->biasPerRow
                               ? _mm512_maskz_loadu_ps(rows, tail->bias)
                               : _mm512_set1_ps(tail->bias[j]));
    if (tail->res)
      x = _mm512_add_ps(x, column(tail->res + j, tail->ldr));
    if (tail->act)
      x = vactivate(tail->act, x);
    if (tail->clamp)
      x = vclamp(x, vset1(tail->lo), vset1(tail->hi));
  }
  alignas(64) float t[16];
  _mm512_store_ps(t, x);
  TCC_UK_UNROLL
  for (int i = 0; i < MRe; ++i)
    c[i * ldc + j] = t[i];
}

/// The tile kernel for a panel's last R <= kNarrow columns (n = 48q + R:
/// 7x7 and 14x14 outputs, 49 and 196 columns):
/// vectors run down the MRe rows instead (the A panel's k-th group of MR
/// floats), one accumulator a column, so a k step is one load of A, R
/// broadcasts of B and R FMAs instead of the full tile's nine loads and
/// eight FMAs for one useful column. Every element is still one chain of
/// FMAs in k order, so the results are the full tile's bit for bit.
/// The driver runs whole groups of row panels through narrowGroupKernel
/// (below); this one takes the rest.
template <int MRe, int R>
void narrowKernel(int64_t kc, const float *__restrict a,
                  const float *__restrict b, int64_t ldbp, float *__restrict c,
                  int64_t ldc, int nr, const Tail *tail) {
  (void)nr; // == R
  // Only the tile's rows: a panel packed at run time leaves the rest
  // unwritten, and whatever is there (denormals) must not slow the FMAs.
  const __mmask16 rows = static_cast<__mmask16>((1u << MRe) - 1u);
  __m512 acc[R];
  TCC_UK_UNROLL
  for (int j = 0; j < R; ++j)
    acc[j] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 av = _mm512_maskz_loadu_ps(rows, a);
    TCC_UK_UNROLL
    for (int j = 0; j < R; ++j)
      acc[j] = _mm512_fmadd_ps(av, _mm512_set1_ps(b[j]), acc[j]);
    a += kMR;
    b += ldbp;
  }
  // A local copy of the tail: its fields stay in registers across the
  // columns' stores (which could alias *tail).
  Tail t;
  const Tail *tl = tail ? (t = *tail, &t) : NULL;
  TCC_UK_UNROLL
  for (int j = 0; j < R; ++j)
    narrowStore<MRe>(acc[j], j, c, ldc, tl);
}

/// narrowKernel for G full row panels at once (a + g * aStride is panel g,
/// c + 8g rows its tile, the tail's bias and residual relative to panel 0).
/// One panel is R chains of dependent FMAs, 4 cycles each, which leaves
/// the FMA units mostly idle. G panels are G x R independent chains of
/// 8-float FMAs; each element's chain is narrowKernel's, so the bits are
/// too.
template <int R, int G>
void narrowGroup(int64_t kc, const float *__restrict a, int64_t aStride,
                 const float *__restrict b, int64_t ldbp, float *__restrict c,
                 int64_t ldc, const Tail *tail) {
  static_assert(kMR == 8, "a panel's k step is one 8-float vector");
  __m256 acc[G][R];
  TCC_UK_UNROLL
  for (int g = 0; g < G; ++g)
    TCC_UK_UNROLL
  for (int j = 0; j < R; ++j)
    acc[g][j] = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    __m256 bv[R];
    TCC_UK_UNROLL
    for (int j = 0; j < R; ++j)
      bv[j] = _mm256_broadcast_ss(b + j);
    TCC_UK_UNROLL
    for (int g = 0; g < G; ++g) {
      const __m256 av = _mm256_loadu_ps(a + g * aStride);
      TCC_UK_UNROLL
      for (int j = 0; j < R; ++j)
        acc[g][j] = _mm256_fmadd_ps(av, bv[j], acc[g][j]);
    }
    a += kMR;
    b += ldbp;
  }
  TCC_UK_UNROLL
  for (int g = 0; g < G; ++g) {
    Tail t;
    const Tail *tg = NULL;
    if (tail) {
      t = *tail;
      if (t.bias && t.biasPerRow)
        t.bias += g * kMR;
      if (t.res)
        t.res += g * kMR * t.ldr;
      tg = &t;
    }
    TCC_UK_UNROLL
    for (int j = 0; j < R; ++j)
      narrowStore<kMR>(_mm512_zextps256_ps512(acc[g][j]), j, c + g * kMR * ldc,
                       ldc, tg);
  }
}

/// The full 8 x 48 tile and, in the same k loop, the one column after it
/// (n = 48q + 1: a 7x7 output, 49 columns) as a
/// vector down the rows: one more load of A's 8 floats, a broadcast of
/// that column's B (b1, rows ldb1 apart) and an 8-float FMA a step, in
/// the slack of the tile's 24 FMAs. The column's chain is narrowKernel's,
/// so the bits are too. After the tile, in a group of row panels, that
/// column would wait on A from L2; here A is in registers and L1 already.
void tilePlusColumn(int64_t kc, const float *__restrict a, const float *aNext,
                    const float *__restrict b, int64_t ldbp,
                    const float *__restrict b1, int64_t ldb1,
                    float *__restrict c, int64_t ldc, const Tail *tail) {
  constexpr int NV = kNR / kVL;
  prefetchTile<kMR, NV>(c, ldc, tail);
  vf acc[kMR][NV];
  TCC_UK_UNROLL
  for (int i = 0; i < kMR; ++i)
    TCC_UK_UNROLL
  for (int v = 0; v < NV; ++v)
    acc[i][v] = vzero();
  __m256 col = _mm256_setzero_ps();
  // Each tile of a 49-column layer has an A panel of its own: in the last
  // steps, the prefetch moves on to the next tile's.
  const int64_t aAheadEnd = aNext ? kc - kPrefetchA / kMR : kc;
  for (int64_t p = 0; p < kc; ++p) {
    if (!(p & 1))
      __builtin_prefetch(
          p < aAheadEnd ? a + kPrefetchA : aNext + (p - aAheadEnd) * kMR, 0, 3);
    prefetchB<NV>(b, ldbp, p, kc);
    vf bv[NV];
    TCC_UK_UNROLL
    for (int v = 0; v < NV; ++v)
      bv[v] = vload(b + v * kVL);
    TCC_UK_UNROLL
    for (int i = 0; i < kMR; ++i) {
      const vf av = vset1(a[i]);
      TCC_UK_UNROLL
      for (int v = 0; v < NV; ++v)
        acc[i][v] = vfma(av, bv[v], acc[i][v]);
    }
    col = _mm256_fmadd_ps(_mm256_loadu_ps(a), _mm256_broadcast_ss(b1), col);
    a += kMR;
    b += ldbp;
    b1 += ldb1;
  }
  storeTile<kMR, NV>(acc, c, ldc, kNR, tail);
  Tail t;
  const Tail *tc = NULL;
  if (tail) {
    t = *tail;
    if (t.bias && !t.biasPerRow)
      t.bias += kNR;
    if (t.res)
      t.res += kNR;
    tc = &t;
  }
  narrowStore<kMR>(_mm512_zextps256_ps512(col), 0, c + kNR, ldc, tc);
}

#endif

template <int... Vs> struct Seq {};
template <int N, int... Vs> struct MakeSeq : MakeSeq<N - 1, N, Vs...> {};
template <int... Vs> struct MakeSeq<0, Vs...> {
  using type = Seq<Vs...>;
};

/// A kind of kernel, one instance per (rows, columns) shape: `at<M, C>`.
struct TileKernels {
  using Fn = MicroKernelFn;
  template <int M, int V> static constexpr Fn at = &tileKernel<M, V>;
};
struct SideTileKernels {
  using Fn = SideKernelFn;
  template <int M, int V> static constexpr Fn at = &sideTileKernel<M, V>;
};
#if TCC_UK_NATIVE_ISA == 2
struct NarrowKernels {
  using Fn = MicroKernelFn;
  template <int M, int R> static constexpr Fn at = &narrowKernel<M, R>;
};
#endif

/// fn[rows - 1][columns - 1]: a kind's instance of each shape.
template <typename Fn, int Rows, int Cols> struct KernelTable {
  Fn fn[Rows][Cols];
};

template <typename Kind, int M, int... Cs>
constexpr void fillRow(typename Kind::Fn *row) {
  int c = 0;
  ((row[c++] = Kind::template at<M, Cs>), ...);
}

template <typename Kind, int... Ms, int... Cs>
constexpr KernelTable<typename Kind::Fn, sizeof...(Ms), sizeof...(Cs)>
makeTable(Seq<Ms...>, Seq<Cs...>) {
  KernelTable<typename Kind::Fn, sizeof...(Ms), sizeof...(Cs)> t{};
  ((fillRow<Kind, Ms, Cs...>(t.fn[Ms - 1])), ...);
  return t;
}

// Constant-initialised: no global constructor.
constexpr auto kKernels = makeTable<TileKernels>(typename MakeSeq<kMR>::type{},
                                                 typename MakeSeq<kNV>::type{});
constexpr auto kSideKernels = makeTable<SideTileKernels>(
    typename MakeSeq<kMR>::type{}, typename MakeSeq<kNV>::type{});
#if TCC_UK_NATIVE_ISA == 2
constexpr auto kNarrowKernels = makeTable<NarrowKernels>(
    typename MakeSeq<kMR>::type{}, typename MakeSeq<kNarrow>::type{});
#endif

//===----------------------------------------------------------------------===//
// Small m: stream B's rows
//===----------------------------------------------------------------------===//

/// Columns of C kept in L1 while the rows of B stream past.
constexpr int64_t kSmallMBlock = 1024;
/// Rows of B ahead of a step whose first lines it prefetches: a batch-1
/// layer's B is its weights, streamed once from L3 or memory in rows ldb
/// apart (4 KB for 1000 outputs), and the hardware prefetchers stop at
/// every page.
constexpr int64_t kSmallMPrefetchRows = 8;

/// Rows [0, R) of C[:, 0:nc] += or = a[:, p0:p0+KU] * B[p0:p0+KU, :] for one
/// group of KU k steps: KU row streams of B, each element a chain of FMAs in
/// k order starting from C (or from zero when init).
template <int R, int KU, bool Init>
TCC_UK_INLINE void smallMStep(const float *a, int64_t ars, int64_t acs,
                              const float *b, int64_t ldb, float *c,
                              int64_t ldc, int64_t nc) {
  vf av[R][KU];
  TCC_UK_UNROLL
  for (int i = 0; i < R; ++i)
    TCC_UK_UNROLL
  for (int q = 0; q < KU; ++q)
    av[i][q] = vset1(a[i * ars + q * acs]);
  // The first lines of the rows ahead; the hardware takes each row's
  // stream on from there.
  TCC_UK_UNROLL
  for (int q = 0; q < KU; ++q)
    TCC_UK_UNROLL
  for (int l = 0; l < 2; ++l)
    __builtin_prefetch(b + (q + kSmallMPrefetchRows) * ldb + 16 * l, 0, 3);
  int64_t j = 0;
  for (; j + kVL <= nc; j += kVL) {
    vf bv[KU];
    TCC_UK_UNROLL
    for (int q = 0; q < KU; ++q)
      bv[q] = vload(b + q * ldb + j);
    TCC_UK_UNROLL
    for (int i = 0; i < R; ++i) {
      vf x = Init ? vzero() : vload(c + i * ldc + j);
      TCC_UK_UNROLL
      for (int q = 0; q < KU; ++q)
        x = vfma(av[i][q], bv[q], x);
      vstore(c + i * ldc + j, x);
    }
  }
  if (j < nc) {
    const vmask m = vmaskFirst(static_cast<int>(nc - j));
    vf bv[KU];
    TCC_UK_UNROLL
    for (int q = 0; q < KU; ++q)
      bv[q] = vloadMask(b + q * ldb + j, m);
    TCC_UK_UNROLL
    for (int i = 0; i < R; ++i) {
      vf x = Init ? vzero() : vloadMask(c + i * ldc + j, m);
      TCC_UK_UNROLL
      for (int q = 0; q < KU; ++q)
        x = vfma(av[i][q], bv[q], x);
      vstoreMask(c + i * ldc + j, x, m);
    }
  }
}

template <int R>
void smallMRows(int64_t nc, int64_t k, const float *a, int64_t ars, int64_t acs,
                const float *b, int64_t ldb, float *c, int64_t ldc,
                bool accumulate) {
  int64_t p = 0;
  if (!accumulate) {
    if (k >= 4) {
      smallMStep<R, 4, true>(a, ars, acs, b, ldb, c, ldc, nc);
      p = 4;
    } else if (k >= 1) {
      smallMStep<R, 1, true>(a, ars, acs, b, ldb, c, ldc, nc);
      p = 1;
    } else {
      for (int i = 0; i < R; ++i)
        memset(c + i * ldc, 0, sizeof(float) * nc);
    }
  }
  for (; p + 4 <= k; p += 4)
    smallMStep<R, 4, false>(a + p * acs, ars, acs, b + p * ldb, ldb, c, ldc,
                            nc);
  for (; p < k; ++p)
    smallMStep<R, 1, false>(a + p * acs, ars, acs, b + p * ldb, ldb, c, ldc,
                            nc);
}

/// C[0:m, 0:nc] = clamp(act(C + bias + residual)); ep pointers are relative to
/// row 0, column j0.
void epilogueBlock(int64_t m, int64_t nc, float *c, int64_t ldc,
                   const tcc_uk_epilogue_t *epilogue, int64_t j0) {
  // A local copy: the stores to C could alias *epilogue, whose fields would
  // otherwise be read again for every vector.
  const tcc_uk_epilogue_t copy = *epilogue, *ep = &copy;
  const vf lo = vset1(ep->clamp_min), hi = vset1(ep->clamp_max);
  for (int64_t i = 0; i < m; ++i) {
    float *cr = c + i * ldc;
    const float *res = ep->residual ? ep->residual + i * ep->ldr + j0 : NULL;
    const float *biasCol = ep->bias && !ep->bias_per_row ? ep->bias + j0 : NULL;
    const vf biasRow = vset1(ep->bias && ep->bias_per_row ? ep->bias[i] : 0);
    for (int64_t j = 0; j < nc; j += kVL) {
      const bool full = j + kVL <= nc;
      const vmask mask = vmaskFirst(static_cast<int>(minI(kVL, nc - j)));
      auto load = [&](const float *p) {
        return full ? vload(p) : vloadMask(p, mask);
      };
      vf x = load(cr + j);
      if (ep->bias)
        x = vadd(x, ep->bias_per_row ? biasRow : load(biasCol + j));
      if (res)
        x = vadd(x, load(res + j));
      if (ep->activation)
        x = vactivate(ep->activation, x);
      if (ep->has_clamp)
        x = vclamp(x, lo, hi);
      if (full)
        vstore(cr + j, x);
      else
        vstoreMask(cr + j, x, mask);
    }
  }
}

} // namespace

TilePlusColumnFn tilePlusColumnKernel() {
#if TCC_UK_NATIVE_ISA == 2
  return &tilePlusColumn;
#else
  return NULL;
#endif
}

NarrowGroupFn narrowGroupKernel(int nr, int *panels) {
#if TCC_UK_NATIVE_ISA == 2
  // G x R accumulators, R broadcasts and a load in 32 registers.
  static constexpr NarrowGroupFn kGroups[kNarrow] = {
      &narrowGroup<1, 8>, &narrowGroup<2, 8>, &narrowGroup<3, 8>,
      &narrowGroup<4, 6>};
  static constexpr int kPanels[kNarrow] = {8, 8, 8, 6};
  if (nr >= 1 && nr <= kNarrow) {
    *panels = kPanels[nr - 1];
    return kGroups[nr - 1];
  }
#else
  (void)nr;
#endif
  *panels = 0;
  return NULL;
}

MicroKernelFn microKernel(int mr, int nr) {
#if TCC_UK_NATIVE_ISA == 2
  if (nr <= kNarrow)
    return kNarrowKernels.fn[mr - 1][nr - 1];
#endif
  return kKernels.fn[mr - 1][(nr + kVL - 1) / kVL - 1];
}

SideKernelFn sideKernel(int mr, int nr) {
  return kSideKernels.fn[mr - 1][(nr + kVL - 1) / kVL - 1];
}

void smallMGemm(int64_t m, int64_t nc, int64_t k, const float *a, int64_t ars,
                int64_t acs, const float *b, int64_t ldb, float *c, int64_t ldc,
                bool accumulate, const tcc_uk_epilogue_t *ep, int64_t j0) {
  for (int64_t jb = 0; jb < nc; jb += kSmallMBlock) {
    const int64_t w = minI(kSmallMBlock, nc - jb);
    int64_t i = 0;
    for (; i + 4 <= m; i += 4)
      smallMRows<4>(w, k, a + i * ars, ars, acs, b + jb, ldb, c + i * ldc + jb,
                    ldc, accumulate);
    switch (m - i) {
    case 3:
      smallMRows<3>(w, k, a + i * ars, ars, acs, b + jb, ldb, c + i * ldc + jb,
                    ldc, accumulate);
      break;
    case 2:
      smallMRows<2>(w, k, a + i * ars, ars, acs, b + jb, ldb, c + i * ldc + jb,
                    ldc, accumulate);
      break;
    case 1:
      smallMRows<1>(w, k, a + i * ars, ars, acs, b + jb, ldb, c + i * ldc + jb,
                    ldc, accumulate);
      break;
    default:
      break;
    }
    if (ep)
      epilogueBlock(m, w, c + jb, ldc, ep, j0 + jb);
  }
}

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc
