// direct.cc - convolutions of few channels a group as direct sums with the
// filters along the vectors (AVX-512), for small images, where Winograd's
// transforms and im2col's packing (a GEMM a group) cost more than they save:
//
//   y[f, oy, ox] = sum over (c of f's group, ky, kx) of
//                  W[f, c, ky, kx] * x[c, oy sh + ky dh, ox sw + kx dw]
//
// A register tile is 32 filters (two vectors; 16 for a last block of 16)
// by up to 14 output pixels of one row: per (c, ky, kx) the tile loads two
// weight vectors and broadcasts each input pixel once into two FMAs, 28
// FMAs to 16 loads, every lane useful whatever the image's width. The
// weights are packed at load time in blocks of 32 filters of a group, each
// block [c/groups][ky][kx][32]. The input rows a band of output rows reads
// (of the block's group) are copied, zero-padded, into a buffer on the
// stack, so the tiles never test a bound. A tile's sums (pixels by filters) are
// transposed in registers (16 x 16) into the filters' planes, where the
// epilogue runs as for the depthwise kernel's rows.
#include "depthwise_internal.h"

#include <utility>

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {

namespace {

/// Filters of a weight block: two vectors of AVX-512.
constexpr int64_t kDirectBlock = 32;
/// Output pixels of a register tile: 2 x 14 accumulators, two weight
/// vectors and a broadcast take 31 of the 32 registers.
constexpr int kDirectCols = 14;
/// Floats of the padded band on the stack (64 KB).
constexpr int64_t kDirectBufFloats = 16384;

/// Padded columns the output row reads: padded column q is input column
/// q - pl (zero outside the image).
int64_t paddedPitch(const ConvShape &s) {
  return (s.ow - 1) * s.sw + (s.kw - 1) * s.dw + 1;
}

/// Padded input rows a band of `rows` output rows reads.
int64_t bandInputRows(const ConvShape &s, int64_t rows) {
  return (rows - 1) * s.sh + (s.kh - 1) * s.dh + 1;
}

} // namespace

bool directFits(int32_t isa, const ConvShape &s) {
  // 1x1 convolutions are GEMMs that read the image where it lies (the
  // fused pairs and blocks take their weights packed as such).
  if (isa != TCC_UK_ISA_AVX512 || s.fg % 16 || s.sw > 2 || s.oh <= 0 ||
      s.ow <= 0 || s.kh * s.kw == 1 || s.cg * s.kh * s.kw < 16 ||
      winoFiltersFits(isa, s) || stemFits(isa, s))
    return false;
  // One output row's input rows of every channel fit the buffer.
  if (s.cg * bandInputRows(s, 1) * paddedPitch(s) > kDirectBufFloats)
    return false;
  // Few channels: Winograd's transforms cost a share of (1/c + 1/f) of its
  // products, and from 28 (c + f) < c f on (64 -> 64 channels at 14x14 and
  // up) they are paid back; a filter block's weights past ~100 KB (c kh kw
  // > 800 taps) stream from L2 at every row tile (256 -> 512 at stride 2:
  // half the GEMM's speed). Then small images, where Winograd's tiles and
  // the im2col GEMM's packing cost most (from 16 x 16 outputs up they are
  // paid back by wide tiles), or, where Winograd does not apply, enough
  // taps a pixel (128) that the tile's transposes and epilogue are a
  // small part of it (3x3 stems, 27 taps, ran at 0.75-0.85x the GEMM;
  // stems of at most 4 channels take stem.cc's kernel). Measurements in
  // docs/convolutions.md.
  const int64_t taps = s.cg * s.kh * s.kw;
  const bool winogradShape = s.kh == 3 && s.kw == 3 && s.sh == 1 && s.sw == 1 &&
                             s.dh == 1 && s.dw == 1;
  return taps <= 800 && 28 * (s.cg + s.fg) >= s.cg * s.fg &&
         (s.oh * s.ow <= 256 || (taps >= 128 && !winogradShape));
}

int64_t directWeightBytes(const ConvShape &s) {
  return s.f * s.cg * s.kh * s.kw * static_cast<int64_t>(sizeof(float));
}

void directPackWeights(const ConvShape &s, const float *w, float *out) {
  const int64_t taps = s.cg * s.kh * s.kw;
  for (int64_t g = 0; g < s.groups; ++g)
    for (int64_t f0 = g * s.fg; f0 < (g + 1) * s.fg; f0 += kDirectBlock) {
      const int64_t nf = minI(kDirectBlock, (g + 1) * s.fg - f0);
      float *block = out + f0 * taps;
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t j = 0; j < nf; ++j)
          block[t * nf + j] = w[(f0 + j) * taps + t];
    }
}

