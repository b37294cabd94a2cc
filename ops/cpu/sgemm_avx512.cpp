// A blocked float32 GEMM in the usual three-level layout (after Goto and van
// de Geijn, "Anatomy of high-performance matrix multiplication", 2008):
// op(B) is packed a kKC x kNC block at a time into strips kNR columns wide,
// and a register-tiled kernel multiplies kMR rows of op(A) by one B strip
// into a kMR x kNR tile of C held in 24 zmm registers. The kernel
// broadcasts one A value per row and depth, so A stored [m, k] is read in
// place, row by row (packing it would transpose 16 x 16 blocks: a tenth of
// a 4096 x 150 x 150 product's time, more of a small one's); A stored
// [k, m] is packed a kMC x kKC block at a time into strips kMR rows tall.
// Packing zero-pads the last B strip; a tile at C's edge runs a kernel
// compiled for its number of rows and masks the columns past C's last.
// Every C element is a fixed sequence of fused multiply-adds over k, so one
// call run twice gives the same bits.
#include "attn/ops/cpu/sgemm_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "attn/engine/error.h"
#include "attn/ops/cpu/panel_copies_avx512.h"

namespace attn {

namespace {

constexpr int64_t kMR = 12;    // rows of a C tile: 12 x 2 accumulators + 2 B vectors + 1 broadcast
constexpr int64_t kNR = 32;    // columns of a C tile: two 16-float vectors
// Depth blocks are at most kKC deep and of equal depth (k = 300 is one block
// of 300, not 256 + 44: every block stores C once more, and a shallow one
// does little work for it). Single-threaded products of the models' shapes
// (k = 300, 1200, 2048) ran 2-10% faster at kKC 384 than at 256, and 1024^3
// level (docs/engine.md, "The float32 GEMM").
constexpr int64_t kKC = 384;   // deepest packed block: a B strip (kKC x kNR, 48 KiB) streams from L2 through L1
constexpr int64_t kMC = 96;    // rows of a packed A block (96 x 384 floats, 144 KiB) in L2
constexpr int64_t kNC = 1536;  // columns of a packed B block (2.25 MiB at kKC)

// The depth of each block for a reduction of k: ceil(k / blocks), blocks =
// ceil(k / kKC).
int64_t depth_block(int64_t k) {
  const int64_t blocks = (k + kKC - 1) / kKC;
  return (k + blocks - 1) / blocks;
}

// Packed blocks, per thread and kept across calls (a fresh allocation per
// call would be faulted in again every time); 64-byte aligned for the
// kernel's loads.
struct PackBuffer {
  std::unique_ptr<float, decltype(&std::free)> data{nullptr, &std::free};
  int64_t capacity = 0;
  float* get(int64_t floats) {
    if (floats > capacity) {
      const size_t bytes = (static_cast<size_t>(floats) * sizeof(float) + 63) / 64 * 64;
      data.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      ATTN_CHECK(data != nullptr, "sgemm", "out of memory for a packed block of ", floats, " floats");
      capacity = floats;
    }
    return data.get();
  }
};

struct PackBuffers {
  PackBuffer a, b;
};

PackBuffers& pack_buffers() {
  thread_local PackBuffers buffers;
  return buffers;
}

// GCC 12 warns about the placeholder operand (_mm512_undefined_ps) inside
// its own unpack, shuffle and masked-load intrinsics wherever they are
// inlined (the transpose and both packing routines); the operand is never read.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// op(A) rows [i0, i0 + mc), depths [p0, p0 + kc) into strips of kMR rows,
// for A stored [k, m] (a depth's rows are contiguous, at depth_rows[p]):
// strip r holds, for each depth, its kMR row values side by side. A last
// strip of fewer rows is not padded: its kernel reads only its rows. (A
// stored [m, k] is not packed: the kernel reads its rows in place.)
__attribute__((target("avx512f"))) void pack_a(const float* a, const int64_t* depth_rows, int64_t i0, int64_t mc,
                                               int64_t kc, float* dst) {
  // The first strip's pass reads each depth row first, from memory when A
  // is cold (a weight gradient's activations, saved in the forward): its
  // rows are far apart, which the hardware prefetcher does not follow, so
  // that pass fetches the whole row kAhead rows ahead; the later strips find
  // their rows in cache. (MTSA's per-head weight gradients, [150, 4096] x
  // [4096, 150]: 3.5% faster with the inputs out of cache, level in cache.)
  constexpr int64_t kAhead = 8;
  for (int64_t r0 = 0; r0 < mc; r0 += kMR) {
    const int64_t rows = std::min(kMR, mc - r0);
    float* strip = dst + r0 * kc;
    const __mmask16 lanes = first_lanes(rows);
    for (int64_t p = 0; p < kc; ++p) {
      if (r0 == 0 && p + kAhead < kc) {
        const char* ahead = reinterpret_cast<const char*>(a + depth_rows[p + kAhead] + i0);
        for (int64_t byte = 0; byte < mc * static_cast<int64_t>(sizeof(float)); byte += 64)
          _mm_prefetch(ahead + byte, _MM_HINT_T0);
      }
      _mm512_mask_storeu_ps(strip + p * kMR, lanes, _mm512_maskz_loadu_ps(lanes, a + depth_rows[p] + i0 + r0));
    }
  }
}

// The width of the B strip that starts `cols` columns before the block's
// end: kNR, or 16 for a last strip of at most 16 columns, which then costs
// half a full strip's multiply-adds instead of a whole one (n = 300 is nine
// full strips and one of 12 columns).
int64_t strip_width(int64_t cols) { return cols <= 16 ? 16 : kNR; }

// op(B) depths [p0, p0 + kc), columns [j0, j0 + nc) into strips of kNR
// columns (the last one possibly 16): strip s holds, for each depth, its
// column values side by side, and starts s0 * kc floats in. B stored [n, k]
// has column j's depths at j * ldb; B stored [k, n] has the block's depth p
// at depth_rows[p].
__attribute__((target("avx512f"))) void pack_b(bool trans, const float* b, int64_t ldb, const int64_t* depth_rows,
                                               int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
  for (int64_t s0 = 0; s0 < nc; s0 += kNR) {
    const int64_t cols = std::min(kNR, nc - s0), width = strip_width(cols);
    float* strip = dst + s0 * kc;
    if (trans) {  // B stored [n, k]: a column's depths are contiguous, so 16 x 16 blocks are transposed
      for (int64_t p = 0; p < kc; p += 16) {
        const __mmask16 depths = first_lanes(kc - p);
        for (int64_t half = 0; half < width; half += 16) {
          __m512 block[16];
          for (int64_t j = 0; j < 16; ++j)
            block[j] = half + j < cols ? _mm512_maskz_loadu_ps(depths, b + (j0 + s0 + half + j) * ldb + p0 + p)
                                       : _mm512_setzero_ps();
          transpose_16x16(block);
          for (int64_t q = 0; q < std::min<int64_t>(16, kc - p); ++q)
            _mm512_store_ps(strip + (p + q) * width + half, block[q]);
        }
      }
    } else {  // B stored [k, n]: a depth's columns are contiguous; masked loads zero the padding
      const __mmask16 lo = first_lanes(cols), hi = first_lanes(cols - 16);
      for (int64_t p = 0; p < kc; ++p) {
        const float* src = b + depth_rows[p] + j0 + s0;
        _mm512_store_ps(strip + p * width, _mm512_maskz_loadu_ps(lo, src));
        if (width == kNR) _mm512_store_ps(strip + p * width + 16, _mm512_maskz_loadu_ps(hi, src + 16));
      }
    }
  }
}

#pragma GCC diagnostic pop

// C rows [0, kRows) and the columns of `lo` and `hi` (masks over the
// 16-float vectors of a tile kVectors * 16 wide: a whole kNR strip or a
// last narrow one) += or = an A strip x a B strip over kc depths. Rows past
// kRows are neither computed nor touched, and masked columns are neither
// read nor written, so edge tiles need no buffer. With `relu` (the last
// depth block of a product whose output is relu'd) each sum <= 0 is stored
// as +0 and a NaN stays NaN, exactly as the relu op computes it.
template <int kRows, int kVectors, bool kPackedA>
__attribute__((target("avx512f"))) void kernel(int64_t kc, const float* __restrict a, int64_t lda,
                                               const float* __restrict b, float* __restrict c, int64_t ldc,
                                               __mmask16 lo, __mmask16 hi, bool accumulate,
                                               const float* __restrict bias, bool relu) {
  constexpr int64_t kWidth = 16 * kVectors;
  const __mmask16 masks[2] = {lo, hi};
  // The tile's rows of C are fetched now, to be in cache when the sums are
  // stored after kc steps: a cold C (a fresh output) otherwise stalls every
  // store (a single-threaded [2048, 300] x [300, 1200] ran 12% faster).
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i)
    for (int v = 0; v < kVectors; ++v) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16 * v), _MM_HINT_T0);
  __m512 acc[kRows][kVectors];
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i)
    for (int v = 0; v < kVectors; ++v) acc[i][v] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    __m512 bv[kVectors];
    for (int v = 0; v < kVectors; ++v) bv[v] = _mm512_load_ps(b + p * kWidth + 16 * v);
    const float* ap = kPackedA ? a + p * kMR : a + p;
