// Scans 1..100 on the best device and prints the last prefix sum (5050).
#include <gpuscan/gpuscan.hpp>

#include <cstdint>
#include <cstdio>
#include <numeric>
#include <vector>

int main() {
  try {
    gpuscan::Device device = gpuscan::Device::open();
    std::vector<std::uint32_t> values(100);
    std::iota(values.begin(), values.end(), 1u);
    const auto sums = gpuscan::inclusive_scan<std::uint32_t>(device, values);
    std::printf("%s: sum of 1..100 = %u\n", device.info().name.c_str(), sums.back());
    return sums.back() == 5050 ? 0 : 1;
  } catch (const gpuscan::Error& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
