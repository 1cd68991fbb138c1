// The compaction family on every backend of the build (DESIGN 3e, issue 25): select-if with every
// built-in predicate, select-flagged with every integer flags type, unique, partition (by
// predicate and by flags), run-length encoding (runs shorter and far longer than a tile); every
// dtype, odd sizes, all and none kept, one run and every element its own run, every blocking rate
// in both tile states, statistics, csdl, logical subgroups of 4, repeated runs, compaction in
// chunks, outputs beyond one binding (Vulkan), the refusals, and select and unique in place. Inputs
// are random (seed printed), outputs poisoned before each run and checked whole: the kept elements,
// the count, and that nothing past the count was written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/reference.hpp"
#include "gpuscan/compaction_bench.hpp"
#include "gpuscan/compactor.hpp"
#include "gpuscan/error.hpp"
#include "gpuscan/testing.hpp"
#include "seed.hpp"
#include "test_support.hpp"

namespace gpuscan::testing {
namespace {

constexpr std::byte poison{0xA5};
const std::vector<DType> all_dtypes{DType::u32, DType::i32, DType::f32,
                                    DType::u64, DType::i64, DType::f64};
const std::vector<DType> integer_dtypes{DType::u32, DType::i32, DType::u64, DType::i64};
const std::vector<Predicate> all_predicates{Predicate::lt, Predicate::le, Predicate::gt,
                                            Predicate::ge, Predicate::eq, Predicate::ne};

// One element of any dtype, as a double for comparisons (exact for the small values the
// tests draw) and as its bits for storage.
double value_at(DType dtype, const std::vector<std::byte>& data, std::size_t i) {
  return reference::visit(dtype, [&](auto tag) {
    using T = decltype(tag);
    T x;
    std::memcpy(&x, data.data() + i * sizeof(T), sizeof(T));
    return static_cast<double>(x);
  });
}
void set_value(DType dtype, std::vector<std::byte>& data, std::size_t i, double x) {
  reference::visit(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T v = static_cast<T>(x);
    std::memcpy(data.data() + i * sizeof(T), &v, sizeof(T));
  });
}
bool elements_equal(DType dtype, const std::vector<std::byte>& data, std::size_t i, std::size_t j) {
  return reference::visit(dtype, [&](auto tag) {
    using T = decltype(tag);
    T a, b;
    std::memcpy(&a, data.data() + i * sizeof(T), sizeof(T));
    std::memcpy(&b, data.data() + j * sizeof(T), sizeof(T));
    return a == b;
  });
}

bool satisfies(Predicate p, double x, double c) {
  switch (p) {
    case Predicate::lt:
      return x < c;
    case Predicate::le:
      return x <= c;
    case Predicate::gt:
      return x > c;
    case Predicate::ge:
      return x >= c;
    case Predicate::eq:
      return x == c;
    case Predicate::ne:
      return x != c;
  }
  return false;
}

// Whether a spec writes the rejected elements to a second output, and whether it reads flags.
bool is_partition(const CompactSpec& spec) {
  return spec.compaction == Compaction::partition ||
         spec.compaction == Compaction::partition_flagged;
}
bool takes_flags(const CompactSpec& spec) {
  return spec.compaction == Compaction::select_flagged ||
         spec.compaction == Compaction::partition_flagged;
}

// The CPU reference: the indices of the kept elements, in order (partition: the selected
// ones; partition's rejected are the others, in order).
std::vector<std::size_t> kept_indices(const CompactSpec& spec, const std::vector<std::byte>& in,
                                      std::size_t n, double constant,
                                      const std::vector<std::byte>& flags) {
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < n; ++i) {
    bool keep = false;
    switch (spec.compaction) {
      case Compaction::select_if:
      case Compaction::partition:
        keep = satisfies(spec.predicate, value_at(spec.dtype, in, i), constant);
        break;
      case Compaction::select_flagged:
      case Compaction::partition_flagged: {
        const std::size_t width = size_of(spec.flags_dtype);
        for (std::size_t b = 0; b < width; ++b) keep = keep || flags[i * width + b] != std::byte{0};
        break;
      }
      case Compaction::unique:
      case Compaction::run_length_encode:
        keep = i == 0 || !elements_equal(spec.dtype, in, i, i - 1);
        break;
    }
    if (keep) kept.push_back(i);
  }
  return kept;
}

// Small random values (so that comparisons and runs are exact in every dtype), signed where
// the dtype is. For unique, runs of lengths uniform in [1, 2 * mean_run - 1].
std::vector<std::byte> random_values(DType dtype, std::size_t n, std::mt19937_64& rng,
                                     std::size_t mean_run = 1) {
  std::vector<std::byte> data(n * size_of(dtype));
  const bool is_signed = dtype == DType::i32 || dtype == DType::i64 || is_float(dtype);
  std::uniform_int_distribution<int> value(is_signed ? -500 : 0, 500);
  std::uniform_int_distribution<std::size_t> run(1, 2 * mean_run - 1);
  double x = value(rng);
  for (std::size_t i = 0; i < n;) {
    const std::size_t length = run(rng);
    for (std::size_t j = 0; j < length && i < n; ++j, ++i) set_value(dtype, data, i, x);
    const double next = value(rng);
    x = next == x ? next + 1 : next;
  }
  return data;
}

// Flags of `dtype`: zero about half the time (`percent` of them nonzero), else a value with one
// random byte set (for 64-bit flags often only in the high word).
std::vector<std::byte> random_flags(DType dtype, std::size_t n, std::mt19937_64& rng,
                                    unsigned percent = 50) {
  const std::size_t width = size_of(dtype);
  std::vector<std::byte> flags(n * width, std::byte{0});
  std::uniform_int_distribution<std::size_t> byte(0, width - 1);
  for (std::size_t i = 0; i < n; ++i) {
    if (rng() % 100 < percent)
      flags[i * width + byte(rng)] = std::byte{static_cast<unsigned char>(1 + rng() % 255)};
  }
  return flags;
}

// select-if's and partition's constant as a Value of the spec's dtype (else none).
std::optional<Value> predicate_value(const CompactSpec& spec, double constant) {
  if (spec.compaction != Compaction::select_if && spec.compaction != Compaction::partition) {
    return std::nullopt;
  }
  std::vector<std::byte> bits(size_of(spec.dtype));
  set_value(spec.dtype, bits, 0, constant);
  Value v{spec.dtype, 0};
  std::memcpy(&v.bits, bits.data(), bits.size());
  return v;
}

// select-flagged's and partition-flagged's flags in a buffer of their own (else none).
std::optional<Buffer> flags_on_device(Device& device, const CompactSpec& spec,
                                      const std::vector<std::byte>& flags, std::size_t n) {
  if (!takes_flags(spec)) return std::nullopt;
  Buffer buffer = device.allocate(std::max<std::size_t>(flags.size(), 1));
  if (n) device.upload(buffer, flags);
  return buffer;
}

// Checks a compaction's count and its kept elements at the start of `result`.
void expect_kept_at_start(const CompactSpec& spec, const std::vector<std::byte>& in,
                          const std::vector<std::size_t>& kept, std::uint64_t kept_count,
                          const std::vector<std::byte>& result, const char* what) {
  const std::size_t element = size_of(spec.dtype);
  const std::size_t n = in.size() / element;
  ASSERT_EQ(kept_count, kept.size()) << what << "count, n = " << n;
  for (std::size_t j = 0; j < kept.size(); ++j) {
    ASSERT_EQ(std::memcmp(result.data() + j * element, in.data() + kept[j] * element, element), 0)
        << what << "kept element " << j << " (input index " << kept[j] << ") of " << kept.size()
        << ", n = " << n;
  }
}

// A run's output as downloaded, and the CPU reference's kept indices.
struct Downloaded {
  std::vector<std::byte> result;
  std::vector<std::size_t> kept;
};

// Downloads a run's count and output and checks the count and the kept elements at the
// start of the output (`what` begins each message).
Downloaded download_and_check_kept(Device& device, const CompactSpec& spec,
                                   const std::vector<std::byte>& in, double constant,
                                   const std::vector<std::byte>& flags, const Buffer& count,
                                   const Buffer& out, const char* what) {
  const std::size_t element = size_of(spec.dtype);
  const std::size_t n = in.size() / element;
  std::uint64_t kept_count = 0;
  device.download(count, std::as_writable_bytes(std::span(&kept_count, 1)));
  Downloaded d{std::vector<std::byte>(std::max<std::size_t>(in.size(), 1)),
               kept_indices(spec, in, n, constant, flags)};
  device.download(out, d.result);
  expect_kept_at_start(spec, in, d.kept, kept_count, d.result, what);
  return d;
}

// Runs one compaction on poisoned buffers and checks everything it wrote.
void expect_compaction_matches(Device& device, const CompactSpec& spec, const Options& options,
                               const std::vector<std::byte>& in, double constant,
                               const std::vector<std::byte>& flags = {},
                               Compactor* reuse = nullptr) {
  const std::size_t element = size_of(spec.dtype);
  const std::size_t n = in.size() / element;
  std::optional<Compactor> own;
  if (!reuse) own.emplace(make_compactor(device, spec, options));
  Compactor& compactor = reuse ? *reuse : *own;
  Buffer in_buffer = device.allocate(std::max<std::size_t>(in.size(), 1));
  Buffer out = device.allocate(std::max<std::size_t>(in.size(), 1));
  Buffer count = device.allocate(8);
  if (n) device.upload(in_buffer, in);
  std::vector<std::byte> poisoned(std::max<std::size_t>(in.size(), 1), poison);
  device.upload(out, poisoned);
  const std::uint64_t count_poison = 0xA5A5A5A5A5A5A5A5ull;
  device.upload(count, std::as_bytes(std::span(&count_poison, 1)));
  const std::optional<Buffer> flags_buffer = flags_on_device(device, spec, flags, n);
  const bool partition = is_partition(spec);
  Buffer rejected = device.allocate(std::max<std::size_t>(in.size(), 1));
  device.upload(rejected, poisoned);
  const bool rle = spec.compaction == Compaction::run_length_encode;
  const std::vector<std::byte> poisoned_lengths(std::max<std::size_t>(n * 8, 1), poison);
  Buffer lengths = device.allocate(poisoned_lengths.size());
  device.upload(lengths, poisoned_lengths);
  const std::optional<Value> value = predicate_value(spec, constant);
  const bool completed = run_accepting_csdl_give_up(spec.algorithm, [&] {
    if (partition && flags_buffer) {
      compactor.run_partition(in_buffer, out, rejected, count, n, *flags_buffer);
    } else if (partition) {
      compactor.run_partition(in_buffer, out, rejected, count, n, *value);
    } else if (rle) {
      compactor.run_length_encode(in_buffer, out, lengths, count, n);
    } else {
      compactor.run(in_buffer, out, count, n, value, flags_buffer ? &*flags_buffer : nullptr);
    }
  });
  if (!completed) return;
  const auto [result, kept] =
      download_and_check_kept(device, spec, in, constant, flags, count, out, "");
  if (::testing::Test::HasFatalFailure()) return;
  for (std::size_t b = kept.size() * element; b < in.size(); ++b) {
    ASSERT_EQ(result[b], poison) << "byte " << b << " past the count was written, n = " << n;
  }
  // Partition's rejected output: the others, in order; nothing past n - count written. Any
  // other operation must not have touched it.
  std::vector<std::byte> others(std::max<std::size_t>(in.size(), 1));
  device.download(rejected, others);
  std::size_t j = 0;
  for (std::size_t i = 0, next_kept = 0; partition && i < n; ++i) {
    if (next_kept < kept.size() && kept[next_kept] == i) {
      ++next_kept;
      continue;
    }
    ASSERT_EQ(std::memcmp(others.data() + j * element, in.data() + i * element, element), 0)
        << "rejected element " << j << " (input index " << i << "), n = " << n;
    ++j;
  }
  for (std::size_t b = j * element; b < in.size(); ++b) {
    ASSERT_EQ(others[b], poison) << "rejected byte " << b << " written, n = " << n;
  }
  // Run-length encoding's lengths: run r ends where run r + 1 starts (the last at n); nothing
  // past the count written. Any other operation must not have touched them.
  std::vector<std::byte> length_bytes(poisoned_lengths.size());
  device.download(lengths, length_bytes);
  const std::size_t runs = rle ? kept.size() : 0;
  for (std::size_t r = 0; r < runs; ++r) {
    std::uint64_t length = 0;
    std::memcpy(&length, length_bytes.data() + r * 8, 8);
    ASSERT_EQ(length, (r + 1 < runs ? kept[r + 1] : n) - kept[r])
        << "length of run " << r << " (from input index " << kept[r] << ") of " << runs
        << ", n = " << n;
  }
  for (std::size_t b = runs * 8; b < n * 8; ++b) {
    ASSERT_EQ(length_bytes[b], poison) << "length byte " << b << " written, n = " << n;
  }
}

// Runs `compactor` in place (out over in) on `in` and checks the buffer whole: the kept
// elements at its start, the count, and everything past the count still the input (nothing
// else is written). With `compare_out_of_place`, also runs the same Compactor out of place on
// the same input and compares the two outputs.
void expect_in_place_matches(Device& device, Compactor& compactor, const std::vector<std::byte>& in,
                             double constant, const std::vector<std::byte>& flags = {},
                             bool compare_out_of_place = false) {
  const CompactSpec& spec = compactor.spec();
  const std::size_t element = size_of(spec.dtype);
  const std::size_t n = in.size() / element;
  Buffer data = device.allocate(std::max<std::size_t>(in.size(), 1));
  Buffer count = device.allocate(8);
  if (n) device.upload(data, in);
  const std::uint64_t count_poison = 0xA5A5A5A5A5A5A5A5ull;
  device.upload(count, std::as_bytes(std::span(&count_poison, 1)));
  const std::optional<Buffer> flags_buffer = flags_on_device(device, spec, flags, n);
  const std::optional<Value> value = predicate_value(spec, constant);
  const Buffer* flags_pointer = flags_buffer ? &*flags_buffer : nullptr;
  // A csdl run that gave up has scattered over its input: each try starts from the input.
  const bool completed = run_accepting_csdl_give_up(spec.algorithm, [&] {
    if (n) device.upload(data, in);
    compactor.run(data, data, count, n, value, flags_pointer);
  });
  if (!completed) return;
  const auto [result, kept] =
      download_and_check_kept(device, spec, in, constant, flags, count, data, "in place: ");
  if (::testing::Test::HasFatalFailure()) return;
  for (std::size_t b = kept.size() * element; b < in.size(); ++b) {
    ASSERT_EQ(result[b], in[b]) << "in place: byte " << b
                                << " past the count was written, n = " << n;
  }
  if (!compare_out_of_place || n == 0) return;
  Buffer fresh = device.allocate(in.size());
  Buffer out = device.allocate(in.size());
  device.upload(fresh, in);
  device.upload(out, std::vector<std::byte>(in.size(), poison));
  compactor.run(fresh, out, count, n, value, flags_pointer);
  std::vector<std::byte> out_of_place(in.size());
  device.download(out, out_of_place);
  ASSERT_EQ(std::memcmp(out_of_place.data(), result.data(), kept.size() * element), 0)
      << "in place and out of place differ, n = " << n;
}

class Compaction_ : public BackendTest<> {
 protected:
  std::mt19937_64 rng{next_seed()};
  // Half the elements or so pass `lt` against the input's median-ish value 0 (signed) or
  // 250 (unsigned).
  double middle(DType dtype) const { return dtype == DType::u32 || dtype == DType::u64 ? 250 : 0; }
  Options options() const {
    Options o;
    o.subgroup_size = test_subgroup_size(backend());
    o.tile_state = test_tile_state();
    return o;
  }
  // Every operation once with `o` on random data of n elements (8-byte types n / 2): 4- and
  // 8-byte elements, flags, runs of mean length 8.
  void expect_every_operation_matches(const Options& o, std::size_t n) {
    expect_compaction_matches(device(), {Compaction::select_if, DType::u32, Predicate::lt}, o,
                              random_values(DType::u32, n, rng), 250);
    expect_compaction_matches(device(), {Compaction::partition, DType::f32, Predicate::ge}, o,
                              random_values(DType::f32, n, rng), 0);
    expect_compaction_matches(device(), {Compaction::unique, DType::i32}, o,
                              random_values(DType::i32, n, rng, 8), 0);
    expect_compaction_matches(device(), {Compaction::unique, DType::u64}, o,
                              random_values(DType::u64, n / 2, rng, 8), 0);
    expect_compaction_matches(device(), {Compaction::run_length_encode, DType::u32}, o,
                              random_values(DType::u32, n, rng, 8), 0);
    expect_compaction_matches(device(), {Compaction::run_length_encode, DType::u64}, o,
                              random_values(DType::u64, n / 2, rng, 8), 0);
    expect_compaction_matches(
        device(), {Compaction::select_flagged, DType::u32, Predicate::lt, DType::u32}, o,
        random_values(DType::u32, n, rng), 0, random_flags(DType::u32, n, rng));
    expect_compaction_matches(
        device(), {Compaction::partition_flagged, DType::i32, Predicate::lt, DType::u32}, o,
        random_values(DType::i32, n, rng), 0, random_flags(DType::u32, n, rng));
    expect_compaction_matches(
        device(), {Compaction::partition_flagged, DType::i64, Predicate::lt, DType::u32}, o,
        random_values(DType::i64, n / 2, rng), 0, random_flags(DType::u32, n / 2, rng));
  }
};
using CompactionTest = Compaction_;

TEST_P(CompactionTest, SelectIfEveryDtypeAndPredicate) {
  for (DType dtype : all_dtypes) {
    for (Predicate predicate : all_predicates) {
      SCOPED_TRACE(std::string(to_string(dtype)) + " " + std::string(to_string(predicate)));
      for (std::size_t n :
           {std::size_t{1}, std::size_t{7}, std::size_t{4099}, std::size_t{70001}}) {
        const auto in = random_values(dtype, n, rng, predicate == Predicate::eq ? 4 : 1);
        expect_compaction_matches(device(), {Compaction::select_if, dtype, predicate}, options(),
                                  in, middle(dtype));
      }
    }
  }
}

TEST_P(CompactionTest, SelectFlaggedEveryDtypeAndFlagsType) {
  for (DType dtype : all_dtypes) {
    for (DType flags_dtype : integer_dtypes) {
      SCOPED_TRACE(std::string(to_string(dtype)) + " flags " + std::string(to_string(flags_dtype)));
      for (std::size_t n : {std::size_t{3}, std::size_t{8193}, std::size_t{50001}}) {
        const auto in = random_values(dtype, n, rng);
        const std::vector<std::byte> flags = random_flags(flags_dtype, n, rng);
        expect_compaction_matches(device(),
                                  {Compaction::select_flagged, dtype, Predicate::lt, flags_dtype},
                                  options(), in, 0, flags);
      }
    }
  }
}

TEST_P(CompactionTest, PartitionEveryDtypeIsStable) {
  for (DType dtype : all_dtypes) {
    for (Predicate predicate : {Predicate::lt, Predicate::eq, Predicate::ne}) {
      SCOPED_TRACE(std::string(to_string(dtype)) + " " + std::string(to_string(predicate)));
      for (std::size_t n : {std::size_t{1}, std::size_t{4097}, std::size_t{70001}}) {
        // Runs of equal values, so that stability shows: equal elements keep their order.
        const auto in = random_values(dtype, n, rng, 3);
        expect_compaction_matches(device(), {Compaction::partition, dtype, predicate}, options(),
                                  in, middle(dtype));
      }
    }
  }
  // All selected, none selected, every blocking rate.
  const std::size_t n = 40 * 4096 + 77;
  std::vector<std::byte> same(n * 4);
  for (std::size_t i = 0; i < n; ++i) set_value(DType::u32, same, i, 42);
  expect_compaction_matches(device(), {Compaction::partition, DType::u32, Predicate::eq}, options(),
                            same, 42);
  expect_compaction_matches(device(), {Compaction::partition, DType::u32, Predicate::ne}, options(),
                            same, 42);
  for (std::uint32_t k = 0; k <= 9; ++k) {
    Options o = options();
    o.blocking_mask = (1u << k) - 1;
    SCOPED_TRACE("blocking mask " + std::to_string(*o.blocking_mask));
    expect_compaction_matches(device(), {Compaction::partition, DType::f64, Predicate::lt}, o,
                              random_values(DType::f64, n / 2, rng), 0);
  }
  const std::vector<std::int32_t> x{5, -3, 8, 8, 1, 0, -3, 7};
  EXPECT_EQ(partition(device(), std::span<const std::int32_t>(x), Predicate::gt, 4),
            (std::vector<std::int32_t>{5, 8, 8, 7, -3, 1, 0, -3}));
}

// Partition by flags: every dtype, each element width with both flag widths (one pipeline a
// dtype), odd sizes, all and none flagged, chunks of one tile with every other tile blocked
// (every blocking rate: EveryBlockingRateInBothTileStates).
TEST_P(CompactionTest, PartitionFlaggedEveryDtypeIsStable) {
  const std::vector<std::pair<DType, DType>> cases{
      {DType::u32, DType::u32}, {DType::i32, DType::i64}, {DType::f32, DType::u64},
      {DType::u64, DType::i32}, {DType::i64, DType::u64}, {DType::f64, DType::u32}};
  for (const auto& [dtype, flags_dtype] : cases) {
    SCOPED_TRACE(std::string(to_string(dtype)) + " flags " + std::string(to_string(flags_dtype)));
    const CompactSpec spec{Compaction::partition_flagged, dtype, Predicate::lt, flags_dtype};
    for (std::size_t n : {std::size_t{1}, std::size_t{4097}, std::size_t{70001}}) {
      // Runs of equal values, so that stability shows: equal elements keep their order.
      const auto in = random_values(dtype, n, rng, 3);
      expect_compaction_matches(device(), spec, options(), in, 0,
                                random_flags(flags_dtype, n, rng));
    }
  }
  // All flagged, none flagged.
  const std::size_t n = 40 * 4096 + 77;
  const CompactSpec u32{Compaction::partition_flagged, DType::u32, Predicate::lt, DType::u32};
  const std::vector<std::byte> values = random_values(DType::u32, n, rng);
  expect_compaction_matches(device(), u32, options(), values, 0,
                            random_flags(DType::u32, n, rng, 100));
  expect_compaction_matches(device(), u32, options(), values, 0,
                            random_flags(DType::u32, n, rng, 0));
  // Chunks of one tile each, every other tile blocked: the rejected elements' place carried.
  Options chunked = options();
  chunked.chunk_elements = 1;
  chunked.blocking_mask = 1;
  expect_compaction_matches(device(), u32, chunked, random_values(DType::u32, 3 * 4096 + 11, rng),
                            0, random_flags(DType::u32, 3 * 4096 + 11, rng));
  const std::vector<std::int32_t> x{5, -3, 8, 8, 1, 0, -3, 7};
  const std::vector<std::uint64_t> flags{1, 0, 1ull << 40, 0, 0, 0, 2, 1};
  EXPECT_EQ(partition_flagged(device(), std::span<const std::int32_t>(x),
                              std::span<const std::uint64_t>(flags)),
            (std::vector<std::int32_t>{5, 8, -3, 7, -3, 8, 1, 0}));
}

TEST_P(CompactionTest, UniqueEveryDtypeAndRunLength) {
  for (DType dtype : all_dtypes) {
    for (std::size_t mean_run : {std::size_t{1}, std::size_t{8}, std::size_t{3000}}) {
      SCOPED_TRACE(std::string(to_string(dtype)) + " runs of mean length " +
                   std::to_string(mean_run));
      for (std::size_t n : {std::size_t{2}, std::size_t{4097}, std::size_t{60007}}) {
        expect_compaction_matches(device(), {Compaction::unique, dtype}, options(),
                                  random_values(dtype, n, rng, mean_run), 0);
      }
    }
  }
}

// Runs shorter than a vector, about a tile, and far longer (tiles without a head, whose
// look-back must carry the last head from further back).
TEST_P(CompactionTest, RunLengthEncodeEveryDtypeAndRunLength) {
  for (DType dtype : all_dtypes) {
    for (std::size_t mean_run :
         {std::size_t{1}, std::size_t{8}, std::size_t{3000}, std::size_t{40000}}) {
      SCOPED_TRACE(std::string(to_string(dtype)) + " runs of mean length " +
                   std::to_string(mean_run));
      for (std::size_t n :
           {std::size_t{1}, std::size_t{2}, std::size_t{4097}, std::size_t{200003}}) {
        expect_compaction_matches(device(), {Compaction::run_length_encode, dtype}, options(),
                                  random_values(dtype, n, rng, mean_run), 0);
      }
    }
  }
}

TEST_P(CompactionTest, AllNoneOneRunAndEveryElementItsOwnRun) {
  for (DType dtype : all_dtypes) {
    SCOPED_TRACE(to_string(dtype));
    const std::size_t n = 3 * 4096 + 5;
    std::vector<std::byte> same(n * size_of(dtype));
    for (std::size_t i = 0; i < n; ++i) set_value(dtype, same, i, 42);
    std::vector<std::byte> distinct(n * size_of(dtype));
    for (std::size_t i = 0; i < n; ++i) set_value(dtype, distinct, i, static_cast<double>(i));
    // All kept, none kept.
    expect_compaction_matches(device(), {Compaction::select_if, dtype, Predicate::eq}, options(),
                              same, 42);
    expect_compaction_matches(device(), {Compaction::select_if, dtype, Predicate::ne}, options(),
                              same, 42);
    // One run; every element its own run (neighbours always differ).
    expect_compaction_matches(device(), {Compaction::unique, dtype}, options(), same, 0);
    std::vector<std::byte> alternating(n * size_of(dtype));
    for (std::size_t i = 0; i < n; ++i)
      set_value(dtype, alternating, i, static_cast<double>(i % 3));
    expect_compaction_matches(device(), {Compaction::unique, dtype}, options(), alternating, 0);
    expect_compaction_matches(device(), {Compaction::unique, dtype}, options(), distinct, 0);
    for (const auto* data : {&same, &alternating, &distinct}) {
      expect_compaction_matches(device(), {Compaction::run_length_encode, dtype}, options(), *data,
                                0);
    }
  }
}

TEST_P(CompactionTest, DesignSizes) {
  std::vector<std::size_t> sizes{0,    1,    2,    3,    4,    5,    4095,  4096,   4097,
                                 8191, 8192, 8193, 2047, 2048, 2049, 65537, 131071, 1000003};
  for (int k = 10; k <= 20; k += 5) {
    sizes.push_back((std::size_t{1} << k) - 1);
    sizes.push_back((std::size_t{1} << k) + 1);
  }
  for (std::size_t n : sizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    expect_compaction_matches(device(), {Compaction::select_if, DType::u32, Predicate::lt},
                              options(), random_values(DType::u32, n, rng), 250);
    expect_compaction_matches(device(), {Compaction::unique, DType::u64}, options(),
                              random_values(DType::u64, n, rng, 8), 0);
    expect_compaction_matches(device(), {Compaction::run_length_encode, DType::u32}, options(),
                              random_values(DType::u32, n, rng, 8), 0);
  }
}

// CUDA's tile shapes (cuda/compaction_policy.hpp: each operation's rows, 4, 6 or 8, and its
// register cap) at 128, 256 and 512 threads, every operation, sizes that end inside a warp's
// part of the stage (n counts 8 rows of 4-byte elements, so 4- and 6-row tiles see more than
// five tiles), unblocked and with every other tile blocked. Other row counts are refused.
TEST_P(CompactionTest, CudaTileShapes) {
  if (backend() != Backend::cuda) GTEST_SKIP() << "CUDA's tile shapes";
  {
    Options o = options();
    o.vectors_per_thread = 4;  // select-if and partition run 8
    EXPECT_THROW(make_compactor(device(), {Compaction::select_if, DType::u32}, o), UsageError);
    EXPECT_THROW(make_compactor(device(), {Compaction::partition, DType::u32}, o), UsageError);
    o.vectors_per_thread = 8;  // select-flagged runs 4
    EXPECT_THROW(make_compactor(device(), {Compaction::select_flagged, DType::u32}, o), UsageError);
  }
  for (std::uint32_t threads : {128u, 256u, 512u}) {
    for (std::uint32_t mask : {0u, 1u}) {
      Options o = options();
      o.workgroup_size = threads;
      if (mask != 0) o.blocking_mask = mask;
      const std::size_t n = 5 * threads * 8 * 4 + 3 * 128 + 37;
      SCOPED_TRACE(std::to_string(threads) + " threads, blocking mask " + std::to_string(mask) +
                   ", n = " + std::to_string(n));
      expect_compaction_matches(device(), {Compaction::select_if, DType::u32, Predicate::lt}, o,
                                random_values(DType::u32, n, rng), 250);
      expect_compaction_matches(device(), {Compaction::partition, DType::u64, Predicate::ge}, o,
                                random_values(DType::u64, n, rng), 250);
      expect_compaction_matches(device(), {Compaction::partition, DType::f32, Predicate::lt}, o,
                                random_values(DType::f32, n, rng), 0);
      expect_compaction_matches(device(), {Compaction::unique, DType::f32}, o,
                                random_values(DType::f32, n, rng, 8), 0);
      expect_compaction_matches(device(), {Compaction::run_length_encode, DType::u32}, o,
                                random_values(DType::u32, n, rng, 8), 0);
      std::vector<std::byte> flags(n * 4, std::byte{0});
      for (std::size_t i = 0; i < n; ++i)
        flags[i * 4] = std::byte{static_cast<unsigned char>(rng() & 1)};
      expect_compaction_matches(device(),
                                {Compaction::select_flagged, DType::i32, Predicate::lt, DType::u32},
                                o, random_values(DType::i32, n, rng), 0, flags);
      expect_compaction_matches(
          device(), {Compaction::partition_flagged, DType::u64, Predicate::lt, DType::u32}, o,
          random_values(DType::u64, n, rng, 3), 0, flags);
      expect_compaction_matches(
          device(), {Compaction::partition_flagged, DType::u32, Predicate::lt, DType::u32}, o,
          random_values(DType::u32, n, rng), 0, flags);
    }
  }
}

// CUDA's persistent blocks (compaction_policy.hpp: run-length encoding): more tiles than the
// device holds blocks at once, so each block takes tile after tile, in dispatch order and from
// the counter (where a block may find every tile taken), unblocked and blocked, and runs
// repeated on one compactor (the turn is handed on by a block that took its last tile).
TEST_P(CompactionTest, CudaPersistentBlocks) {
  if (backend() != Backend::cuda) GTEST_SKIP() << "CUDA's persistent blocks";
  for (const bool ordered : {true, false}) {
    for (const std::uint32_t mask : {0u, 1u, 3u}) {
      Options o = options();
      o.dispatch_order = ordered;
      if (mask != 0) o.blocking_mask = mask;
      for (const DType dtype : {DType::u32, DType::u64}) {
        const CompactSpec spec{Compaction::run_length_encode, dtype};
        Compactor compactor = make_compactor(device(), spec, o);
        // 2^24 + 4099 elements: 2049 tiles of u32, 4097 of u64 (a GPU holds a few hundred
        // blocks at once); then a few tiles, fewer than the blocks it holds.
        for (const std::size_t n : {std::size_t{1} << 24 | 4099, std::size_t{3 * 8192 + 5}}) {
          SCOPED_TRACE(std::string(ordered ? "dispatch order" : "counter order") +
                       ", blocking mask " + std::to_string(mask) + ", " +
                       std::string(to_string(dtype)) + ", n = " + std::to_string(n));
          expect_compaction_matches(device(), spec, o, random_values(dtype, n, rng, 8), 0, {},
                                    &compactor);
        }
      }
    }
  }
}