#pragma GCC unroll 12
    for (int i = 0; i < kRows; ++i) {
      const __m512 ai = _mm512_set1_ps(kPackedA ? ap[i] : ap[i * lda]);
      for (int v = 0; v < kVectors; ++v) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
    }
  }
  // A bias row (given for the first depth block only) is added as the sums
  // are stored: with beta = 0, C is never read.
  __m512 bias_v[kVectors];
  for (int v = 0; v < kVectors; ++v)
    bias_v[v] = bias ? _mm512_maskz_loadu_ps(masks[v], bias + 16 * v) : _mm512_setzero_ps();
  // A tile of whole vectors stores them unmasked: C's rows are rarely
  // 64-byte aligned, and a masked store across two cache lines costs
  // several plain ones.
  const bool whole = lo == 0xFFFF && (kVectors == 1 || hi == 0xFFFF);
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i) {
    float* row = c + i * ldc;
    for (int v = 0; v < kVectors; ++v) {
      if (accumulate)
        acc[i][v] = _mm512_add_ps(acc[i][v], whole ? _mm512_loadu_ps(row + 16 * v)
                                                   : _mm512_maskz_loadu_ps(masks[v], row + 16 * v));
      if (bias) acc[i][v] = _mm512_add_ps(acc[i][v], bias_v[v]);
      if (relu)  // ordered compare: false for NaN, which is kept
        acc[i][v] = _mm512_mask_mov_ps(acc[i][v], _mm512_cmp_ps_mask(acc[i][v], _mm512_setzero_ps(), _CMP_LE_OQ),
                                       _mm512_setzero_ps());
      if (whole) {
        _mm512_storeu_ps(row + 16 * v, acc[i][v]);
      } else {
        _mm512_mask_storeu_ps(row + 16 * v, masks[v], acc[i][v]);
      }
    }
  }
}

