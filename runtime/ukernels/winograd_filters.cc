// winograd_filters.cc - Winograd F(2x2, 3x3) for small images with the
// filters along the vectors (AVX-512):
//
//   V[xi][c, t] = (B^T d_{c,t} B)[xi]   a group of tiles, every channel
//   M[xi][t, f] = sum over c of V[xi][c, t] U[xi][c, f]
//   y_{f,t}     = A^T M_{.,t,f} A
//
// winograd.cc runs the tiles along the vectors, which is what wide images
// want; a small image (14x14 outputs: 7 tiles a row) fills a vector only
// with two tile rows side by side, and its transforms then spend more
// than the products (three quarters of a 32 -> 64 layer at 14x14 in the
// transforms' permutes, masks and scattered stores). Here the products are
// the direct kernel's register tile (direct.cc) with the 9 taps replaced by
// the 16 transformed positions: per (xi, c) two vectors of U (32 filters)
// and a broadcast of each of up to 14 tiles' V, 28 FMAs to 16 loads, for
// 4 outputs a tile where the direct kernel makes one. The transforms run
// on whole rows:
//  * input: an input row (at most 16 padded columns) is one vector, its
//    1-D transform three lane shifts and four adds, each row once a group;
//    the column transform of each tile row lands its tiles (every other
//    lane) in their places of V with one permute a position;
//  * output: per tile, 16 loads of M (16 filters each), the transform's
//    adds, 4 pixel vectors; each output row's pixels are transposed in
//    registers into the filters' rows, where the epilogue runs as in the
//    direct kernel.
// A batch's task is (image, group of tile rows[, part of the filter
// blocks]), the group's V (16 C floats a tile) in the task's slice of the
// scratch, M and the pixels on the stack; a few images have every group's
// V made first, then tasks of filter blocks, each block through all groups
// (its U read from memory once).
#include "depthwise_internal.h"

