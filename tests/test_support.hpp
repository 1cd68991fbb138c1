// Shared by the test suites: the device under test, seeds that are printed, and a check
// that the Vulkan validation layers stayed silent.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>

#include "gpuscan/gpuscan.hpp"
#include "gpuscan/testing.hpp"
#include "vulkan/instance.hpp"

namespace gpuscan::testing {

// The device of the test run: GPUSCAN_TEST_DEVICE picks one by name, else the best.
inline Device& test_device() {
  static Device device = [] {
    const char* name = std::getenv("GPUSCAN_TEST_DEVICE");
    Device d = Device::open(Backend::vulkan, name ? name : "");
    std::printf("test device: %s (%s, subgroup %u)\n", d.info().name.c_str(), d.info().type.c_str(),
                d.info().subgroup_size);
    return d;
  }();
  return device;
}

// GPUSCAN_TEST_SUBGROUP_SIZE=S runs the scans of a suite with logical subgroups of S lanes
// (a power of two up to the hardware's), proving the scan network for sizes the device
// does not have; 0 or unset: the hardware's.
inline std::uint32_t test_subgroup_size() {
  const char* size = std::getenv("GPUSCAN_TEST_SUBGROUP_SIZE");
  return size ? static_cast<std::uint32_t>(std::strtoul(size, nullptr, 10)) : 0;
}

// GPUSCAN_TEST_TILE_STATE=split|packed runs a suite's scans with that tile state; unset:
// the library's choice (packed where the device has 64-bit atomics).
inline TileState test_tile_state() {
  const char* state = std::getenv("GPUSCAN_TEST_TILE_STATE");
  if (state == nullptr) return TileState::automatic;
  return std::string_view(state) == "split" ? TileState::split : TileState::packed;
}

// A fresh seed per call, reproducible with GPUSCAN_TEST_SEED; every failure shows it.
inline std::uint64_t next_seed() {
  static std::mt19937_64 source = [] {
    const char* fixed = std::getenv("GPUSCAN_TEST_SEED");
    const std::uint64_t base = fixed ? std::strtoull(fixed, nullptr, 0) : std::random_device{}();
    std::printf("GPUSCAN_TEST_SEED=%llu\n", static_cast<unsigned long long>(base));
    return std::mt19937_64(base);
  }();
  return source();
}

// Runs `attempt` (poison the output, run the scan). A csdl look-back that gave up waiting
// for a stalled predecessor (ForwardProgressError: a CPU driver does not promise forward
// progress, and on two busy cores a run in ten or so sees a worker thread preempted for
// milliseconds) is reported and the attempt repeated, up to twenty times; any other
// failure stands.
template <class Attempt>
void run_with_progress_retries(const Scanner& scanner, Attempt attempt) {
  for (int tries = 1;; ++tries) {
    try {
      attempt();
      return;
    } catch (const ForwardProgressError& e) {
      if (scanner.spec().algorithm != Algorithm::csdl || tries == 20) throw;
      std::printf("note: %s; repeating the run\n", e.what());
    }
  }
}

// Fails the test if the validation layers reported anything during it.
class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test_device();
    messages_before_ = vulkan::validation_message_count();
  }
  void TearDown() override {
    EXPECT_EQ(vulkan::validation_message_count(), messages_before_) << "Vulkan validation messages";
  }

 private:
  std::uint64_t messages_before_ = 0;
};

}  // namespace gpuscan::testing
