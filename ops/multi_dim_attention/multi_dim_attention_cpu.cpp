// CPU kernels of the fused multi-dimensional attention. Every feature f is an
// independent softmax, so the work splits into tasks of (batch b, a block of
// features): each task owns its slice of every output, so tasks run in
// parallel without atomics and the result does not depend on the thread
// count. Inner loops run over 16 contiguous features at a time, all of a
// row's keys per chunk, and are compiled for AVX-512 and AVX2 as well as the
// baseline (ATTN_SIMD_CLONES). CMakeLists.txt turns GCC's unroll-and-jam off
// for this file: it fused the loops over keys in pairs and left them scalar.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/engine/cpu_loops.h"
#include "attn/ops/multi_dim_attention/multi_dim_attention_kernels.h"
#include "attn/ops/cpu/vector_math.h"

namespace attn {

namespace {

struct Dims {
  int64_t B, nq, nk, d, block, blocks;  // block: features per task
};

// Features per task: the whole row where a task's key-side data (float64
// factors, values and key gradients: about 16 bytes per key and feature)
// fits in kTaskBytes of cache, so each pair's loop is long and the per-row
// work (the key list, the factors) is done once per row, not once per block
// (64-feature blocks were 25% slower at n = 64, d = 300). Narrower when the
// batch alone gives fewer than kMinTasks tasks. It depends on the shapes,
// never on the thread count, so the results do not either.
constexpr int64_t kTaskBytes = int64_t(512) << 10;
constexpr int64_t kMinTasks = 8;
constexpr int64_t kLanes = 16;

Dims dims_of(const Tensor& query, const Tensor& key) {
  Dims s{query.size(0), query.size(1), key.size(1), query.size(2), 0, 0};
  int64_t w = kTaskBytes / (16 * std::max<int64_t>(1, s.nk));
  if (s.B < kMinTasks) {
    const int64_t splits = (kMinTasks + s.B - 1) / std::max<int64_t>(1, s.B);
    w = std::min(w, (s.d + splits - 1) / splits);
  }
  w = std::max(kLanes, (w + kLanes - 1) / kLanes * kLanes);
  s.block = std::max<int64_t>(1, std::min(w, s.d));
  s.blocks = (s.d + s.block - 1) / s.block;
  return s;
}

// Runs task(b, f0, f1) for every (batch, feature block) in parallel.
template <class F>
void for_each_task(const Dims& s, const F& task) {
  const int64_t work_per_task = std::max<int64_t>(1, s.nq * s.nk * s.block);
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / work_per_task);
  parallel_for(s.B * s.blocks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / s.blocks, f0 = (t % s.blocks) * s.block;
      task(b, f0, std::min(s.d, f0 + s.block));
    }
  });
}

// The keys query i of batch b may attend to.
void valid_keys(const uint8_t* mask_row, int64_t nk, std::vector<int64_t>& keys) {
  keys.clear();
  for (int64_t j = 0; j < nk; ++j)
    if (mask_row[j]) keys.push_back(j);
}

// The score of a pair is l = c tanh(u), u = (q + k) / c. These kernels use
// it through a = 2u and r = 1 / (1 + e^a):
//   tanh(u) = 1 - 2r, so l = c - 2c r and two scores differ by 2c (r' - r);
//   1 - tanh(u)^2 = 4 e^a r^2, with no cancellation where tanh saturates.
// No tanh polynomial and no score buffer. Scores lie in (-c, c), so for
// c <= kShiftByCLimit the softmax shift is c itself (r = 0): every weight is
// at least e^(-2c), a normal float32, and no row needs a maximum. A larger c
// shifts by the row's largest score, which sits at the largest key value
// (tanh is increasing), so it costs a max over keys.
//
// e^a = e^(2q/c) e^(2k/c), so a task whose 2q/c and 2k/c all lie within
// +-kFactorLimit computes those n x w factors once and each pair's e^a is a
// product: per pair one exp (the softmax weight) and a division instead of
// two exps. The factors are float64 and their product is rounded once to T,
// so e^a is as accurate as one exp of a (three float32 roundings made the
// float32 backward 2-3x less accurate at c = 50); it stays a normal number
// in float32 (e^+-80). Other tasks (a huge or NaN operand) take the exact
// form, which clamps |a| to 60: tanh(30) rounds to 1 in float64 as well,
// and e^60 r^2 stays a normal number. The clamp turns NaN into a number, so
// that form selects NaN back in.
constexpr double kFactorLimit = 40;
constexpr double kShiftByCLimit = 40;