#include <utility>

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {

namespace {

/// Filters of a weight block: two vectors of AVX-512.
constexpr int64_t kWfBlock = 32;
/// Tiles of a register tile: 2 x 14 accumulators, two weight vectors and a
/// broadcast take 31 of the 32 registers.
constexpr int kWfTiles = 14;
/// Transformed positions of F(2x2, 3x3).
constexpr int kXi = 16;
/// Most runs of tasks dealt out at once, each with a V slice of its own.
constexpr int64_t kWfSlots = 16;

/// How a call's tiles are grouped: `rows` tile rows of `tw` tiles a group
/// (at most kWfTiles tiles), `groups` groups an image.
struct WfPlan {
  int64_t th, tw, rows, groups;
};

WfPlan planOf(const ConvShape &s) {
  WfPlan p;
  p.th = ceilDiv(s.oh, 2);
  p.tw = ceilDiv(s.ow, 2);
  const int64_t most = maxI(1, kWfTiles / p.tw);
  p.groups = ceilDiv(p.th, most);
  p.rows = ceilDiv(p.th, p.groups); // groups of near-equal rows
  p.groups = ceilDiv(p.th, p.rows);
  return p;
}

/// Floats of one group's V: 16 positions, c channels, a vector of tiles.
int64_t vSliceFloats(const ConvShape &s) { return kXi * s.c * 16; }

} // namespace

int64_t winoFiltersWeightBytes(const ConvShape &s) {
  return kXi * s.f * s.c * static_cast<int64_t>(sizeof(float));
}

void winoFiltersPackWeights(const ConvShape &s, const float *w, float *out) {
  // Blocks of 32 filters (16 for a last odd one), each [xi][c][filter].
  for (int64_t f0 = 0; f0 < s.f; f0 += kWfBlock) {
    const int64_t nf = minI(kWfBlock, s.f - f0);
    float *block = out + f0 * kXi * s.c;
    for (int64_t j = 0; j < nf; ++j)
      for (int64_t c = 0; c < s.c; ++c) {
        float u[kXi];
        winogradFilter(2, w + ((f0 + j) * s.c + c) * 9, u);
        for (int xi = 0; xi < kXi; ++xi)
          block[(xi * s.c + c) * nf + j] = u[xi];
      }
  }
}

int64_t winoFiltersScratchBytes(const ConvShape &s) {
  // As many slots as the most tasks winoFiltersConv makes (every filter
  // block a part), up to kWfSlots.
  const WfPlan p = planOf(s);
  const int64_t slots = minI(s.n * p.groups * ceilDiv(s.f, kWfBlock), kWfSlots);
  return slots * vSliceFloats(s) * static_cast<int64_t>(sizeof(float)) + 64;
}

#if TCC_UK_NATIVE_ISA == 2
namespace {

struct WfJob : ConvCall {
  WfPlan plan;
  int64_t fParts, gParts, tasks, slots;
  float *v; // the slots' V slices
  __m512i place[kWfTiles];
};

/// The 1-D input transform B^T of F(2x2) along a padded input row: lane
/// 2t of out[q] is tap q of the tile whose columns start at 2t.
TCC_UK_INLINE void rowTransform(vf x, vf *out) {
  const __m512i xi = _mm512_castps_si512(x), z = _mm512_setzero_si512();
  const vf x1 = _mm512_castsi512_ps(_mm512_alignr_epi32(z, xi, 1));
  const vf x2 = _mm512_castsi512_ps(_mm512_alignr_epi32(z, xi, 2));
  const vf x3 = _mm512_castsi512_ps(_mm512_alignr_epi32(z, xi, 3));
  out[0] = vsub(x, x2);
  out[1] = vadd(x1, x2);
  out[2] = vsub(x2, x1);
  out[3] = vsub(x1, x3);
}

/// V of the group's tiles for every channel: V[xi][c] is a vector whose
/// lane r tw + t holds tile t of the group's tile row r.
void transformGroup(const WfJob &job, const float *x, int64_t ty0, int64_t rows,
                    float *v) {
  const ConvShape &s = *job.s;
  const int64_t tw = job.plan.tw, inRows = 2 * rows + 2;
  const __mmask16 cols = static_cast<__mmask16>(((1u << s.w) - 1u) << s.pl);
  for (int64_t c = 0; c < s.c; ++c, x += s.h * s.w) {
    vf t[2 * kWfTiles + 2][4]; // row transforms of the padded input rows
    for (int64_t k = 0; k < inRows; ++k) {
      const int64_t iy = 2 * ty0 + k - s.pt;
      const vf row = iy >= 0 && iy < s.h
                         ? _mm512_maskz_loadu_ps(cols, x + iy * s.w - s.pl)
                         : vzero();
      rowTransform(row, t[k]);
    }
    vf acc[kXi];
    for (int xi = 0; xi < kXi; ++xi)
      acc[xi] = vzero();
    for (int64_t r = 0; r < rows; ++r) {
      const __mmask16 lanes =
          static_cast<__mmask16>(((1u << tw) - 1u) << (r * tw));
      for (int j = 0; j < 4; ++j) {
        const vf d0 = t[2 * r][j], d1 = t[2 * r + 1][j];
        const vf d2 = t[2 * r + 2][j], d3 = t[2 * r + 3][j];
        const vf o[4] = {vsub(d0, d2), vadd(d1, d2), vsub(d2, d1),
                         vsub(d1, d3)};
        for (int i = 0; i < 4; ++i)
          acc[4 * i + j] = _mm512_mask_permutexvar_ps(acc[4 * i + j], lanes,
                                                      job.place[r], o[i]);
      }
    }
    for (int xi = 0; xi < kXi; ++xi)
      vstore(v + (xi * s.c + c) * 16, acc[xi]);
  }
}

/// m[q][16v + l] = M[xi][tile q, filter 16v + l] for the np tiles, over
/// every channel: u the block's U at this xi ([c][NV * 16]), v the
/// group's V at this xi ([c][16]). pf: NULL, or lines to bring into L2,
/// pfLines of them a channel (the next block's U, which would otherwise
/// come from memory as that block starts).
template <int NV, int NP>
void productTile(const float *u, const float *v, int64_t c, float *m,
                 const char *pf, int pfLines) {
  vf acc[NV][NP];
  TCC_UK_UNROLL
  for (int i = 0; i < NV; ++i)
    TCC_UK_UNROLL
  for (int q = 0; q < NP; ++q)
    acc[i][q] = vzero();
  for (int64_t k = 0; k < c; ++k, u += NV * kVL, v += 16) {
    if (pf)
      for (int l = 0; l < pfLines; ++l, pf += 64)
        __builtin_prefetch(pf, 0, 2);
    vf w[NV];
    TCC_UK_UNROLL
    for (int i = 0; i < NV; ++i)
      w[i] = vload(u + i * kVL);
    TCC_UK_UNROLL
    for (int q = 0; q < NP; ++q) {
      const vf a = vset1(v[q]);
      TCC_UK_UNROLL
      for (int i = 0; i < NV; ++i)
        acc[i][q] = vfma(w[i], a, acc[i][q]);
    }
  }
  TCC_UK_UNROLL
  for (int q = 0; q < NP; ++q)
    TCC_UK_UNROLL
  for (int i = 0; i < NV; ++i)
    vstore(m + q * kWfBlock + i * kVL, acc[i][q]);
}

using ProductFn = void (*)(const float *, const float *, int64_t, float *,
                           const char *, int);

template <int NV, int... NP>
constexpr ProductFn productOf(int np, std::integer_sequence<int, NP...>) {
  constexpr ProductFn fns[] = {productTile<NV, NP + 1>...};
  return fns[np - 1];
}

ProductFn productFor(int nv, int np) {
  using Tiles = std::make_integer_sequence<int, kWfTiles>;
  return nv == 2 ? productOf<2>(np, Tiles()) : productOf<1>(np, Tiles());
}

/// Floats of M: every position's products of a group's tiles and a block,
/// kMStride from one position to the next.
constexpr int64_t kMStride = kWfTiles * kWfBlock;
constexpr int64_t kMFloats = kXi * kMStride;

/// The outputs of filters f0.. (nv vectors) for the group's tiles from M:
/// each tile's A^T M A into the pixel rows, then each output row
/// transposed into the filters' rows and finished with the epilogue.
void finishGroup(const WfJob &job, const float *m, int nv, int64_t f0,
                 int64_t ty0, int64_t rows, float *y, const float *res) {
  const ConvShape &s = *job.s;
  const int64_t tw = job.plan.tw, plane = s.oh * s.ow;
  const vmask mask = vmaskFirst(static_cast<int>(s.ow));
  const vf lo = vset1(job.e.lo), hi = vset1(job.e.hi);
  const float *bias = job.ep ? job.ep->bias : NULL;
  alignas(64) float pix[2 * kWfTiles][16][kVL]; // [output row][pixel][filter]
  for (int vi = 0; vi < nv; ++vi) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t tx = 0; tx < tw; ++tx) {
        const float *at = m + (r * tw + tx) * kWfBlock + vi * kVL;
        vf s0[4], s1[4]; // (A^T M) rows 0 and 1, column j
        for (int j = 0; j < 4; ++j) {
          const vf a = vload(at + j * kMStride);
          const vf b = vload(at + (4 + j) * kMStride);
          const vf c = vload(at + (8 + j) * kMStride);
          const vf d = vload(at + (12 + j) * kMStride);
          s0[j] = vadd(vadd(a, b), c);
          s1[j] = vsub(vsub(b, c), d);
        }
        vstore(pix[2 * r][2 * tx], vadd(vadd(s0[0], s0[1]), s0[2]));
        vstore(pix[2 * r][2 * tx + 1], vsub(vsub(s0[1], s0[2]), s0[3]));
        vstore(pix[2 * r + 1][2 * tx], vadd(vadd(s1[0], s1[1]), s1[2]));
        vstore(pix[2 * r + 1][2 * tx + 1], vsub(vsub(s1[1], s1[2]), s1[3]));
      }
    for (int64_t or_ = 0; or_ < 2 * rows; ++or_) {
      const int64_t oy = 2 * ty0 + or_;
      if (oy >= s.oh)
        break;
      vf t[kVL];
      for (int p = 0; p < kVL; ++p)
        t[p] = p < 2 * tw ? vload(pix[or_][p]) : vzero();
      vtranspose(t); // t[j]: filter f0 + 16 vi + j along the row's pixels
      for (int j = 0; j < kVL; ++j) {
        const int64_t f = f0 + vi * kVL + j, off = f * plane + oy * s.ow;
        finishInto(y + off, t[j], res ? res + off : NULL, false, mask, job.e,
                   bias ? vset1(bias[f]) : vzero(), lo, hi);
      }
    }
  }
}

