// The public Compactor: argument checks shared by every backend, then the backend's run.
#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "core/backend.hpp"
#include "core/options.hpp"
#include "gpuscan/error.hpp"

namespace gpuscan {
std::unique_ptr<detail::CompactorImpl> detail::DeviceImpl::make_compactor(const CompactSpec& spec,
                                                                          const testing::Options&) {
  throw UsageError(std::string(to_string(spec.compaction)) + " is not available on " + info().name +
                   " yet (the compaction family runs on Vulkan devices)");
}

testing::CompactionBenchResult detail::DeviceImpl::benchmark_compaction(
    const testing::CompactionBenchCase& bench_case, std::span<const std::byte>,
    std::span<const std::byte>, std::uint64_t, std::span<const std::byte>) {
  throw UsageError("the " + std::string(to_string(bench_case.spec.compaction)) +
                   " benchmark is not available on " + info().name +
                   " yet (the compaction family runs on Vulkan devices)");
}

testing::CompactionBenchResult testing::benchmark_compaction(
    Device& device, const CompactionBenchCase& bench_case, std::span<const std::byte> input,
    std::span<const std::byte> flags, std::uint64_t expected_count,
    std::span<const std::byte> expected_output) {
  if (bench_case.n == 0 || bench_case.runs < 1) {
    throw UsageError("a compaction benchmark needs n >= 1 and at least one run");
  }
  detail::check_options(bench_case.spec.algorithm, bench_case.options);
  return device.impl()->benchmark_compaction(bench_case, input, flags, expected_count,
                                             expected_output);
}

std::size_t testing::max_compaction_bench_elements(Device& device, const CompactSpec& spec,
                                                   const Options& options) {
  return device.impl()->make_compactor(spec, options)->max_elements();
}

Compactor::Compactor(Device& device, CompactSpec spec, Tuning tuning)
    : Compactor(device, spec, testing::Options{.tuning = tuning}) {}

Compactor testing::make_compactor(Device& device, const CompactSpec& spec, const Options& options) {
  return Compactor(device, spec, options);
}

Compactor::Compactor(Device& device, const CompactSpec& spec, const testing::Options& options)
    : spec_(spec), device_(device.impl()) {
  detail::check_compact_spec(spec);
  detail::check_options(spec.algorithm, options);
  impl_ = device.impl()->make_compactor(spec, options);
  // Chunks are whole tiles (so that a chunk's input starts on an aligned vector), at most
  // what one kernel run takes, at least one tile (a test's chunk_elements = 1: one tile).
  const std::size_t granule = impl_->chunk_granule();
  const std::size_t limit = options.chunk_elements
                                ? std::min(options.chunk_elements, impl_->max_elements())
                                : impl_->max_elements();
  chunk_ = std::max(limit / granule, std::size_t{1}) * granule;
}

std::size_t Compactor::max_elements() const {
  return impl_->max_total_elements();
}

Compactor::~Compactor() = default;
Compactor::Compactor(Compactor&&) noexcept = default;
Compactor& Compactor::operator=(Compactor&&) noexcept = default;

RunResult Compactor::run(const Buffer& in, Buffer& out, Buffer& count, std::size_t n,
                         std::optional<Value> constant, const Buffer* flags) {
  if (is_partition(spec_.compaction)) {
    throw UsageError(std::string(to_string(spec_.compaction)) +
                     " writes two outputs: call run_partition");
  }
  if (spec_.compaction == Compaction::run_length_encode) {
    throw UsageError("run-length encoding writes two outputs: call run_length_encode");
  }
  return checked_run(in, out, count, n, constant, flags, nullptr);
}

RunResult Compactor::run_partition(const Buffer& in, Buffer& selected, Buffer& rejected,
                                   Buffer& count, std::size_t n, Value constant) {
  if (spec_.compaction != Compaction::partition) {
    throw UsageError(
        "run_partition with a constant needs a partition Compactor, not " +
        std::string(to_string(spec_.compaction)) +
        (spec_.compaction == Compaction::partition_flagged ? " (pass the flags)" : ""));
  }
  return checked_run(in, selected, count, n, constant, nullptr, &rejected);
}

RunResult Compactor::run_partition(const Buffer& in, Buffer& selected, Buffer& rejected,
                                   Buffer& count, std::size_t n, const Buffer& flags) {
  if (spec_.compaction != Compaction::partition_flagged) {
    throw UsageError("run_partition with flags needs a partition-flagged Compactor, not " +
                     std::string(to_string(spec_.compaction)));
  }
  return checked_run(in, selected, count, n, std::nullopt, &flags, &rejected);
}

RunResult Compactor::run_length_encode(const Buffer& in, Buffer& values, Buffer& lengths,
                                       Buffer& count, std::size_t n) {
  if (spec_.compaction != Compaction::run_length_encode) {
    throw UsageError("run_length_encode needs an rle Compactor, not " +
                     std::string(to_string(spec_.compaction)));
  }
  return checked_run(in, values, count, n, std::nullopt, nullptr, &lengths);
}

RunResult Compactor::checked_run(const Buffer& in, Buffer& out, Buffer& count, std::size_t n,
                                 std::optional<Value> constant, const Buffer* flags,
                                 const Buffer* second) {
  const std::size_t element = size_of(spec_.dtype);
  // The second output: partition's rejected elements, or run-length encoding's uint64
  // lengths; n of them fit.
  const bool rle = spec_.compaction == Compaction::run_length_encode;
  const std::size_t second_element = rle ? 8 : element;
  const std::string name(to_string(spec_.compaction));
  const Value compare_with = detail::compact_constant(spec_, constant);
  if (takes_flags(spec_.compaction) != (flags != nullptr)) {
    throw UsageError(flags ? name + " takes no flags" : name + " needs a flags buffer");
  }
  // Every buffer a run writes must be a buffer of its own, except that select and unique may
  // write their output over their input (docs/protocol.md, "In-place compaction": a protocol
  // in which no scatter overtakes a read of the input, which the Vulkan kernels run).
  const bool in_place = in.impl() == out.impl() && n > 0;
  if (in_place) check_in_place(name, second != nullptr);
  const std::vector<const Buffer*> read{in_place ? nullptr : &in, flags};
  const std::vector<const Buffer*> written{&out, second, &count};
  for (std::size_t w = 0; w < written.size(); ++w) {
    if (!written[w]) continue;
    for (const Buffer* r : read) {
      if (r && r->impl() == written[w]->impl() && (n > 0 || written[w] == &count)) {
        throw UsageError(written[w] == &count ? "the count needs a buffer of its own"
                                              : "an output is an input buffer: only select's and "
                                                "unique's output may be their input");
      }
    }
    for (std::size_t v = w + 1; v < written.size(); ++v) {
      if (written[v] && written[v]->impl() == written[w]->impl()) {
        throw UsageError("the outputs and the count need buffers of their own");
      }
    }
  }
  if (in.size() / element < n || out.size() / element < n ||
      (second && second->size() / second_element < n) ||
      (flags && flags->size() / size_of(spec_.flags_dtype) < n) || count.size() < 8) {
    throw UsageError(
        "buffers too small for " + std::to_string(n) + " elements of " +
        std::string(to_string(spec_.dtype)) + " (input " + std::to_string(in.size()) +
        " bytes, output " + std::to_string(out.size()) +
        (second ? std::string(rle ? ", lengths " : ", rejected ") + std::to_string(second->size())
                : "") +
        ", count " + std::to_string(count.size()) +
        (flags ? ", flags " + std::to_string(flags->size()) : "") + "; the count takes 8 bytes)");
  }
  const std::lock_guard lock(*run_mutex_);
  if (n == 0) {
    const std::uint64_t zero = 0;
    device_->upload(*count.impl(), std::as_bytes(std::span(&zero, 1)));
    return {};
  }
  // In place writes over its input, within its one run (below).
  if (!in_place && n > impl_->max_total_elements()) {
    throw UsageError(std::to_string(n) + " elements are more than one compaction takes on " +
                     device_->info().name + " (at most " +
                     std::to_string(impl_->max_total_elements()) +
                     ": without bufferDeviceAddress the outputs must fit one storage-buffer "
                     "binding)");
  }
  if (in_place && n > impl_->max_elements()) {
    // The in-place kernel's claim words and its test for tiles already in place are per run.
    throw UsageError(std::to_string(n) + " elements are more than one in-place run takes on " +
                     device_->info().name + " (at most " + std::to_string(impl_->max_elements()) +
                     "): in place does not go in chunks; give " + name +
                     " an output buffer of its own");
  }
  // In place is one run, never cut (checked above to fit one).
  return impl_->run(*in.impl(), *out.impl(), *count.impl(), n, compare_with,
                    flags ? flags->impl().get() : nullptr, second ? second->impl().get() : nullptr,
                    in_place ? n : chunk_);
}

void Compactor::check_in_place(const std::string& name, bool two_outputs) const {
  if (two_outputs) {
    throw UsageError(name +
                     " cannot run in place (its output over its input): in-place compaction is "
                     "for select_if, select_flagged and unique; give the outputs buffers of their "
                     "own");
  }
  if (!impl_->compacts_in_place()) {
    throw UsageError("in-place compaction (out == in) is not implemented on " +
                     device_->info().name + "; give " + name + " an output buffer of its own");
  }
}

std::vector<std::byte> detail::compact_host(Device& device, const CompactSpec& spec,
                                            std::span<const std::byte> input,
                                            std::optional<Value> constant,
                                            std::span<const std::byte> flags,
                                            std::uint64_t* kept_count) {
  const std::size_t element = size_of(spec.dtype);
  const std::size_t n = input.size() / element;
  Compactor compactor(device, spec);
  detail::compact_constant(spec, constant);  // checked before partition's reads it
  // Buffers of at least one byte: a device allocation of zero bytes is refused.
  const std::size_t bytes = std::max<std::size_t>(input.size(), 1);
  Buffer in = device.allocate(bytes);
  Buffer out = device.allocate(bytes);
  Buffer count = device.allocate(8);
  if (n > 0) device.upload(in, input);
  std::optional<Buffer> flags_buffer;
  if (takes_flags(spec.compaction)) {
    if (flags.size() / size_of(spec.flags_dtype) != n) {
      throw UsageError("flags hold " + std::to_string(flags.size() / size_of(spec.flags_dtype)) +
                       " elements, the input " + std::to_string(n));
    }
    flags_buffer = device.allocate(std::max<std::size_t>(flags.size(), 1));
    if (n > 0) device.upload(*flags_buffer, flags);
  }
  std::optional<Buffer> rejected, lengths;
  if (spec.compaction == Compaction::partition) {
    rejected = device.allocate(bytes);
    compactor.run_partition(in, out, *rejected, count, n, *constant);
  } else if (spec.compaction == Compaction::partition_flagged) {
    rejected = device.allocate(bytes);
    compactor.run_partition(in, out, *rejected, count, n, *flags_buffer);
  } else if (spec.compaction == Compaction::run_length_encode) {
    lengths = device.allocate(std::max<std::size_t>(n * 8, 1));
    compactor.run_length_encode(in, out, *lengths, count, n);
  } else {
    compactor.run(in, out, count, n, constant, flags_buffer ? &*flags_buffer : nullptr);
  }
  std::uint64_t kept = 0;
  device.download(count, std::as_writable_bytes(std::span(&kept, 1)));
  if (kept_count) *kept_count = kept;
  std::vector<std::byte> result(rejected ? n * element : kept * (element + (lengths ? 8 : 0)));
  const auto kept_bytes = std::span(result).first(kept * element);
  if (kept > 0) device.download(out, kept_bytes);
  if (lengths && kept > 0) device.download(*lengths, std::span(result).subspan(kept * element));
  if (rejected && kept < n) device.download(*rejected, std::span(result).subspan(kept * element));
  return result;
}

}  // namespace gpuscan
