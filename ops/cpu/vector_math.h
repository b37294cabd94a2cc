// Branch-free float32 exp, log, tanh and sigmoid for CPU kernel loops (the fused
// attention, the float unary kernels). glibc's expf and
// tanhf are calls the compiler cannot vectorise; these are plain arithmetic
// (a Cody-Waite range reduction and minimax polynomials, the classic Cephes
// scheme), so a loop over them compiles to SIMD code. Accuracy is a few ulp
// (tests/test_vector_math.cpp measures it against the C library). float64
// overloads forward to the C library: gradcheck runs in float64 and keeps the
// library's exact results.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

// Marks a kernel function to be compiled three times, for x86-64-v4
// (AVX-512), x86-64-v3 (AVX2, FMA) and the baseline; the loader picks the
// best clone the CPU supports, so the binary stays portable while loops over
// these functions run 8 or 16 floats wide where they can. On the Zen 4
// machine of docs/benchmarks.md the AVX-512 clone halves the fused
// multi-dimensional attention's time (masked tails, 32 registers, native
// round and scale instructions), although each 512-bit op is two 256-bit
// halves there. (FMA contraction makes the clones differ in the last bits.)
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define ATTN_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define ATTN_HAS_SIMD_CLONES 1
#else
#define ATTN_SIMD_CLONES
#endif

// The limits below (0, inf, NaN passed through) need IEEE semantics;
// CMakeLists.txt appends -fno-fast-math, so this fires only for a build that
// bypasses it.
#if defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__
#error "ops/cpu/vector_math.h needs NaN and infinity semantics: build without -ffast-math / -ffinite-math-only"
#endif

namespace attn {
namespace vector_math {

// NaN by its bits (exponent all ones, mantissa non-zero): an integer test the
// compiler cannot fold away, and one that vectorises like the float selects.
inline bool is_nan(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits & 0x7fffffffu) > 0x7f800000u;
}

// e^x for x in [kExpLo, kExpHi] (no special cases): e^x = 2^k e^r with
// k = round(x / ln 2) and |r| <= ln(2) / 2.
constexpr float kExpLo = -87.33654f;  // e^lo is the smallest normal float
constexpr float kExpHi = 88.72283f;
inline float exp_in_range(float x) {
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float k = (x * 1.44269504088896341f + shifter) - shifter;
  const float r = (x - k * 0.693359375f) - k * -2.12194440e-4f;  // ln 2 split in two
  // e^r = 1 + r + r^2 p(r), p of degree 5 evaluated in pairs (Estrin's
  // scheme): three independent FMAs, then two, so the chain of dependent
  // operations is 4 deep instead of Horner's 7. The fused attention kernels
  // run one exp per pair and feature, and their loops are bound by that
  // chain's latency, not by the number of operations.
  const float r2 = r * r;
  const float p01 = 1.6666665459e-1f * r + 5.0000001201e-1f;
  const float p23 = 8.3334519073e-3f * r + 4.1665795894e-2f;
  const float p45 = 1.9875691500e-4f * r + 1.3981999507e-3f;
  const float p = (p45 * r2 + p23) * r2 + p01;
  const float er = p * r2 + (r + 1.0f);
  const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(k) + 127) << 23;  // 2^k, k in [-126, 128]
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return er * scale;
}

inline float exp(float x) {
  // Written so that NaN (every comparison false) clamps to lo: k stays a
  // finite integer, and converting NaN to int would be undefined behaviour.
  // Two selects that compile to max and min: a nested select here made GCC
  // predicate the whole body on the in-range lanes, with twice the
  // instructions (exp 2.4 -> 3.2 G/s on one Zen 4 thread, same bits).
  const float above_lo = x > kExpLo ? x : kExpLo;
  const float y = exp_in_range(above_lo < kExpHi ? above_lo : kExpHi);
  // Below lo the true value is subnormal or 0; 0 is what callers want (a
  // vanishing softmax weight). NaN compares false everywhere and stays NaN.
  // One flat select per case, for the reason above.
  const float low_fixed = x < kExpLo ? 0.0f : y;
  const float high_fixed = x > kExpHi ? INFINITY : low_fixed;
  return is_nan(x) ? x : high_fixed;
}

inline float tanh(float x) {
  const float a = x < 0 ? -x : x;
  // Small |x|: an odd polynomial (1 - 2 / (e^2x + 1) would cancel).
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  // Large |x|: 1 - 2 / (e^2|x| + 1). 2|x| >= 0 needs only the upper clamp:
  // at 2|x| = kExpHi the quotient is ~6e-39 and the result rounds to exactly
  // 1, as it does from an infinite e^2|x|. (exp's own clamps and special
  // cases, here for NaN only, were half of tanh's instructions.)
  const float two_a = 2.0f * a;
  const float large = 1.0f - 2.0f / (exp_in_range(two_a < kExpHi ? two_a : kExpHi) + 1.0f);
  const float signed_large = x < 0 ? -large : large;
  const float y = a < 0.625f ? small : signed_large;
  return is_nan(x) ? x : y;
}