template <class T>
struct Logistic {
  T e, r;  // e^a and 1 / (1 + e^a)
};

// A pair's logistic from its two operands: e^(2q/c) and e^(2k/c) (float64)
// when kFactored, q and k otherwise.
template <bool kFactored, class S, class T>
inline __attribute__((always_inline)) Logistic<T> pair_logistic(S x, S y, T two_inv_c) {
  if constexpr (kFactored) {
    const T e = static_cast<T>(x * y);
    return {e, T(1) / (T(1) + e)};
  } else {
    const T a = (x + y) * two_inv_c;
    const T above = a > T(-60) ? a : T(-60);
    const T e = vector_math::exp_in_range(above < T(60) ? above : T(60));
    return {e, T(1) / (T(1) + e)};
  }
}

// e^x for a shifted score x <= 0. Shifted by c <= 40 it never leaves the
// normal range; shifted by the row's largest score (weight e^0 = 1), a
// weight below it becomes e^lo, which vanishes next to that 1.
template <class T>
inline __attribute__((always_inline)) T exp_of_shifted(T x) {
  const T lo = vector_math::lowest_normal_exp_arg(T(0));
  return vector_math::exp_in_range(x > lo ? x : lo);
}

// Where a task reads the operands of its query rows and key rows: q and k
// in place (S = T, stride d), or the task's own factor rows (S = double,
// stride w).
template <class S>
struct PairOperands {
  const S* q;
  int64_t q_stride;
  const S* k;
  int64_t k_stride;
};

// The factors' Taylor degree: a float32 kernel rounds their product to
// float32, so degree 8 (relative error 2.8e-10, a 400th of a float32 ulp)
// loses nothing there and saves five of the fourteen FMAs per factor, which
// matter where blocks are short (Bi-BloSA's 6 tokens: as many factors as
// pairs); float64 keeps 13.
template <class T>
constexpr int kFactorDegree = sizeof(T) == sizeof(float) ? 8 : 13;

// Fills factors (row r at r * w) with e^(2x/c) of the listed rows; false
// when some |2x/c| exceeds kFactorLimit or is NaN, and then the factors are
// unusable. Rows not listed take part in no pair and are left unset.
template <class T>
inline __attribute__((always_inline)) bool exp_factors(const T* __restrict x, const std::vector<int64_t>& rows,
                                                       int64_t stride, int64_t w, double two_inv_c,
                                                       double* __restrict factors) {
  const double limit = kFactorLimit;
  for (int64_t r : rows) {
    int in_range = 1;
    for (int64_t f = 0; f < w; ++f) {
      const double a = static_cast<double>(x[r * stride + f]) * two_inv_c;
      in_range &= (a >= -limit) & (a <= limit);  // NaN fails both
      factors[r * w + f] =
          vector_math::exp_f64_in_range<kFactorDegree<T>>(a > -limit ? (a < limit ? a : limit) : -limit);
    }
    if (!in_range) return false;
  }
  return true;
}

