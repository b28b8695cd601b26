// attention.cc - scaled dot-product attention in one call:
//
//   out[b, i, :] = sum_j softmax_j(scale q[b, i, :] . k[b, j, :] (+ mask))
//                  v[b, j, :]
//
// A head's K^T and V are packed once as GEMM B panels; then a block of query
// rows at a time, its scores S = Q_block K^T go to a buffer that stays in
// L2, each row of S becomes its softmax there (scale, mask, max, exp, sum,
// normalize), and P V is written straight to the output rows. The scores
// never reach memory: at a sequence of 512 the two products and a softmax
// that reads and writes a 12 x 512 x 512 tensor three times cost more than
// twice the products alone (docs/ukernels.md, "Attention").
#include "simd.h"

#include <string.h>

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {
namespace {

/// Slots of scratch (one a thread at a time) the compiler reserves: no more
/// threads than this run one call's heads side by side.
constexpr int64_t kAttentionSlots = 8;
/// Floats of one block of scores: 32 KB, which with the head's packed K and
/// V stays in L2.
constexpr int64_t kScoreFloats = 8192;

int64_t roundUp(int64_t x, int64_t to) { return ceilDiv(x, to) * to; }

bool valid(const tcc_uk_attention_params_t *p) {
  return p && p->batch >= 0 && p->sq >= 0 && p->sk > 0 && p->d > 0 &&
         p->dv > 0 && p->mask_kind >= TCC_UK_MASK_NONE &&
         p->mask_kind <= TCC_UK_MASK_SELECT;
}

/// The most score rows a block.
constexpr int64_t kMaxBlockRows = 256;

/// Score rows a block where a mask can leave a block's last keys out of
/// all its rows (skipsMaskedKeys): a causal mask over 128 keys in blocks
/// of 16 rows needs 48, 48, 48, 96, 96, 96, 128 and 128 of them.
constexpr int64_t kMaskedBlockRows = 16;

/// Whether every key a mask excludes weighs exactly nothing: a selecting
/// mask whose fill is -inf, or an added one (where it is -inf).
bool skipsMaskedKeys(const tcc_uk_attention_params_t *p) {
  return p->mask_kind == TCC_UK_MASK_ADD ||
         (p->mask_kind == TCC_UK_MASK_SELECT && p->fill == -__builtin_inff());
}

/// Score rows a block, for a row of sk scores (ld floats apart).
int64_t blockRows(const tcc_uk_attention_params_t *p, int64_t ld) {
  const int64_t most = skipsMaskedKeys(p) ? kMaskedBlockRows : kMaxBlockRows;
  return minI(p->sq, minI(most, maxI(8, kScoreFloats / ld / 8 * 8)));
}

/// x[0:n] *= c.
void scaleRow(float *x, int64_t n, float c) {
  const vf vc = vset1(c);
  int64_t j = 0;
  for (; j + kVL <= n; j += kVL)
    vstore(x + j, vmul(vload(x + j), vc));
  if (j < n) {
    const vmask m = vmaskFirst(static_cast<int>(n - j));
    vstoreMask(x + j, vmul(vloadMask(x + j, m), vc), m);
  }
}

/// The scratch of one slot, each part 64-byte aligned.
struct SlotLayout {
  int64_t ldS, rows;
  int64_t kBytes, vBytes, sBytes, gemmBytes;
  int64_t total() const { return kBytes + vBytes + sBytes + gemmBytes; }
};

SlotLayout slotLayout(int32_t isa, const tcc_uk_attention_params_t *p) {
  SlotLayout l;
  l.ldS = roundUp(p->sk, tilesFor(isa).vl);
  l.rows = blockRows(p, l.ldS);
  l.kBytes = roundUp(tcc_uk_pack_b_bytes(isa, p->d, p->sk), 64);
  l.vBytes = roundUp(tcc_uk_pack_b_bytes(isa, p->sk, p->dv), 64);
  l.sBytes = roundUp(l.rows * l.ldS * static_cast<int64_t>(sizeof(float)), 64);
  const uint32_t qFlags =
      TCC_UK_PACKED_B | ((p->flags & TCC_UK_ATTN_TRANS_Q) ? TCC_UK_TRANS_A : 0);
  l.gemmBytes =
      roundUp(maxI(tcc_uk_sgemm_scratch_bytes(isa, qFlags, l.rows, p->sk, p->d),
                   tcc_uk_sgemm_scratch_bytes(isa, TCC_UK_PACKED_B, l.rows,
                                              p->dv, p->sk)),
              64);
  return l;
}

/// Slots for up to kAttentionSlots threads, no more than the tasks, and no
/// more scratch in all than half the scores tensor the call keeps out of
/// memory, or kSmallSlotBytes where that is more: the call's peak (Q, K, V,
/// the output and the scratch) stays under the unfused products' (Q, K and
/// the scores; the scores, the probabilities and V) where the scores are
/// large. An encoder at sequence 128 gets 4 slots, at 512 8; at 32, whose
/// scores (48 KB over 12 heads) left it one slot of 25 KB and one thread,
/// 8 (200 KB).
constexpr int64_t kSmallSlotBytes = int64_t(256) << 10;
int64_t slotsFor(int32_t isa, const tcc_uk_attention_params_t *p) {
  const int64_t scores =
      p->batch * p->sq * p->sk * static_cast<int64_t>(sizeof(float));
  return maxI(
      1, minI(minI(kAttentionSlots, p->batch * ceilDiv(p->sq, 8)),
              maxI(scores / 2, kSmallSlotBytes) / slotLayout(isa, p).total()));
}

struct AttentionJob {
  const tcc_uk_attention_params_t *p;
  const float *q, *k, *v;
  const void *mask;
  float *out;
  SlotLayout layout;
  int64_t slots, chunks, chunkRows;
  int32_t failed;
};

/// The largest of a vector's lanes.
float laneMax(vf x) {
  alignas(64) float lanes[kVL];
  vstore(lanes, x);
  float top = lanes[0];
  for (int l = 1; l < kVL; ++l)
    top = lanes[l] > top ? lanes[l] : top;
  return top;
}

/// exp(t) for a score less its row's maximum (t <= 0, -inf where masked,
/// or NaN), 0 below -75: vexp's floor is e^-87, which divided by the sum
/// leaves denormals, and a product with V over denormals ran 30 times
/// slower (a decoder's causal mask makes half the scores -inf); a term of
/// e^-75 against the largest, 1, is far below the sum's rounding. On
/// AVX-512 with t <= 0 known, and the floor in scalef's zero mask: t
/// clamped at -87 from below only, n = round(t log2 e) by an FMA adding
/// 1.5 * 2^23, r = t - n ln2 in one FMA (|n| <= 126: within 2.4e-7), e^r
/// by vsilu's degree-5 polynomial (relative error 7.5e-8): 11 vector
/// operations where vexp and the floor's select took 17 (the encoder's
/// heads at sequence 512, one thread, 7.05 -> 6.85 ms).
TCC_UK_INLINE vf softmaxTerm(vf t) {
#if TCC_UK_NATIVE_ISA == 2
  // NaN stays NaN: not below -75 (unordered), and max returns its second
  // operand where one is NaN.
  const __mmask16 keep = _mm512_cmp_ps_mask(t, vset1(-75.0f), _CMP_NLT_UQ);
  const vf tc = _mm512_max_ps(vset1(-87.0f), t);
  const vf magic = vset1(12582912.0f); // 1.5 * 2^23
  const vf n = vsub(vfma(tc, vset1(1.44269504088896341f), magic), magic);
  const vf r = vfma(n, vset1(-0.693147180559945309f), tc);
  vf p = vset1(0.00829765492891f);
  p = vfma(p, r, vset1(0.0419153828836f));
  p = vfma(p, r, vset1(0.166675747364f));
  p = vfma(p, r, vset1(0.499988948434f));
  p = vfma(p, r, vset1(0.999999691988f));
  p = vfma(p, r, vset1(1.00000007166f));
  return _mm512_maskz_scalef_ps(keep, p, n);
#else
  return vselectNegative(vadd(t, vset1(75.0f)), vzero(), vexp(t));
#endif
}

/// Row i of a block of scores (its first n keys', ld - n floats of padding
/// after; keys from n on are masked out of the row, or n is sk):
/// its softmax's numerators in place, exp(scale x + mask - max); returns
/// the reciprocal of their sum, by which the caller scales the row's
/// output (dv floats, against sk here: the division's pass over the
/// scores cost more). With a positive scale and no selecting mask, the
/// scale goes into the exponentials' argument (the maximum of the scaled
/// scores is the scaled maximum), so the scores are read twice and
/// written once; otherwise they are scaled and masked in place first.
float softmaxRow(const AttentionJob &job, int64_t b, int64_t i, float *x,
                 int64_t n, int64_t ld) {
  const tcc_uk_attention_params_t &p = *job.p;
  const int64_t maskRow = b * p.stride_m + i * p.ldm;
  const float *add = p.mask_kind == TCC_UK_MASK_ADD
                         ? static_cast<const float *>(job.mask) + maskRow
                         : NULL;
  const bool folded = p.scale > 0 && p.mask_kind != TCC_UK_MASK_SELECT;
  float scale = p.scale;
  int64_t j = 0;
  if (!folded) {
    for (j = 0; j < n; ++j)
      x[j] *= p.scale;
    if (p.mask_kind == TCC_UK_MASK_SELECT) {
      const uint8_t *m = static_cast<const uint8_t *>(job.mask) + maskRow;
      for (j = 0; j < n; ++j)
        x[j] = m[j] ? p.fill : x[j];
    } else if (add) {
      for (j = 0; j < n; ++j)
        x[j] += add[j];
    }
    scale = 1.0f;
    add = NULL;
  }
  // The padding takes no part (-inf, then 0 below); the product with V
  // reads only the first n. The mask's padding lanes are not read.
  const float inf = __builtin_inff();
  for (j = n; j < ld; ++j)
    x[j] = -inf;
  const vf vs = vset1(scale);
  const int64_t full = n / kVL * kVL;
  const vmask tailMask = vmaskFirst(static_cast<int>(n - full));
  // Scaled, masked score of the vector at j (padding -inf).
  auto score = [&](int64_t at) {
    const vf v = vmul(vload(x + at), vs);
    if (!add)
      return v;
    // The tail's padding lanes: -inf scaled, plus 0.
    return vadd(v, at < full ? vload(add + at) : vloadMask(add + at, tailMask));
  };
  // Four running maxima: one chain of vmax waited on its latency each
  // vector (the maximum is exact in any order).
  vf m[4] = {score(0), vset1(-inf), vset1(-inf), vset1(-inf)};
  for (j = kVL; j + 4 * kVL <= ld; j += 4 * kVL)
    for (int u = 0; u < 4; ++u)
      m[u] = vmax(m[u], score(j + u * kVL));
  for (; j < ld; j += kVL)
    m[0] = vmax(m[0], score(j));
  const vf mx = vmax(vmax(m[0], m[1]), vmax(m[2], m[3]));
  const float top = laneMax(mx);
  if (top == -inf) { // every score masked: 0/0, as softmax
    for (j = 0; j < n; ++j)
      x[j] = __builtin_nanf("");
    return 1.0f;
  }
  const vf shift = vset1(top);
  vf sum = vzero();
  for (j = 0; j < ld; j += kVL) {
    const vf e = softmaxTerm(vsub(score(j), shift));
    vstore(x + j, e);
    sum = vadd(sum, e);
  }
  alignas(64) float lanes[kVL];
  vstore(lanes, sum);
  float total = 0;
  for (int l = 0; l < kVL; ++l)
    total += lanes[l];
  return 1.0f / total;
}

/// Packs head b's K^T (d x sk) and V (sk x dv) as B panels.
void packHead(const AttentionJob &job, int64_t b, float *kPacked,
              float *vPacked) {
  const tcc_uk_attention_params_t &p = *job.p;
  tcc_uk_pack_b(TCC_UK_NATIVE_ISA, p.d, p.sk, job.k + b * p.stride_k, p.ldk,
                (p.flags & TCC_UK_ATTN_TRANS_K) != 0, kPacked);
  tcc_uk_pack_b(TCC_UK_NATIVE_ISA, p.sk, p.dv, job.v + b * p.stride_v, p.ldv,
                (p.flags & TCC_UK_ATTN_TRANS_V) != 0, vPacked);
}

/// Whether row i of head b keeps key j (skipsMaskedKeys' masks).
bool keeps(const AttentionJob &job, int64_t b, int64_t i, int64_t j) {
  const tcc_uk_attention_params_t &p = *job.p;
  const int64_t at = b * p.stride_m + i * p.ldm + j;
  if (p.mask_kind == TCC_UK_MASK_SELECT)
    return static_cast<const uint8_t *>(job.mask)[at] == 0;
  return static_cast<const float *>(job.mask)[at] != -__builtin_inff();
}

/// Keys of rows [r0, r0 + rows) of head b to compute: all sk, or fewer
/// (a multiple of nr) where the mask keeps none after them in any row.
int64_t liveKeys(const AttentionJob &job, int64_t b, int64_t r0, int64_t rows,
                 int64_t nr) {
  const tcc_uk_attention_params_t &p = *job.p;
  if (!skipsMaskedKeys(&p) || p.sk <= nr)
    return p.sk;
  int64_t last = -1; // the last key some row keeps
  for (int64_t r = 0; r < rows && last < p.sk - 1; ++r) {
    int64_t j = p.sk - 1;
    while (j > last && !keeps(job, b, r0 + r, j))
      --j;
    last = j > last ? j : last;
  }
  // No key at all: every row's softmax is 0/0, computed over all of them.
  const int64_t keys = last < 0 ? p.sk : (last + nr) / nr * nr;
  return keys < p.sk ? keys : p.sk;
}

/// Query rows [i0, i1) of head b, with the slot's scratch.
int32_t runRows(const AttentionJob &job, int64_t b, int64_t i0, int64_t i1,
                char *slot) {
  const tcc_uk_attention_params_t &p = *job.p;
  const SlotLayout &l = job.layout;
  float *kPacked = reinterpret_cast<float *>(slot);
  float *vPacked = reinterpret_cast<float *>(slot + l.kBytes);
  float *s = reinterpret_cast<float *>(slot + l.kBytes + l.vBytes);
  void *gemm = l.gemmBytes ? slot + l.kBytes + l.vBytes + l.sBytes : NULL;
  const bool transQ = (p.flags & TCC_UK_ATTN_TRANS_Q) != 0;
  const uint32_t qFlags = TCC_UK_PACKED_B | (transQ ? TCC_UK_TRANS_A : 0);
  packHead(job, b, kPacked, vPacked);
  const int64_t nr = tilesFor(TCC_UK_NATIVE_ISA).nr;
  for (int64_t r0 = i0; r0 < i1; r0 += l.rows) {
    const int64_t rows = minI(l.rows, i1 - r0);
    // The keys up to the block's last that some row keeps, in whole panels
    // of packed K (whose layout does not depend on how many there are);
    // the others' scores would be -inf and their weights exactly 0.
    const int64_t keys = liveKeys(job, b, r0, rows, nr);
    const int64_t ld = keys == p.sk ? l.ldS : keys;
    const float *q = job.q + b * p.stride_q + r0 * (transQ ? 1 : p.ldq);
    if (int32_t rc = tcc_uk_sgemm(NULL, rows, keys, p.d, q, p.ldq, kPacked, 0,
                                  s, ld, qFlags, NULL, gemm))
      return rc;
    float inv[kMaxBlockRows];
    for (int64_t r = 0; r < rows; ++r)
      inv[r] = softmaxRow(job, b, r0 + r, s + r * ld, keys, ld);
    float *o = job.out + b * p.stride_o + r0 * p.ldo;
    if (keys == p.sk) {
      if (int32_t rc = tcc_uk_sgemm(NULL, rows, p.dv, p.sk, s, ld, vPacked, 0,
                                    o, p.ldo, TCC_UK_PACKED_B, NULL, gemm))
        return rc;
    } else {
      // V's first `keys` rows: a product a panel of packed V (sk rows
      // each), each element's sum over the keys in the same order.
      for (int64_t j0 = 0; j0 < p.dv; j0 += nr)
        if (int32_t rc =
                tcc_uk_sgemm(NULL, rows, minI(nr, p.dv - j0), keys, s, ld,
                             vPacked + (j0 / nr) * p.sk * nr, 0, o + j0, p.ldo,
                             TCC_UK_PACKED_B, NULL, gemm))
          return rc;
    }
    for (int64_t r = 0; r < rows; ++r)
      scaleRow(o + r * p.ldo, p.dv, inv[r]);
  }
  return 0;
}

/// Slots [begin, end): slot t takes tasks (head, chunk of rows)
/// [t T / slots, (t + 1) T / slots).
void runSlots(void *ctx, int64_t begin, int64_t end) {
  AttentionJob &job = *static_cast<AttentionJob *>(ctx);
  const tcc_uk_attention_params_t &p = *job.p;
  const int64_t tasks = p.batch * job.chunks;
  for (int64_t t = begin; t < end; ++t) {
    char *slot = static_cast<char *>(p.scratch) + t * job.layout.total();
    for (int64_t u = t * tasks / job.slots; u < (t + 1) * tasks / job.slots;
         ++u) {
      const int64_t b = u / job.chunks, chunk = u % job.chunks;
      const int64_t i0 = chunk * job.chunkRows;
      if (i0 >= p.sq)
        continue;
      if (runRows(job, b, i0, minI(p.sq, i0 + job.chunkRows), slot))
        __atomic_store_n(&job.failed, 1, __ATOMIC_RELAXED);
    }
  }
}

} // namespace
} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc

using namespace tcc::uk;

extern "C" int64_t
tcc_uk_attention_scratch_bytes(int32_t isa,
                               const tcc_uk_attention_params_t *p) {
  if (!valid(p) || p->batch == 0 || p->sq == 0)
    return 0;
  return slotsFor(isa, p) * slotLayout(isa, p).total();
}

extern "C" int32_t tcc_uk_attention(const tcc_host_api_t *host,
                                    const tcc_uk_attention_params_t *p,
                                    const float *q, const float *k,
                                    const float *v, const void *mask,
                                    float *out) {
  if (!valid(p) || (p->mask_kind != TCC_UK_MASK_NONE && !mask))
    return -1;
  if (p->batch == 0 || p->sq == 0)
    return 0;
  if (!p->scratch)
    return -1;
  AttentionJob job = {};
  job.p = p;
  job.q = q, job.k = k, job.v = v, job.mask = mask, job.out = out;
  job.layout = slotLayout(TCC_UK_NATIVE_ISA, p);
  job.slots = minI(slotsFor(TCC_UK_NATIVE_ISA, p), hostThreads(host));
  // Fewer heads than slots: each head's rows in chunks of at least 8.
  job.chunks = minI(ceilDiv(job.slots, p->batch), ceilDiv(p->sq, 8));
  job.chunkRows = ceilDiv(p->sq, job.chunks);
  parallelFor(host, job.slots, 1, runSlots, &job);
  return job.failed ? -1 : 0;
}