// 1 / (1 + e^-x) without overflow: e = e^-|x| is at most 1, and the sign of
// x picks which of the two equal forms to return. Below x = -87.3 the result
// is 0 where the true value is subnormal (as exp above).
inline float sigmoid(float x) {
  const float e = vector_math::exp(x < 0 ? x : -x);
  const float inv = 1.0f / (1.0f + e);
  return x < 0 ? e * inv : inv;
}

// Natural log, plain arithmetic like exp above, so that a loop over it
// vectorises where glibc's logf is a call (the fused attention's
// log-normalisers, one per query row and feature). x = 2^e m with m in
// [sqrt(1/2), sqrt(2)), f = m - 1 exact; log(1 + f) = f - f^2/2 + f^3 P(f)
// with Cephes' degree-8 minimax P, and e ln 2 added in two parts (ln 2 split
// so that e ln2_hi is exact). Within 2 ulp of the C library
// (tests/test_vector_math.cpp); subnormals, +-0 (-inf), negatives (NaN), inf
// and NaN are handled.
inline float log(float x) {
  const bool subnormal = x < 1.17549435e-38f;           // also 0 and negatives: fixed at the end
  const float scaled = subnormal ? x * 8388608.0f : x;  // 2^23 brings a subnormal into the normal range
  uint32_t bits;
  std::memcpy(&bits, &scaled, sizeof bits);
  const int32_t biased = static_cast<int32_t>(bits >> 23) - 127;
  const uint32_t mantissa_bits = (bits & 0x007fffffu) | 0x3f800000u;  // m in [1, 2)
  float m;
  std::memcpy(&m, &mantissa_bits, sizeof m);
  const bool above = m > 1.41421356f;
  const float mr = above ? m * 0.5f : m;
  const int32_t e = biased + (above ? 1 : 0) - (subnormal ? 23 : 0);
  const float f = mr - 1.0f;
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  const float ef = static_cast<float>(e);
  const float tail = (f * z * p + ef * -2.12194440e-4f) - 0.5f * z;
  const float y = (f + tail) + ef * 0.693359375f;
  // One flat select per special case, as in exp.
  const float at_zero = x == 0.0f ? -INFINITY : y;
  const float at_negative = x < 0.0f ? NAN : at_zero;
  const float at_inf = x == INFINITY ? INFINITY : at_negative;
  return is_nan(x) ? x : at_inf;
}

inline double log(double x) { return std::log(x); }

inline double exp(double x) { return std::exp(x); }
inline double exp_in_range(double x) { return std::exp(x); }

// e^x in float64 for |x| <= 708 as plain arithmetic, so a loop over it
// vectorises where std::exp would be a call: for float32 kernels that need a
// product of two exps rounded once (ops/multi_dim_attention/multi_dim_attention_cpu.cpp). The
// same range reduction as the float exp (ln 2 split so that k ln2_hi is
// exact), then Taylor terms to r^kDegree: |r| <= ln(2) / 2 bounds the
// truncation error by e^|r| |r|^(kDegree+1) / (kDegree+1)!: 6e-18 at the
// default 13 (within a few float64 ulp) and 2.8e-10 at 8 (a 400th of a
// float32 ulp).
template <int kDegree = 13>
inline double exp_f64_in_range(double x) {
  static_assert(kDegree >= 1 && kDegree <= 13, "Taylor degree out of range");
  // 1/n!, each one correctly rounded division (n! is exact in float64).
  constexpr double kInvFactorial[] = {
      1.0,        1.0,         1.0 / 2,      1.0 / 6,       1.0 / 24,       1.0 / 120,       1.0 / 720,
      1.0 / 5040, 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0};
  const double shifter = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
  const double shifted = x * 1.4426950408889634 + shifter;
  const double k = shifted - shifter;
  const double r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
  double p = kInvFactorial[kDegree];
  for (int n = kDegree - 1; n >= 0; --n) p = p * r + kInvFactorial[n];  // Horner; the bound is a constant
  // shifted's bits are the shifter's plus k (one ulp of it is 1), so 2^k is
  // built with integer arithmetic that vectorises without AVX-512.
  int64_t shifted_bits, shifter_bits;
  std::memcpy(&shifted_bits, &shifted, sizeof shifted_bits);
  std::memcpy(&shifter_bits, &shifter, sizeof shifter_bits);
  const uint64_t scale_bits = static_cast<uint64_t>(shifted_bits - shifter_bits + 1023) << 52;  // |k| <= 1022
  double scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  return p * scale;
}

inline bool is_nan(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits & 0x7fffffffffffffffu) > 0x7ff0000000000000u;
}
// The smallest argument whose e^x is a normal number, per type: the lower
// clamp for exp_in_range.
constexpr float lowest_normal_exp_arg(float) { return kExpLo; }
constexpr double lowest_normal_exp_arg(double) { return -708.0; }
inline double tanh(double x) { return std::tanh(x); }
inline double sigmoid(double x) {
  const double e = std::exp(x < 0 ? x : -x);
  return x < 0 ? e / (1.0 + e) : 1.0 / (1.0 + e);
}

}  // namespace vector_math
}  // namespace attn
