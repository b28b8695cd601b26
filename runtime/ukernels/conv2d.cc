// conv2d.cc - NCHW convolution: depthwise convolutions run the direct kernel
// (depthwise.cc), 3x3 stride-1 ones with prepacked weights Winograd's
// F(2x2, 3x3) (winograd.cc); every other one is a GEMM per image and group,
//   out[f, oh*ow] = W[f, c*kh*kw] * im2col(x)[c*kh*kw, oh*ow],
// whose B panels are packed straight from the image (implicit im2col), or
// read from the image itself when the convolution is 1x1/stride 1/unpadded.
#include "simd.h"

#include <stdlib.h>
#include <string.h>

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {

namespace {

/// (channel, ky, kx) of the im2col rows k0, k0 + 1, ..., stepped along.
struct KRow {
  int64_t ci, ky, kx;
  KRow(const ConvShape &s, int64_t k0)
      : ci(k0 / (s.kh * s.kw)), ky(k0 % (s.kh * s.kw) / s.kw), kx(k0 % s.kw) {}
  void next(const ConvShape &s) {
    if (++kx == s.kw) {
      kx = 0;
      if (++ky == s.kh) {
        ky = 0;
        ++ci;
      }
    }
  }
};

/// A run of output columns with the same output row inside one B panel.
struct Segment {
  int32_t panel, lane, oy, ox0, len;
};

/// Floats of the stack buffer of packFromPlanes: one channel's input rows
/// for a block of output rows, padded and split by column phase.
constexpr int64_t kPlaneFloats = 8192;

/// dst[t] = src[t * stride] for t < n.
TCC_UK_INLINE void copyStrided(float *dst, const float *src, int64_t n,
                               int64_t stride) {
  if (stride == 1) {
    copyShort(dst, src, n);
  } else if (stride == 2) {
    copyEven(dst, src, n);
  } else {
    for (int64_t t = 0; t < n; ++t)
      dst[t] = src[t * stride];
  }
}

/// packIm2col for a block whose input rows fit kPlaneFloats: per channel,
/// the rows the block's output rows read are copied once into a buffer,
/// zero-padded and split by column phase (phase q holds padded columns q,
/// q + sw, ...), so that every (ky, kx) row of the block is, per segment,
/// one contiguous run of the buffer: a vector copy with no bounds. Per
/// segment and row the general path spends more deciding what lies inside
/// the image than copying. False, doing nothing, when the rows do not fit.
bool packFromPlanes(const Im2col &src, const Segment *segs, int nseg,
                    int64_t k0, int64_t kc, int64_t j0, int64_t nc, float *dst,
                    int64_t panelStride) {
  const ConvShape &s = *src.s;
  const int64_t oyA = j0 / s.ow, oyB = (j0 + nc - 1) / s.ow;
  const int64_t y0 = oyA * s.sh; // padded rows
  const int64_t rows = (oyB - oyA) * s.sh + (s.kh - 1) * s.dh + 1;
  const int64_t pitch = s.ow + (s.kw - 1) * s.dw / s.sw; // a phase's row
  const int64_t phase = rows * pitch;
  if (s.sw * phase > kPlaneFloats)
    return false;
  alignas(64) float buf[kPlaneFloats];
  int32_t segBase[kTiles.nc + kTiles.nc / kNR + 2];
  for (int i = 0; i < nseg; ++i)
    segBase[i] =
        static_cast<int32_t>((segs[i].oy * s.sh - y0) * pitch + segs[i].ox0);
  KRow kr(s, k0);
  int64_t built = -1;
  for (int64_t r = 0; r < kc; ++r, kr.next(s)) {
    const int64_t ci = kr.ci, ky = kr.ky, kx = kr.kx;
    if (ci != built) {
      const float *xc = src.x + ci * (src.plane ? src.plane : s.h * s.w);
      for (int64_t q = 0; q < s.sw; ++q) {
        // Padded column t * sw + q is input column t * sw + q - pl.
        const int64_t tLo = minI(pitch, maxI(0, ceilDiv(s.pl - q, s.sw)));
        const int64_t lastX = s.w - 1 + s.pl - q; // t * sw <= lastX
        const int64_t tHi =
            lastX < 0 ? tLo : maxI(tLo, minI(pitch, lastX / s.sw + 1));
        for (int64_t yr = 0; yr < rows; ++yr) {
          float *row = buf + q * phase + yr * pitch;
          const int64_t iy = y0 + yr - s.pt;
          if (iy < 0 || iy >= s.h) {
            zeroShort(row, pitch);
            continue;
          }
          zeroShort(row, tLo);
          copyStrided(row + tLo, xc + iy * s.w + tLo * s.sw + q - s.pl,
                      tHi - tLo, s.sw);
          zeroShort(row + tHi, pitch - tHi);
        }
      }
      built = ci;
    }
    const float *b =
        buf + (kx * s.dw) % s.sw * phase + ky * s.dh * pitch + kx * s.dw / s.sw;
    float *d = dst + r * kNR;
    for (int i = 0; i < nseg; ++i)
      copyShort(d + segs[i].panel * panelStride + segs[i].lane, b + segBase[i],
                segs[i].len);
  }
  const int64_t tailLane = nc % kNR;
  if (tailLane)
    for (int64_t r = 0; r < kc; ++r)
      zeroShort(dst + nc / kNR * panelStride + r * kNR + tailLane,
                kNR - tailLane);
  return true;
}

} // namespace

void packIm2col(const void *source, int64_t k0, int64_t kc, int64_t j0,
                int64_t nc, float *dst, int64_t panelStride) {
  const Im2col &src = *static_cast<const Im2col *>(source);
  const ConvShape &s = *src.s;
  // The column structure is the same for every row of the block: split it
  // once into runs that stay within one output row and one panel.
  Segment segs[kTiles.nc + kTiles.nc / kNR + 2];
  int nseg = 0;
  for (int64_t col = 0; col < nc;) {
    const int64_t j = j0 + col, oy = j / s.ow, ox = j % s.ow;
    const int64_t lane = col % kNR;
    const int64_t len = minI(minI(s.ow - ox, nc - col), kNR - lane);
    segs[nseg++] = {static_cast<int32_t>(col / kNR), static_cast<int32_t>(lane),
                    static_cast<int32_t>(oy), static_cast<int32_t>(ox),
                    static_cast<int32_t>(len)};
    col += len;
  }
  if (packFromPlanes(src, segs, nseg, k0, kc, j0, nc, dst, panelStride))
    return;
  const int64_t tailLane = nc % kNR, tailPanel = nc / kNR;
  KRow kr(s, k0);
  for (int64_t r = 0; r < kc; ++r, kr.next(s)) {
    const int64_t ci = kr.ci, ky = kr.ky, kx = kr.kx;
    const float *xc = src.x + ci * (src.plane ? src.plane : s.h * s.w);
    const int64_t iy0 = ky * s.dh - s.pt, ix0 = kx * s.dw - s.pl;
    for (int i = 0; i < nseg; ++i) {
      const Segment &g = segs[i];
      float *d = dst + g.panel * panelStride + r * kNR + g.lane;
      const int64_t iy = g.oy * s.sh + iy0;
      if (iy < 0 || iy >= s.h) {
        zeroShort(d, g.len);
        continue;
      }
      // Output columns t in [lo, hi) of the run read inside the image. (No
      // division for strides 1 and 2: one per segment and row cost more
      // than the copy.)
      const int64_t ix = g.ox0 * s.sw + ix0;
      int64_t lo = 0, hi = 0;
      if (s.sw == 1) {
        lo = ix < 0 ? minI(g.len, -ix) : 0;
        hi = ix > s.w - 1 ? 0 : minI(g.len, s.w - ix);
      } else if (s.sw == 2) {
        lo = ix < 0 ? minI(g.len, (1 - ix) >> 1) : 0;
        hi = ix > s.w - 1 ? 0 : minI(g.len, ((s.w - 1 - ix) >> 1) + 1);
      } else {
        lo = ix < 0 ? minI(g.len, ceilDiv(-ix, s.sw)) : 0;
        hi = ix > s.w - 1 ? 0 : minI(g.len, (s.w - 1 - ix) / s.sw + 1);
      }
      const float *xr = xc + iy * s.w + ix;
      if (hi <= lo) {
        zeroShort(d, g.len);
        continue;
      }
      zeroShort(d, lo);
      copyStrided(d + lo, xr + lo * s.sw, hi - lo, s.sw);
      zeroShort(d + hi, g.len - hi);
    }
    if (tailLane)
      zeroShort(dst + tailPanel * panelStride + r * kNR + tailLane,
                kNR - tailLane);
  }
}

namespace {

bool isDepthwise(const ConvShape &s) { return s.groups > 1 && s.cg == 1; }

} // namespace

bool isPointwise(const ConvShape &s) {
  return s.kh == 1 && s.kw == 1 && s.sh == 1 && s.sw == 1 && s.pt == 0 &&
         s.pl == 0 && s.pb == 0 && s.pr == 0;
}

namespace {

/// A 1x1 convolution with a stride and no pads (a residual network's
/// downsampling shortcuts): its input is subsampled into the scratch, a plain
/// matrix, and multiplied as a stride-1 one. Through packIm2col its segments
/// would be one column each, a copy per element.
bool isStridedPointwise(const ConvShape &s) {
  return s.kh == 1 && s.kw == 1 && (s.sh > 1 || s.sw > 1) && s.pt == 0 &&
         s.pl == 0 && s.pb == 0 && s.pr == 0;
}

/// Floats of the subsampled input of one image, rounded up to 64 bytes.
int64_t subsampledFloats(const ConvShape &s) {
  return ceilDiv(s.c * s.oh * s.ow, 16) * 16;
}

int64_t convScratchBytes(int32_t isa, const ConvShape &s, bool packedA,
                         bool prologue) {
  if (isDepthwise(s) || pixelsFits(isa, s) || (packedA && stemFits(isa, s)) ||
      (packedA && directFits(isa, s)))
    return 0;
  if (packedA && winogradFits(s))
    return winogradScratchBytes(isa, s);
  if (prologue) // B packed whatever the shape, the prologue applied
    return packedBScratchBytes(isa, s.kdim, s.oh * s.ow);
  if (isPointwise(s)) // the GEMM's own rule for an unpacked matrix B
    return tcc_uk_sgemm_scratch_bytes(isa, packedA ? TCC_UK_PACKED_A : 0, s.fg,
                                      s.oh * s.ow, s.kdim);
  if (isStridedPointwise(s))
    return 64 + subsampledFloats(s) * static_cast<int64_t>(sizeof(float)) +
           gemmScratchBytes(isa,
                            (packedA ? TCC_UK_PACKED_A : 0) | kAlwaysDirectB,
                            s.fg, s.oh * s.ow, s.kdim);
  return packedBScratchBytes(isa, s.kdim, s.oh * s.ow);
}

struct SubsampleJob {
  const ConvShape *s;
  const float *x; // one image
  float *dst;     // c x oh x ow
};

void subsampleChannels(void *ctx, int64_t begin, int64_t end) {
  const SubsampleJob &job = *static_cast<const SubsampleJob *>(ctx);
  const ConvShape &s = *job.s;
  for (int64_t ch = begin; ch < end; ++ch)
    for (int64_t oy = 0; oy < s.oh; ++oy)
      copyStrided(job.dst + (ch * s.oh + oy) * s.ow,
                  job.x + (ch * s.h + oy * s.sh) * s.w, s.ow, s.sw);
}

/// One convolution's GEMMs, a GEMM per image and group.
struct GroupGemms {
  const ConvShape *s;
  const float *input; // the images, or (subsampled) one image's channels
  const float *weight;
  float *output;
  const tcc_uk_epilogue_t *epilogue;
  bool accumulate, packedA, subsampled;
  int64_t scratchBytes;            // of one GEMM (runGroups)
  const tcc_uk_conv2d_params_t *p; // its input prologue, if any
};

/// Whether a convolution's parameters ask for an input prologue.
bool hasPrologue(const tcc_uk_conv2d_params_t *p) {
  return p->in_scale || p->in_shift || p->in_relu;
}

/// The GEMM of image `img` (its input already subsampled into job.input
/// when job.subsampled) and group g, its own threads split through `host`.
void groupGemm(const tcc_host_api_t *host, const GroupGemms &job, int64_t img,
               int64_t g, void *scratch) {
  const ConvShape &s = *job.s;
  const int64_t ohw = s.oh * s.ow, hw = s.h * s.w;
  const float *x = job.subsampled ? job.input + g * s.cg * ohw
                                  : job.input + (img * s.c + g * s.cg) * hw;
  const int64_t outOffset = (img * s.f + g * s.fg) * ohw;
  const MatrixB matrix = {x, job.subsampled ? ohw : hw, false};
  const Im2col im2col = {&s, x};
  tcc_uk_epilogue_t ep = {};
  if (job.epilogue) {
    ep = *job.epilogue;
    ep.bias = job.epilogue->bias ? job.epilogue->bias + g * s.fg : NULL;
    ep.bias_per_row = 1;
    ep.residual =
        job.epilogue->residual ? job.epilogue->residual + outOffset : NULL;
    ep.ldr = ohw;
  }
  const int64_t packedGroupFloats =
      tcc_uk_pack_a_bytes(TCC_UK_NATIVE_ISA, s.fg, s.kdim) /
      static_cast<int64_t>(sizeof(float));
  GemmArgs ga = {};
  ga.m = s.fg;
  ga.n = ohw;
  ga.k = s.kdim;
  ga.packedA = job.packedA;
  ga.a = job.packedA ? job.weight + g * packedGroupFloats
                     : job.weight + g * s.fg * s.kdim;
  ga.ars = s.kdim;
  ga.acs = 1;
  const PrologueB prologue = {x, hw, job.p->in_scale, job.p->in_shift,
                              job.p->in_relu != 0};
  if (hasPrologue(job.p)) { // a 1x1 (tcc_uk_conv2d_prologue_fits)
    ga.packB = packBPrologue;
    ga.bSrc = &prologue;
  } else if (isPointwise(s) || job.subsampled) {
    ga.packB = packBMatrix;
    ga.bSrc = &matrix;
    ga.alwaysDirectB = job.subsampled;
  } else {
    ga.packB = packIm2col;
    ga.bSrc = &im2col;
  }
  ga.c = job.output + outOffset;
  ga.ldc = ohw;
  ga.accumulate = job.accumulate;
  ga.ep = job.epilogue ? &ep : NULL;
  runGemm(host, ga, scratch);
}

/// Units [begin, end) of (image, group), each GEMM on the calling thread
/// with scratch of its own.
void runGroups(void *ctx, int64_t begin, int64_t end) {
  const GroupGemms &job = *static_cast<const GroupGemms *>(ctx);
  const int64_t bytes = (job.scratchBytes + 63) / 64 * 64;
  void *scratch =
      bytes > 0 ? aligned_alloc(64, static_cast<size_t>(bytes)) : NULL;
  if (bytes > 0 && !scratch) { // no memory: the units one at a time, slower
    for (int64_t u = begin; u < end; ++u) {
      void *one = malloc(static_cast<size_t>(bytes));
      groupGemm(NULL, job, u / job.s->groups, u % job.s->groups, one);
      free(one);
    }
    return;
  }
  for (int64_t u = begin; u < end; ++u)
    groupGemm(NULL, job, u / job.s->groups, u % job.s->groups, scratch);
  free(scratch);
}

/// Whether a convolution's GEMMs (one an image and group) are better run
/// side by side, one a thread, than one after another with each split
/// across the threads: when there are at least two per thread and each is
/// too small for its own split to pay (under kMinTaskWork multiply-adds a
/// thread): many narrow groups, or a batch of small images, whose GEMMs
/// otherwise ran one at a time on one thread while the others waited
/// (measurements in docs/convolutions.md).
bool groupsSideBySide(const tcc_host_api_t *host, const ConvShape &s) {
  const int threads = hostThreads(host);
  return threads > 1 && s.n * s.groups >= 2 * threads &&
         s.fg * s.oh * s.ow * s.kdim < kMinTaskWork * threads;
}

} // namespace

bool resolveConv(const tcc_uk_conv2d_params_t *p, ConvShape &s) {
  if (!p)
    return false;
  s.n = p->n;
  s.c = p->c;
  s.h = p->h;
  s.w = p->w;
  s.f = p->f;
  s.kh = p->kh;
  s.kw = p->kw;
  s.sh = p->stride_h > 0 ? p->stride_h : 1;
  s.sw = p->stride_w > 0 ? p->stride_w : 1;
  s.dh = p->dilation_h > 0 ? p->dilation_h : 1;
  s.dw = p->dilation_w > 0 ? p->dilation_w : 1;
  s.pt = p->pad_top;
  s.pl = p->pad_left;
  s.pb = p->pad_bottom;
  s.pr = p->pad_right;
  s.groups = p->groups > 0 ? p->groups : 1;
  if (s.n < 0 || s.c <= 0 || s.h < 0 || s.w < 0 || s.f <= 0 || s.kh <= 0 ||
      s.kw <= 0 || s.pt < 0 || s.pl < 0 || s.pb < 0 || s.pr < 0 ||
      s.c % s.groups || s.f % s.groups)
    return false;
  s.cg = s.c / s.groups;
  s.fg = s.f / s.groups;
  s.kdim = s.cg * s.kh * s.kw;
  const int64_t spanH = s.dh * (s.kh - 1) + 1, spanW = s.dw * (s.kw - 1) + 1;
  s.oh = s.h + s.pt + s.pb < spanH ? 0 : (s.h + s.pt + s.pb - spanH) / s.sh + 1;
  s.ow = s.w + s.pl + s.pr < spanW ? 0 : (s.w + s.pl + s.pr - spanW) / s.sw + 1;
  return true;
}

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc

using namespace tcc::uk;

extern "C" int64_t
tcc_uk_conv2d_pack_weights_bytes(int32_t isa, const tcc_uk_conv2d_params_t *p) {
  ConvShape s;
  if (!resolveConv(p, s))
    return 0;
  if (isDepthwise(s) || pixelsFits(isa, s) || stemFits(isa, s))
    return s.f * s.cg * s.kh * s.kw * static_cast<int64_t>(sizeof(float));
  if (directFits(isa, s))
    return directWeightBytes(s);
  if (winogradFits(s))
    return winogradWeightBytes(isa, s);
  return s.groups * tcc_uk_pack_a_bytes(isa, s.fg, s.kdim);
}

extern "C" void tcc_uk_conv2d_pack_weights(int32_t isa,
                                           const tcc_uk_conv2d_params_t *p,
                                           const float *weight, float *out) {
  ConvShape s;
  if (!resolveConv(p, s))
    return;
  if (isDepthwise(s) || pixelsFits(isa, s)) {
    memcpy(out, weight, sizeof(float) * s.f * s.cg * s.kh * s.kw);
    return;
  }
  if (stemFits(isa, s))
    return stemPackWeights(s, weight, out);
  if (directFits(isa, s))
    return directPackWeights(s, weight, out);
  if (winogradFits(s))
    return winogradPackWeights(isa, s, weight, out);
  const int64_t groupFloats = tcc_uk_pack_a_bytes(isa, s.fg, s.kdim) /
                              static_cast<int64_t>(sizeof(float));
  for (int64_t g = 0; g < s.groups; ++g)
    tcc_uk_pack_a(isa, s.fg, s.kdim, weight + g * s.fg * s.kdim, s.kdim, 0,
                  out + g * groupFloats);
}

extern "C" int64_t
tcc_uk_conv2d_scratch_bytes(int32_t isa, const tcc_uk_conv2d_params_t *p) {
  ConvShape s;
  if (!resolveConv(p, s) || s.n == 0 || s.oh == 0 || s.ow == 0)
    return 0;
  if (p->pool == 1)
    return convPoolScratchBytes(isa, p);
  return convScratchBytes(isa, s, (p->flags & TCC_UK_PACKED_A) != 0,
                          hasPrologue(p));
}

extern "C" int32_t
tcc_uk_conv2d_prologue_fits(int32_t isa, const tcc_uk_conv2d_params_t *p) {
  ConvShape s;
  return p && !p->pool && resolveConv(p, s) && s.groups == 1 &&
         isPointwise(s) && !isDepthwise(s) && !pixelsFits(isa, s) &&
         !((p->flags & TCC_UK_PACKED_A) && directFits(isa, s));
}

extern "C" int32_t tcc_uk_conv2d_pool_fits(int32_t isa,
                                           const tcc_uk_conv2d_params_t *p) {
  ConvShape s;
  if (p && p->pool == 1)
    return convPoolFits(isa, p);
  return p && p->pool == 2 && resolveConv(p, s) && pixelsPoolFits(isa, s);
}

extern "C" int32_t tcc_uk_conv2d_nchw(const tcc_host_api_t *host,
                                      const tcc_uk_conv2d_params_t *p,
                                      const float *input, const float *weight,
                                      float *output,
                                      const tcc_uk_epilogue_t *epilogue) {
  ConvShape s;
  if (epilogue && !knownActivation(epilogue->activation))
    return -2;
  if (p && hasPrologue(p) && !tcc_uk_conv2d_prologue_fits(TCC_UK_NATIVE_ISA, p))
    return -2;
  if (p && p->plane_means &&
      (p->pool || (p->flags & TCC_UK_ACCUMULATE) || !resolveConv(p, s) ||
       !isDepthwise(s) || s.fg != 1))
    return -2;
  if (p && p->pool) { // max pooling after: only bias and clamp commute
    if (!tcc_uk_conv2d_pool_fits(TCC_UK_NATIVE_ISA, p) ||
        (p->flags & TCC_UK_ACCUMULATE) ||
        (epilogue && (epilogue->residual || epilogue->activation)))
      return -2;
    if (p->pool == 1)
      return convPool(host, p, input, weight, output, epilogue);
    resolveConv(p, s);
    if (s.n > 0)
      pixelsConv(host, s, input, weight, output, false, epilogue, true);
    return 0;
  }
  if (!resolveConv(p, s) || s.n == 0 || s.oh == 0 || s.ow == 0)
    return 0;
  const bool accumulate = (p->flags & TCC_UK_ACCUMULATE) != 0;
  const bool packedA = (p->flags & TCC_UK_PACKED_A) != 0;
  if (isDepthwise(s)) {
    depthwiseConv(host, s, input, weight, output, accumulate, epilogue, false,
                  p->plane_means);
    return 0;
  }
  if (pixelsFits(TCC_UK_NATIVE_ISA, s)) {
    pixelsConv(host, s, input, weight, output, accumulate, epilogue);
    return 0;
  }
  if (packedA && stemFits(TCC_UK_NATIVE_ISA, s)) {
    stemConv(host, s, input, weight, output, accumulate, epilogue);
    return 0;
  }
  if (packedA && directFits(TCC_UK_NATIVE_ISA, s)) {
    directConv(host, s, input, weight, output, accumulate, epilogue);
    return 0;
  }
  const bool subsampled = isStridedPointwise(s);
  // Side by side, each task allocates its own scratch: none is needed here.
  const bool sideBySide =
      !subsampled && !(packedA && winogradFits(s)) && groupsSideBySide(host, s);
  void *scratch = p->scratch, *owned = NULL;
  const int64_t need =
      convScratchBytes(TCC_UK_NATIVE_ISA, s, packedA, hasPrologue(p));
  if (need > 0 && !scratch && !sideBySide) {
    owned = malloc(static_cast<size_t>(need));
    if (!owned)
      return -1;
    scratch = owned;
  }
  if (packedA && winogradFits(s)) {
    winogradConv(host, s, input, weight, output, accumulate, epilogue, scratch);
    free(owned);
    return 0;
  }
  const int64_t ohw = s.oh * s.ow, hw = s.h * s.w;
  GroupGemms job = {&s,         input,   weight,     output, epilogue,
                    accumulate, packedA, subsampled, need,   p};
  if (sideBySide) {
    parallelFor(host, s.n * s.groups, 1, runGroups, &job);
    free(owned);
    return 0;
  }
  float *sub = subsampled ? alignScratch(scratch) : NULL;
  void *gemmScratch = subsampled ? sub + subsampledFloats(s) : scratch;
  for (int64_t img = 0; img < s.n; ++img) {
    if (subsampled) {
      SubsampleJob sj = {&s, input + img * s.c * hw, sub};
      parallelFor(host, s.c, maxI(1, kMinTaskWork / 16 / maxI(1, ohw)),
                  subsampleChannels, &sj);
      job.input = sub;
    }
    for (int64_t g = 0; g < s.groups; ++g)
      groupGemm(host, job, img, g, gemmScratch);
  }
  free(owned);
  return 0;
}
