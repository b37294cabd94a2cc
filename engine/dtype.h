// Element types a tensor can hold. Float32 and float64 carry values and
// gradients; uint8 (masks) and int64 (indices, labels) are data only.
#pragma once
#include <cstddef>
#include <cstdint>

namespace attn {

enum class DType : uint8_t { F32, F64, U8, I64 };

inline size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::F64: return 8;
    case DType::U8: return 1;
    case DType::I64: return 8;
  }
  return 0;
}

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "float32";
    case DType::F64: return "float64";
    case DType::U8: return "uint8";
    case DType::I64: return "int64";
  }
  return "?";
}

inline bool is_floating(DType t) { return t == DType::F32 || t == DType::F64; }

template <class T> struct TypeTag { using type = T; };

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::F32; }
template <> constexpr DType dtype_of<double>() { return DType::F64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::U8; }
template <> constexpr DType dtype_of<int64_t>() { return DType::I64; }

}  // namespace attn