/// Bytes of a block's U: 16 positions by c channels by 32 filters.
int64_t blockUBytes(const ConvShape &s) {
  return kXi * s.c * kWfBlock * static_cast<int64_t>(sizeof(float));
}

/// Filter block b's U (packed weights from filter 32 b on).
const float *blockU(const WfJob &job, int64_t b) {
  return job.weight + b * kWfBlock * kXi * job.s->c;
}

/// Filter block b (32 filters from 32 b) of group g of image img, whose V
/// is at v: the products of every position into m, then the outputs.
/// Where `of` groups share the block in a row (this one the `at`-th), each
/// prefetches its share of the next block's U (next; NULL for none).
void blockOfGroup(const WfJob &job, const float *v, int64_t img, int64_t g,
                  int64_t b, float *m, const float *next = NULL, int64_t at = 0,
                  int64_t of = 1) {
  const ConvShape &s = *job.s;
  const WfPlan &p = job.plan;
  const int64_t plane = s.oh * s.ow, f0 = b * kWfBlock;
  const int64_t ty0 = g * p.rows, rows = minI(p.rows, p.th - ty0);
  const int nv = static_cast<int>(minI(kWfBlock, s.f - f0) / kVL);
  const float *u = blockU(job, b);
  const ProductFn product = productFor(nv, static_cast<int>(rows * p.tw));
  // Lines of the next block a channel step, so that the `of` groups'
  // 16 c steps cover its 32 c lines (at most 2 a step).
  const int64_t steps = kXi * s.c, lines = blockUBytes(s) / 64;
  const int pfLines = static_cast<int>(ceilDiv(lines, of * steps));
  const char *pf = reinterpret_cast<const char *>(next);
  for (int xi = 0; xi < kXi; ++xi) {
    const int64_t from = (at * kXi + xi) * s.c * pfLines;
    product(u + xi * s.c * nv * kVL, v + xi * s.c * 16, s.c, m + xi * kMStride,
            pf && from + s.c * pfLines <= lines ? pf + from * 64 : NULL,
            pfLines);
  }
  finishGroup(job, m, nv, f0, ty0, rows, job.output + img * s.f * plane,
              job.residual ? job.residual + img * s.f * plane : NULL);
}