// Each feature's largest key operand over a query row's keys (max k and max
// e^(2k/c) are at the same key), and the r of that largest score: the row's
// softmax shift.
template <bool kFactored, class S, class T>
inline __attribute__((always_inline)) void shift_row(int64_t w, T two_inv_c, const PairOperands<S>& in,
                                                     const S* __restrict q, const std::vector<int64_t>& keys,
                                                     S* __restrict key_max, T* __restrict r_max) {
  for (int64_t f = 0; f < w; ++f) key_max[f] = -std::numeric_limits<S>::infinity();
  for (int64_t j : keys) {
    const S* k = in.k + j * in.k_stride;
    for (int64_t f = 0; f < w; ++f) key_max[f] = key_max[f] < k[f] ? k[f] : key_max[f];
  }
  for (int64_t f = 0; f < w; ++f) r_max[f] = pair_logistic<kFactored>(q[f], key_max[f], two_inv_c).r;
}

// Features a row loop keeps in registers while the row's keys stream by: a
// query row's running sums (forward) or its gradient (backward), 16 floats
// being one AVX-512 register. Loads and stores of those per pair, not the
// arithmetic, bounded the rows loops when they ran over a whole row.
constexpr int64_t kChunk = 16;

// Each chunk runs over its keys in blocks of kKeyBlock, in two passes: the
// first computes every pair's logistic (a division) into a small buffer,
// the second its exp and the sums. One loop doing both made each pair a
// dependency chain about 85 cycles long on Zen 1, and its ~120 µops filled
// the out-of-order window with one or two pairs in flight (estimated from
// the instruction mix and `perf annotate`; the VM has no cycle counters).
// The split chains are half as long and the buffer stays in L1. The order
// of the sums over keys is the one-loop order.
constexpr int64_t kKeyBlock = 16;

// Lambdas inside the SIMD clones must be inlined to get the clone's target.
#define ATTN_INLINE_LAMBDA __attribute__((always_inline))

// Runs a chunk's keys (entries 0 .. count - 1 of its key list) in blocks of
// kKeyBlock: first(jj, slot) for every key of a block, then second(jj,
// slot), where jj is the key's entry and slot its row in the block's buffer.
template <class First, class Second>
inline __attribute__((always_inline)) void for_each_key_block(int64_t count, const First& first, const Second& second) {
  for (int64_t j0 = 0; j0 < count; j0 += kKeyBlock) {
    const int64_t j1 = std::min(count, j0 + kKeyBlock);
    for (int64_t jj = j0; jj < j1; ++jj) first(jj, jj - j0);
    for (int64_t jj = j0; jj < j1; ++jj) second(jj, jj - j0);
  }
}

// One query row over features [0, n) of a chunk (pointers at the chunk's
// first feature), n <= kChunk: kWidth = kChunk fixes the trip count, so
// that the compiler can keep the chunk's sums in registers; 0 takes n at
// run time, for a row's last chunk.
//
// Forward: adds each key's softmax weights e^(l - shift) and weighted
// values; shift = c - 2c r_shift. Shifted by c, each weight is at least
// e^(-2c); by the row's largest score, that key gives exactly e^0 = 1 (the
// same operands, so the same r). Either way z > 0.
template <int64_t kWidth, bool kFactored, class S, class T>
inline __attribute__((always_inline)) void forward_chunk(int64_t n, T c, T two_c, T two_inv_c, const S* __restrict q,
                                                         const S* __restrict k, int64_t k_stride, const T* __restrict v,
                                                         int64_t v_stride, const std::vector<int64_t>& keys,
                                                         const T* __restrict r_max, T* __restrict out,
                                                         T* __restrict out_log_norm) {
  if constexpr (kWidth > 0) n = kWidth;
  T z[kChunk] = {}, acc[kChunk] = {};
  T shifted[kKeyBlock][kChunk];
  for_each_key_block(
      static_cast<int64_t>(keys.size()),
      [&](int64_t jj, int64_t slot) ATTN_INLINE_LAMBDA {
        const S* __restrict kj = k + keys[jj] * k_stride;
        T* __restrict x = shifted[slot];
#pragma omp simd
        for (int64_t f = 0; f < n; ++f) x[f] = two_c * (r_max[f] - pair_logistic<kFactored>(q[f], kj[f], two_inv_c).r);
      },
      [&](int64_t jj, int64_t slot) ATTN_INLINE_LAMBDA {
        const S* __restrict kj = k + keys[jj] * k_stride;
        const T* __restrict vj = v + keys[jj] * v_stride;
        const T* __restrict x = shifted[slot];
#pragma omp simd  // its cost model chose 4-float vectors or none for a fixed 16-iteration loop
        for (int64_t f = 0; f < n; ++f) {
          const T e = exp_of_shifted(x[f]);
          T weight = e;
          if constexpr (!kFactored) weight = vector_math::is_nan(q[f] + kj[f]) ? q[f] + kj[f] : e;
          z[f] += weight;
          acc[f] += weight * vj[f];
        }
      });
  for (int64_t f = 0; f < n; ++f) {
    out[f] = acc[f] / z[f];
    out_log_norm[f] = z[f];  // the row's loop turns it into shift + log z (log_normalisers_of_row)
  }
}