using Kernel = void (*)(int64_t, const float*, int64_t, const float*, float*, int64_t, __mmask16, __mmask16, bool,
                        const float*, bool);

template <int kVectors, bool kPackedA, int... kRows>
constexpr std::array<Kernel, sizeof...(kRows)> kernels_by_rows(std::integer_sequence<int, kRows...>) {
  return {&kernel<kRows + 1, kVectors, kPackedA>...};
}

// kernels[packed][wide][r - 1] computes r rows of a kNR-wide strip (wide)
// or of a 16-wide one, from a packed A strip or from A's rows in place.
constexpr std::array<std::array<std::array<Kernel, kMR>, 2>, 2> kernels = {{
    {{kernels_by_rows<1, false>(std::make_integer_sequence<int, kMR>{}),
      kernels_by_rows<2, false>(std::make_integer_sequence<int, kMR>{})}},
    {{kernels_by_rows<1, true>(std::make_integer_sequence<int, kMR>{}),
      kernels_by_rows<2, true>(std::make_integer_sequence<int, kMR>{})}},
}};

std::atomic<CpuSgemm> sgemm_choice{CpuSgemm::automatic};

}  // namespace

namespace {

// ATTN_AVX512=off makes an AVX-512 machine take the portable paths (OpenBLAS
// and the unfused kernels), so the suite can check on one machine what a CPU
// without AVX-512 runs. Unset or "auto" asks the CPU; anything else is an
// error rather than a silent default.
bool avx512_allowed_by_environment() {
  const char* value = std::getenv("ATTN_AVX512");
  if (value == nullptr || std::string(value) == "auto") return true;
  if (std::string(value) == "off") return false;
  throw Error(std::string("ATTN_AVX512 is '") + value +
              "': expected auto (use the AVX-512 kernels where the CPU has AVX-512F) or off");
}

}  // namespace