/// V of group g of image img into v.
void transformOf(const WfJob &job, int64_t img, int64_t g, float *v) {
  const ConvShape &s = *job.s;
  const WfPlan &p = job.plan;
  const int64_t ty0 = g * p.rows;
  transformGroup(job, job.input + img * s.c * s.h * s.w, ty0,
                 minI(p.rows, p.th - ty0), v);
}

/// Many images: tasks (image, group, part of the filter blocks), each
/// transforming its group and running its blocks; [begin, end) of them
/// in one slot, through the slot's V.
void runGroupTasks(const WfJob &job, int64_t begin, int64_t end, float *v) {
  const int64_t blocks = ceilDiv(job.s->f, kWfBlock);
  alignas(64) float m[kMFloats];
  for (int64_t t = begin; t < end; ++t) {
    const int64_t part = t % job.fParts, g = t / job.fParts % job.plan.groups;
    const int64_t img = t / job.fParts / job.plan.groups;
    transformOf(job, img, g, v);
    for (int64_t b = part * blocks / job.fParts,
                 b1 = (part + 1) * blocks / job.fParts;
         b < b1; ++b)
      blockOfGroup(job, v, img, g, b, m);
  }
}

void runSlots(void *ctx, int64_t i0, int64_t i1) {
  const WfJob &job = *static_cast<const WfJob *>(ctx);
  for (int64_t slot = i0; slot < i1; ++slot)
    runGroupTasks(job, slot * job.tasks / job.slots,
                  (slot + 1) * job.tasks / job.slots,
                  job.v + slot * vSliceFloats(*job.s));
}