#if TCC_UK_NATIVE_ISA == 2
namespace {

struct DirectJob : ConvCall {
  int64_t pitch;
  int64_t bandRows, bands; // output rows a band, bands an image
  int64_t fParts;          // filter blocks split into this many tasks
  // Output rows [row0, row0 + bands * bandRows) (at most oh) of each
  // image, written from output row 0 with `outPlane` floats from one
  // filter's plane to the next (oh * ow for a whole image).
  int64_t row0, outPlane;
};

/// acc[v][q] = the sums of filters 16v.. at output pixel q of a row, over
/// every (c, ky, kx); x is the padded band at the row's first window, w
/// the filter block.
template <int NV, int NP, int SW>
TCC_UK_INLINE void sumTile(const ConvShape &s, const float *x,
                           int64_t chanStride, int64_t pitch, const float *w,
                           vf (&acc)[NV][NP]) {
  TCC_UK_UNROLL
  for (int v = 0; v < NV; ++v)
    TCC_UK_UNROLL
  for (int q = 0; q < NP; ++q)
    acc[v][q] = vzero();
  for (int64_t c = 0; c < s.cg; ++c, x += chanStride)
    for (int64_t ky = 0; ky < s.kh; ++ky) {
      const float *row = x + ky * s.dh * pitch;
      for (int64_t kx = 0; kx < s.kw; ++kx, w += NV * kVL) {
        const float *p = row + kx * s.dw;
        vf wv[NV];
        TCC_UK_UNROLL
        for (int v = 0; v < NV; ++v)
          wv[v] = vload(w + v * kVL);
        TCC_UK_UNROLL
        for (int q = 0; q < NP; ++q) {
          const vf a = vset1(p[q * SW]);
          TCC_UK_UNROLL
          for (int v = 0; v < NV; ++v)
            acc[v][q] = vfma(wv[v], a, acc[v][q]);
        }
      }
    }
}

/// One register tile: output row oy, columns ox0.., filters f0.. of the
/// image whose output (and residual) planes start at y (res).
template <int NV, int NP, int SW>
void directTile(const DirectJob &job, const float *x, int64_t chanStride,
                const float *w, int64_t f0, int64_t oy, int64_t ox0, float *y,
                const float *res) {
  const ConvShape &s = *job.s;
  vf acc[NV][NP];
  sumTile<NV, NP, SW>(s, x, chanStride, job.pitch, w, acc);
  const int64_t plane = job.outPlane, at = (oy - job.row0) * s.ow + ox0;
  const vmask m = vmaskFirst(NP);
  const vf lo = vset1(job.e.lo), hi = vset1(job.e.hi);
  const float *bias = job.ep ? job.ep->bias : NULL;
  TCC_UK_UNROLL
  for (int v = 0; v < NV; ++v) {
    vf r[kVL];
    TCC_UK_UNROLL
    for (int q = 0; q < kVL; ++q)
      r[q] = q < NP ? acc[v][q] : vzero();
    vtranspose(r); // r[j]: filter f0 + 16v + j along the row's pixels
    for (int j = 0; j < kVL; ++j) {
      const int64_t f = f0 + v * kVL + j, off = f * plane + at;
      finishInto(y + off, r[j], res ? res + off : NULL, NP == kVL, m, job.e,
                 bias ? vset1(bias[f]) : vzero(), lo, hi);
    }
  }
}

using TileFn = void (*)(const DirectJob &, const float *, int64_t,
                        const float *, int64_t, int64_t, int64_t, float *,
                        const float *);

template <int NV, int SW, int... NP>
constexpr TileFn tileOf(int np, std::integer_sequence<int, NP...>) {
  constexpr TileFn fns[] = {directTile<NV, NP + 1, SW>...};
  return fns[np - 1];
}

/// The tile for NV vectors of filters, np pixels and column stride sw.
TileFn tileFor(int nv, int np, int64_t sw) {
  using Cols = std::make_integer_sequence<int, kDirectCols>;
  if (nv == 2)
    return sw == 1 ? tileOf<2, 1>(np, Cols()) : tileOf<2, 2>(np, Cols());
  return sw == 1 ? tileOf<1, 1>(np, Cols()) : tileOf<1, 2>(np, Cols());
}

/// Copies the padded input rows y0.. (rows of them) of the cg channels
/// from x on into buf, channel after channel, `pitch` floats a row.
void copyBand(const ConvShape &s, const float *x, int64_t y0, int64_t rows,
              int64_t pitch, float *buf) {
  const int64_t left = minI(pitch, s.pl);
  const int64_t inside = maxI(0, minI(s.w, pitch - left));
  for (int64_t c = 0; c < s.cg; ++c, x += s.h * s.w)
    for (int64_t r = 0; r < rows; ++r, buf += pitch) {
      const int64_t iy = y0 + r - s.pt;
      if (iy < 0 || iy >= s.h) {
        zeroShort(buf, pitch);
        continue;
      }
      zeroShort(buf, left);
      copyShort(buf + left, x + iy * s.w, inside);
      zeroShort(buf + left + inside, pitch - left - inside);
    }
}

/// Filter blocks of a group: 32 filters each, the last 16 where fg is an
/// odd multiple of 16. Block b is block b % perGroup of group b / perGroup.
int64_t blocksPerGroup(const ConvShape &s) {
  return ceilDiv(s.fg, kDirectBlock);
}

/// Tasks [begin, end): (image, band, part of the filter blocks).
void runDirect(void *ctx, int64_t begin, int64_t end) {
  const DirectJob &job = *static_cast<const DirectJob *>(ctx);
  const ConvShape &s = *job.s;
  alignas(64) float buf[kDirectBufFloats];
  const int64_t taps = s.cg * s.kh * s.kw, perGroup = blocksPerGroup(s);
  const int64_t blocks = s.groups * perGroup, plane = job.outPlane;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t part = t % job.fParts, band = t / job.fParts % job.bands;
    const int64_t img = t / job.fParts / job.bands;
    const int64_t oy0 = job.row0 + band * job.bandRows;
    const int64_t oy1 = minI(s.oh, oy0 + job.bandRows);
    const int64_t rows = bandInputRows(s, oy1 - oy0);
    const float *x = job.input + img * s.c * s.h * s.w;
    float *y = job.output + img * s.f * plane;
    const float *res = job.residual ? job.residual + img * s.f * plane : NULL;
    const int64_t b0 = part * blocks / job.fParts;
    const int64_t b1 = (part + 1) * blocks / job.fParts;
    for (int64_t b = b0, copied = -1; b < b1; ++b) {
      const int64_t g = b / perGroup;
      if (g != copied) { // the group's input channels
        copyBand(s, x + g * s.cg * s.h * s.w, oy0 * s.sh, rows, job.pitch, buf);
        copied = g;
      }
      const int64_t f0 = g * s.fg + b % perGroup * kDirectBlock;
      const int nv =
          static_cast<int>(minI(kDirectBlock, (g + 1) * s.fg - f0) / kVL);
      const float *w = job.weight + f0 * taps;
      for (int64_t oy = oy0; oy < oy1; ++oy) {
        const float *xr = buf + (oy - oy0) * s.sh * job.pitch;
        // Columns in near-equal tiles of at most kDirectCols.
        const int64_t tiles = ceilDiv(s.ow, kDirectCols);
        for (int64_t i = 0; i < tiles; ++i) {
          const int64_t ox0 = i * s.ow / tiles, ox1 = (i + 1) * s.ow / tiles;
          tileFor(nv, static_cast<int>(ox1 - ox0), s.sw)(
              job, xr + ox0 * s.sw, rows * job.pitch, w, f0, oy, ox0, y, res);
        }
      }
    }
  }
}