bool sgemm_avx512_available() {
  static const bool available = __builtin_cpu_supports("avx512f") && avx512_allowed_by_environment();
  return available;
}

void set_cpu_sgemm(CpuSgemm choice) { sgemm_choice.store(choice); }

CpuSgemm cpu_sgemm_from_name(const std::string& name) {
  if (name == "auto") return CpuSgemm::automatic;
  if (name == "openblas") return CpuSgemm::openblas;
  throw Error("ATTN_SGEMM is '" + name +
              "': expected auto (the engine's AVX-512 kernel where the CPU has one) or "
              "openblas");
}

bool use_own_sgemm() { return sgemm_choice.load() == CpuSgemm::automatic && sgemm_avx512_available(); }

namespace {

// C_t = op(A_t) op(B) + beta C_t (+ bias) for t < count, the products
// sharing one B: each block of B is packed once for all of them. The stored
// rows of each A_t (its m rows, or its k depth rows when transposed), of B
// when not transposed (its k depth rows) and of each C_t are where a_rows,
// b_rows and c_rows put them: a batch of products whose A and C are evenly
// spaced runs as one tall product, and a sum of products over a batch (a
// shared weight's gradient) as one deep one. A transposed B's columns are
// ldb = b_rows.ld apart.
struct Product {
  bool trans_a, trans_b;
  int64_t m, n, k;
  const float* const* a;
  SgemmRows a_rows;
  const float* b;
  SgemmRows b_rows;
  float beta;
  const float* bias;
  float* const* c;
  SgemmRows c_rows;
  int64_t count;
  bool relu;
  // A stored [m, k] is read in place (each row's depths are contiguous, and
  // the kernel broadcasts one value per row and depth); A stored [k, m] is
  // packed.
  bool packs_a() const { return trans_a; }
  int64_t kc_max() const { return depth_block(k); }
  int64_t row_blocks() const { return (m + kMC - 1) / kMC; }
  int64_t strips(int64_t nc) const { return (nc + kNR - 1) / kNR; }
  int64_t packed_b_floats() const { return kc_max() * strips(std::min(kNC, n)) * kNR; }
  int64_t packed_a_floats() const { return kc_max() * ((std::min(kMC, m) + kMR - 1) / kMR * kMR); }
};

// beta other than 0 and 1 scales C once (every depth block then adds on);
// an empty sum (k = 0) stores beta C, the bias and the relu.
void scale_outputs(const Product& g) {
  for (int64_t t = 0; t < g.count; ++t) {
    for (int64_t i = 0; i < g.m; ++i) {
      float* row = g.c[t] + g.c_rows.at(i);
      if (g.beta != 0.0f && g.beta != 1.0f)
        for (int64_t j = 0; j < g.n; ++j) row[j] *= g.beta;
      if (g.k <= 0 && g.beta == 0.0f) std::fill(row, row + g.n, 0.0f);
      if (g.k <= 0 && g.bias)
        for (int64_t j = 0; j < g.n; ++j) row[j] += g.bias[j];
      if (g.k <= 0 && g.relu)
        for (int64_t j = 0; j < g.n; ++j) row[j] = row[j] <= 0.0f ? 0.0f : row[j];  // the relu op's x <= 0 ? 0 : x
    }
  }
}

// One block of the product: columns [j0, j0 + nc) of C, depths [p0, p0 + kc).
struct Block {
  int64_t j0, nc, p0, kc;
  bool accumulate, relu_now;
  // Where the block's depth rows start (read only for an operand stored [k, *]).
  std::array<int64_t, kKC> a_depth, b_depth;
  Block(const Product& g, int64_t j0_, int64_t p0_)
      : j0(j0_),
        nc(std::min(kNC, g.n - j0_)),
        p0(p0_),
        kc(std::min(g.kc_max(), g.k - p0_)),
        accumulate(p0_ > 0 || g.beta != 0.0f),
        relu_now(g.relu && p0_ + kc >= g.k) {  // the last depth block stores the final sums
    for (int64_t p = 0; p < kc; ++p) {
      a_depth[p] = g.trans_a ? g.a_rows.at(p0 + p) : 0;
      b_depth[p] = g.trans_b ? 0 : g.b_rows.at(p0 + p);
    }
  }
};

// The block's B strips [s_first, s_last) into packed_b (strip s at s kNR kc).
__attribute__((target("avx512f"))) void pack_b_strips(const Product& g, const Block& blk, int64_t s_first,
                                                      int64_t s_last, float* packed_b) {
  const int64_t c0 = s_first * kNR, c1 = std::min(blk.nc, s_last * kNR);
  if (c0 < c1)
    pack_b(g.trans_b, g.b, g.b_rows.ld, blk.b_depth.data(), blk.p0, blk.kc, blk.j0 + c0, c1 - c0,
           packed_b + c0 * blk.kc);
}

// Rows [i0, i0 + kMC) of C_t times the block's packed B (packing A's rows
// into packed_a first when A is stored [k, m]).
__attribute__((target("avx512f"))) void multiply_rows(const Product& g, const Block& blk, int64_t t, int64_t i0,
                                                      const float* packed_b, float* packed_a) {
  const int64_t mc = std::min(kMC, g.m - i0), kc = blk.kc;
  const bool packs_a = g.packs_a();
  if (packs_a) pack_a(g.a[t], blk.a_depth.data(), i0, mc, kc, packed_a);
  for (int64_t s0 = 0; s0 < blk.nc; s0 += kNR) {
    const float* b_strip = packed_b + s0 * kc;
    const float* bias_strip = g.bias && blk.p0 == 0 ? g.bias + blk.j0 + s0 : nullptr;
    const __mmask16 lo = first_lanes(blk.nc - s0), hi = first_lanes(blk.nc - s0 - 16);
    const std::array<Kernel, kMR>& by_rows = kernels[packs_a][strip_width(blk.nc - s0) == kNR];
    for (int64_t r0 = 0; r0 < mc; r0 += kMR) {
      // A tile's rows, cut where a group of C's rows ends, or of A's when A
      // is read by rows (a packed A's groups are of depth rows).
      const int64_t rows = std::min(kMR, mc - r0);
      for (int64_t r = 0; r < rows;) {
        const int64_t row = i0 + r0 + r;
        const int64_t run = std::min({rows - r, g.c_rows.group - row % g.c_rows.group,
                                      packs_a ? kMR : g.a_rows.group - row % g.a_rows.group});
        const float* a_tile = packs_a ? packed_a + r0 * kc + r : g.a[t] + g.a_rows.at(row) + blk.p0;
        by_rows[run - 1](kc, a_tile, g.a_rows.ld, b_strip, g.c[t] + g.c_rows.at(row) + blk.j0 + s0, g.c_rows.ld, lo,
                         hi, blk.accumulate, bias_strip, blk.relu_now);
        r += run;
      }
    }
  }
}

// The product on this thread. Every C element gets the bits a call of its
// own, on rows gathered first, would (the same depth blocks, kernels and
// order of sums). Called only after the CPU check.
void blocked_sgemm(const Product& g) {
  scale_outputs(g);
  if (g.k <= 0) return;
  PackBuffers& buffers = pack_buffers();
  float* packed_b = buffers.b.get(g.packed_b_floats());
  float* packed_a = buffers.a.get(g.packed_a_floats());
  for (int64_t j0 = 0; j0 < g.n; j0 += kNC) {
    for (int64_t p0 = 0; p0 < g.k; p0 += g.kc_max()) {
      const Block blk(g, j0, p0);
      pack_b_strips(g, blk, 0, g.strips(blk.nc), packed_b);
      for (int64_t t = 0; t < g.count; ++t)
        for (int64_t i0 = 0; i0 < g.m; i0 += kMC) multiply_rows(g, blk, t, i0, packed_b, packed_a);
    }
  }
}

// The product on `threads` OpenMP threads. Each block of B is packed once,
// its strips shared out among the threads, into the calling thread's
// buffer, which all of them then read; the blocks of kMC rows of C go to
// whichever thread is free next. A thread on a slower or busier core (a
// virtual machine's vCPUs often differ by half) so takes fewer of them
// instead of holding the others up at the end, as a fixed split of the rows
// would. Each C element is computed exactly as blocked_sgemm computes it:
// the same bits, whatever the thread count or the order the blocks run in.
void blocked_sgemm_threaded(const Product& g, int threads) {
  scale_outputs(g);
  if (g.k <= 0) return;
  float* packed_b = pack_buffers().b.get(g.packed_b_floats());
  const int64_t row_units = g.count * g.row_blocks();
#pragma omp parallel num_threads(threads)
  {
    float* packed_a = pack_buffers().a.get(g.packed_a_floats());
    for (int64_t j0 = 0; j0 < g.n; j0 += kNC) {
      for (int64_t p0 = 0; p0 < g.k; p0 += g.kc_max()) {
        const Block blk(g, j0, p0);
        // The previous block's rows are all done (the barrier ending the
        // loop below) before its packed B is overwritten here.
#pragma omp for schedule(dynamic, 1)
        for (int64_t s = 0; s < g.strips(blk.nc); s += 2) pack_b_strips(g, blk, s, s + 2, packed_b);
#pragma omp for schedule(dynamic, 1)
        for (int64_t u = 0; u < row_units; ++u)
          multiply_rows(g, blk, u / g.row_blocks(), u % g.row_blocks() * kMC, packed_b, packed_a);
      }
    }
  }
}

void run_product(const Product& g, int threads = 1) {
  ATTN_CHECK(sgemm_avx512_available(), "sgemm", "this CPU has no AVX-512F");
  if (g.m <= 0 || g.n <= 0 || g.count <= 0) return;
  if (threads > 1) {
    blocked_sgemm_threaded(g, threads);
  } else {
    blocked_sgemm(g);
  }
}

}  // namespace