/// Few images, first step: V of (image, group) t into slice t.
void transformTasks(void *ctx, int64_t t0, int64_t t1) {
  const WfJob &job = *static_cast<const WfJob *>(ctx);
  for (int64_t t = t0; t < t1; ++t)
    transformOf(job, t / job.plan.groups, t % job.plan.groups,
                job.v + t * vSliceFloats(*job.s));
}

/// Few images, second step: tasks (image, part of the filter blocks, part
/// of the groups), each block through the part's groups, so that its U
/// comes from memory once (and the next block's while it runs).
void partTasks(void *ctx, int64_t t0, int64_t t1) {
  const WfJob &job = *static_cast<const WfJob *>(ctx);
  const int64_t blocks = ceilDiv(job.s->f, kWfBlock), groups = job.plan.groups;
  alignas(64) float m[kMFloats];
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t gPart = t % job.gParts, fPart = t / job.gParts % job.fParts;
    const int64_t img = t / job.gParts / job.fParts;
    const int64_t g0 = gPart * groups / job.gParts;
    const int64_t g1 = (gPart + 1) * groups / job.gParts;
    const int64_t b0 = fPart * blocks / job.fParts;
    const int64_t b1 = (fPart + 1) * blocks / job.fParts;
    for (int64_t b = b0; b < b1; ++b) {
      const float *next = b + 1 < b1 ? blockU(job, b + 1) : NULL;
      for (int64_t g = g0; g < g1; ++g)
        blockOfGroup(job, job.v + (img * groups + g) * vSliceFloats(*job.s),
                     img, g, b, m, next, g - g0, g1 - g0);
    }
  }
}

} // namespace

void winoFiltersConv(const tcc_host_api_t *host, const ConvShape &s,
                     const float *input, const float *weight, float *output,
                     bool accumulate, const tcc_uk_epilogue_t *ep,
                     void *scratch) {
  WfJob job;
  static_cast<ConvCall &>(job) =
      convCall(s, input, weight, output, accumulate, ep);
  job.plan = planOf(s);
  job.v = alignScratch(scratch);
  // Lane r tw + t of a group's V from lane 2t of tile row r's transform.
  for (int64_t r = 0; r < kWfTiles; ++r) {
    alignas(64) int32_t idx[16];
    for (int l = 0; l < 16; ++l)
      idx[l] = static_cast<int32_t>(2 * (l - r * job.plan.tw)) & 15;
    job.place[r] = _mm512_load_si512(idx);
  }
  const int64_t want = 2 * hostThreads(host);
  const int64_t blocks = ceilDiv(s.f, kWfBlock);
  const int64_t groups = s.n * job.plan.groups;
  if (s.n < want && groups <= kWfSlots) {
    // Fewer images than tasks wanted: a task a group would read all of U,
    // from memory or another core's cache (a 13x13 image is 4 groups:
    // four reads of U). So every group's V first, then parts of
    // the filter blocks (then of the groups, for few blocks), each block
    // through the part's groups.
    job.fParts = minI(blocks, ceilDiv(want, s.n));
    job.gParts = minI(job.plan.groups, ceilDiv(want, s.n * job.fParts));
    parallelFor(host, groups, 1, transformTasks, &job);
    parallelFor(host, s.n * job.fParts * job.gParts, 1, partTasks, &job);
    return;
  }
  // Two tasks a thread: images and groups, then parts of the filter blocks
  // (each part transforms its group's V again).
  job.fParts = minI(blocks, maxI(1, ceilDiv(want, groups)));
  job.tasks = groups * job.fParts;
  job.slots = minI(job.tasks, kWfSlots);
  parallelFor(host, job.slots, 1, runSlots, &job);
}
#else
void winoFiltersConv(const tcc_host_api_t *, const ConvShape &, const float *,
                     const float *, float *, bool, const tcc_uk_epilogue_t *,
                     void *) {}
#endif

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc
