// AddressSanitizer hooks for allocators that keep memory between requests
// (the CPU cache, the emulated device heap): poisoned bytes make a read or
// write of a cached block or a request's slack a reported error. Without
// ASan the calls compile to nothing.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define ATTN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTN_ASAN 1
#endif
#endif
#ifndef ATTN_ASAN
#define ATTN_ASAN 0
#endif

#if ATTN_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace attn {
namespace asan {

constexpr bool kEnabled = ATTN_ASAN != 0;

inline void poison(const void* p, size_t n) {
#if ATTN_ASAN
  ASAN_POISON_MEMORY_REGION(p, n);
#else
  (void)p, (void)n;
#endif
}

inline void unpoison(const void* p, size_t n) {
#if ATTN_ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
  (void)p, (void)n;
#endif
}

}  // namespace asan
}  // namespace attn
