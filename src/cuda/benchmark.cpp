// CudaDevice::benchmark: every implementation of a case on one input, each timed run
// bracketed by events, with the output poisoned before and checked on the device after
// (and with warm_code, preceded by an untimed run on a second input).
#include <cstring>
#include <memory>
#include <vector>

#include "core/bench_checks.hpp"
#include "core/reference.hpp"
#include "cuda/check.hpp"
#include "cuda/cuda_device.hpp"
#include "cuda/scan_launcher.hpp"

namespace gpuscan::cuda {
namespace {

constexpr std::uint32_t poison = 0xDEADBEEFu;
// Writing a buffer larger than L2 (50 MB on an H100 or H200) between runs evicts the
// input, so each run starts cold, as a scan inside a real pipeline would.
constexpr std::size_t flush_bytes = std::size_t{512} << 20;

class Events {
 public:
  explicit Events(std::size_t count) : events_(count) {
    for (cudaEvent_t& e : events_) check(cudaEventCreate(&e), "creating an event");
  }
  ~Events() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t operator[](std::size_t i) const { return events_[i]; }

 private:
  std::vector<cudaEvent_t> events_;
};

// What the host reads back after each run: the device check's count, the run's counters
// and the first output element (a reduction's result).
struct RunRecord {
  std::uint32_t check_errors;
  RunControl counts;
  std::uint64_t first;
};

}  // namespace

std::vector<BenchResult> CudaDevice::benchmark(const BenchCase& c,
                                               std::span<const std::byte> input) {
  select();
  const std::size_t element = size_of(c.dtype);
  const std::size_t runs = static_cast<std::size_t>(c.runs);
  const std::size_t k = c.implementations.size();
  DeviceMemory in(c.n * element);
  upload(in, input);
  DeviceMemory out(c.n * element);  // memcpy writes n even for a reduction
  DeviceMemory errors(sizeof(std::uint32_t));
  DeviceMemory flush;
  if (!c.hot) flush = DeviceMemory(flush_bytes);
  // The warming runs' own buffers: their data is what the flush left, not the timed run's.
  DeviceMemory warm_in, warm_out;
  if (c.warm_code) {
    warm_in = DeviceMemory(c.n * element);
    upload(warm_in, input);
    warm_out = DeviceMemory(c.n * element);
  }
  const Value init = reference::identity_value(c.dtype, c.op);
  const detail::InputFacts facts = detail::input_facts(c, input);

  std::vector<std::unique_ptr<ScanLauncher>> launchers;
  for (const Implementation implementation : c.implementations) {
    launchers.push_back(
        std::make_unique<ScanLauncher>(c.dtype, c.op, c.kind, implementation, c.tuning, stream_));
    if (c.n > launchers.back()->max_elements()) {
      throw UsageError(std::to_string(c.n) + " elements are more than one run takes");
    }
  }
  // One untimed warm-up run each loads the kernels and wakes the device.
  for (auto& launcher : launchers) launcher->launch(in.data(), out.data(), c.n, init, stream_);

  const std::size_t slots = runs * k;
  std::unique_ptr<RunRecord, decltype(&cudaFreeHost)> records(nullptr, &cudaFreeHost);
  {
    void* host = nullptr;
    check(cudaMallocHost(&host, slots * sizeof(RunRecord)), "allocating pinned memory");
    records.reset(static_cast<RunRecord*>(host));
  }
  const Events events(2 * slots);
  // The timed runs go round the implementations (run r of each, then run r + 1), so that a
  // slow spell of the device hits them alike.
  for (std::size_t slot = 0; slot < slots; ++slot) {
    const std::size_t i = slot % k;
    const Implementation implementation = c.implementations[i];
    launch_fill(out.as<std::uint32_t>(), c.n * element / 4, poison, stream_);
    check(cudaMemsetAsync(errors.data(), 0, errors.size(), stream_), "clearing the check");
    if (!c.hot)
      check(cudaMemsetAsync(flush.data(), static_cast<int>(slot), flush.size(), stream_),
            "flushing L2");
    if (c.warm_code) launchers[i]->launch(warm_in.data(), warm_out.data(), c.n, init, stream_);
    check(cudaEventRecord(events[2 * slot], stream_), "recording an event");
    launchers[i]->launch(in.data(), out.data(), c.n, init, stream_);
    check(cudaEventRecord(events[2 * slot + 1], stream_), "recording an event");
    RunRecord* record = records.get() + slot;
    if (detail::checked_on_device(c, implementation)) {
      CheckArgs args{in.data(),
                     out.data(),
                     c.n,
                     c.kind,
                     init.bits,
                     implementation == Implementation::memcpy,
                     facts.tolerance,
                     errors.as<std::uint32_t>()};
      reference::visit(c.dtype,
                       [&](auto tag) { launch_check<decltype(tag)>(c.op, args, stream_); });
    }
    check(cudaMemcpyAsync(&record->check_errors, errors.data(), 4, cudaMemcpyDeviceToHost, stream_),
          "reading the check");
    if (launchers[i]->chained()) {
      check(cudaMemcpyAsync(&record->counts, launchers[i]->last_counts(), sizeof(RunControl),
                            cudaMemcpyDeviceToHost, stream_),
            "reading the counts");
    } else {
      record->counts = RunControl{};
    }
    record->first = 0;
    check(cudaMemcpyAsync(&record->first, out.data(), element, cudaMemcpyDeviceToHost, stream_),
          "reading the result");
  }
  check(cudaStreamSynchronize(stream_), "running the benchmark");

  std::vector<BenchResult> results;
  for (std::size_t i = 0; i < k; ++i) {
    BenchResult result{c.implementations[i], {}, 0, 0, {}};
    for (std::size_t slot = i; slot < slots; slot += k) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, events[2 * slot], events[2 * slot + 1]), "timing a run");
      result.ms.push_back(ms);
      const RunRecord& record = records.get()[slot];
      const auto* first = reinterpret_cast<const std::byte*>(&record.first);
      detail::count_run(result, c, facts, record.counts.abandoned, record.check_errors, first);
      if (launchers[i]->counts_statistics())
        result.statistics.push_back(record.counts.statistics());
    }
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace gpuscan::cuda