/// Output rows a band whose padded input rows fit the buffer.
int64_t directMaxRows(const ConvShape &s, int64_t pitch) {
  int64_t maxRows = 1;
  while (maxRows < s.oh &&
         s.cg * bandInputRows(s, maxRows + 1) * pitch <= kDirectBufFloats)
    ++maxRows;
  return maxRows;
}

} // namespace

void directConv(const tcc_host_api_t *host, const ConvShape &s,
                const float *input, const float *weight, float *output,
                bool accumulate, const tcc_uk_epilogue_t *ep) {
  DirectJob job = {};
  static_cast<ConvCall &>(job) =
      convCall(s, input, weight, output, accumulate, ep);
  job.pitch = paddedPitch(s);
  job.outPlane = s.oh * s.ow;
  // Two tasks a thread, from the images, then from bands of rows or parts
  // of the filter blocks: each band reads every weight, each part of a
  // one-group convolution every input channel of its rows (a part of
  // grouped filters only its groups' channels). So the split duplicates
  // the smaller of the two: bands first where the weights are the smaller
  // (a stem's 37 KB against its 600 KB image), parts first where they are
  // not (32 groups of 1024 filters at 7x7: 1.2 MB of weights, streamed from
  // L3 by each of four bands, took 0.28 ms where the parts take 0.16). A
  // band holds at most the rows whose input fits the buffer.
  const int64_t want = 2 * hostThreads(host);
  const int64_t maxRows = directMaxRows(s, job.pitch);
  const int64_t blocks = s.groups * blocksPerGroup(s);
  const int64_t perImage = ceilDiv(want, s.n);
  const int64_t inputBytes =
      s.groups > 1 ? 0 : s.c * s.h * s.w * static_cast<int64_t>(sizeof(float));
  const bool partsFirst = directWeightBytes(s) > inputBytes;
  const int64_t bandsWanted =
      partsFirst ? ceilDiv(perImage, minI(blocks, perImage)) : perImage;
  job.bandRows = minI(maxRows, ceilDiv(s.oh, minI(s.oh, bandsWanted)));
  job.bands = ceilDiv(s.oh, job.bandRows);
  job.fParts = minI(blocks, maxI(1, ceilDiv(want, s.n * job.bands)));
  parallelFor(host, s.n * job.bands * job.fParts, 1, runDirect, &job);
}

void directConvRows(const ConvShape &s, const float *image, const float *weight,
                    float *output, int64_t outPlane, int64_t oy0, int64_t oy1,
                    const tcc_uk_epilogue_t *ep) {
  ConvShape one = s;
  one.n = 1;
  DirectJob job = {};
  static_cast<ConvCall &>(job) =
      convCall(one, image, weight, output, false, ep);
  job.pitch = paddedPitch(one);
  job.outPlane = outPlane;
  job.bands = job.fParts = 1;
  const int64_t maxRows = directMaxRows(one, job.pitch);
  // Bands of maxRows from oy0, the last one ending at oy1.
  for (int64_t y0 = oy0; y0 < oy1; y0 += maxRows) {
    job.row0 = y0;
    job.bandRows = minI(maxRows, oy1 - y0);
    job.output = output + (y0 - oy0) * one.ow;
    runDirect(&job, 0, 1);
  }
}
#else
void directConv(const tcc_host_api_t *, const ConvShape &, const float *,
                const float *, float *, bool, const tcc_uk_epilogue_t *) {}
void directConvRows(const ConvShape &, const float *, const float *, float *,
                    int64_t, int64_t, int64_t, const tcc_uk_epilogue_t *) {}
#endif

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc
