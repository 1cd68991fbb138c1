// The same seed and blocking mask give the same outputs everywhere: on every backend that
// has a device, and in every variant of one backend (split and packed tile state where the
// device has 64-bit atomics; tiles in dispatch and in counter order where the device allows
// both). Integers must be bit-identical to each other and to the CPU reference; floats each
// within DESIGN's tolerance of it (their tiles combine in a different order on each). Every
// statistics run keeps the invariants (scan_check.hpp). All runs use one tile shape, 256
// threads x 4 vectors, so that tiles and blocked tiles are the same on every backend.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "scan_check.hpp"

namespace gpuscan::testing {
namespace {

constexpr std::uint32_t kThreads = 256, kVectors = 4;

// One way of running a scan: a backend's device and the options that differ.
struct Variant {
  Backend backend;
  TileState tile_state = TileState::automatic;
  std::optional<bool> dispatch_order;
  std::string name() const {
    std::string text(to_string(backend));
    if (tile_state != TileState::automatic)
      text += tile_state == TileState::split ? " split" : " packed";
    if (dispatch_order) text += *dispatch_order ? " dispatch-order" : " counter-order";
    return text;
  }
};

// std::nullopt: every tile posts; otherwise tiles with ((tile + 1) & mask) == 0 never do.
using Blocking = std::optional<std::uint32_t>;

class SameSeedAndMask : public ::testing::TestWithParam<DType> {
 protected:
  DType dtype() const { return GetParam(); }
  Blocking blocking() const { return blocking_; }

  void SetUp() override { watch_.start(); }
  void TearDown() override { watch_.expect_silent(); }

  Options options_of(const Variant& v, bool statistics) const {
    Options o;
    o.workgroup_size = kThreads;
    o.vectors_per_thread = kVectors;
    o.tile_state = v.tile_state;
    o.dispatch_order = v.dispatch_order;
    o.blocking_mask = blocking();  // the library's wait: blocked tiles never post anyway
    o.statistics = statistics;
    return o;
  }

  // Whether the backend's device makes a scanner of the variant; why not, if not.
  std::optional<std::string> refusal(const Variant& v, Algorithm algorithm) const {
    try {
      make_scanner(*device_under_test(v.backend).device,
                   {dtype(), Op::add, Kind::inclusive, algorithm}, options_of(v, false));
      return std::nullopt;
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
  }

  // Runs every (op, kind) of the case on each variant over the same input, checks each
  // output against the reference, the integers' bytes against each other's, and the
  // statistics' invariants. The variants must all run `algorithm`.
  void expect_same_outputs(const std::vector<Variant>& variants, Algorithm algorithm) {
    const std::size_t tile = tile_elements(dtype(), kThreads, kVectors);
    const std::size_t n = 37 * tile + 123;
    const std::size_t tiles = (n + tile - 1) / tile;
    const Op other = is_float(dtype()) ? Op::max : Op::bit_xor;
    struct Step {
      Op op;
      Kind kind;
      bool init;
      bool statistics;
    };
    std::vector<Step> steps{{Op::add, Kind::inclusive, false, false},
                            {Op::add, Kind::exclusive, true, false},
                            {other, Kind::reduce, true, false}};
    if (algorithm != Algorithm::rts) steps.push_back({Op::add, Kind::inclusive, false, true});
    for (const Step& step : steps) {
      const ScanSpec spec{dtype(), step.op, step.kind, algorithm};
      const std::uint64_t seed = next_seed();
      SCOPED_TRACE(describe(spec) + (step.statistics ? " statistics" : "") +
                   " n=" + std::to_string(n) + " seed=" + std::to_string(seed));
      const auto input = reference::random_input(dtype(), step.op, n, seed);
      const std::optional<Value> init =
          step.init ? std::optional(some_init(dtype())) : std::nullopt;
      std::optional<std::vector<std::byte>> first;
      std::string first_name;
      for (const Variant& v : variants) {
        SCOPED_TRACE(v.name());
        Device& device = *device_under_test(v.backend).device;
        const auto output =
            run_scan(device, {spec, options_of(v, step.statistics)}, input, n, init);
        if (!output) continue;  // csdl gave up (noted)
        check_output(spec, input, n, init, output->bytes);
        if (step.statistics) {
          EXPECT_TRUE(output->statistics.has_value());
          expect_statistics_invariants(output->statistics.value_or(Statistics{}), algorithm, tiles);
        }
        if (is_float(dtype())) continue;  // each within tolerance of the reference
        if (!first) {
          first = output->bytes;
          first_name = v.name();
        } else if (*first != output->bytes) {
          ADD_FAILURE() << v.name() << " and " << first_name << " differ";
        }
      }
    }
  }

  std::vector<Algorithm> algorithms() const {
    // csdl cannot run with blocking (refused); rts has no tiles to block.
    if (blocking()) return {Algorithm::csdldf};
    return {Algorithm::csdldf, Algorithm::csdl, Algorithm::rts};
  }

  // Every case of the dtype: unblocked, every tile blocked, 1 in 2 and 1 in 8.
  template <class Body>
  void for_each_blocking(Body body) {
    for (Blocking blocking : {Blocking{}, Blocking{0u}, Blocking{1u}, Blocking{7u}}) {
      blocking_ = blocking;
      SCOPED_TRACE(blocking ? "blocking mask " + std::to_string(*blocking) : "unblocked");
      body();
    }
  }

 private:
  Blocking blocking_;
  ValidationWatch watch_;
};

std::string list(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : "; ") + part;
  return text;
}

// Every backend present, each with the library's choice of tile state and order.
TEST_P(SameSeedAndMask, SameOutputsOnEveryBackend) {
  std::vector<Variant> variants;
  std::vector<std::string> missing;
  for (Backend backend : built_backends()) {
    if (has_device(backend)) {
      variants.push_back({backend});
    } else {
      missing.push_back(std::string(to_string(backend)) + " (" + why_no_device(backend) + ")");
    }
  }
#ifndef GPUSCAN_HAS_CUDA
  missing.push_back("cuda (this build has no CUDA backend)");
#endif
  if (variants.size() < 2) {
    GTEST_SKIP() << "outputs not compared across backends: only "
                 << (variants.empty() ? "no backend" : std::string(to_string(variants[0].backend)))
                 << " has a device; missing: " << list(missing)
                 << ". SameOutputsAcrossVariantsOfEachBackend compares the variants within each "
                    "backend present instead (and says which it could not compare)";
  }
  for_each_blocking([&] {
    for (Algorithm algorithm : algorithms()) {
      SCOPED_TRACE(std::string(to_string(algorithm)));
      expect_same_outputs(variants, algorithm);
    }
  });
}

// Within each backend present: split vs packed tile state, and (csdldf) dispatch vs counter
// order, where the device allows them.
TEST_P(SameSeedAndMask, SameOutputsAcrossVariantsOfEachBackend) {
  std::vector<std::string> not_compared;
  const auto note = [&](const std::string& what) {
    if (std::find(not_compared.begin(), not_compared.end(), what) == not_compared.end())
      not_compared.push_back(what);
  };
  bool compared = false;
  for (Backend backend : built_backends()) {
    const std::string name(to_string(backend));
    if (!has_device(backend)) {
      note(name + ": " + why_no_device(backend));
      continue;
    }
    for_each_blocking([&] {
      for (Algorithm algorithm : algorithms()) {
        if (algorithm == Algorithm::rts) continue;  // no tile states, no look-back
        SCOPED_TRACE(name + " " + std::string(to_string(algorithm)));
        std::vector<Variant> variants;
        for (TileState state : {TileState::split, TileState::packed}) {
          const Variant v{backend, state, std::nullopt};
          if (const auto why = refusal(v, algorithm)) {
            note(name + " " + v.name() + " " + std::string(to_string(algorithm)) + ": " + *why);
          } else {
            variants.push_back(v);
          }
        }
        if (algorithm == Algorithm::csdldf) {
          // Both orders or neither: one alone is the library's choice, run above already.
          const Variant counter{backend, TileState::automatic, false};
          const Variant dispatch{backend, TileState::automatic, true};
          const auto why = refusal(dispatch, algorithm);
          const auto why_counter = refusal(counter, algorithm);
          if (why || why_counter) {
            note(name + " dispatch vs counter order: " + why.value_or(*why_counter));
          } else {
            variants.push_back(counter);
            variants.push_back(dispatch);
          }
        }
        if (variants.size() < 2) continue;
        compared = true;
        expect_same_outputs(variants, algorithm);
      }
    });
  }
  if (!not_compared.empty()) {
    const std::string text = "not compared: " + list(not_compared);
    std::printf("note: %s\n", text.c_str());
    RecordProperty("not_compared", text);
  }
  if (!compared)
    GTEST_SKIP() << "no backend present has two variants to compare; " << list(not_compared);
}

INSTANTIATE_TEST_SUITE_P(CrossBackend, SameSeedAndMask, ::testing::ValuesIn(all_dtypes),
                         [](const auto& p) { return param_name(p.param); });

}  // namespace
}  // namespace gpuscan::testing
