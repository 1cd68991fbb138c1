// Batched scans (DESIGN 3f; docs/protocol.md, "Batched scans"): B rows of N elements, each
// scanned on its own in one pass. Every shape class: one row, rows shorter than a vector or
// a warp, rows of one tile and one tile +-1, rows longer than a chunk, rows on tiles of
// their own (row-aligned tiles), empty rows; every dtype, operator and kind; init per
// row; every simulated blocking rate; both tile states; chunked runs; on every backend.
// Outputs are poisoned and checked element by element against the CPU reference.
#include <cstring>
#include <string>

#include "scan_check.hpp"

namespace gpuscan::testing {
namespace {

// Scans `rows` x `row_length` random elements as a batch and checks every output element.
void expect_rows_match(Device& device, const Case& c, std::size_t rows, std::size_t row_length,
                       std::optional<Value> init = {}) {
  const std::size_t n = rows * row_length;
  const std::uint64_t seed = next_seed();
  SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(row_length) +
               " seed=" + std::to_string(seed) + " " + describe(c.spec));
  const auto input = reference::random_input(c.spec.dtype, c.spec.op, n, seed);
  const std::size_t out_n = c.spec.kind == Kind::reduce ? rows : n;
  const auto output = run_poisoned(
      device, c, input, out_n,
      [&](Scanner& s, Buffer& in, Buffer& out) { s.run_rows(in, out, rows, row_length, init); });
  if (!output) return;
  reference::visit(c.spec.dtype, [&](auto tag) {
    using T = decltype(tag);
    std::optional<T> typed_init;
    if (init) typed_init = init->as<T>();
    const std::span<const T> x(reinterpret_cast<const T*>(input.data()), n);
    const std::span<const T> y(reinterpret_cast<const T*>(output->data()), out_n);
    if (row_length == 0) {
      // Empty rows: a reduction of each is the init value; a scan writes nothing.
      const T want = typed_init.value_or(reference::identity<T>(c.spec.op));
      for (std::size_t r = 0; r < out_n; ++r) {
        ASSERT_EQ(std::memcmp(&y[r], &want, sizeof(T)), 0) << "row " << r;
      }
      return;
    }
    const auto wrong =
        reference::first_mismatch_rows<T>(c.spec.op, c.spec.kind, x, row_length, typed_init, y);
    ASSERT_FALSE(wrong.has_value())
        << "first wrong output element " << *wrong << " (row "
        << *wrong / (c.spec.kind == Kind::reduce ? 1 : row_length) << ")";
  });
}

class BatchedScan : public BackendTest<> {
 protected:
  // Elements per case: CPU drivers take seconds for what GPUs take milliseconds.
  std::size_t budget() { return is_cpu() ? std::size_t{1} << 16 : std::size_t{1} << 21; }
};

// Row lengths around every boundary of a tile (vectors of 2 or 4 elements, subgroup rows,
// tiles of 2^11 to 2^13 elements on either backend), as many rows as the budget holds.
TEST_P(BatchedScan, EveryShapeClassEveryKind) {
  for (const DType dtype : {DType::u32, DType::f32, DType::u64, DType::f64}) {
    for (const Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
      const Case c{{dtype, Op::add, kind, Algorithm::csdldf}, {}};
      for (const std::size_t row_length : {1, 3, 5, 31, 64, 127, 1000, 2047, 2048, 2049, 4095, 4096,
                                           4097, 8191, 8192, 8193, 16385, 100003}) {
        const std::size_t rows = std::max<std::size_t>(1, budget() / row_length);
        expect_rows_match(device(), c, rows, row_length);
      }
      expect_rows_match(device(), c, 1, budget() + 5);  // one row: the plain scan
    }
  }
}

// Rows of at least four tiles whose length is a whole number of 16-byte vectors take tiles
// of their own (docs/protocol.md, "Row-aligned tiles"; CUDA's tiles: 256 x 6 vectors for
// 4-byte types, 256 x 4 for 8-byte ones): a row of exactly four tiles, a part-full last
// tile of one vector or one vector short, a long row; beside each a length one element off
// (the segmented tiles). On Vulkan (lavapipe: 256 x 4 tiles; GPUs: 256 x 6 for 4-byte,
// 256 x 8 for 8-byte types) the same rows are four tiles or more, the 8-byte ones on a GPU
// only the long row. Every dtype and kind, init per row.
TEST_P(BatchedScan, RowAlignedTiles) {
  for (const DType dtype : {DType::u32, DType::i32, DType::f32, DType::u64, DType::f64}) {
    const std::size_t tile = size_of(dtype) == 4 ? 6144 : 2048;
    const std::size_t vector = 16 / size_of(dtype);
    for (const Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
      const Case c{{dtype, Op::add, kind, Algorithm::csdldf}, {}};
      for (const std::size_t row_length :
           {4 * tile, 4 * tile + vector, 5 * tile - vector, 4 * tile + 1, 17 * tile + 8 * vector}) {
        const std::size_t rows = std::max<std::size_t>(2, budget() / row_length);
        expect_rows_match(device(), c, rows, row_length, some_init(dtype));
      }
    }
  }
  const Case max_rows{{DType::i64, Op::max, Kind::inclusive, Algorithm::csdldf}, {}};
  expect_rows_match(device(), max_rows, 3, 4 * 2048 * 3);
}

// Vulkan claims row-aligned tiles round the rows (tile k of every row before tile k + 1 of
// any) for runs of a few rounds of resident workgroups, row by row otherwise
// (docs/protocol.md, "Row-aligned tiles"); both orders, forced, give the reference's
// outputs: one row, two, several; a part-full last tile; every kind, init per row; csdl
// (tiles from the counter); 4- and 8-byte types; 1 in 2 and every tile blocked. CUDA claims
// row by row and refuses the other order.
TEST_P(BatchedScan, RowAlignedTilesClaimedRoundTheRows) {
  if (backend() == Backend::cuda) {
    Options options;
    options.round_rows = true;
    EXPECT_THROW(
        make_scanner(device(), {DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, options),
        UsageError);
    return;
  }
  // The plain scan's tiles: lavapipe 256 x 4 vectors, GPUs 256 x 6 (4-byte types) and
  // 256 x 8 (8-byte types).
  const std::size_t tile4 = is_cpu() ? 4096 : 6144;
  const std::size_t tile8 = is_cpu() ? 2048 : 4096;
  for (const bool round : {true, false}) {
    Options options;
    options.round_rows = round;
    for (const Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
      const Case c{{DType::i32, Op::add, kind, Algorithm::csdldf}, options};
      for (const std::size_t rows : {1, 2, 5}) {
        expect_rows_match(device(), c, rows, 4 * tile4 + 4, Value::of(std::int32_t{-3}));
      }
      expect_rows_match(device(), c, 3, 6 * tile4);
      const Case wide{{DType::f64, Op::add, kind, Algorithm::csdldf}, options};
      expect_rows_match(device(), wide, 3, 5 * tile8 - 2, Value::of(0.5));
    }
    expect_rows_match(device(), {{DType::u32, Op::max, Kind::inclusive, Algorithm::csdl}, options},
                      4, 5 * tile4);
    for (const std::uint32_t mask : {1u, 0u}) {
      Options blocked = options;
      blocked.blocking_mask = mask;
      expect_rows_match(device(),
                        {{DType::u32, Op::add, Kind::exclusive, Algorithm::csdldf}, blocked}, 5,
                        4 * tile4 + 8);
    }
  }
}

TEST_P(BatchedScan, EveryOperatorWithInitPerRow) {
  for (const DType dtype : all_dtypes) {
    for (const Op op : ops_of(dtype)) {
      for (const Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
        const Case c{{dtype, op, kind, Algorithm::csdldf}, {}};
        expect_rows_match(device(), c, is_cpu() ? 11 : 37, 3001, some_init(dtype));
        expect_rows_match(device(), c, 3, is_cpu() ? 5001 : 20001);
      }
    }
  }
}

TEST_P(BatchedScan, EmptyRowsAndNoRows) {
  for (const Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
    const Case c{{DType::i32, Op::add, kind, Algorithm::csdldf}, {}};
    expect_rows_match(device(), c, 5, 0, Value::of(std::int32_t{-7}));
    expect_rows_match(device(), c, 0, 5);
    expect_rows_match(device(), c, 0, 0);
  }
}

// Rows that a chunk boundary cuts: each chunk continues the row the previous one left, and
// a row longer than a chunk spans several.
TEST_P(BatchedScan, ChunksCutRows) {
  for (const Kind kind : {Kind::inclusive, Kind::exclusive, Kind::reduce}) {
    for (const DType dtype : {DType::u32, DType::f64}) {
      // Tiles of 256 x 6 vectors for u32 (6144 elements; the rows CUDA's batched kernels
      // take) and 256 x 4 for f64 (2048): a chunk takes whole tiles on Vulkan, so
      // 3 x 4096 + 16 runs in chunks of 12288, 8192 in chunks of 6144 or 8192.
      Case c{{dtype, Op::add, kind, Algorithm::csdldf}, {}};
      c.options.workgroup_size = 256;
      c.options.vectors_per_thread = dtype == DType::u32 ? 6 : 4;
      c.options.chunk_elements = 3 * 4096 + 16;
      expect_rows_match(device(), c, 3, 100003, some_init(dtype));
      expect_rows_match(device(), c, 2000, 37);
      c.options.chunk_elements = 8192;
      expect_rows_match(device(), c, 3, 5000);
      // Chunks of whole rows: each run from a row's start (row-aligned tiles).
      c.options.chunk_elements = 2 * 24576;
      expect_rows_match(device(), c, 5, 24576, some_init(dtype));
    }
  }
}

TEST_P(BatchedScan, ExactUnderEveryBlockingRateInBothTileStates) {
  for (const TileState state : {TileState::split, TileState::automatic}) {
    for_each_blocking_rate([&](Options options) {
      options.tile_state = state;
      // The last: row-aligned tiles (RowAlignedTiles).
      for (const std::size_t row_length :
           {std::size_t{100}, std::size_t{8192 * 3 + 7}, std::size_t{8192 * 4}}) {
        const std::size_t rows = std::max<std::size_t>(1, budget() / 2 / row_length);
        expect_rows_match(device(),
                          {{DType::u32, Op::add, Kind::inclusive, Algorithm::csdldf}, options},
                          rows, row_length);
        expect_rows_match(device(),
                          {{DType::f32, Op::add, Kind::exclusive, Algorithm::csdldf}, options},
                          rows, row_length, Value::of(1.5f));
      }
    });
  }
}

TEST_P(BatchedScan, StatisticsAndCsdl) {
  Options options;
  options.statistics = true;
  options.blocking_mask = 1;
  expect_rows_match(device(), {{DType::u64, Op::max, Kind::inclusive, Algorithm::csdldf}, options},
                    30, 10007);
  expect_rows_match(device(), {{DType::u32, Op::add, Kind::reduce, Algorithm::csdl}, {}}, 100, 999);
  // Row-aligned tiles, every tile blocked, and with csdl.
  expect_rows_match(device(), {{DType::u32, Op::add, Kind::exclusive, Algorithm::csdldf}, options},
                    7, 4 * 6144);
  expect_rows_match(device(), {{DType::u32, Op::add, Kind::reduce, Algorithm::csdl}, {}}, 7,
                    4 * 6144);
}

TEST_P(BatchedScan, ReduceThenScanIsRefused) {
  Scanner scanner(device(), {DType::u32, Op::add, Kind::inclusive, Algorithm::rts});
  Buffer in = device().allocate(64), out = device().allocate(64);
  EXPECT_THROW(scanner.run_rows(in, out, 4, 4), UsageError);
}

GPUSCAN_INSTANTIATE_FOR_BACKENDS(BatchedScan);

TEST(BatchedReference, RowsAreScannedOnTheirOwn) {
  const std::vector<std::uint32_t> x{1, 2, 3, 4, 5, 6};
  const std::vector<std::uint32_t> good{1, 3, 6, 4, 9, 15}, bad{1, 3, 6, 10, 15, 21};
  EXPECT_FALSE(
      reference::first_mismatch_rows<std::uint32_t>(Op::add, Kind::inclusive, x, 3, {}, good));
  EXPECT_EQ(reference::first_mismatch_rows<std::uint32_t>(Op::add, Kind::inclusive, x, 3, {}, bad),
            std::optional<std::size_t>(3));
}

}  // namespace
}  // namespace gpuscan::testing