// Backward: the terms of every (query row, key) pair; shift = c - log_norm,
// so shift - 2c r = l - log_norm = log P. The key sides (dk, dv) add up over
// query rows in row order, as before the chunks.
template <int64_t kWidth, bool kFactored, class S, class T>
inline __attribute__((always_inline)) void backward_chunk(int64_t n, T c, T two_c, T two_inv_c, const S* __restrict q,
                                                          const T* __restrict g, const T* __restrict o,
                                                          const T* __restrict log_norm, const S* __restrict k,
                                                          int64_t k_stride, const T* __restrict v, T* __restrict dk,
                                                          T* __restrict dv, int64_t d, const std::vector<int64_t>& keys,
                                                          T* __restrict dq_out) {
  if constexpr (kWidth > 0) n = kWidth;
  T dq[kChunk] = {}, shift[kChunk] = {};
  for (int64_t f = 0; f < n; ++f) shift[f] = c - log_norm[f];
  T log_ps[kKeyBlock][kChunk], slopes[kKeyBlock][kChunk];
  for_each_key_block(
      static_cast<int64_t>(keys.size()),
      [&](int64_t jj, int64_t slot) ATTN_INLINE_LAMBDA {
        const S* __restrict kj = k + keys[jj] * k_stride;
        T* __restrict log_p = log_ps[slot];
        T* __restrict slope = slopes[slot];
#pragma omp simd
        for (int64_t f = 0; f < n; ++f) {
          const Logistic<T> s = pair_logistic<kFactored>(q[f], kj[f], two_inv_c);
          log_p[f] = shift[f] - two_c * s.r;
          slope[f] = T(4) * s.e * s.r * s.r;  // d tanh(u) / du
        }
      },
      [&](int64_t jj, int64_t slot) ATTN_INLINE_LAMBDA {
        const int64_t j = keys[jj];
        const T* __restrict vj = v + j * d;
        T* __restrict dkj = dk + j * d;
        T* __restrict dvj = dv + j * d;
        const T* __restrict log_p = log_ps[slot];
        const T* __restrict slope = slopes[slot];
#pragma omp simd  // as in forward_chunk
        for (int64_t f = 0; f < n; ++f) {
          T p = exp_of_shifted(log_p[f]);
          // A NaN operand of this pair made the forward's log_norm NaN.
          if constexpr (!kFactored) p = vector_math::is_nan(log_p[f]) ? log_p[f] : p;
          const T gp = g[f] * p;
          dvj[f] += gp;
          const T dpre = gp * (vj[f] - o[f]) * slope[f];
          dq[f] += dpre;
          dkj[f] += dpre;
        }
      });
  for (int64_t f = 0; f < n; ++f) dq_out[f] = dq[f];
}

