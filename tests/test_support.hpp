// Shared by every test file: the backends of the build and their devices under test, seeds
// that are printed, what a csdl run that gave up means (its documented outcome, not a
// failure), and fixtures that skip, saying why, where a backend has no device and fail a
// test if the Vulkan validation layers spoke during it.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "gpuscan/gpuscan.hpp"
#include "gpuscan/testing.hpp"
#include "seed.hpp"
#include "vulkan/instance.hpp"

namespace gpuscan {
// Parameters by name in test output ("GetParam() = (vulkan, u32, csdldf)").
inline void PrintTo(Backend x, std::ostream* os) {
  *os << to_string(x);
}
inline void PrintTo(DType x, std::ostream* os) {
  *os << to_string(x);
}
inline void PrintTo(Op x, std::ostream* os) {
  *os << to_string(x);
}
inline void PrintTo(Kind x, std::ostream* os) {
  *os << to_string(x);
}
inline void PrintTo(Algorithm x, std::ostream* os) {
  *os << to_string(x);
}
namespace testing {
inline void PrintTo(TileState x, std::ostream* os) {
  *os << (x == TileState::split ? "split" : x == TileState::packed ? "packed" : "automatic");
}
}  // namespace testing
}  // namespace gpuscan

namespace gpuscan::testing {

// The backends this build has: Vulkan always, CUDA where it was built with a CUDA toolkit.
inline std::vector<Backend> built_backends() {
#ifdef GPUSCAN_HAS_CUDA
  return {Backend::vulkan, Backend::cuda};
#else
  return {Backend::vulkan};
#endif
}

// A backend's device for the run (GPUSCAN_TEST_DEVICE picks one by name), or why there is
// none: no CUDA GPU, no Vulkan driver, no device of that name.
struct DeviceUnderTest {
  std::optional<Device> device;
  std::string missing;
};

inline DeviceUnderTest open_device_under_test(Backend backend) {
  DeviceUnderTest opened;
  const char* name = std::getenv("GPUSCAN_TEST_DEVICE");
  try {
    opened.device = Device::open(backend, name ? name : "");
    const DeviceInfo& info = opened.device->info();
    std::printf("%s test device: %s (%s, %s, subgroup %u)\n",
                std::string(to_string(backend)).c_str(), info.name.c_str(), info.type.c_str(),
                info.driver.c_str(), info.subgroup_size);
  } catch (const DeviceError& e) {
    opened.missing = e.what();
  }
  return opened;
}

// One static per backend, constructed once its device is open: statics are destroyed in
// the reverse order of their construction, so each device is released before the driver
// state that opening it set up (the CUDA runtime's and the Vulkan driver's exit handlers).
// A holder constructed before the open outlived them and crashed the test process at exit
// on an H100.
inline DeviceUnderTest& device_under_test(Backend backend) {
  switch (backend) {
    case Backend::cuda: {
      static DeviceUnderTest cuda = open_device_under_test(Backend::cuda);
      return cuda;
    }
    case Backend::vulkan: {
      static DeviceUnderTest vulkan = open_device_under_test(Backend::vulkan);
      return vulkan;
    }
    case Backend::any:
      break;
  }
  static DeviceUnderTest any = open_device_under_test(Backend::any);
  return any;
}

inline bool has_device(Backend backend) {
  return device_under_test(backend).device.has_value();
}

// Why a backend's tests skip: "no CUDA GPU: <what opening one said>".
inline std::string why_no_device(Backend backend) {
  return "no " + std::string(backend == Backend::cuda ? "CUDA GPU" : "Vulkan device") + ": " +
         device_under_test(backend).missing;
}

// The backends that have a device in this run.
inline std::vector<Backend> present_backends() {
  std::vector<Backend> present;
  for (Backend backend : built_backends()) {
    if (has_device(backend)) present.push_back(backend);
  }
  return present;
}

// The Vulkan device of the Vulkan-only tests (they skip where it is missing).
inline Device& test_device() {
  return *device_under_test(Backend::vulkan).device;
}

// GPUSCAN_TEST_SUBGROUP_SIZE=S runs the Vulkan scans with logical subgroups of S lanes (a
// power of two up to the hardware's), proving the scan network for sizes the device does
// not have; 0 or unset: the hardware's. CUDA has no logical subgroups and ignores it.
inline std::uint32_t test_subgroup_size(Backend backend) {
  const char* size = std::getenv("GPUSCAN_TEST_SUBGROUP_SIZE");
  if (backend != Backend::vulkan || size == nullptr) return 0;
  return static_cast<std::uint32_t>(std::strtoul(size, nullptr, 10));
}

// GPUSCAN_TEST_TILE_STATE=split|packed runs the scans with that tile state; unset: the
// library's choice (packed where the device has 64-bit atomics).
inline TileState test_tile_state() {
  const char* state = std::getenv("GPUSCAN_TEST_TILE_STATE");
  if (state == nullptr) return TileState::automatic;
  return std::string_view(state) == "split" ? TileState::split : TileState::packed;
}

// The reduced-size mode, for tools that slow kernels down 10-100 times (compute-sanitizer,
// scripts/cuda_sanitize): with GPUSCAN_TEST_MAX_N=N, a checked scan of more than N elements
// runs on N plus the size's remainder mod 4099 instead, so that sizes stay odd and distinct.
inline std::size_t test_size(std::size_t n) {
  static const std::size_t cap = [] {
    const char* text = std::getenv("GPUSCAN_TEST_MAX_N");
    const std::size_t value = text ? std::strtoull(text, nullptr, 0) : 0;
    if (value) std::printf("GPUSCAN_TEST_MAX_N=%zu: larger sizes are reduced\n", value);
    return value;
  }();
  return cap && n > cap ? cap + n % 4099 : n;
}

// csdl (decoupled look-back) waits for its predecessors; on a device without forward
// progress (a CPU driver, whose worker threads the OS may preempt for milliseconds, the more
// the busier the machine) a wait can end with the library giving up and throwing
// ForwardProgressError: csdl's documented outcome there, with no output to check. A csdl
// check that meets it tries again up to `csdl_attempts` times, so that most checks still
// check something on a busy machine, then passes with a note (printed, and recorded as the
// test's property "csdl_gave_up"). Any other exception, and a ForwardProgressError of any
// other algorithm, fails the test.
constexpr int csdl_attempts = 3;

inline int& csdl_gave_up_count() {
  static int count = 0;
  return count;
}

// Runs `attempt` (poison the output, run the scan); true if it completed, false if csdl gave
// up every time (the note is printed, and the caller must not check that output).
template <class Attempt>
bool run_accepting_csdl_give_up(Algorithm algorithm, Attempt attempt) {
  for (int tries = 1;; ++tries) {
    try {
      attempt();
      return true;
    } catch (const ForwardProgressError& e) {
      if (algorithm != Algorithm::csdl) throw;
      if (tries < csdl_attempts) continue;
      ++csdl_gave_up_count();
      std::printf(
          "note: csdl gave up %d times in a row, its documented outcome without forward "
          "progress; this check passes unchecked: %s\n",
          csdl_attempts, e.what());
      ::testing::Test::RecordProperty("csdl_gave_up", csdl_gave_up_count());
      return false;
    }
  }
}

// Counts the Vulkan validation layers' messages around a test: any is a failure.
class ValidationWatch {
 public:
  void start() { before_ = vulkan::validation_message_count(); }
  void expect_silent() const {
    EXPECT_EQ(vulkan::validation_message_count(), before_) << "Vulkan validation messages";
  }