// Vulkan's tile shapes: the GPU policy's compaction tile for 4-byte types (vulkan/policy.cpp:
// 256 x 4) is CPU drivers' default, which the other tests run; here 256 x 2 beside a smallest
// one and two odd ones (CPU drivers allow 256 threads at most), every operation, both tile
// states, unblocked and with every other tile blocked; sizes that end inside a tile, one
// subgroup's block or a vector, past several tiles. Tiles of more than 65536 elements are
// refused: positions within a tile are staged in 16 bits.
TEST_P(CompactionTest, VulkanTileShapes) {
  if (backend() != Backend::vulkan) GTEST_SKIP() << "Vulkan's tile shapes";
  {
    Options o = options();
    o.workgroup_size = 1024;
    o.vectors_per_thread = 17;  // 69632 elements
    try {
      make_compactor(device(), {Compaction::select_if, DType::u32}, o);
      ADD_FAILURE() << "a tile of 69632 elements was accepted";
    } catch (const UsageError& e) {
      // CPU drivers refuse the workgroup first (256 threads at most there).
      const std::string what = e.what();
      if (what.find("workgroup size 1024 must be") == std::string::npos) {
        EXPECT_NE(what.find("at most 65536 elements"), std::string::npos) << what;
      }
    }
  }
  const std::pair<std::uint32_t, std::uint32_t> shapes[] = {{256, 2}, {64, 1}, {128, 3}, {256, 5}};
  for (const auto& [threads, vectors] : shapes) {
    for (TileState state : {TileState::split, TileState::automatic}) {
      for (std::uint32_t mask : {0u, 1u}) {
        Options o = options();
        o.workgroup_size = threads;
        o.vectors_per_thread = vectors;
        o.tile_state = state;
        if (mask != 0) o.blocking_mask = mask;
        const std::size_t tile = std::size_t{threads} * vectors * 4;  // 4-byte elements
        const std::size_t n = 7 * tile + 3 * 32 * 4 + 5;
        SCOPED_TRACE(std::to_string(threads) + " x " + std::to_string(vectors) +
                     (state == TileState::split ? ", split" : ", automatic") + ", blocking mask " +
                     std::to_string(mask) + ", n = " + std::to_string(n));
        expect_every_operation_matches(o, n);
      }
    }
  }
}

// The owner's staged positions in both forms (shaders/common/compaction.glsl, "staged
// positions"): 16-bit variables where the device has shaderInt16, else two to a 32-bit word
// by atomic OR; every operation (in place stages values, not positions), full and part-full
// tiles, blocked or not, one-binding and wide outputs.
TEST_P(CompactionTest, VulkanStagedPositionsInBothForms) {
  if (backend() != Backend::vulkan) {
    Options o = options();
    o.int16_positions = false;
    EXPECT_THROW(make_compactor(device(), {Compaction::select_if, DType::u32}, o), UsageError)
        << "CUDA stages values; the positions' form is Vulkan's";
    return;
  }
  std::vector<bool> forms{false};
  try {
    Options o = options();
    o.int16_positions = true;
    make_compactor(device(), {Compaction::select_if, DType::u32}, o);
    forms.push_back(true);
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("shaderInt16"), std::string::npos) << e.what();
    EXPECT_FALSE(is_cpu()) << "lavapipe has shaderInt16";
  }
  for (const bool int16 : forms) {
    for (const auto& shape : {std::pair{0u, 0u}, std::pair{64u, 1u}}) {
      for (const std::size_t window : {std::size_t{0}, std::size_t{20000}}) {
        for (const std::uint32_t mask : {0u, 1u}) {
          Options o = options();
          o.int16_positions = int16;
          o.workgroup_size = shape.first;
          o.vectors_per_thread = shape.second;
          o.output_binding_elements = window;  // 20000: chunks written through addresses
          if (window != 0) o.chunk_elements = 16384;
          if (mask != 0) o.blocking_mask = mask;
          SCOPED_TRACE(std::string(int16 ? "16-bit" : "32-bit words") + ", shape " +
                       std::to_string(shape.first) + " x " + std::to_string(shape.second) +
                       ", window " + std::to_string(window) + ", blocking mask " +
                       std::to_string(mask));
          expect_every_operation_matches(o, 70001);
        }
      }
    }
  }
}

// The rows' counts packed 16 bits a row (shaders/common/compaction.glsl, select_tile), the form
// subgroups of 64 lanes and more take, which no device here has: every operation, the
// default shape and 64 x 1, blocked or not, and in place (the fallbacks' counts and scatters
// come from the same code). CUDA refuses the option (32 lanes: always 8 bits).
TEST_P(CompactionTest, VulkanWideRowCounts) {
  Options wide = options();
  wide.wide_row_counts = true;
  if (backend() != Backend::vulkan) {
    EXPECT_THROW(make_compactor(device(), {Compaction::select_if, DType::u32}, wide), UsageError)
        << "CUDA packs 8 bits a row; the 16-bit form is Vulkan's";
    return;
  }
  for (const auto& shape : {std::pair{0u, 0u}, std::pair{64u, 1u}}) {
    for (const std::uint32_t mask : {0u, 1u}) {
      Options o = wide;
      o.workgroup_size = shape.first;
      o.vectors_per_thread = shape.second;
      if (mask != 0) o.blocking_mask = mask;
      SCOPED_TRACE("16-bit row counts, shape " + std::to_string(shape.first) + " x " +
                   std::to_string(shape.second) + ", blocking mask " + std::to_string(mask));
      expect_every_operation_matches(o, 70001);
      Compactor select =
          make_compactor(device(), {Compaction::select_if, DType::u32, Predicate::ge}, o);
      expect_in_place_matches(device(), select, random_values(DType::u32, 70001, rng), 250, {},
                              true);
      Compactor unique = make_compactor(device(), {Compaction::unique, DType::f64}, o);
      expect_in_place_matches(device(), unique, random_values(DType::f64, 35001, rng, 8), 0, {},
                              true);
    }
  }
}

// Simulated blocking at every rate, 1 in 1 to 1 in 512, in both tile states where the
// device has both: results exact, and the statistics show the fallbacks.
TEST_P(CompactionTest, EveryBlockingRateInBothTileStates) {
  std::vector<TileState> states{TileState::split};
  states.push_back(TileState::automatic);
  const std::size_t n = 40 * 4096 + 77;
  for (TileState state : states) {
    for (std::uint32_t k = 0; k <= 9; ++k) {
      Options o = options();
      o.tile_state = state;
      o.blocking_mask = (1u << k) - 1;
      SCOPED_TRACE("blocking mask " + std::to_string(*o.blocking_mask) +
                   (state == TileState::split ? " split" : " automatic"));
      expect_compaction_matches(device(), {Compaction::select_if, DType::u32, Predicate::ge}, o,
                                random_values(DType::u32, n, rng), 250);
      expect_compaction_matches(device(), {Compaction::unique, DType::f64}, o,
                                random_values(DType::f64, n / 2, rng, 8), 0);
      // Runs of a tile and far longer: blocked tiles that hold no head.
      expect_compaction_matches(device(), {Compaction::run_length_encode, DType::i64}, o,
                                random_values(DType::i64, n / 2, rng, 3000), 0);
      expect_compaction_matches(device(), {Compaction::run_length_encode, DType::u32}, o,
                                random_values(DType::u32, n, rng, 8), 0);
      std::vector<std::byte> flags(n * 8, std::byte{0});
      for (std::size_t i = 0; i < n; ++i)
        flags[i * 8 + 7] = std::byte{static_cast<unsigned char>(rng() & 1)};
      expect_compaction_matches(device(),
                                {Compaction::select_flagged, DType::i32, Predicate::lt, DType::u64},
                                o, random_values(DType::i32, n, rng), 0, flags);
      expect_compaction_matches(
          device(), {Compaction::partition_flagged, DType::f64, Predicate::lt, DType::u32}, o,
          random_values(DType::f64, n / 2, rng), 0, random_flags(DType::u32, n / 2, rng));
    }
  }
}

// How many tiles fall back is the device's scheduling (a blocked tile still posts its
// inclusive count, and a successor that finds it needs no fallback; see the scans'
// StatisticsKeepTheirInvariants): with every tile blocked and the shortest wait, some run of
// up to 20 must count fallbacks, unless lavapipe runs one worker thread.
TEST_P(CompactionTest, StatisticsCountTheFallbacksOfBlockedTiles) {
  Options o = options();
  o.statistics = true;
  o.blocking_mask = 0;
  o.tuning.max_spins = 1;
  const std::size_t n = 256 * 4096;
  const CompactSpec spec{Compaction::select_if, DType::u32, Predicate::lt};
  Compactor compactor = make_compactor(device(), spec, o);
  Buffer in_buffer = device().allocate(n * 4);
  Buffer out = device().allocate(n * 4);
  Buffer count = device().allocate(8);
  std::uint64_t fallbacks = 0;
  int runs = 0;
  for (; runs < 20 && fallbacks == 0; ++runs) {
    const auto in = random_values(DType::u32, n, rng);
    device().upload(in_buffer, in);
    const RunResult result = compactor.run(in_buffer, out, count, n, Value::of(std::uint32_t{250}));
    ASSERT_TRUE(result.statistics);
    const Statistics& s = *result.statistics;
    EXPECT_GE(s.fallbacks, s.insertions);
    EXPECT_GT(s.lookback_steps, 0u);
    fallbacks += s.fallbacks;
    // And the result is exact.
    expect_compaction_matches(device(), spec, o, in, 250, {}, &compactor);
  }
  const char* threads = std::getenv("LP_NUM_THREADS");
  if (threads && *threads && std::atoi(threads) <= 1) return;
  EXPECT_GT(fallbacks, 0u) << "every tile blocked, yet no look-back fell back in " << runs
                           << " runs";
}

TEST_P(CompactionTest, RepeatedRunsOnOneCompactorStayCorrect) {
  Compactor compactor = make_compactor(device(), {Compaction::unique, DType::i64}, options());
  for (int run = 0; run < 6; ++run) {
    // Sizes that shrink and grow, so the spine halves' turns cover stale words.
    const std::size_t n = run % 2 ? 30011 : 3001;
    expect_compaction_matches(device(), {Compaction::unique, DType::i64}, options(),
                              random_values(DType::i64, n, rng, 3), 0, {}, &compactor);
  }
}

TEST_P(CompactionTest, CsdlAndLogicalSubgroupsOfFour) {
  for (Algorithm algorithm : {Algorithm::csdl, Algorithm::csdldf}) {
    Options o = options();
    // Logical subgroups are Vulkan's (CUDA warps have 32 lanes).
    if (algorithm == Algorithm::csdldf && backend() == Backend::vulkan) o.subgroup_size = 4;
    SCOPED_TRACE(to_string(algorithm));
    for (std::size_t n : {std::size_t{5}, std::size_t{4097}, std::size_t{100003}}) {
      expect_compaction_matches(
          device(), {Compaction::select_if, DType::f32, Predicate::gt, DType::u32, algorithm}, o,
          random_values(DType::f32, n, rng), 0);
      expect_compaction_matches(
          device(), {Compaction::unique, DType::u64, Predicate::lt, DType::u32, algorithm}, o,
          random_values(DType::u64, n, rng, 8), 0);
      expect_compaction_matches(
          device(),
          {Compaction::run_length_encode, DType::f32, Predicate::lt, DType::u32, algorithm}, o,
          random_values(DType::f32, n, rng, 500), 0);
    }
    if (algorithm == Algorithm::csdldf) {
      o.blocking_mask = 0;
      expect_compaction_matches(device(), {Compaction::unique, DType::u32}, o,
                                random_values(DType::u32, 9 * 4096 + 1, rng, 8), 0);
    }
  }
}