// Everything a task needs, by value, so the loops see no aliasing.
template <class T>
struct Operands {
  Dims s;
  T c, two_c, two_inv_c;
  double factor_scale;  // 2 / c, the factors' exponent per operand
  const T *q, *k, *v, *g, *o, *log_norm;
  const uint8_t* mask;
  T *out, *out_log_norm, *dq, *dk, *dv;
};

// A task's factor rows live in storage each thread keeps for its later
// tasks: a whole-row task needs about 150 KiB per side at n = 64, d = 300,
// and a fresh vector per task would go back to the kernel and fault its
// pages in again on every call.
struct FactorScratch {
  std::vector<double> q, k;
  std::vector<int64_t> q_rows, k_rows;  // the rows and keys in some pair
  std::vector<uint8_t> key_used;
};

inline FactorScratch& factor_scratch() {
  thread_local FactorScratch scratch;
  return scratch;
}

struct TaskFactors {
  const double *q, *k;
  bool usable;
};

// Lists the query rows with a valid key and the keys of some valid pair:
// the only rows whose factors a task reads (ReSA's selections leave about
// half of each unused). Returns the number of valid pairs.
inline int64_t rows_in_pairs(const uint8_t* mask, int64_t nq, int64_t nk, FactorScratch& scratch) {
  scratch.q_rows.clear();
  scratch.k_rows.clear();
  scratch.key_used.assign(nk, 0);
  int64_t pairs = 0;
  for (int64_t i = 0; i < nq; ++i) {
    int64_t row_pairs = 0;
    for (int64_t j = 0; j < nk; ++j) {
      const uint8_t valid = mask[i * nk + j] != 0;
      row_pairs += valid;
      scratch.key_used[j] |= valid;
    }
    if (row_pairs > 0) scratch.q_rows.push_back(i);
    pairs += row_pairs;
  }
  for (int64_t j = 0; j < nk; ++j)
    if (scratch.key_used[j]) scratch.k_rows.push_back(j);
  return pairs;
}

// Whether factors pay for a batch entry: they cost a float64 exp per
// feature of each row and key in a pair, about two float32 exps each (half
// as many lanes), and save one float32 exp per valid pair. Bi-BloSA's
// 6-token blocks have at most 15 pairs (one direction) for 10 such rows, so
// there the exact form is cheaper; DiSAN's 64 tokens have 2016 pairs for
// 126 rows, where the factors pay. Only up to
// c = kExactFormMaxC: the exact form's float32 exp leaves e about one
// rounding less accurate than the factors' product, and the score passes an
// error of e on multiplied by up to c / 2 (dl / d log e = 2c r (1 - r)); the
// papers use c = 5.
constexpr double kExactFormMaxC = 10;

inline bool factors_pay(int64_t pairs, int64_t rows, double c) { return c > kExactFormMaxC || pairs > 2 * rows; }

template <class T>
inline __attribute__((always_inline)) TaskFactors factors_of(const Operands<T>& p, int64_t b, int64_t f0, int64_t w) {
  const Dims& s = p.s;
  FactorScratch& scratch = factor_scratch();
  const int64_t pairs = rows_in_pairs(p.mask + b * s.nq * s.nk, s.nq, s.nk, scratch);
  const int64_t rows = static_cast<int64_t>(scratch.q_rows.size() + scratch.k_rows.size());
  if (!factors_pay(pairs, rows, p.c)) return {nullptr, nullptr, false};
  if (scratch.q.size() < static_cast<size_t>(s.nq * w)) scratch.q.resize(s.nq * w);
  if (scratch.k.size() < static_cast<size_t>(s.nk * w)) scratch.k.resize(s.nk * w);
  const bool usable =
      exp_factors(p.q + b * s.nq * s.d + f0, scratch.q_rows, s.d, w, p.factor_scale, scratch.q.data()) &&
      exp_factors(p.k + b * s.nk * s.d + f0, scratch.k_rows, s.d, w, p.factor_scale, scratch.k.data());
  return {scratch.q.data(), scratch.k.data(), usable};
}

template <class T>
PairOperands<T> operands_in_place(const Operands<T>& p, int64_t b, int64_t f0) {
  return {p.q + b * p.s.nq * p.s.d + f0, p.s.d, p.k + b * p.s.nk * p.s.d + f0, p.s.d};
}

inline PairOperands<double> factor_operands(const TaskFactors& t, int64_t w) { return {t.q, w, t.k, w}; }

// A query row's log-normalisers from the sums z its chunks left there:
// shift + log z, shift = c - 2c r_shift. One loop over the whole row, so
// that vector_math::log vectorises (inside a chunk, a loop of a fixed 16
// iterations around it was unrolled and left scalar).
template <class T>
inline __attribute__((always_inline)) void log_normalisers_of_row(int64_t w, T c, T two_c, const T* __restrict r_max,
                                                                  T* __restrict z_to_log_norm) {
  for (int64_t f = 0; f < w; ++f) z_to_log_norm[f] = (c - two_c * r_max[f]) + vector_math::log(z_to_log_norm[f]);
}

template <bool kFactored, class S, class T>
inline __attribute__((always_inline)) void forward_rows(const Operands<T>& p, const PairOperands<S>& in, int64_t b,
                                                        int64_t f0, int64_t w) {
  const Dims& s = p.s;
  std::vector<int64_t> keys;
  std::vector<S> key_max(w);
  std::vector<T> r_max(w, T(0));  // r of the shift
  const bool shift_by_c = p.c <= T(kShiftByCLimit);
  for (int64_t i = 0; i < s.nq; ++i) {
    const int64_t row = (b * s.nq + i) * s.d + f0;
    valid_keys(p.mask + (b * s.nq + i) * s.nk, s.nk, keys);
    if (keys.empty()) {
      std::fill(p.out + row, p.out + row + w, T(0));
      std::fill(p.out_log_norm + row, p.out_log_norm + row + w, T(0));
      continue;
    }
    const S* q = in.q + i * in.q_stride;
    if (!shift_by_c) shift_row<kFactored>(w, p.two_inv_c, in, q, keys, key_max.data(), r_max.data());
    const T* v = p.v + b * s.nk * s.d + f0;
    for (int64_t f = 0; f < w; f += kChunk) {
      const int64_t n = std::min(kChunk, w - f);
      if (n == kChunk)
        forward_chunk<kChunk, kFactored>(n, p.c, p.two_c, p.two_inv_c, q + f, in.k + f, in.k_stride, v + f, s.d, keys,
                                         r_max.data() + f, p.out + row + f, p.out_log_norm + row + f);
      else
        forward_chunk<0, kFactored>(n, p.c, p.two_c, p.two_inv_c, q + f, in.k + f, in.k_stride, v + f, s.d, keys,
                                    r_max.data() + f, p.out + row + f, p.out_log_norm + row + f);
    }
    log_normalisers_of_row(w, p.c, p.two_c, r_max.data(), p.out_log_norm + row);
  }
}

template <bool kFactored, class S, class T>
inline __attribute__((always_inline)) void backward_rows(const Operands<T>& p, const PairOperands<S>& in, int64_t b,
                                                         int64_t f0, int64_t w) {
  const Dims& s = p.s;
  for (int64_t j = 0; j < s.nk; ++j) {
    const int64_t row = (b * s.nk + j) * s.d + f0;
    std::fill(p.dk + row, p.dk + row + w, T(0));
    std::fill(p.dv + row, p.dv + row + w, T(0));
  }
  std::vector<int64_t> keys;
  const int64_t keys_at = b * s.nk * s.d + f0;
  for (int64_t i = 0; i < s.nq; ++i) {
    const int64_t row = (b * s.nq + i) * s.d + f0;
    valid_keys(p.mask + (b * s.nq + i) * s.nk, s.nk, keys);
    const S* q = in.q + i * in.q_stride;
    for (int64_t f = 0; f < w; f += kChunk) {
      const int64_t n = std::min(kChunk, w - f);
      if (n == kChunk)
        backward_chunk<kChunk, kFactored>(n, p.c, p.two_c, p.two_inv_c, q + f, p.g + row + f, p.o + row + f,
                                          p.log_norm + row + f, in.k + f, in.k_stride, p.v + keys_at + f,
                                          p.dk + keys_at + f, p.dv + keys_at + f, s.d, keys, p.dq + row + f);
      else
        backward_chunk<0, kFactored>(n, p.c, p.two_c, p.two_inv_c, q + f, p.g + row + f, p.o + row + f,
                                     p.log_norm + row + f, in.k + f, in.k_stride, p.v + keys_at + f, p.dk + keys_at + f,
                                     p.dv + keys_at + f, s.d, keys, p.dq + row + f);
    }
  }
}

template <class T>
ATTN_SIMD_CLONES void forward_task(const Operands<T>& p, int64_t b, int64_t f0, int64_t f1) {
  const int64_t w = f1 - f0;
  const TaskFactors t = factors_of(p, b, f0, w);
  if (t.usable)
    forward_rows<true>(p, factor_operands(t, w), b, f0, w);
  else
    forward_rows<false>(p, operands_in_place(p, b, f0), b, f0, w);
}

template <class T>
ATTN_SIMD_CLONES void backward_task(const Operands<T>& p, int64_t b, int64_t f0, int64_t f1) {
  const int64_t w = f1 - f0;
  const TaskFactors t = factors_of(p, b, f0, w);
  if (t.usable)
    backward_rows<true>(p, factor_operands(t, w), b, f0, w);
  else
    backward_rows<false>(p, operands_in_place(p, b, f0), b, f0, w);
}

template <class T>
Operands<T> operands(const Tensor& query, const Tensor& key, const Tensor& values, const Tensor& mask, double scale_c) {
  Operands<T> p{};
  p.s = dims_of(query, key);
  p.c = static_cast<T>(scale_c);
  p.two_c = static_cast<T>(2 * scale_c);
  p.two_inv_c = static_cast<T>(2 / scale_c);
  p.factor_scale = 2 / scale_c;
  p.q = query.data<T>();
  p.k = key.data<T>();
  p.v = values.data<T>();
  p.mask = mask.data<uint8_t>();
  return p;
}

}  // namespace

void multi_dim_attention_forward_cpu(const Tensor& query, const Tensor& key, const Tensor& values, const Tensor& mask,
                                     double scale_c, const Tensor& out, const Tensor& log_norm) {
  dispatch_floating(query.dtype(), "multi_dim_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    Operands<T> p = operands<T>(query, key, values, mask, scale_c);
    p.out = out.data<T>();
    p.out_log_norm = log_norm.data<T>();
    for_each_task(p.s, [&p](int64_t b, int64_t f0, int64_t f1) { forward_task(p, b, f0, f1); });
  });
}

void multi_dim_attention_backward_cpu(const Tensor& grad, const Tensor& query, const Tensor& key, const Tensor& values,
                                      const Tensor& mask, double scale_c, const Tensor& out, const Tensor& log_norm,
                                      const Tensor& grad_query, const Tensor& grad_key, const Tensor& grad_values) {
  dispatch_floating(query.dtype(), "multi_dim_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    Operands<T> p = operands<T>(query, key, values, mask, scale_c);
    p.g = grad.data<T>();
    p.o = out.data<T>();
    p.log_norm = log_norm.data<T>();
    p.dq = grad_query.data<T>();
    p.dk = grad_key.data<T>();
    p.dv = grad_values.data<T>();
    for_each_task(p.s, [&p](int64_t b, int64_t f0, int64_t f1) { backward_task(p, b, f0, f1); });
  });
}

}  // namespace attn
