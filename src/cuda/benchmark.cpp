// The CUDA side of a benchmark (core/bench_target.hpp): the scans through their launchers,
// cudaMemcpyAsync as the copy baseline and CUB as the vendor's; each timed run bracketed by
// events on the device's stream, its output poisoned before and checked on the device
// after.
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "core/bench_checks.hpp"
#include "core/reference.hpp"
#include "cuda/check.hpp"
#include "cuda/cuda_device.hpp"
#include "cuda/scan_launcher.hpp"

namespace gpuscan::cuda {
namespace {

using testing::Implementation;

constexpr std::uint32_t poison = 0xDEADBEEFu;
// Writing a buffer larger than L2 (50 MB on an H100 or H200) between runs evicts the
// input, so each run starts cold, as a scan inside a real pipeline would.
constexpr std::size_t flush_bytes = std::size_t{512} << 20;

// What the host reads back after each run: the device check's count, the run's counters
// and the first output element (a reduction's result).
struct RunRecord {
  std::uint32_t check_errors;
  ChainState chain;
  std::uint64_t first;
};

// One implementation: a scan's launcher, or a baseline.
struct Launch {
  Implementation implementation;
  std::unique_ptr<ScanLauncher> scan;  // csdldf, csdl, rts
  OwnedWorkspace workspace;            // the scan's
  DeviceMemory cub_temp;               // cub
};

class CudaBenchTarget : public detail::BenchTarget {
 public:
  CudaBenchTarget(CudaDevice& device, const testing::BenchCase& c, std::span<const std::byte> input)
      : device_(device),
        c_(c),
        stream_(device.stream()),
        element_(size_of(c.dtype)),
        in_(c.n * element_),
        out_(c.n * element_),  // memcpy writes n even for a reduction
        errors_(sizeof(std::uint32_t)),
        init_(reference::identity_value(c.dtype, c.op)) {
    device_.upload(in_, input);
    if (c.row_length != 0) rows_ = row_args(c.row_length, 0, init_.bits);
    if (!c.hot) flush_ = DeviceMemory(flush_bytes);
    if (c.warm_code) {
      // The warming runs' own buffers: their data is what the flush left, not the timed
      // run's.
      warm_in_ = DeviceMemory(c.n * element_);
      device_.upload(warm_in_, input);
      warm_out_ = DeviceMemory(c.n * element_);
    }
  }

  ~CudaBenchTarget() override {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    if (records_) cudaFreeHost(records_);
  }

  void add(Implementation implementation) override {
    Launch launch{implementation, nullptr, {}};
    switch (implementation) {
      case Implementation::memcpy:
        break;
      case Implementation::cub:
        if (c_.op != Op::add) throw UsageError("the cub baseline runs sums only (--op add)");
        launch.cub_temp =
            DeviceMemory(c_.row_length ? cub_rows_temp_bytes(c_.dtype, c_.kind, c_.n, c_.row_length)
                                       : cub_temp_bytes(c_.dtype, c_.kind, c_.n));
        break;
      default: {
        const Algorithm algorithm = implementation == Implementation::csdl  ? Algorithm::csdl
                                    : implementation == Implementation::rts ? Algorithm::rts
                                                                            : Algorithm::csdldf;
        launch.scan = std::make_unique<ScanLauncher>(c_.dtype, c_.op, c_.kind, algorithm,
                                                     device_.policy(c_.dtype), c_.options);
        if (c_.n > launch.scan->max_elements()) {
          throw UsageError(std::to_string(c_.n) + " elements are more than one run takes");
        }
        launch.workspace.reserve(*launch.scan, c_.n, stream_);
      }
    }
    launches_.push_back(std::move(launch));
  }

  bool counts_statistics(std::size_t i) const override {
    return launches_[i].scan && launches_[i].scan->counts_statistics();
  }

  // One untimed run each loads the kernels and wakes the device (a CUDA context keeps its
  // clocks up from then on).
  void warm_up() override {
    for (std::size_t i = 0; i < launches_.size(); ++i) launch(i, in_.data(), out_.data());
  }

  void timed_runs(std::size_t slots, const std::function<void()>& body) override {
    events_.resize(2 * slots);
    for (cudaEvent_t& e : events_) check(cudaEventCreate(&e), "creating an event");
    void* host = nullptr;
    check(cudaMallocHost(&host, slots * sizeof(RunRecord)), "allocating pinned memory");
    records_ = static_cast<RunRecord*>(host);
    body();
    check(cudaStreamSynchronize(stream_), "running the benchmark");
  }