TEST_P(CompactionTest, FloatEdgesCompareAsIeee) {
  // NaN is kept only by ne; -0.0 equals +0.0; unique keeps each NaN (NaN != NaN).
  const float nan = std::nanf("");
  const std::vector<float> values{1.0f, nan, -0.0f, 0.0f, nan, nan, 2.0f, -1.0f, 0.0f, -0.0f};
  std::vector<std::byte> in(values.size() * 4);
  std::memcpy(in.data(), values.data(), in.size());
  for (Predicate predicate : all_predicates) {
    expect_compaction_matches(device(), {Compaction::select_if, DType::f32, predicate}, options(),
                              in, 0);
  }
  expect_compaction_matches(device(), {Compaction::unique, DType::f32}, options(), in, 0);
  EXPECT_EQ(unique(device(), std::span<const float>(values)).size(), 8u);
}

TEST_P(CompactionTest, OneCallHelpers) {
  const std::vector<std::int32_t> x{5, -3, 8, 8, 8, 0, -3, 7};
  EXPECT_EQ(select_if(device(), std::span<const std::int32_t>(x), Predicate::gt, 4),
            (std::vector<std::int32_t>{5, 8, 8, 8, 7}));
  const std::vector<std::uint64_t> flags{0, 1, 0, 0, 1ull << 40, 0, 0, 2};
  EXPECT_EQ(select_flagged(device(), std::span<const std::int32_t>(x),
                           std::span<const std::uint64_t>(flags)),
            (std::vector<std::int32_t>{-3, 8, 7}));
  EXPECT_EQ(unique(device(), std::span<const std::int32_t>(x)),
            (std::vector<std::int32_t>{5, -3, 8, 0, -3, 7}));
  EXPECT_TRUE(unique(device(), std::span<const std::int32_t>()).empty());
  const RunLengths<std::int32_t> runs =
      run_length_encode(device(), std::span<const std::int32_t>(x));
  EXPECT_EQ(runs.values, (std::vector<std::int32_t>{5, -3, 8, 0, -3, 7}));
  EXPECT_EQ(runs.lengths, (std::vector<std::uint64_t>{1, 1, 3, 1, 1, 1}));
  EXPECT_TRUE(run_length_encode(device(), std::span<const double>()).values.empty());
}

// Compaction in chunks (docs/protocol.md, "Compaction in chunks"): chunks forced small, every
// other tile blocked, every operation; runs and duplicates across chunk boundaries, a run over
// several whole chunks, runs ending and starting on a boundary, all and none kept, a last chunk
// of one element, and chunks of one tile each.
TEST_P(CompactionTest, ChunksCarryTheCountAndTheBoundary) {
  // A whole number of tiles: lavapipe's are 4096 u32 and 2048 i64, CUDA's up to 16384 u32.
  const std::size_t chunk = backend() == Backend::cuda ? 16384 : 8192;
  for (DType dtype : {DType::u32, DType::i64}) {
    for (std::size_t chunk_elements : {chunk, std::size_t{1}}) {
      Options o = options();
      o.chunk_elements = chunk_elements;
      o.blocking_mask = 1;
      const std::size_t n = chunk_elements == 1 ? 3 * 4096 + 11 : 5 * chunk + 777;
      SCOPED_TRACE(std::string(to_string(dtype)) + ", chunks of " + std::to_string(chunk_elements) +
                   ", n = " + std::to_string(n));
      // Runs of 1 to 5, then marked values (outside the random ones' range) over chunk
      // boundaries.
      std::vector<std::byte> runs = random_values(dtype, n, rng, 3);
      const auto mark = [&](std::size_t from, std::size_t to, double value) {
        for (std::size_t i = from; i < std::min(to, n); ++i) set_value(dtype, runs, i, value);
      };
      if (chunk_elements == chunk) {
        mark(chunk - 3, 3 * chunk + 5, 1000);      // over two whole chunks
        mark(4 * chunk - 1, 4 * chunk + 1, 1003);  // a duplicate pair across a boundary
        mark(4 * chunk + 10, 5 * chunk, 1001);     // ends on a boundary
        mark(5 * chunk, 5 * chunk + 7, 1002);      // starts on one
      } else {
        mark(100, 3 * 4096, 1000);  // over many one-tile chunks
      }
      std::vector<std::byte> every(n * size_of(dtype));  // every element its own run
      for (std::size_t i = 0; i < n; ++i) set_value(dtype, every, i, static_cast<double>(i % 7));
      for (const auto* data : {&runs, &every}) {
        expect_compaction_matches(device(), {Compaction::unique, dtype}, o, *data, 0);
        expect_compaction_matches(device(), {Compaction::run_length_encode, dtype}, o, *data, 0);
      }
      const std::vector<std::byte> values = random_values(dtype, n, rng);
      for (Compaction compaction : {Compaction::select_if, Compaction::partition}) {
        SCOPED_TRACE(to_string(compaction));
        // About half, all and none selected.
        expect_compaction_matches(device(), {compaction, dtype, Predicate::lt}, o, values,
                                  middle(dtype));
        expect_compaction_matches(device(), {compaction, dtype, Predicate::le}, o, values, 500);
        expect_compaction_matches(device(), {compaction, dtype, Predicate::gt}, o, values, 500);
      }
      std::vector<std::byte> flags(n * 4, std::byte{0});
      for (std::size_t i = 0; i < n; ++i)
        flags[i * 4] = std::byte{static_cast<unsigned char>(rng() & 1)};
      const CompactSpec flagged{Compaction::select_flagged, dtype, Predicate::lt, DType::u32};
      expect_compaction_matches(device(), flagged, o, values, 0, flags);
    }
    // A last chunk of one element, and n a whole number of chunks.
    for (std::size_t n : {2 * chunk + 1, 3 * chunk}) {
      Options o = options();
      o.chunk_elements = chunk;
      SCOPED_TRACE(std::string(to_string(dtype)) + ", n = " + std::to_string(n));
      expect_compaction_matches(device(), {Compaction::run_length_encode, dtype}, o,
                                random_values(dtype, n, rng, 8), 0);
      expect_compaction_matches(device(), {Compaction::partition, dtype, Predicate::lt}, o,
                                random_values(dtype, n, rng), middle(dtype));
    }
  }
}

// Repeated chunked runs on one Compactor: the carry of one run is not read by the next.
TEST_P(CompactionTest, RepeatedChunkedRunsStayCorrect) {
  Options o = options();
  o.chunk_elements = 1;
  Compactor compactor = make_compactor(device(), {Compaction::run_length_encode, DType::u32}, o);
  for (std::size_t n : {std::size_t{5 * 4096 + 3}, std::size_t{7}, std::size_t{2 * 4096 + 1}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    expect_compaction_matches(device(), {Compaction::run_length_encode, DType::u32}, o,
                              random_values(DType::u32, n, rng, 40), 0, {}, &compactor);
  }
}

// Outputs beyond one binding (docs/protocol.md, "Compaction in chunks"): one binding taken to
// hold `window` output elements (Options::output_binding_elements) and chunks of a few tiles,
// so that a run's first chunks write through the binding and its later ones through buffer
// device addresses (the wide pipeline), the count, partition's rejected elements' place and
// rle's open run carried from the one to the other; also every chunk wide, and one wide run
// without chunks. Every operation, odd n, every other tile blocked, outputs poisoned. Without
// bufferDeviceAddress such a compaction is refused.
TEST_P(CompactionTest, OutputsBeyondOneBinding) {
  if (backend() != Backend::vulkan) GTEST_SKIP() << "Vulkan's output bindings";
  const std::size_t n = 300007;
  struct Layout {
    std::size_t window, chunk;
  };
  // Three chunks (u32: 8 tiles each) fit the window of 100000, seven do not; a window smaller
  // than any chunk; one run of n elements past the window.
  const std::vector<Layout> layouts{{100000, 32768}, {1000, 32768}, {100000, 0}};
  Options probe = options();
  probe.output_binding_elements = 1000;
  const bool wide =
      make_compactor(device(), {Compaction::unique, DType::u32}, probe).max_elements() == SIZE_MAX;
  if (is_cpu()) {
    ASSERT_TRUE(wide) << "lavapipe has bufferDeviceAddress";
  }
  // Without bufferDeviceAddress (as on this device with wide_outputs = false, or on a device
  // that lacks it) the binding's worth is the limit, refused with its reason; in place too
  // runs past it (one run over its own binding).
  Options narrow = probe;
  narrow.wide_outputs = false;
  for (const Options& o : wide ? std::vector<Options>{narrow} : std::vector<Options>{probe}) {
    Buffer in = device().allocate(n * 4), out = device().allocate(n * 4),
           count = device().allocate(8);
    Compactor unique = make_compactor(device(), {Compaction::unique, DType::u32}, o);
    EXPECT_EQ(unique.max_elements(), 1000u);
    try {
      unique.run(in, out, count, 1001);
      ADD_FAILURE() << "1001 elements past a binding of 1000 without bufferDeviceAddress ran";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("bufferDeviceAddress"), std::string::npos) << e.what();
    }
    expect_compaction_matches(device(), {Compaction::unique, DType::u32}, o,
                              random_values(DType::u32, 1000, rng, 3), 0);
    expect_in_place_matches(device(), unique, random_values(DType::u32, 5001, rng, 3), 0);
  }
  if (!wide) return;
  for (DType dtype : {DType::u32, DType::i64}) {
    for (const Layout& layout : layouts) {
      Options o = options();
      o.output_binding_elements = layout.window;
      o.chunk_elements = layout.chunk;
      o.blocking_mask = 1;
      SCOPED_TRACE(std::string(to_string(dtype)) + ", window " + std::to_string(layout.window) +
                   ", chunks of " + std::to_string(layout.chunk) + ", n = " + std::to_string(n));
      const std::vector<std::byte> values = random_values(dtype, n, rng);
      expect_compaction_matches(device(), {Compaction::select_if, dtype, Predicate::lt}, o, values,
                                middle(dtype));
      expect_compaction_matches(device(), {Compaction::partition, dtype, Predicate::lt}, o, values,
                                middle(dtype));
      for (DType flags_dtype : {DType::u32, DType::u64}) {
        const std::vector<std::byte> flags = random_flags(flags_dtype, n, rng);
        expect_compaction_matches(device(),
                                  {Compaction::select_flagged, dtype, Predicate::lt, flags_dtype},
                                  o, values, 0, flags);
        expect_compaction_matches(
            device(), {Compaction::partition_flagged, dtype, Predicate::lt, flags_dtype}, o, values,
            0, flags);
      }
      // Runs of 1 to 15, and one run over the window's end and several chunks.
      std::vector<std::byte> runs = random_values(dtype, n, rng, 8);
      for (std::size_t i = 90000; i < 140000; ++i) set_value(dtype, runs, i, 1000);
      expect_compaction_matches(device(), {Compaction::unique, dtype}, o, runs, 0);
      expect_compaction_matches(device(), {Compaction::run_length_encode, dtype}, o, runs, 0);
      if (layout.chunk == 0) {
        // All kept and none: partition's rejected output empty and full.
        expect_compaction_matches(device(), {Compaction::partition, dtype, Predicate::le}, o,
                                  values, 500);
        expect_compaction_matches(device(), {Compaction::partition, dtype, Predicate::gt}, o,
                                  values, 500);
        // In place stays one run over its one binding, whatever the window.
        Compactor in_place = make_compactor(device(), {Compaction::unique, dtype}, o);
        expect_in_place_matches(device(), in_place, runs, 0);
      }
    }
  }
}

// Past 2^32 elements on CUDA (opt-in, GPUSCAN_LARGE_TESTS=1: about 69 GB of device memory and
// 30 s): select-if over 2^32 + 2^20 + 7 u32 elements in the library's own chunks, and a run of
// more than 2^32 elements (its 64-bit length) with run-length encoding.
TEST_P(CompactionTest, CudaPast2To32Elements) {
  if (backend() != Backend::cuda) GTEST_SKIP() << "a CUDA test";
  const char* large = std::getenv("GPUSCAN_LARGE_TESTS");
  if (!large || std::string(large) != "1") GTEST_SKIP() << "set GPUSCAN_LARGE_TESTS=1";
  const std::size_t n = (std::size_t{1} << 32) + (std::size_t{1} << 20) + 7;
  const std::uint64_t salt = rng();
  std::vector<std::uint32_t> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<std::uint32_t>(((i ^ salt) * 0x9E3779B97F4A7C15ull) >> 54);  // 0..1023
  }
  Buffer in = device().allocate(n * 4), out = device().allocate(n * 4),
         count = device().allocate(8);
  device().upload(in, std::as_bytes(std::span(x)));
  Compactor select(device(), {Compaction::select_if, DType::u32, Predicate::lt});
  select.run(in, out, count, n, Value::of(std::uint32_t{512}));
  std::uint64_t kept = 0;
  device().download(count, std::as_writable_bytes(std::span(&kept, 1)));
  std::vector<std::uint32_t> result(kept);
  device().download(out, std::as_writable_bytes(std::span(result)));
  std::size_t j = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (x[i] >= 512) continue;
    ASSERT_LT(j, kept) << "input index " << i;
    ASSERT_EQ(result[j], x[i]) << "kept element " << j << " (input index " << i << ")";
    ++j;
  }
  ASSERT_EQ(j, kept);
  // Three runs: [0, m), [m, m + 1), [m + 1, n), the first longer than 2^32.
  result = {};
  out = device().allocate(8);
  const std::size_t m = (std::size_t{1} << 32) + 100;
  std::fill(x.begin(), x.end(), 7u);
  x[m] = 8;
  device().upload(in, std::as_bytes(std::span(x)));
  x = {};
  Buffer values = device().allocate(n * 4), lengths = device().allocate(n * 8);
  Compactor rle(device(), {Compaction::run_length_encode, DType::u32});
  rle.run_length_encode(in, values, lengths, count, n);
  device().download(count, std::as_writable_bytes(std::span(&kept, 1)));
  ASSERT_EQ(kept, 3u);
  std::uint32_t v[3];
  std::uint64_t l[3];
  device().download(values, std::as_writable_bytes(std::span(v)));
  device().download(lengths, std::as_writable_bytes(std::span(l)));
  EXPECT_EQ(v[0], 7u);
  EXPECT_EQ(v[1], 8u);
  EXPECT_EQ(v[2], 7u);
  EXPECT_EQ(l[0], m);
  EXPECT_EQ(l[1], 1u);
  EXPECT_EQ(l[2], n - m - 1);
}

// Downloads the first `count` elements of `buffer` in slices and compares element j with
// expected(j), asked for j = 0, 1, ... in order.
template <class E, class Expected>
void expect_elements_in_slices(Device& device, const Buffer& buffer, std::size_t count,
                               Expected expected, const char* what) {
  const std::size_t slice = std::size_t{1} << 26;
  std::vector<E> got(std::min(slice, count));
  for (std::size_t first = 0; first < count; first += slice) {
    const std::size_t m = std::min(slice, count - first);
    device.impl()->download(*buffer.impl(), std::as_writable_bytes(std::span(got).first(m)),
                            first * sizeof(E));
    for (std::size_t j = 0; j < m; ++j) {
      // The assertion only on a mismatch: billions of them took minutes.
      const E want = expected(first + j);
      if (got[j] != want) {
        ASSERT_EQ(got[j], want) << what << " " << first + j << " of " << count;
      }
    }
  }
}

// Past 2^32 elements on Vulkan (opt-in, GPUSCAN_LARGE_TESTS=1: about 69 GB of device memory and
// 52 GB of host memory; a device with bufferDeviceAddress): output positions past 2^32 through
// the wide pipeline (docs/protocol.md, "Compaction in chunks"). Select-if keeping all but about
// 1 in 8192 of 2^32 + 2^20 + 7 u32 in the library's own chunks; partition keeping those (kept
// past 2^32) and keeping the others (rejected past 2^32) in chunks of 2^28 + 2^16, whose last
// starts past 2^32 (the high word of its first element); run-length encoding with more than
// 2^32 runs and a run over 2^32. Outputs poisoned, checked whole against the host.
TEST_P(CompactionTest, VulkanPast2To32Elements) {
  if (backend() != Backend::vulkan) GTEST_SKIP() << "a Vulkan test";
  const char* large = std::getenv("GPUSCAN_LARGE_TESTS");
  if (!large || std::string(large) != "1") GTEST_SKIP() << "set GPUSCAN_LARGE_TESTS=1";
  if (Compactor(device(), {Compaction::unique, DType::u32}).max_elements() != SIZE_MAX) {
    GTEST_SKIP() << device().info().name << " lacks bufferDeviceAddress: its outputs must fit "
                 << "one binding";
  }
  const std::size_t n = (std::size_t{1} << 32) + (std::size_t{1} << 20) + 7;
  const std::uint64_t salt = rng();
  // About 1 in 8192 elements is the marker (select-if's rejected ones); the others differ from
  // their neighbours and from the element 2^32 before them.
  const auto marked = [&](std::size_t i) {
    return ((i ^ salt) * 0x9E3779B97F4A7C15ull) >> 51 == 0;
  };
  constexpr std::uint32_t marker = 0xFFFFFFFFu;
  std::vector<std::uint32_t> x(n);
  std::size_t marks = 0;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = marked(i) ? marker
                     : static_cast<std::uint32_t>(i) ^
                           (static_cast<std::uint32_t>(i >> 32) * 0x9E3779B9u);
    if (x[i] == marker) ++marks;
  }
  std::vector<std::byte> poison_bytes(n * 8, std::byte{0xA5});
  const auto poisoned = [&](std::size_t elements, std::size_t bytes) {
    Buffer buffer = device().allocate(elements * bytes);
    device().upload(buffer, std::span(poison_bytes).first(elements * bytes));
    return buffer;
  };
  Buffer in = device().allocate(n * 4), count = device().allocate(8);
  device().upload(in, std::as_bytes(std::span(x)));
  std::uint64_t got = 0;
  // The unmarked elements and the marked ones, each in order, as a function of position.
  std::vector<std::size_t> marked_at;
  marked_at.reserve(marks);
  for (std::size_t i = 0; i < n; ++i) {
    if (x[i] == marker) marked_at.push_back(i);
  }
  // Element j of the unmarked, for j = 0, 1, ... in turn (the checks ask in order): j plus
  // the marked ones before it, the first m with marked_at[m] - m > j (never decreasing in j).
  const auto unmarked_in_order = [&] {
    return [&, m = std::size_t{0}](std::size_t j) mutable {
      while (m < marked_at.size() && marked_at[m] - m <= j) ++m;
      return x[j + m];
    };
  };
  const auto the_marker = [&](std::size_t) { return marker; };
  {
    SCOPED_TRACE("select-if, the library's chunks");
    Buffer out = poisoned(n, 4);
    Compactor select(device(), {Compaction::select_if, DType::u32, Predicate::lt});
    select.run(in, out, count, n, Value::of(marker));
    device().download(count, std::as_writable_bytes(std::span(&got, 1)));
    ASSERT_EQ(got, n - marks);
    ASSERT_GT(got, std::uint64_t{1} << 32);
    expect_elements_in_slices<std::uint32_t>(device(), out, n - marks, unmarked_in_order(), "kept");
  }
  {
    Options chunked = options();
    chunked.chunk_elements = (std::size_t{1} << 28) + (std::size_t{1} << 16);
    Buffer selected = poisoned(n, 4), rejected = poisoned(n, 4);
    Compactor lt =
        make_compactor(device(), {Compaction::partition, DType::u32, Predicate::lt}, chunked);
    SCOPED_TRACE("partition, kept past 2^32");
    lt.run_partition(in, selected, rejected, count, n, Value::of(marker));
    device().download(count, std::as_writable_bytes(std::span(&got, 1)));
    ASSERT_EQ(got, n - marks);
    expect_elements_in_slices<std::uint32_t>(device(), selected, n - marks, unmarked_in_order(),
                                             "selected");
    expect_elements_in_slices<std::uint32_t>(device(), rejected, marks, the_marker, "rejected");
    SCOPED_TRACE("partition, rejected past 2^32");
    device().upload(selected, std::span(poison_bytes).first(n * 4));
    device().upload(rejected, std::span(poison_bytes).first(n * 4));
    Compactor eq =
        make_compactor(device(), {Compaction::partition, DType::u32, Predicate::eq}, chunked);
    eq.run_partition(in, selected, rejected, count, n, Value::of(marker));
    device().download(count, std::as_writable_bytes(std::span(&got, 1)));
    ASSERT_EQ(got, marks);
    expect_elements_in_slices<std::uint32_t>(device(), selected, marks, the_marker, "selected");
    expect_elements_in_slices<std::uint32_t>(device(), rejected, n - marks, unmarked_in_order(),
                                             "rejected");
  }
  {
    SCOPED_TRACE("run-length encoding, the library's chunks");
    // Each marked element repeats the one before it (a run of two or more), and one run covers
    // [2^32 - 1000, 2^32 + 5000).
    for (std::size_t i = 1; i < n; ++i) {
      if (marked(i)) x[i] = x[i - 1];
    }
    const std::size_t over = std::size_t{1} << 32;
    for (std::size_t i = over - 1000; i < over + 5000; ++i) x[i] = 12345u;
    device().upload(in, std::as_bytes(std::span(x)));
    std::size_t runs = 1;
    for (std::size_t i = 1; i < n; ++i) runs += x[i] != x[i - 1];
    Buffer values = poisoned(n, 4), lengths = poisoned(n, 8);
    Compactor rle(device(), {Compaction::run_length_encode, DType::u32});
    rle.run_length_encode(in, values, lengths, count, n);
    device().download(count, std::as_writable_bytes(std::span(&got, 1)));
    ASSERT_EQ(got, runs);
    ASSERT_GT(got, std::uint64_t{1} << 32);
    // The runs in order (the checks ask for run 0, 1, ...): where run r starts and ends.
    const auto walk = [&] {
      return [&, start = std::size_t{0}, end = std::size_t{0}](bool length) mutable {
        start = end;
        for (end = start + 1; end < n && x[end] == x[start];) ++end;
        return length ? std::uint64_t{end - start} : std::uint64_t{x[start]};
      };
    };
    expect_elements_in_slices<std::uint32_t>(
        device(), values, runs,
        [next = walk()](std::size_t) mutable { return static_cast<std::uint32_t>(next(false)); },
        "value");
    expect_elements_in_slices<std::uint64_t>(
        device(), lengths, runs, [next = walk()](std::size_t) mutable { return next(true); },
        "length of run");
  }
}

