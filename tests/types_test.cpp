// Every element type with every operator it has and every kind, against the CPU
// reference; and float sums under full blocking, where every tile's value comes from the
// owner and from fallbacks alike and must be the same bits.
#include "scan_check.hpp"

namespace gpuscan::testing {
namespace {

std::vector<Op> ops_of(DType dtype) {
  if (is_float(dtype)) return {Op::add, Op::mul, Op::min, Op::max};
  return {Op::add, Op::mul, Op::min, Op::max, Op::bit_and, Op::bit_or, Op::bit_xor};
}

// An init value that is not the identity of any operator.
Value some_init(DType dtype) {
  return reference::visit(dtype, [](auto tag) { return Value::of(static_cast<decltype(tag)>(3)); });
}

class TypeTest : public VulkanTest, public ::testing::WithParamInterface<DType> {};

TEST_P(TypeTest, EveryOperatorAndKindMatchesTheReference) {
  const DType dtype = GetParam();
  for (Op op : ops_of(dtype)) {
    for (Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
      const Case c{{dtype, op, kind, Algorithm::csdldf}, {}};
      for (std::size_t n : {std::size_t{1}, std::size_t{4097}, std::size_t{3 * 4096 + 5},
                            (std::size_t{1} << 18) + 1}) {
        expect_scan_matches(c, n);
      }
      expect_scan_matches(c, 10007, some_init(dtype));
    }
  }
}

TEST_P(TypeTest, EveryAlgorithmSumsOddSizes) {
  for (Algorithm algorithm : {Algorithm::csdldf, Algorithm::csdl, Algorithm::rts}) {
    for (std::size_t n :
         {std::size_t{0}, std::size_t{5}, std::size_t{8191}, std::size_t{1000003}}) {
      expect_scan_matches({{GetParam(), Op::add, Kind::inclusive, algorithm}, {}}, n);
      expect_scan_matches({{GetParam(), Op::add, Kind::exclusive, algorithm}, {}}, n,
                          some_init(GetParam()));
    }
  }
}

// With every tile blocked, successors reduce their predecessors themselves; the owner's
// aggregate and each fallback's must be identical bits, or the split words mix two values.
TEST_P(TypeTest, SumsStayInToleranceWithEveryTileBlocked) {
  for (std::uint32_t k = 1; k <= 9; k += 2) {  // 1 in 2, 8, 32, 128, 512 blocked
    Options some;
    some.blocking_mask = (1u << k) - 1;
    expect_scan_matches({{GetParam(), Op::add, Kind::exclusive, Algorithm::csdldf}, some},
                        40 * 4096 + 9);
  }
  Options tuning;
  tuning.blocking_mask = 0;
  tuning.tuning.max_spins = 1;
  for (std::size_t n : {std::size_t{4096 * 9 + 1}, std::size_t{1} << 20}) {
    expect_scan_matches({{GetParam(), Op::add, Kind::inclusive, Algorithm::csdldf}, tuning}, n);
  }
  // And with each tile state (lavapipe and the GPUs here have 64-bit atomics).
  for (TileState state : {TileState::split, TileState::packed}) {
    tuning.tile_state = state;
    expect_scan_matches({{GetParam(), Op::add, Kind::inclusive, Algorithm::csdldf}, tuning},
                        1 << 20);
    Options plain;
    plain.tile_state = state;
    expect_scan_matches({{GetParam(), Op::max, Kind::exclusive, Algorithm::csdl}, plain},
                        4096 * 9 + 1);
  }
}

// Scans larger than one run go in chunks, each starting from the previous chunk's carry.
// A small chunk limit forces many chunks (5000 rounds down to whole tiles of 256 threads:
// 4096 elements of 32-bit types, 2048 of 64-bit ones).
TEST_P(TypeTest, LargeScansGoInChunks) {
  for (std::size_t chunk : {std::size_t{5000}, std::size_t{3 * 4096}}) {
    Options tuning;
    tuning.workgroup_size = 256;
    tuning.chunk_elements = chunk;
    for (Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
      for (Algorithm algorithm : {Algorithm::csdldf, Algorithm::rts}) {
        const Case c{{GetParam(), Op::add, kind, algorithm}, tuning};
        expect_scan_matches(c, 10 * chunk + 123);
        expect_scan_matches(c, 2 * chunk, some_init(GetParam()));
      }
    }
    expect_scan_matches({{GetParam(), Op::max, Kind::exclusive, Algorithm::csdldf}, tuning},
                        7 * chunk + 1);
  }
  Options tiny;
  tiny.chunk_elements = 100;  // less than one tile
  EXPECT_THROW(
      make_scanner(test_device(), {GetParam(), Op::add, Kind::inclusive, Algorithm::csdldf}, tiny),
      UsageError);
}

INSTANTIATE_TEST_SUITE_P(Vulkan, TypeTest,
                         ::testing::Values(DType::u32, DType::i32, DType::f32, DType::u64,
                                           DType::i64, DType::f64),
                         [](const auto& param_info) {
                           return std::string(to_string(param_info.param));
                         });

}  // namespace
}  // namespace gpuscan::testing
