#include "vulkan/bench_support.hpp"

#include <algorithm>
#include <chrono>

namespace gpuscan::vulkan {

std::size_t flush_bytes(const DeviceInfo& info) {
  return info.is_cpu() ? std::size_t{32} << 20 : std::size_t{512} << 20;
}

void warm_up(const Context& context, const std::function<void(VkCommandBuffer)>& record_batch) {
  using clock = std::chrono::steady_clock;
  constexpr std::chrono::milliseconds busy_for{300};
  constexpr double batch_seconds = 0.02;  // short enough to stop near busy_for
  // The first batch builds the pipelines (with a cold driver cache that alone can take most
  // of busy_for), so the busy time counts from its end.
  context.submit(record_batch);
  if (context.info().is_cpu()) return;
  const clock::time_point start = clock::now();
  std::size_t repeats = 1;
  for (;;) {
    const clock::time_point before = clock::now();
    context.submit([&](VkCommandBuffer cmd) {
      for (std::size_t r = 0; r < repeats; ++r) record_batch(cmd);
    });
    const clock::time_point now = clock::now();
    if (now - start >= busy_for) return;
    const double took = std::chrono::duration<double>(now - before).count();
    repeats = std::clamp<std::size_t>(
        static_cast<std::size_t>(static_cast<double>(repeats) * batch_seconds / took), 1, 4096);
  }
}

}  // namespace gpuscan::vulkan