TEST_P(CompactionTest, RefusesWhatItCannotDo) {
  Device& d = device();
  Buffer a = d.allocate(4096), b = d.allocate(4096), count = d.allocate(8);
  // The one run that is not refused reads `a`: written, so that initcheck has nothing to say.
  const std::vector<std::uint32_t> zeros(1024, 0);
  d.upload(a, std::as_bytes(std::span(zeros)));
  Compactor select(d, {Compaction::select_if, DType::u32, Predicate::lt});
  const Value c = Value::of(std::uint32_t{3});
  // In place (out over in) runs on every backend (InPlace* tests).
  select.run(a, a, count, 100, c);
  EXPECT_THROW(select.run(a, b, a, 100, c), UsageError);
  EXPECT_THROW(select.run(a, b, count, 100), UsageError);                   // no constant
  EXPECT_THROW(select.run(a, b, count, 100, Value::of(3.0f)), UsageError);  // wrong dtype
  EXPECT_THROW(select.run(a, b, count, 2000, c), UsageError);               // too small
  EXPECT_THROW(select.run(a, b, count, 100, c, &b), UsageError);            // flags for select-if
  Compactor flagged(d, {Compaction::select_flagged, DType::u32, Predicate::lt, DType::u32});
  EXPECT_THROW(flagged.run(a, b, count, 100), UsageError);                    // no flags
  EXPECT_THROW(flagged.run(a, b, count, 100, std::nullopt, &b), UsageError);  // flags are out
  EXPECT_THROW(flagged.run(a, a, count, 100, std::nullopt, &a), UsageError);  // ... in place
  // Partition has two outputs: run() refuses it, run_partition refuses the others, and no
  // output may be an input or another output.
  Buffer c2 = d.allocate(4096);
  Compactor parts(d, {Compaction::partition, DType::u32, Predicate::lt});
  EXPECT_THROW(parts.run(a, b, count, 100, c), UsageError);
  EXPECT_THROW(select.run_partition(a, b, c2, count, 100, c), UsageError);
  EXPECT_THROW(parts.run_partition(a, b, b, count, 100, c), UsageError);
  EXPECT_THROW(parts.run_partition(a, b, a, count, 100, c), UsageError);
  EXPECT_THROW(parts.run_partition(a, a, c2, count, 100, c), UsageError);  // not in place
  EXPECT_THROW(parts.run_partition(a, b, c2, c2, 100, c), UsageError);
  // Partition by flags: run_partition with flags, not a constant, nor on another Compactor;
  // flags of an integer type; not in place.
  Compactor flag_parts(d, {Compaction::partition_flagged, DType::u32, Predicate::lt, DType::u32});
  EXPECT_THROW(flag_parts.run(a, b, count, 100, std::nullopt, &c2), UsageError);
  EXPECT_THROW(flag_parts.run_partition(a, b, c2, count, 100, c), UsageError);
  EXPECT_THROW(parts.run_partition(a, b, c2, count, 100, a), UsageError);
  EXPECT_THROW(flag_parts.run_partition(a, b, c2, count, 100, c2), UsageError);  // flags are out
  EXPECT_THROW(flag_parts.run_partition(a, a, c2, count, 100, b), UsageError);   // not in place
  EXPECT_THROW(flag_parts.run_partition(a, b, c2, count, 2000, a), UsageError);  // too small
  EXPECT_THROW(Compactor(d, {Compaction::partition_flagged, DType::u32, Predicate::lt, DType::f64}),
               UsageError);
  // Run-length encoding: two outputs as well, the lengths 8 bytes each.
  Compactor rle(d, {Compaction::run_length_encode, DType::u32});
  EXPECT_THROW(rle.run(a, b, count, 100), UsageError);
  EXPECT_THROW(select.run_length_encode(a, b, c2, count, 100), UsageError);
  EXPECT_THROW(rle.run_length_encode(a, b, b, count, 100), UsageError);
  EXPECT_THROW(rle.run_length_encode(a, b, a, count, 100), UsageError);
  EXPECT_THROW(rle.run_length_encode(a, a, c2, count, 100), UsageError);   // not in place
  EXPECT_THROW(rle.run_length_encode(a, b, c2, count, 1000), UsageError);  // lengths too small
  rle.run_length_encode(a, b, c2, count, 512);
  EXPECT_THROW(Compactor(d, {Compaction::select_flagged, DType::u32, Predicate::lt, DType::f32}),
               UsageError);
  EXPECT_THROW(
      Compactor(d, {Compaction::unique, DType::u32, Predicate::lt, DType::u32, Algorithm::rts}),
      UsageError);
  Options blocked;
  blocked.blocking_mask = 0;
  EXPECT_THROW(
      make_compactor(
          d, {Compaction::unique, DType::u32, Predicate::lt, DType::u32, Algorithm::csdl}, blocked),
      UsageError);
  // Nothing to compact: the count is zero.
  const std::uint64_t junk = 99;
  d.upload(count, std::as_bytes(std::span(&junk, 1)));
  select.run(a, b, count, 0, c);
  std::uint64_t zero = 1;
  d.download(count, std::as_writable_bytes(std::span(&zero, 1)));
  EXPECT_EQ(zero, 0u);
}

// In place (docs/protocol.md, "In-place compaction"): select-if, select-flagged and unique at
// every blocking rate in both tile states (a blocked owner abandons its tile before reading
// it, so fallbacks claim and scatter it), each compared with the same Compactor's
// out-of-place run.
TEST_P(CompactionTest, InPlaceEveryBlockingRateInBothTileStates) {
  const std::size_t n = 40 * 4096 + 77;
  for (TileState state : {TileState::split, TileState::automatic}) {
    for (std::uint32_t k = 0; k <= 9; ++k) {
      Options o = options();
      o.tile_state = state;
      o.blocking_mask = (1u << k) - 1;
      SCOPED_TRACE("in place, blocking mask " + std::to_string(*o.blocking_mask) +
                   (state == TileState::split ? " split" : " automatic"));
      Compactor select =
          make_compactor(device(), {Compaction::select_if, DType::u32, Predicate::ge}, o);
      expect_in_place_matches(device(), select, random_values(DType::u32, n, rng), 250, {}, true);
      Compactor unique = make_compactor(device(), {Compaction::unique, DType::f64}, o);
      expect_in_place_matches(device(), unique, random_values(DType::f64, n / 2, rng, 8), 0, {},
                              true);
      std::vector<std::byte> flags(n * 8, std::byte{0});
      for (std::size_t i = 0; i < n; ++i)
        flags[i * 8 + 7] = std::byte{static_cast<unsigned char>(rng() & 1)};
      Compactor flagged = make_compactor(
          device(), {Compaction::select_flagged, DType::i32, Predicate::lt, DType::u64}, o);
      expect_in_place_matches(device(), flagged, random_values(DType::i32, n, rng), 0, flags, true);
    }
  }
}

// In place: odd sizes, all and none kept, one run, every element its own run, and in-place
// and out-of-place runs of growing and shrinking sizes taking turns on one Compactor (the
// claim words are cleared with the spine halves).
TEST_P(CompactionTest, InPlaceOddSizesAllNoneOneRunAndTurns) {
  Compactor select =
      make_compactor(device(), {Compaction::select_if, DType::u32, Predicate::ge}, options());
  Compactor unique = make_compactor(device(), {Compaction::unique, DType::f64}, options());
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{5}, std::size_t{4097},
                        std::size_t{3 * 4096 + 5}, std::size_t{100003}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    expect_in_place_matches(device(), select, random_values(DType::u32, n, rng), 250);
    expect_in_place_matches(device(), unique, random_values(DType::f64, n, rng, 3), 0);
    std::vector<std::byte> same_u32(n * 4), same_f64(n * 8), distinct(n * 8);
    for (std::size_t i = 0; i < n; ++i) {
      set_value(DType::u32, same_u32, i, 42);
      set_value(DType::f64, same_f64, i, 42);
      set_value(DType::f64, distinct, i, static_cast<double>(i));
    }
    expect_in_place_matches(device(), select, same_u32, 0);     // all kept
    expect_in_place_matches(device(), select, same_u32, 1000);  // none kept
    expect_in_place_matches(device(), unique, same_f64, 0);     // one run
    expect_in_place_matches(device(), unique, distinct, 0);     // every element its own run
  }
  // In place runs as one kernel run even where chunks of one tile are forced: the kernel's
  // test for a tile already in place is per run. One run of equal values, then distinct
  // ones: per chunk, a later chunk's first tile would look in place and write nothing.
  testing::Options one_tile_chunks = options();
  one_tile_chunks.chunk_elements = 1;
  Compactor chunked_unique =
      make_compactor(device(), {Compaction::unique, DType::u32}, one_tile_chunks);
  std::vector<std::byte> run_then_distinct(50001 * 4);
  for (std::size_t i = 0; i < 50001; ++i) {
    set_value(DType::u32, run_then_distinct, i, i < 5000 ? 7.0 : static_cast<double>(i));
  }
  expect_in_place_matches(device(), chunked_unique, run_then_distinct, 0);
  for (int run = 0; run < 6; ++run) {
    const std::size_t n = run % 3 == 1 ? 30011 : 3001;
    const auto in = random_values(DType::f64, n, rng, 3);
    if (run % 2) {
      expect_in_place_matches(device(), unique, in, 0);
    } else {
      expect_compaction_matches(device(), {Compaction::unique, DType::f64}, options(), in, 0, {},
                                &unique);
    }
  }
}