  void prepare(std::size_t slot, std::size_t i) override {
    launch_fill(out_.as<std::uint32_t>(), c_.n * element_ / 4, poison, stream_);
    check(cudaMemsetAsync(errors_.data(), 0, errors_.size(), stream_), "clearing the check");
    if (!c_.hot) {
      check(cudaMemsetAsync(flush_.data(), static_cast<int>(slot), flush_.size(), stream_),
            "flushing L2");
    }
    if (c_.warm_code) launch(i, warm_in_.data(), warm_out_.data());
  }

  void run(std::size_t slot, std::size_t i) override {
    check(cudaEventRecord(events_[2 * slot], stream_), "recording an event");
    launch(i, in_.data(), out_.data());
    check(cudaEventRecord(events_[2 * slot + 1], stream_), "recording an event");
  }

  void verify(std::size_t slot, std::size_t i, float tolerance) override {
    const Implementation implementation = launches_[i].implementation;
    if (detail::checked_on_device(c_, implementation)) {
      const CheckArgs args{in_.data(),
                           out_.data(),
                           c_.n,
                           c_.kind,
                           init_.bits,
                           implementation == Implementation::memcpy,
                           tolerance,
                           errors_.as<std::uint32_t>(),
                           implementation == Implementation::memcpy ? 0 : c_.row_length};
      reference::visit(c_.dtype,
                       [&](auto tag) { launch_check<decltype(tag)>(c_.op, args, stream_); });
    }
    RunRecord* target = records_ + slot;
    check(
        cudaMemcpyAsync(&target->check_errors, errors_.data(), 4, cudaMemcpyDeviceToHost, stream_),
        "reading the check");
    if (launches_[i].scan && launches_[i].scan->chained()) {
      check(cudaMemcpyAsync(&target->chain, launches_[i].workspace.state(), sizeof(ChainState),
                            cudaMemcpyDeviceToHost, stream_),
            "reading the counts");
    } else {
      target->chain = ChainState{};
    }
    target->first = 0;
    check(cudaMemcpyAsync(&target->first, out_.data(), element_, cudaMemcpyDeviceToHost, stream_),
          "reading the result");
  }

  Record record(std::size_t slot) const override {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, events_[2 * slot], events_[2 * slot + 1]), "timing a run");
    const RunRecord& r = records_[slot];
    const RunControl& counts = r.chain.last_counts();
    return {ms, counts.abandoned, r.check_errors, counts.statistics(), r.first};
  }

 private:
  void launch(std::size_t i, const void* in, void* out) {
    Launch& l = launches_[i];
    switch (l.implementation) {
      case Implementation::memcpy:
        check(cudaMemcpyAsync(out, in, c_.n * element_, cudaMemcpyDeviceToDevice, stream_),
              "copying");
        return;
      case Implementation::cub:
        if (c_.row_length != 0) {
          launch_cub_rows_sum(c_.dtype, c_.kind, in, out, c_.n, c_.row_length, l.cub_temp.data(),
                              l.cub_temp.size(), stream_);
        } else {
          launch_cub_sum(c_.dtype, c_.kind, in, out, c_.n, l.cub_temp.data(), l.cub_temp.size(),
                         stream_);
        }
        return;
      default:
        l.scan->launch(in, out, c_.n, init_, nullptr, l.workspace.data(), l.workspace.size(),
                       stream_, rows_);
    }
  }

  CudaDevice& device_;
  testing::BenchCase c_;
  cudaStream_t stream_;
  std::size_t element_;
  DeviceMemory in_, out_, errors_, flush_, warm_in_, warm_out_;
  Value init_;
  RowArgs rows_;  // a batched case's rows (length 0: none)
  std::vector<Launch> launches_;
  std::vector<cudaEvent_t> events_;
  RunRecord* records_ = nullptr;
};

}  // namespace

std::unique_ptr<detail::BenchTarget> CudaDevice::bench_target(const testing::BenchCase& c,
                                                              std::span<const std::byte> input) {
  select();
  return std::make_unique<CudaBenchTarget>(*this, c, input);
}

}  // namespace gpuscan::cuda