void sgemm_avx512_threaded(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const float* bias, bool relu,
                           int threads) {
  run_product({trans_a, trans_b, m, n, k, &a, SgemmRows::plain(trans_a ? k : m, lda), b,
               SgemmRows::plain(trans_b ? n : k, ldb), beta, bias, &c, SgemmRows::plain(m, ldc), 1, relu},
              threads);
}

void sgemm_avx512(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const float* bias, bool relu) {
  sgemm_avx512_threaded(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc, bias, relu, 1);
}

void sgemm_avx512_shared_b(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* const* a,
                           int64_t lda, const float* b, int64_t ldb, float beta, float* const* c, int64_t ldc,
                           int64_t count, const float* bias, bool relu) {
  run_product({trans_a, trans_b, m, n, k, a, SgemmRows::plain(trans_a ? k : m, lda), b,
               SgemmRows::plain(trans_b ? n : k, ldb), beta, bias, c, SgemmRows::plain(m, ldc), count, relu});
}

void sgemm_avx512_grouped(bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, const SgemmRows& a_rows,
                          const float* b, int64_t ldb, float beta, float* c, const SgemmRows& c_rows,
                          const float* bias, bool relu) {
  ATTN_CHECK(a_rows.group > 0 && c_rows.group > 0, "sgemm", "row groups of ", a_rows.group, " and ", c_rows.group,
             " rows: expected at least 1");
  run_product({false, trans_b, m, n, k, &a, a_rows, b, SgemmRows::plain(trans_b ? n : k, ldb), beta, bias, &c, c_rows,
               1, relu});
}

void sgemm_avx512_depth_rows(int64_t m, int64_t n, int64_t k, const float* a, const SgemmRows& a_rows, const float* b,
                             const SgemmRows& b_rows, float beta, float* c, int64_t ldc) {
  ATTN_CHECK(a_rows.group > 0 && b_rows.group > 0, "sgemm", "depth row groups of ", a_rows.group, " and ",
             b_rows.group, " rows: expected at least 1");
  run_product({true, false, m, n, k, &a, a_rows, b, b_rows, beta, nullptr, &c, SgemmRows::plain(m, ldc), 1, false});
}

}  // namespace attn