// In place with statistics: with every tile but the last blocked, every other tile is
// abandoned unread, so the last tile's workgroup claims each of them exactly once (a claim it
// wins is an insertion). Then, unblocked with the shortest patience, owners and fallbacks race
// for claims on a CPU driver's threads; every result must stay exact.
TEST_P(CompactionTest, InPlaceStatisticsCountEveryClaim) {
  Options o = options();
  o.statistics = true;
  o.blocking_mask = 0;
  o.workgroup_size = 64;
  // CUDA's select-if kernels are compiled for its policy's rows only (8).
  o.vectors_per_thread = backend() == Backend::cuda ? 8 : 2;
  const std::size_t tile = 64 * o.vectors_per_thread * 4;  // u32: 4 in a vector
  const std::size_t tiles = 37;
  const std::size_t n = (tiles - 1) * tile + 5;
  const CompactSpec spec{Compaction::select_if, DType::u32, Predicate::ge};
  Compactor compactor = make_compactor(device(), spec, o);
  Buffer data = device().allocate(n * 4);
  Buffer count = device().allocate(8);
  const auto in = random_values(DType::u32, n, rng);
  device().upload(data, in);
  const RunResult result = compactor.run(data, data, count, n, Value::of(std::uint32_t{250}));
  ASSERT_TRUE(result.statistics);
  EXPECT_EQ(result.statistics->insertions, tiles - 1);
  EXPECT_EQ(result.statistics->fallbacks, tiles - 1);
  expect_in_place_matches(device(), compactor, in, 250);
  o.blocking_mask.reset();
  o.tuning.max_spins = 1;
  Compactor racing = make_compactor(device(), spec, o);
  for (int run = 0; run < 8; ++run) {
    SCOPED_TRACE("racing run " + std::to_string(run));
    expect_in_place_matches(device(), racing, random_values(DType::u32, 150 * tile + 3, rng), 250);
  }
}

// In place, blocked and racing: small tiles (thousands of them) and the shortest patience, so
// that up-walks overlap and their windows meet READY, INCLUSIVE and claimed tiles and take them
// at once (docs/protocol.md, "In-place compaction"; on lavapipe a run of this size has a few
// such windows that take a claimed tile). Select-if and unique, 1 in 2 and 1 in 4 blocked.
TEST_P(CompactionTest, InPlaceBlockedRacingWalksOverlap) {
  Options o = options();
  o.workgroup_size = 64;
  // CUDA's select-if kernels are compiled for its policy's rows only (8).
  o.vectors_per_thread = backend() == Backend::cuda ? 8 : 1;
  o.tuning.max_spins = 1;
  const std::size_t tile = 64 * o.vectors_per_thread * 4;  // u32: 4 in a vector
  for (std::uint32_t mask : {1u, 3u}) {
    o.blocking_mask = mask;
    Compactor select =
        make_compactor(device(), {Compaction::select_if, DType::u32, Predicate::ge}, o);
    Compactor unique = make_compactor(device(), {Compaction::unique, DType::u32}, o);
    for (int run = 0; run < 3; ++run) {
      SCOPED_TRACE("blocking mask " + std::to_string(mask) + ", run " + std::to_string(run));
      expect_in_place_matches(device(), select, random_values(DType::u32, 3000 * tile + 3, rng),
                              250);
      expect_in_place_matches(device(), unique, random_values(DType::u32, 3000 * tile + 5, rng, 8),
                              0);
    }
  }
}

// In place with csdl (no fallback: owners claim and post, the walk waits) and with logical
// subgroups of 4 (a look-back window of one tile in the split state), blocked and not.
TEST_P(CompactionTest, InPlaceCsdlAndLogicalSubgroupsOfFour) {
  Compactor csdl = make_compactor(
      device(), {Compaction::select_if, DType::f32, Predicate::gt, DType::u32, Algorithm::csdl},
      options());
  Options o = options();
  // Logical subgroups are Vulkan's (CUDA warps have 32 lanes).
  if (backend() == Backend::vulkan) o.subgroup_size = 4;
  o.tile_state = TileState::split;
  Compactor narrow = make_compactor(device(), {Compaction::unique, DType::u32}, o);
  for (std::size_t n : {std::size_t{5}, std::size_t{4097}, std::size_t{100003}}) {
    expect_in_place_matches(device(), csdl, random_values(DType::f32, n, rng), 0);
    expect_in_place_matches(device(), narrow, random_values(DType::u32, n, rng, 8), 0);
  }
  for (std::uint32_t mask : {0u, 1u, 7u}) {
    o.blocking_mask = mask;
    SCOPED_TRACE("blocking mask " + std::to_string(mask));
    Compactor blocked = make_compactor(device(), {Compaction::unique, DType::u32}, o);
    expect_in_place_matches(device(), blocked, random_values(DType::u32, 9 * 4096 + 1, rng, 8), 0);
  }
}

// By hand on a GPU (--gtest_also_run_disabled_tests; `GPUSCAN_BENCH_IN_PLACE=1 gpuscan bench`
// times in place too, inside one command buffer, and is the number docs/performance.md uses):
// select-if on u32, 2^28 elements, half kept, in place against out of place on the same Compactor,
// alternating, median device time of 15 each; every count checked, the last in-place output in
// full. Before each timed run the input is restored on the device (an untimed select-if that keeps
// every element, from a pristine copy), so the GPU never idles through a host upload between runs:
// a first version that uploaded 1 GiB before each run timed out of place at 4.34 ms on an H100,
// where `gpuscan bench` times it at 1.32 ms.
TEST_P(CompactionTest, DISABLED_InPlaceTimingAgainstOutOfPlace) {
  if (backend() != Backend::vulkan) GTEST_SKIP() << "in-place compaction runs on Vulkan";
  const char* log2_n = std::getenv("GPUSCAN_TIMING_LOG2_N");  // smaller, for a CPU driver
  const std::size_t n = std::size_t{1} << (log2_n ? std::atoi(log2_n) : 28);
  const CompactSpec spec{Compaction::select_if, DType::u32, Predicate::lt};
  std::vector<std::uint32_t> in(n);
  for (auto& x : in) x = static_cast<std::uint32_t>(rng());
  const std::uint32_t constant = 0x80000000u;
  std::uint64_t expected = 0;
  for (auto x : in) expected += x < constant;
  Buffer pristine = device().allocate(n * 4), a = device().allocate(n * 4);
  Buffer b = device().allocate(n * 4), count = device().allocate(8);
  device().upload(pristine, std::as_bytes(std::span(in)));
  Compactor restore(device(), {Compaction::select_if, DType::u32, Predicate::ge});
  const auto restore_input = [&] { restore.run(pristine, a, count, n, Value::of(0u)); };
  testing::Options counting;
  counting.statistics = true;
  for (bool statistics : {false, true}) {
    // The statistics variant once each way (untimed): what the look-back did.
    Compactor compactor = make_compactor(device(), spec, statistics ? counting : Options{});
    std::vector<double> in_place_ms, out_of_place_ms;
    for (int run = 0; run < (statistics ? 1 : 16); ++run) {  // run 0 warms up
      for (bool in_place : {false, true}) {
        restore_input();
        const RunResult result =
            compactor.run(in_place ? a : pristine, in_place ? a : b, count, n, Value::of(constant));
        std::uint64_t kept = 0;
        device().download(count, std::as_writable_bytes(std::span(&kept, 1)));
        ASSERT_EQ(kept, expected);
        if (statistics) {
          const Statistics& st = *result.statistics;
          std::printf(
              "%s: %llu look-back steps, %llu spins, %llu fallbacks (in place: claims), %llu "
              "insertions (claims won)\n",
              in_place ? "in place" : "out of place",
              static_cast<unsigned long long>(st.lookback_steps),
              static_cast<unsigned long long>(st.spins),
              static_cast<unsigned long long>(st.fallbacks),
              static_cast<unsigned long long>(st.insertions));
        } else if (run > 0) {
          (in_place ? in_place_ms : out_of_place_ms).push_back(result.gpu_ms);
        }
      }
    }
    if (statistics) break;
    std::vector<std::uint32_t> out(n);
    device().download(a, std::as_writable_bytes(std::span(out)));
    for (std::size_t i = 0, j = 0; i < n; ++i) {
      if (in[i] >= constant) continue;
      ASSERT_EQ(out[j], in[i]) << "kept element " << j;
      ++j;
    }
    std::sort(in_place_ms.begin(), in_place_ms.end());
    std::sort(out_of_place_ms.begin(), out_of_place_ms.end());
    std::printf(
        "select_if u32 n=%zu on %s: out of place %.3f ms, in place %.3f ms (median of 15), "
        "in place / out of place %.3f\n",
        n, device().info().name.c_str(), out_of_place_ms[7], in_place_ms[7],
        in_place_ms[7] / out_of_place_ms[7]);
  }
}

// The benchmark validates every run: each run's count and the last output in full, and on
// CUDA CUB's counterpart the same way.
TEST_P(CompactionTest, BenchmarkValidatesEveryRun) {
  const std::size_t n = 5 * 4096 + 3;
  for (Compaction compaction :
       {Compaction::select_if, Compaction::select_flagged, Compaction::unique,
        Compaction::partition, Compaction::partition_flagged, Compaction::run_length_encode}) {
    SCOPED_TRACE(to_string(compaction));
    const CompactSpec spec{compaction, DType::u32, Predicate::lt, DType::u32};
    const auto in = random_values(DType::u32, n, rng, 4);
    std::vector<std::byte> flags(n * 4, std::byte{0});
    for (std::size_t i = 0; i < n; ++i)
      flags[i * 4] = std::byte{static_cast<unsigned char>(rng() & 1)};
    const Value constant = Value::of(std::uint32_t{250});
    // The expected output as compact_host lays it out.
    std::uint64_t kept = 0;
    const std::vector<std::byte> expected = detail::compact_host(
        device(), spec, in,
        compaction == Compaction::select_if || compaction == Compaction::partition
            ? std::optional<Value>(constant)
            : std::nullopt,
        takes_flags(spec) ? std::span<const std::byte>(flags) : std::span<const std::byte>(),
        &kept);
    ASSERT_EQ(kept, kept_indices(spec, in, n, 250, flags).size());
    CompactionBenchCase c{spec, n, 3, true, options(), constant};
    const CompactionBenchResult r = benchmark_compaction(device(), c, in, flags, kept, expected);
    EXPECT_EQ(r.counts_validated, 3);
    EXPECT_TRUE(r.output_validated);
    EXPECT_EQ(r.compaction_ms.size(), 3u);
    EXPECT_EQ(r.memcpy_ms.size(), 3u);
    if (backend() == Backend::cuda) {
      EXPECT_EQ(r.cub_ms.size(), 3u);
      EXPECT_EQ(r.cub_validated, 3);
    }
    if (backend() == Backend::vulkan) {
      // One run through the bindings: outputs past one binding are refused, not written past
      // it (run-length encoding's 8-byte lengths reach it at half the elements).
      c.options.output_binding_elements = n - 1;
      EXPECT_THROW(benchmark_compaction(device(), c, in, flags, kept, expected), UsageError);
    }
  }
}

GPUSCAN_INSTANTIATE_FOR_BACKENDS(CompactionTest);

}  // namespace
}  // namespace gpuscan::testing
