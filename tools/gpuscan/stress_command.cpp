#include "stress_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "core/reference.hpp"
#include "gpuscan/testing.hpp"

namespace gpuscan::cli {
namespace {

using testing::Options;
using testing::TileState;

struct StressCase {
  ScanSpec spec;
  Options options;
  std::size_t n = 0;
  std::optional<Value> init;
  std::uint64_t input_seed = 0;
};

std::string describe(const StressCase& c) {
  std::string text =
      fmt::format("{} {} {} {} n={} input-seed={}", to_string(c.spec.dtype), to_string(c.spec.op),
                  to_string(c.spec.kind), to_string(c.spec.algorithm), c.n, c.input_seed);
  if (c.init) text += fmt::format(" init-bits={:#x}", c.init->bits);
  if (c.options.blocking_mask) text += fmt::format(" blocking-mask={}", *c.options.blocking_mask);
  text += fmt::format(" max-spins={}", c.options.tuning.max_spins);
  if (c.options.tile_state != TileState::automatic)
    text += c.options.tile_state == TileState::split ? " tile-state=split" : " tile-state=packed";
  if (c.options.chunk_elements) text += fmt::format(" chunk={}", c.options.chunk_elements);
  return text;
}

// One random case. Sizes are log-uniform up to `largest`, with a share of the sizes where
// tiles and chunks begin and end; chunked runs cross chunk boundaries as a scan of more
// than one buffer binding would.
StressCase draw_case(std::mt19937_64& rng, std::size_t largest) {
  const auto pick = [&](std::size_t count) {
    return static_cast<std::size_t>(std::uniform_int_distribution<std::size_t>(0, count - 1)(rng));
  };
  const auto chance = [&](double p) {
    return std::uniform_real_distribution<double>(0, 1)(rng) < p;
  };
  constexpr DType dtypes[] = {DType::u32, DType::i32, DType::f32,
                              DType::u64, DType::i64, DType::f64};
  constexpr Op float_ops[] = {Op::add, Op::mul, Op::min, Op::max};
  constexpr Op integer_ops[] = {Op::add,     Op::mul,    Op::min,    Op::max,
                                Op::bit_and, Op::bit_or, Op::bit_xor};
  constexpr Kind kinds[] = {Kind::inclusive, Kind::exclusive, Kind::reduce};
  constexpr Algorithm algorithms[] = {Algorithm::csdldf, Algorithm::csdl, Algorithm::rts};

  StressCase c;
  c.spec.dtype = dtypes[pick(6)];
  c.spec.op = is_float(c.spec.dtype) ? float_ops[pick(4)] : integer_ops[pick(7)];
  c.spec.kind = kinds[pick(3)];
  c.spec.algorithm = algorithms[pick(3)];
  const double log2_n = std::uniform_real_distribution<double>(0, std::log2(double(largest)))(rng);
  c.n = chance(0.05) ? pick(6) : static_cast<std::size_t>(std::exp2(log2_n));
  if (chance(0.2)) c.n = (std::size_t{1} << pick(21)) + pick(3) - 1;  // around a power of two
  c.input_seed = rng();
  if (chance(0.5)) {
    // A random element of the dtype, drawn the way inputs are.
    const auto bytes = reference::random_input(c.spec.dtype, c.spec.op, 1, rng());
    Value v{c.spec.dtype, 0};
    std::memcpy(&v.bits, bytes.data(), bytes.size());
    c.init = v;
  }
  c.options.tuning.max_spins =
      chance(0.5) ? 4 : static_cast<std::uint32_t>(1 + pick(chance(0.1) ? 100000 : 16));
  if (c.spec.algorithm == Algorithm::csdldf && chance(0.4)) {
    c.options.blocking_mask = (1u << pick(10)) - 1;  // 1 in 1, 2, ..., 512 tiles blocked
  }
  if (c.spec.algorithm != Algorithm::rts && chance(0.4)) {
    c.options.tile_state = chance(0.5) ? TileState::split : TileState::packed;
  }
  if (chance(0.2)) c.options.chunk_elements = 8192 + pick(1 << 18);
  return c;
}

enum class Outcome { matched, wrong, refused, gave_up };

Outcome run_case(Device& device, const StressCase& c, std::string& detail) {
  std::optional<Scanner> scanner;
  try {
    scanner.emplace(testing::make_scanner(device, c.spec, c.options));
  } catch (const UsageError& e) {
    detail = e.what();  // a combination this device does not take (say, packed tile state)
    return Outcome::refused;
  }
  const std::size_t element = size_of(c.spec.dtype);
  const std::size_t out_n = c.spec.kind == Kind::reduce ? 1 : c.n;
  const auto input = reference::random_input(c.spec.dtype, c.spec.op, c.n, c.input_seed);
  std::vector<std::byte> output(out_n * element, std::byte{0xA5});  // poison
  Buffer in = device.allocate(std::max<std::size_t>(input.size(), element));
  Buffer out = device.allocate(std::max<std::size_t>(output.size(), element));
  device.upload(in, input);
  device.upload(out, output);
  try {
    scanner->run(in, out, c.n, c.init);
  } catch (const ForwardProgressError& e) {
    detail = e.what();  // csdl without forward progress: its documented outcome
    return Outcome::gave_up;
  }
  device.download(out, output);
  return reference::visit(c.spec.dtype, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> x(c.n), y(out_n);
    if (c.n) std::memcpy(x.data(), input.data(), input.size());
    if (out_n) std::memcpy(y.data(), output.data(), output.size());
    std::optional<T> init;
    if (c.init) init = c.init->as<T>();
    const auto wrong = reference::first_mismatch<T>(c.spec.op, c.spec.kind, x, init, y);
    if (!wrong) return Outcome::matched;
    const auto expected = reference::scan<T>(c.spec.kind, c.spec.op, std::span<const T>(x), init);
    detail = fmt::format("element {}: got {}, expected {}", *wrong, +y[*wrong], +expected[*wrong]);
    return Outcome::wrong;
  });
}

}  // namespace

int run_stress(const StressOptions& options) {
  if (!(options.seconds > 0)) throw UsageError("--seconds must be more than 0");
  const std::uint64_t seed =
      options.seed
          ? options.seed
          : static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  Device device = Device::open(options.backend, options.device);
  const DeviceInfo& info = device.info();
  // A few tiles to a few chunks on a CPU driver; more on GPUs.
  const std::size_t largest = info.is_cpu() ? std::size_t{1} << 20 : std::size_t{1} << 24;
  std::fprintf(stderr, "stress: %s (%s), %.0f s, --seed %llu\n", info.name.c_str(),
               std::string(to_string(info.backend)).c_str(), options.seconds,
               static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const auto end =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(options.seconds);
  std::size_t cases = 0, matched = 0, wrong = 0, refused = 0, gave_up = 0;
  while (std::chrono::steady_clock::now() < end) {
    const StressCase c = draw_case(rng, largest);
    std::string detail;
    ++cases;
    switch (run_case(device, c, detail)) {
      case Outcome::matched:
        ++matched;
        break;
      case Outcome::refused:
        ++refused;
        break;
      case Outcome::gave_up:
        ++gave_up;
        break;
      case Outcome::wrong:
        ++wrong;
        std::fprintf(stderr, "stress: WRONG: case %zu: %s: %s\n", cases, describe(c).c_str(),
                     detail.c_str());
        break;
    }
  }
  std::printf(
      "stress: %zu cases on %s: %zu matched the reference, %zu wrong, %zu refused by the device, "
      "%zu csdl runs gave up (no forward progress); --seed %llu\n",
      cases, info.name.c_str(), matched, wrong, refused, gave_up,
      static_cast<unsigned long long>(seed));
  if (wrong > 0) {
    std::fprintf(stderr, "gpuscan: error: %zu of %zu stress cases gave wrong output\n", wrong,
                 cases);
    return 1;
  }
  return 0;
}

}  // namespace gpuscan::cli
