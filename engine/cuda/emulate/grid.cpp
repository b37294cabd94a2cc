// Runs an emulated kernel grid: block after block, each block's threads as
// cooperative fibers (glibc ucontext) on the calling OS thread. A fiber runs
// until it reaches a barrier (__syncthreads, a warp shuffle) or ends; when no
// fiber can run, the scheduler releases the barrier every waiting thread has
// reached, or reports the threads that can never meet. The order in which
// runnable fibers (and blocks) run is shuffled by ATTN_CUDA_EMULATE_SEED, so
// a missing barrier gives different results under different seeds.
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "attn/engine/cuda/emulate/launch.h"
#include "attn/engine/error.h"

#if defined(__SANITIZE_ADDRESS__)
#include <dlfcn.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define ATTN_EMU_ASAN 1
#else
#define ATTN_EMU_ASAN 0
#endif

namespace attn {
namespace emu {

namespace {

constexpr int kWarpSize = 32;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr size_t kMaxStaticShared = 48 * 1024;  // CUDA's limit for static __shared__ arrays
// Kernels are shallow; sanitizer frames are several times larger.
constexpr size_t kStackBytes = ATTN_EMU_ASAN ? 256 * 1024 : 64 * 1024;

enum class State { Runnable, AtBlockBarrier, AtWarpBarrier, Done };

struct Fiber {
  ucontext_t context;
  char* stack = nullptr;  // kStackBytes usable, a guard page below
  bool context_ready = false;
  State state = State::Done;
  uint3 thread{0, 0, 0};
  int linear = 0;
  // The warp barrier's exchange.
  unsigned mask = 0;
  int source = 0;
  uint64_t sent = 0, received = 0;
#if ATTN_EMU_ASAN
  void* fake_stack = nullptr;
#endif
};

struct SharedArray {
  const void* site;
  void* data;
};

// The block being run (launches are serialised by g_launch_mutex).
struct Block {
  const char* kernel = nullptr;
  KernelBody body = nullptr;
  void* context = nullptr;
  int threads = 0;
  ucontext_t scheduler{};
  Fiber* current = nullptr;
  std::string error;  // set when a thread fails or the threads cannot meet
  std::vector<SharedArray> shared;
  size_t shared_bytes = 0;
#if ATTN_EMU_ASAN
  const void* main_stack = nullptr;
  size_t main_stack_size = 0;
#endif
};

std::mutex g_launch_mutex;
// Per OS thread: a fiber runs on its launcher's thread, and a launch from
// another thread waits for the mutex instead of looking nested.
thread_local Block* g_block = nullptr;
std::vector<std::unique_ptr<Fiber>> g_fibers;  // grown on demand, stacks kept
bool g_stacks_dirty = false;                    // a block was abandoned mid-run

uint64_t seed_from_environment() {
  const char* v = std::getenv("ATTN_CUDA_EMULATE_SEED");
  if (!v || !*v) return 0;
  char* end = nullptr;
  const unsigned long long s = std::strtoull(v, &end, 10);
  if (*end != '\0') {
    std::fprintf(stderr, "ATTN_CUDA_EMULATE_SEED='%s' is not a non-negative integer\n", v);
    std::abort();
  }
  return s;
}

uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Seed 0 keeps the natural order (ascending thread and block index).
void shuffle(std::vector<int>& v, uint64_t seed, uint64_t salt) {
  if (seed == 0) return;
  uint64_t state = mix(seed ^ mix(salt));
  for (size_t i = v.size(); i > 1; --i) {
    state = mix(state);
    std::swap(v[i - 1], v[state % i]);
  }
}

char* new_stack() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw Error("emulated CUDA: cannot map a fiber stack");
  mprotect(p, page, PROT_NONE);  // an overflowing fiber faults instead of corrupting a neighbour
  return static_cast<char*>(p) + page;
}

std::string block_name(const Block& b) {
  return std::string("kernel ") + b.kernel + ", block (" + std::to_string(blockIdx.x) + "," +
         std::to_string(blockIdx.y) + "," + std::to_string(blockIdx.z) + ")";
}

Fiber& current_fiber(const char* what) {
  if (!g_block || !g_block->current) {
    std::fprintf(stderr, "emulated CUDA: %s called outside a kernel\n", what);
    std::abort();
  }
  return *g_block->current;
}

#if ATTN_EMU_ASAN
// ASan's swapcontext interceptor clears the shadow of the target's whole stack
// on every switch (and warns that it may be wrong); the fiber annotations
// below tell ASan everything about each switch, so glibc's own is called.
int switch_context(ucontext_t* from, const ucontext_t* to) {
  using Swap = int (*)(ucontext_t*, const ucontext_t*);
  static const Swap real = [] {
    void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    void* fn = libc ? dlsym(libc, "swapcontext") : nullptr;
    return fn ? reinterpret_cast<Swap>(fn) : &swapcontext;
  }();
  return real(from, to);
}
#else
int switch_context(ucontext_t* from, const ucontext_t* to) { return swapcontext(from, to); }
#endif

// Scheduler -> fiber.
void resume(Block& b, Fiber& f) {
  b.current = &f;
  threadIdx = f.thread;
#if ATTN_EMU_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, f.stack, kStackBytes);
  switch_context(&b.scheduler, &f.context);
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  switch_context(&b.scheduler, &f.context);
#endif
  b.current = nullptr;
}

// Fiber -> scheduler; returns when the scheduler resumes this fiber.
void suspend(Block& b, Fiber& f, bool exiting) {
#if ATTN_EMU_ASAN
  __sanitizer_start_switch_fiber(exiting ? nullptr : &f.fake_stack, b.main_stack, b.main_stack_size);
  switch_context(&f.context, &b.scheduler);
  __sanitizer_finish_switch_fiber(f.fake_stack, &b.main_stack, &b.main_stack_size);
#else
  (void)exiting;
  switch_context(&f.context, &b.scheduler);
#endif
}

void fiber_main() {
  Block& b = *g_block;
  Fiber& f = *b.current;
#if ATTN_EMU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &b.main_stack, &b.main_stack_size);
#endif
  try {
    b.body(b.context);
  } catch (const std::exception& e) {
    if (b.error.empty()) b.error = "thread " + std::to_string(f.linear) + " threw: " + e.what();
  } catch (...) {
    if (b.error.empty()) b.error = "thread " + std::to_string(f.linear) + " threw a non-standard exception";
  }
  f.state = State::Done;
  suspend(b, f, true);
  std::abort();  // a finished fiber is never resumed
}

void start_fibers(Block& b) {
  while (g_fibers.size() < static_cast<size_t>(b.threads)) {
    auto f = std::make_unique<Fiber>();
    f->stack = new_stack();
    g_fibers.push_back(std::move(f));
  }
  for (int i = 0; i < b.threads; ++i) {
    Fiber& f = *g_fibers[static_cast<size_t>(i)];
#if ATTN_EMU_ASAN
    // A fiber abandoned mid-run may have left its frames' redzones poisoned.
    if (g_stacks_dirty) ASAN_UNPOISON_MEMORY_REGION(f.stack, kStackBytes);
    f.fake_stack = nullptr;
#endif
    if (!f.context_ready) {
      getcontext(&f.context);  // once per fiber: it saves the signal mask, a system call
      f.context_ready = true;
    }
    f.context.uc_stack.ss_sp = f.stack;
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = nullptr;
    makecontext(&f.context, fiber_main, 0);
    f.state = State::Runnable;
    f.linear = i;
    f.thread = uint3{i % blockDim.x, (i / blockDim.x) % blockDim.y, i / (blockDim.x * blockDim.y)};
  }
  g_stacks_dirty = false;
}

// Releases every warp whose lanes all wait at the warp barrier; an exchange
// hands each lane what its source lane posted.
bool release_warps(Block& b) {
  bool released = false;
  for (int w0 = 0; w0 < b.threads; w0 += kWarpSize) {
    const int w1 = std::min(b.threads, w0 + kWarpSize);
    bool all = true;
    for (int i = w0; i < w1; ++i) all = all && g_fibers[static_cast<size_t>(i)]->state == State::AtWarpBarrier;
    if (!all) continue;
    for (int i = w0; i < w1; ++i) {
      Fiber& f = *g_fibers[static_cast<size_t>(i)];
      const int src = w0 + f.source;
      f.received = src >= w0 && src < w1 ? g_fibers[static_cast<size_t>(src)]->sent : f.sent;
      f.state = State::Runnable;
    }
    released = true;
  }
  return released;
}

// Why no thread can run: names the barriers and who is missing from them.
std::string deadlock(const Block& b) {
  int done = 0, at_block = 0, at_warp = 0;
  int first_warp = -1;
  for (int i = 0; i < b.threads; ++i) {
    const State s = g_fibers[static_cast<size_t>(i)]->state;
    done += s == State::Done;
    at_block += s == State::AtBlockBarrier;
    if (s == State::AtWarpBarrier) {
      ++at_warp;
      if (first_warp < 0) first_warp = i / kWarpSize;
    }
  }
  if (at_warp == 0)
    return "divergent __syncthreads: " + std::to_string(at_block) + " of " + std::to_string(b.threads) +
           " threads wait at the barrier, " + std::to_string(done) + " exited without reaching it";
  return "divergent warp barrier: in warp " + std::to_string(first_warp) + " not every lane reached the __shfl_*_sync (" +
         std::to_string(at_warp) + " threads of the block wait at a warp barrier, " + std::to_string(at_block) +
         " at __syncthreads, " + std::to_string(done) + " exited)";
}

void run_block(Block& b, uint64_t seed, uint64_t block_salt) {
  start_fibers(b);
  std::vector<int> order;
  order.reserve(static_cast<size_t>(b.threads));
  for (uint64_t round = 0; b.error.empty(); ++round) {
    order.clear();
    for (int i = 0; i < b.threads; ++i)
      if (g_fibers[static_cast<size_t>(i)]->state == State::Runnable) order.push_back(i);
    if (!order.empty()) {
      shuffle(order, seed, block_salt * 0x100000001B3ULL + round);
      for (int i : order) {
        resume(b, *g_fibers[static_cast<size_t>(i)]);
        if (!b.error.empty()) break;
      }
      continue;
    }
    int done = 0, at_block = 0;
    for (int i = 0; i < b.threads; ++i) {
      done += g_fibers[static_cast<size_t>(i)]->state == State::Done;
      at_block += g_fibers[static_cast<size_t>(i)]->state == State::AtBlockBarrier;
    }
    if (done == b.threads) break;
    if (release_warps(b)) continue;
    if (at_block == b.threads) {
      for (int i = 0; i < b.threads; ++i) g_fibers[static_cast<size_t>(i)]->state = State::Runnable;
      continue;
    }
    b.error = deadlock(b);
  }
  for (const SharedArray& s : b.shared) std::free(s.data);
  b.shared.clear();
  b.shared_bytes = 0;
  if (!b.error.empty()) g_stacks_dirty = true;
}

bool valid_configuration(dim3 grid, dim3 block) {
  const unsigned long long threads = 1ULL * block.x * block.y * block.z;
  return threads >= 1 && threads <= kMaxThreadsPerBlock && block.x <= 1024 && block.y <= 1024 && block.z <= 64 &&
         grid.x >= 1 && grid.x <= 2147483647u && grid.y >= 1 && grid.y <= 65535 && grid.z >= 1 && grid.z <= 65535;
}

}  // namespace

void run_grid(const char* kernel, dim3 grid, dim3 block, size_t dynamic_shared, KernelBody body, void* context) {
  if (g_block) throw Error(std::string("emulated CUDA: kernel ") + kernel + " launched from inside a kernel");
  if (!valid_configuration(grid, block) || dynamic_shared != 0) {
    // Dynamic shared memory is not emulated (no kernel of the backend uses it).
    set_last_error(cudaErrorInvalidConfiguration);
    return;
  }
  static const uint64_t seed = seed_from_environment();
  std::lock_guard<std::mutex> lock(g_launch_mutex);
  Block b;
  b.kernel = kernel;
  b.body = body;
  b.context = context;
  b.threads = static_cast<int>(block.x * block.y * block.z);
  gridDim = grid;
  blockDim = block;
  std::vector<int> blocks(static_cast<size_t>(grid.x) * grid.y * grid.z);
  for (size_t i = 0; i < blocks.size(); ++i) blocks[i] = static_cast<int>(i);
  shuffle(blocks, seed, 0x5EEDULL);
  g_block = &b;
  for (int id : blocks) {
    const unsigned u = static_cast<unsigned>(id);
    blockIdx = uint3{u % grid.x, (u / grid.x) % grid.y, u / (grid.x * grid.y)};
    run_block(b, seed, static_cast<uint64_t>(id) + 1);
    if (!b.error.empty()) break;
  }
  g_block = nullptr;
  if (!b.error.empty()) throw Error("emulated CUDA: " + block_name(b) + ": " + b.error);
}

void sync_block() {
  Fiber& f = current_fiber("__syncthreads");
  f.state = State::AtBlockBarrier;
  suspend(*g_block, f, false);
}

uint64_t warp_exchange(unsigned mask, uint64_t bits, int src_lane) {
  Fiber& f = current_fiber("a warp shuffle");
  Block& b = *g_block;
  const int w0 = f.linear / kWarpSize * kWarpSize;
  const int lanes = std::min(kWarpSize, b.threads - w0);
  const unsigned all = lanes == kWarpSize ? 0xffffffffu : (1u << lanes) - 1u;
  if ((mask & all) != all)
    throw Error("a warp shuffle with mask " + std::to_string(mask) +
                " (not every lane of the warp): partial-warp shuffles are not emulated");
  f.mask = mask;
  f.source = src_lane;
  f.sent = bits;
  f.state = State::AtWarpBarrier;
  suspend(b, f, false);
  return f.received;
}

int lane_id() { return current_fiber("a warp shuffle").linear % kWarpSize; }

void* block_shared(const void* site, size_t bytes) {
  current_fiber("a __shared__ array");
  Block& b = *g_block;
  for (const SharedArray& s : b.shared)
    if (s.site == site) return s.data;
  if (b.shared_bytes + bytes > kMaxStaticShared)
    throw Error("the block's __shared__ arrays exceed " + std::to_string(kMaxStaticShared) + " bytes");
  // Separate heap blocks, so AddressSanitizer reports an access past an array.
  void* p = std::malloc(bytes);
  if (!p) throw Error("emulated CUDA: out of host memory for a __shared__ array");
  std::memset(p, 0xFF, bytes);
  b.shared.push_back({site, p});
  b.shared_bytes += bytes;
  return p;
}

}  // namespace emu
}  // namespace attn
