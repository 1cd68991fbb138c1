#include "core/reference.hpp"

#include <cstring>

namespace gpuscan::reference {
namespace {

// splitmix64: tiny, fast, and good enough for test data.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

template <class T>
T draw(SplitMix64& rng, Op op) {
  if constexpr (std::is_floating_point_v<T>) {
    if (op == Op::mul) return static_cast<T>(1.0 + (rng.unit() - 0.5) * 1e-3);
    return static_cast<T>(2.0 * rng.unit() - 1.0);
  } else {
    const std::uint64_t r = rng.next();
    switch (op) {
      case Op::mul:
        return static_cast<T>(r | 1);  // odd: products never become zero
      case Op::bit_and:
        return static_cast<T>(~(r & rng.next() & rng.next() & rng.next()));
      case Op::bit_or:
        return static_cast<T>(r & rng.next() & rng.next() & rng.next());
      default:
        return static_cast<T>(r);
    }
  }
}

}  // namespace

std::vector<std::byte> random_input(DType dtype, Op op, std::size_t n, std::uint64_t seed) {
  std::vector<std::byte> bytes(n * size_of(dtype));
  visit(dtype, [&](auto tag) {
    using T = decltype(tag);
    SplitMix64 rng{seed};
    for (std::size_t i = 0; i < n; ++i) {
      const T x = draw<T>(rng, op);
      std::memcpy(bytes.data() + i * sizeof(T), &x, sizeof(T));
    }
  });
  return bytes;
}

}  // namespace gpuscan::reference
