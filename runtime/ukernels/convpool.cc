// convpool.cc - a convolution and the max pooling after it as one call
// (tcc_uk_conv2d_nchw with pool == 1): a network's stem and its 3x3
// stride-2 pooling. An image's pooled rows are cut into bands; a band
// computes the convolution's rows its windows read into the scratch (the
// stem or direct kernel, or the im2col GEMM, on those rows), then pools them
// while they are in the core's cache, so the convolution's output (3.2 MB for a
// 64-channel 112x112 stem) is never written whole nor read back. The bands
// are shared out as the block kernel's are (RunClaims); a part that takes
// the band after its last one keeps the rows the two share (a 3x3 stride-2
// pooling's windows overlap by a row) instead of computing them again.
#include "uk_internal.h"

#include <stdlib.h>
#include <string.h>

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {
namespace {

/// A band's convolution rows take about this many bytes at most: with the
/// im2col panels they stay in a core's L2 (2 MB here) until pooled.
constexpr int64_t kPoolBandBytes = int64_t(1) << 19;
/// Bands a part at least (rows allowing), claimed as they run.
constexpr int64_t kPoolBandsPerPart = 4;

/// The convolution, its pooling (whose input is the convolution's output),
/// and how they are cut.
struct ConvPoolShape {
  ConvShape s;
  tcc_uk_pool2d_params_t pool; // n, c, h, w: the convolution's output
  bool stem;                   // rows by the stem kernel,
  bool direct;                 // else the direct kernel, else the GEMM
  int64_t band;                // pooled rows a band at most
  int64_t rowsIn;              // convolution rows a band reads at most
  int64_t bufFloats;           // f planes of rowsIn x ow, 64-byte multiple
  int64_t gemmBytes;           // the im2col panels of rowsIn rows
  int64_t partBytes;
};

/// Convolution rows [c0, c1) that pooled rows [p0, p1) read.
void convRowsOf(const ConvPoolShape &cp, int64_t p0, int64_t p1, int64_t &c0,
                int64_t &c1) {
  const tcc_uk_pool2d_params_t &q = cp.pool;
  c0 = maxI(0, p0 * q.stride_h - q.pad_top);
  c1 = minI(cp.s.oh, (p1 - 1) * q.stride_h - q.pad_top + q.kh);
}

bool resolveConvPool(int32_t isa, const tcc_uk_conv2d_params_t *p,
                     ConvPoolShape &cp) {
  ConvShape &s = cp.s;
  if (!p || p->pool != 1 || !resolveConv(p, s) || s.groups != 1 || s.c < 2 ||
      s.kh * s.kw == 1 || s.oh <= 0 || s.ow <= 0 || pixelsFits(isa, s) ||
      winogradFits(s))
    return false;
  tcc_uk_pool2d_params_t &q = cp.pool;
  q = p->pool_window;
  q.n = s.n, q.c = s.f, q.h = s.oh, q.w = s.ow;
  q.stride_h = q.stride_h > 0 ? q.stride_h : 1;
  q.stride_w = q.stride_w > 0 ? q.stride_w : 1;
  // Dilation 1; every window starts inside the convolution's output, so
  // every band reads some of its rows.
  if ((q.dilation_h > 1 || q.dilation_w > 1) || q.kh <= 0 || q.kw <= 0 ||
      q.pad_top < 0 || q.pad_left < 0 || q.pad_top >= q.kh ||
      q.pad_left >= q.kw || q.oh <= 0 || q.ow <= 0 ||
      (q.oh - 1) * q.stride_h - q.pad_top >= s.oh ||
      (q.ow - 1) * q.stride_w - q.pad_left >= s.ow)
    return false;
  const bool packed = (p->flags & TCC_UK_PACKED_A) != 0;
  cp.stem = packed && stemFits(isa, s);
  cp.direct = !cp.stem && packed && directFits(isa, s);
  const int64_t f4 = static_cast<int64_t>(sizeof(float));
  const int64_t rowBytes = f4 * s.f * s.ow;
  // Pooled rows a band: as many as keep its convolution rows within
  // kPoolBandBytes (one at least).
  cp.band = 1;
  while (cp.band < q.oh &&
         (cp.band * q.stride_h + q.kh) * rowBytes <= kPoolBandBytes)
    ++cp.band;
  cp.rowsIn = minI(s.oh, (cp.band - 1) * q.stride_h + q.kh);
  cp.bufFloats = ceilDiv(s.f * cp.rowsIn * s.ow, 16) * 16;
  cp.gemmBytes =
      cp.stem || cp.direct
          ? 0
          : ceilDiv(packedBScratchBytes(isa, s.kdim, cp.rowsIn * s.ow), 64) *
                64;
  cp.partBytes = cp.bufFloats * f4 + cp.gemmBytes;
  return true;
}

struct ConvPoolJob {
  const ConvPoolShape *cp;
  const tcc_uk_conv2d_params_t *p;
  const float *image, *weight;
  float *out; // this image's pooled output
  const tcc_uk_epilogue_t *ep;
  char *scratch;
  int64_t bands;
  RunClaims claims;
};

/// The convolution rows a part's buffer holds: [c0, c1) of the image,
/// row c0 at the top of each plane.
struct HeldRows {
  int64_t c0 = 0, c1 = 0;
};

/// Pooled rows [p0, p1) of one image: the convolution's rows they read
/// into the part's buffer (those its last band left there moved to the
/// top, the others computed), then their pooling.
void runPoolBand(const ConvPoolJob &job, char *buffers, HeldRows &held,
                 int64_t p0, int64_t p1) {
  const ConvPoolShape &cp = *job.cp;
  const ConvShape &s = cp.s;
  int64_t c0, c1;
  convRowsOf(cp, p0, p1, c0, c1);
  float *buf = reinterpret_cast<float *>(buffers);
  const int64_t plane = cp.rowsIn * s.ow; // floats a plane of the buffer
  // Rows [c0, from) are there already (the band before left them).
  int64_t from = c0;
  if (held.c0 <= c0 && c0 < held.c1) {
    from = minI(held.c1, c1);
    for (int64_t i = 0; i < s.f; ++i)
      memmove(buf + i * plane, buf + i * plane + (c0 - held.c0) * s.ow,
              sizeof(float) * (from - c0) * s.ow);
  }
  held.c0 = c0;
  held.c1 = c1;
  float *at = buf + (from - c0) * s.ow; // row `from` of plane 0
  if (from == c1) {
    // Nothing to compute.
  } else if (cp.stem) {
    stemConvRows(s, job.image, job.weight, at, plane, from, c1, job.ep);
  } else if (cp.direct) {
    directConvRows(s, job.image, job.weight, at, plane, from, c1, job.ep);
  } else {
    // The input rows that convolution rows [c0, c1) read, as a shape of
    // those rows (pads only where the image has them), through im2col.
    const int64_t span = (s.kh - 1) * s.dh + 1;
    const int64_t top = from * s.sh - s.pt;
    const int64_t r0 = maxI(0, top);
    const int64_t r1 = minI(s.h, (c1 - 1) * s.sh - s.pt + span);
    ConvShape rows = s;
    rows.n = 1;
    rows.h = r1 - r0;
    rows.pt = r0 - top;
    rows.oh = c1 - from;
    rows.pb = (rows.oh - 1) * s.sh + span - rows.h - rows.pt;
    Im2col im2col = {&rows, job.image + r0 * s.w, s.h * s.w};
    GemmArgs g = weightGemm(s.f, rows.oh * s.ow, s.kdim,
                            (job.p->flags & TCC_UK_PACKED_A) != 0, job.weight);
    g.packB = packIm2col;
    g.bSrc = &im2col;
    g.c = at;
    g.ldc = plane;
    g.ep = job.ep;
    runGemm(NULL, g, buffers + cp.bufFloats * sizeof(float));
  }
  // buf holds rows [c0, c1) of each plane: the pooling reads no others.
  maxPoolRows(&cp.pool, s.f, buf - c0 * s.ow, plane, job.out,
              cp.pool.oh * cp.pool.ow, p0, p1);
}

void runPoolParts(void *ctx, int64_t begin, int64_t end) {
  ConvPoolJob &job = *static_cast<ConvPoolJob *>(ctx);
  const int64_t oh = job.cp->pool.oh;
  for (int64_t q = begin; q < end; ++q) {
    char *buffers = job.scratch + q * job.cp->partBytes;
    HeldRows held;
    for (int64_t b; (b = job.claims.claim(q)) >= 0;)
      runPoolBand(job, buffers, held, b * oh / job.bands,
                  (b + 1) * oh / job.bands);
  }
}

} // namespace

bool convPoolFits(int32_t isa, const tcc_uk_conv2d_params_t *p) {
  ConvPoolShape cp;
  return resolveConvPool(isa, p, cp);
}

int64_t convPoolScratchBytes(int32_t isa, const tcc_uk_conv2d_params_t *p) {
  ConvPoolShape cp;
  if (!resolveConvPool(isa, p, cp))
    return 0;
  return 64 + RunClaims::kMaxParts * cp.partBytes;
}

int32_t convPool(const tcc_host_api_t *host, const tcc_uk_conv2d_params_t *p,
                 const float *input, const float *weight, float *output,
                 const tcc_uk_epilogue_t *epilogue) {
  ConvPoolShape cp;
  if (!resolveConvPool(TCC_UK_NATIVE_ISA, p, cp))
    return -2;
  const ConvShape &s = cp.s;
  if (s.n == 0)
    return 0;
  void *scratch = p->scratch, *owned = NULL;
  if (!scratch) {
    owned =
        malloc(static_cast<size_t>(convPoolScratchBytes(TCC_UK_NATIVE_ISA, p)));
    if (!owned)
      return -1;
    scratch = owned;
  }
  // The bias per output channel, a row of the GEMM's output.
  tcc_uk_epilogue_t ep = {};
  if (epilogue)
    ep = *epilogue;
  ep.bias_per_row = 1;
  ConvPoolJob job;
  job.cp = &cp;
  job.p = p;
  job.weight = weight;
  job.ep = epilogue ? &ep : NULL;
  job.scratch = reinterpret_cast<char *>(alignScratch(scratch));
  const int64_t parts =
      maxI(1, minI(minI(hostThreads(host), RunClaims::kMaxParts), cp.pool.oh));
  job.bands =
      maxI(ceilDiv(cp.pool.oh, cp.band),
           parts == 1 ? 1 : minI(cp.pool.oh, kPoolBandsPerPart * parts));
  const int64_t outPlane = cp.pool.oh * cp.pool.ow;
  for (int64_t img = 0; img < s.n; ++img) {
    job.image = input + img * s.c * s.h * s.w;
    job.out = output + img * s.f * outPlane;
    job.claims.reset(parts, job.bands);
    parallelFor(host, parts, 1, runPoolParts, &job);
  }
  free(owned);
  return 0;
}

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc
