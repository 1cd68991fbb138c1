// Segmented scans (DESIGN 3f; docs/protocol.md, "Segmented scans"): CSR-style offsets, S + 1
// values from 0 to n, each segment scanned on its own in one pass. Segments of every length
// class (empty, shorter than a vector, around a tile, longer than a chunk), empty segments
// first, last and in runs; every dtype, operator and kind; init per segment; every simulated
// blocking rate; chunked runs. Outputs are poisoned and checked element by element against
// the CPU reference.
#include <cstring>
#include <random>
#include <string>

#include "scan_check.hpp"

namespace gpuscan::testing {
namespace {

// Offsets of segments whose lengths are drawn from `lengths` at random (seeded), until
// about `budget` elements.
std::vector<std::int64_t> random_offsets(std::uint64_t seed, std::size_t budget,
                                         const std::vector<std::size_t>& lengths) {
  std::mt19937_64 random(seed);
  std::vector<std::int64_t> offsets{0};
  while (static_cast<std::size_t>(offsets.back()) < budget) {
    const std::size_t length = lengths[random() % lengths.size()];
    offsets.push_back(offsets.back() + static_cast<std::int64_t>(length));
  }
  return offsets;
}

// Scans random elements segmented by `offsets` and checks every output element.
void expect_segments_match(Device& device, const Case& c, const std::vector<std::int64_t>& offsets,
                           std::optional<Value> init = {}) {
  const auto n = static_cast<std::size_t>(offsets.back());
  const std::size_t segments = offsets.size() - 1;
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE(std::to_string(segments) + " segments of " + std::to_string(n) +
               " elements, seed=" + std::to_string(seed) + " " + describe(c.spec));
  const auto input = reference::random_input(c.spec.dtype, c.spec.op, n, seed);
  const std::size_t out_n = c.spec.kind == Kind::reduce ? segments : n;
  const auto output = run_poisoned(
      device, c, input, out_n,
      [&](Scanner& s, Buffer& in, Buffer& out) { s.run_segments(in, out, offsets, init); });
  if (!output) return;
  reference::visit(c.spec.dtype, [&](auto tag) {
    using T = decltype(tag);
    std::optional<T> typed_init;
    if (init) typed_init = init->as<T>();
    const std::span<const T> x(reinterpret_cast<const T*>(input.data()), n);
    const std::span<const T> y(reinterpret_cast<const T*>(output->data()), out_n);
    const auto wrong =
        reference::first_mismatch_segments<T>(c.spec.op, c.spec.kind, x, offsets, typed_init, y);
    ASSERT_FALSE(wrong.has_value()) << "first wrong output element " << *wrong;
  });
}

class SegmentedScan : public BackendTest<> {
 protected:
  // Elements per case: CPU drivers take seconds for what GPUs take milliseconds.
  std::size_t budget() { return is_cpu() ? std::size_t{1} << 16 : std::size_t{1} << 21; }
};

// Lengths around every boundary of a vector, a subgroup and a tile (2^11 to 2^13 elements on
// either backend), empty segments among them.
const std::vector<std::size_t> every_length_class{0,    0,    1,    2,    3,    5,    31,
                                                  33,   64,   127,  1000, 2047, 2048, 2049,
                                                  4095, 4096, 4097, 8191, 8192, 8193, 16385};

TEST_P(SegmentedScan, EveryLengthClassEveryKind) {
  for (const DType dtype : {DType::u32, DType::f32, DType::u64, DType::f64}) {
    for (const Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
      const Case c{{dtype, Op::add, kind, Algorithm::csdldf}, {}};
      expect_segments_match(device(), c, random_offsets(next_seed(), budget(), every_length_class));
      // Short segments only: many starts in every tile.
      expect_segments_match(device(), c, random_offsets(next_seed(), budget() / 4, {0, 1, 2, 7}));
    }
  }
}

// Every dtype and operator, the kinds taken in turn: where segments start does not depend
// on the operator, and each pipeline costs a CPU driver a second or two to compile.
TEST_P(SegmentedScan, EveryOperatorWithInitPerSegment) {
  const Kind kinds[] = {Kind::inclusive, Kind::exclusive, Kind::reduce};
  std::size_t turn = 0;
  for (const DType dtype : all_dtypes) {
    for (const Op op : ops_of(dtype)) {
      const Case c{{dtype, op, kinds[turn++ % 3], Algorithm::csdldf}, {}};
      expect_segments_match(device(), c,
                            random_offsets(next_seed(), budget() / 2, {0, 3, 100, 3001, 5000}),
                            some_init(dtype));
    }
  }
}

// Empty segments first, last, everywhere; no segments; one segment; no elements.
TEST_P(SegmentedScan, EmptySegmentsAndEdges) {
  for (const Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
    const Case c{{DType::i32, Op::add, kind, Algorithm::csdldf}, {}};
    const Value init = Value::of(std::int32_t{-7});
    expect_segments_match(device(), c, {0, 0, 0, 5, 5, 9000, 9000, 9000}, init);
    expect_segments_match(device(), c, {0, 0, 0, 0}, init);  // segments of nothing
    expect_segments_match(device(), c, {0});                 // no segments at all
    expect_segments_match(device(), c, {0, 100003});         // one segment
    expect_segments_match(device(), c, {0, 1, 2, 3, 4, 5, 6, 7, 8});
    std::vector<std::int64_t> every_other{0};  // an empty segment after each element
    for (int i = 0; i < 3000; ++i) every_other.push_back(every_other.back() + (i % 2));
    expect_segments_match(device(), c, every_other, init);
  }
}

// Segments that a chunk boundary cuts, and segments that start or end at one.
TEST_P(SegmentedScan, ChunksCutSegments) {
  for (const Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
    for (const DType dtype : {DType::u32, DType::f64}) {
      // Tiles of 256 x 6 vectors for u32 (the rows CUDA's segmented kernels take), 256 x 4
      // for f64: a chunk takes whole tiles on Vulkan (3 x 4096 + 16 runs in chunks of 12288).
      Case c{{dtype, Op::add, kind, Algorithm::csdldf}, {}};
      c.options.workgroup_size = 256;
      c.options.vectors_per_thread = dtype == DType::u32 ? 6 : 4;
      c.options.chunk_elements = 3 * 4096 + 16;
      expect_segments_match(device(), c, {0, 5, 5, 12288, 12288, 12289, 30000, 60000, 60001},
                            some_init(dtype));
      expect_segments_match(device(), c, random_offsets(next_seed(), 40000, {0, 37, 5000}));
      expect_segments_match(device(), c, {0, 0, 100003, 100003});
    }
  }
}

TEST_P(SegmentedScan, ExactUnderEveryBlockingRateInBothTileStates) {
  for (const TileState state : {TileState::split, TileState::automatic}) {
    for_each_blocking_rate([&](Options options) {
      options.tile_state = state;
      const auto offsets = random_offsets(next_seed(), budget() / 2, {0, 1, 100, 3000, 9000});
      expect_segments_match(
          device(), {{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, options}, offsets);
      expect_segments_match(device(),
                            {{DType::f32, Op::add, Kind::exclusive, Algorithm::csdldf}, options},
                            offsets, Value::of(1.5f));
      expect_segments_match(device(),
                            {{DType::f64, Op::add, Kind::reduce, Algorithm::csdldf}, options},
                            offsets, Value::of(0.25));
    });
  }
}

TEST_P(SegmentedScan, StatisticsAndCsdl) {
  Options options;
  options.statistics = true;
  options.blocking_mask = 1;
  expect_segments_match(device(),
                        {{DType::u64, Op::max, Kind::inclusive, Algorithm::csdldf}, options},
                        random_offsets(next_seed(), 100000, {0, 10007, 20000}));
  expect_segments_match(device(), {{DType::u32, Op::add, Kind::reduce, Algorithm::csdl}, {}},
                        random_offsets(next_seed(), 100000, {0, 999}));
}

TEST_P(SegmentedScan, BadOffsetsAreRefused) {
  Scanner scanner(device(), {DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf});
  Buffer in = device().allocate(64), out = device().allocate(64);
  const std::vector<std::int64_t> none, late{1, 4}, falling{0, 8, 4, 16}, negative{0, -1, 4},
      too_many{0, 17};
  for (const auto* offsets : {&none, &late, &falling, &negative, &too_many}) {
    EXPECT_THROW(scanner.run_segments(in, out, *offsets), UsageError);
  }
  Scanner rts(device(), {DType::u32, Op::add, Kind::inclusive, Algorithm::rts});
  const std::vector<std::int64_t> good{0, 4, 16};
  EXPECT_THROW(rts.run_segments(in, out, good), UsageError);
}

GPUSCAN_INSTANTIATE_FOR_BACKENDS(SegmentedScan);

TEST(SegmentedReference, SegmentsAreScannedOnTheirOwn) {
  const std::vector<std::uint32_t> x{1, 2, 3, 4, 5, 6};
  const std::vector<std::int64_t> offsets{0, 2, 2, 6};
  const std::vector<std::uint32_t> good{1, 3, 3, 7, 12, 18}, bad{1, 3, 6, 10, 15, 21};
  const std::vector<std::uint32_t> totals{3, 0, 18}, wrong_totals{3, 3, 18};
  EXPECT_FALSE(reference::first_mismatch_segments<std::uint32_t>(Op::add, Kind::inclusive, x,
                                                                 offsets, {}, good));
  EXPECT_EQ(reference::first_mismatch_segments<std::uint32_t>(Op::add, Kind::inclusive, x, offsets,
                                                              {}, bad),
            std::optional<std::size_t>(2));
  EXPECT_FALSE(reference::first_mismatch_segments<std::uint32_t>(Op::add, Kind::reduce, x, offsets,
                                                                 {}, totals));
  EXPECT_EQ(reference::first_mismatch_segments<std::uint32_t>(Op::add, Kind::reduce, x, offsets, {},
                                                              wrong_totals),
            std::optional<std::size_t>(1));
}

}  // namespace
}  // namespace gpuscan::testing