 private:
  std::uint64_t before_ = 0;
};

// Vulkan-only tests: skip where there is no Vulkan device; the validation layers stay silent.
class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!has_device(Backend::vulkan)) GTEST_SKIP() << why_no_device(Backend::vulkan);
    watch_.start();
  }
  void TearDown() override { watch_.expect_silent(); }
  Device& device() { return test_device(); }

 private:
  ValidationWatch watch_;
};

// A test of the shared suite: parameterised by the backend first (std::tuple<Backend, P...>),
// it skips where that backend has no device, and runs on that backend's device.
template <class... P>
class BackendTest : public ::testing::TestWithParam<std::tuple<Backend, P...>> {
 protected:
  void SetUp() override {
    if (!has_device(backend())) GTEST_SKIP() << why_no_device(backend());
    watch_.start();
  }
  void TearDown() override { watch_.expect_silent(); }
  Backend backend() const { return std::get<0>(this->GetParam()); }
  Device& device() { return *device_under_test(backend()).device; }
  bool is_cpu() { return device().info().is_cpu(); }

 private:
  ValidationWatch watch_;
};

// Test names: "u32", "csdldf", ... joined by '_'.
inline std::string param_name(DType x) {
  return std::string(to_string(x));
}
inline std::string param_name(Algorithm x) {
  return std::string(to_string(x));
}
inline std::string param_name(Kind x) {
  return std::string(to_string(x));
}
inline std::string param_name(Op x) {
  return std::string(to_string(x));
}

struct ParamName {
  template <class... P>
  std::string operator()(const ::testing::TestParamInfo<std::tuple<Backend, P...>>& info) const {
    if constexpr (sizeof...(P) == 0) {
      return "all";
    } else {
      std::string name;
      std::apply(
          [&](Backend, const P&... rest) {
            ((name += (name.empty() ? "" : "_") + param_name(rest)), ...);
          },
          info.param);
      return name;
    }
  }
};

}  // namespace gpuscan::testing

// Instantiates a suite of the shared tests for every backend of the build, as
// Vulkan/Suite.Test/params and Cuda/Suite.Test/params; `...` are the generators of the
// parameters after the backend (none for a suite parameterised by the backend alone).
#define GPUSCAN_INSTANTIATE_VULKAN(suite, ...)                                              \
  INSTANTIATE_TEST_SUITE_P(Vulkan, suite,                                                   \
                           ::testing::Combine(::testing::Values(::gpuscan::Backend::vulkan) \
                                                  __VA_OPT__(, ) __VA_ARGS__),              \
                           ::gpuscan::testing::ParamName{})
#ifdef GPUSCAN_HAS_CUDA
#define GPUSCAN_INSTANTIATE_CUDA(suite, ...)                                                      \
  INSTANTIATE_TEST_SUITE_P(                                                                       \
      Cuda, suite,                                                                                \
      ::testing::Combine(::testing::Values(::gpuscan::Backend::cuda) __VA_OPT__(, ) __VA_ARGS__), \
      ::gpuscan::testing::ParamName{})
#else
#define GPUSCAN_INSTANTIATE_CUDA(suite, ...) static_assert(true)
#endif
#define GPUSCAN_INSTANTIATE_FOR_BACKENDS(suite, ...)            \
  GPUSCAN_INSTANTIATE_VULKAN(suite __VA_OPT__(, ) __VA_ARGS__); \
  GPUSCAN_INSTANTIATE_CUDA(suite __VA_OPT__(, ) __VA_ARGS__)
