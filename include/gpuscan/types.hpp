// Element types, operators, scan kinds, algorithms and backends, with their names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuscan {

enum class DType { u32, i32, f32, u64, i64, f64 };
// bit_and, bit_or and bit_xor apply to integer types only.
enum class Op { add, mul, min, max, bit_and, bit_or, bit_xor };
enum class Kind { inclusive, exclusive, reduce };
// csdldf: chained scan with decoupled fallback (the default, safe without forward-progress
// guarantees); csdl: decoupled look-back (needs forward progress); rts: reduce-then-scan.
enum class Algorithm { csdldf, csdl, rts };
enum class Backend { any, vulkan, cuda };

std::string_view to_string(DType);
std::string_view to_string(Op);
std::string_view to_string(Kind);
std::string_view to_string(Algorithm);
std::string_view to_string(Backend);

// Parse the names above (Op also accepts and/or/xor); nullopt if unknown.
std::optional<DType> parse_dtype(std::string_view);
std::optional<Op> parse_op(std::string_view);
std::optional<Kind> parse_kind(std::string_view);
std::optional<Algorithm> parse_algorithm(std::string_view);
std::optional<Backend> parse_backend(std::string_view);

std::size_t size_of(DType);
bool is_float(DType);

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<std::uint32_t>() {
  return DType::u32;
}
template <>
constexpr DType dtype_of<std::int32_t>() {
  return DType::i32;
}
template <>
constexpr DType dtype_of<float>() {
  return DType::f32;
}
template <>
constexpr DType dtype_of<std::uint64_t>() {
  return DType::u64;
}
template <>
constexpr DType dtype_of<std::int64_t>() {
  return DType::i64;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::f64;
}

// A scalar of any DType, held as its bit pattern (zero-extended to 64 bits).
struct Value {
  DType dtype = DType::u32;
  std::uint64_t bits = 0;

  template <class T>
  static Value of(T x) {
    Value v{dtype_of<T>(), 0};
    static_assert(sizeof(T) <= sizeof(v.bits));
    __builtin_memcpy(&v.bits, &x, sizeof(T));
    return v;
  }
  template <class T>
  T as() const {
    T x;
    __builtin_memcpy(&x, &bits, sizeof(T));
    return x;
  }
};

}  // namespace gpuscan
