// Devices and device memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscan/types.hpp"

namespace gpuscan {

struct DeviceInfo {
  Backend backend = Backend::vulkan;
  std::string name;
  std::string type;    // "discrete GPU", "integrated GPU", "virtual GPU", "CPU"
  std::string driver;  // driver name and version
  std::uint32_t subgroup_size = 0;
  int ordinal = 0;  // CUDA: the device number cudaSetDevice takes; Vulkan: its index
  std::uint64_t max_binding_bytes = 0;  // the largest buffer one dispatch can address

  // A CPU driver (lavapipe): no forward-progress guarantee, llvmpipe's loop limit, and
  // smaller defaults.
  bool is_cpu() const { return type == "CPU"; }
};

// Every usable device of every backend built in, best first.
std::vector<DeviceInfo> list_devices();

namespace detail {
class DeviceImpl;
class BufferImpl;
}  // namespace detail

// Memory on a device. Cheap to copy (shared ownership); freed with its last copy.
class Buffer {
 public:
  std::size_t size() const;
  const std::shared_ptr<detail::BufferImpl>& impl() const { return impl_; }

 private:
  friend class Device;
  explicit Buffer(std::shared_ptr<detail::BufferImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::BufferImpl> impl_;
};

class Device {
 public:
  // Backend::any picks CUDA if built and a CUDA GPU exists, else a Vulkan GPU, else a CPU
  // Vulkan driver. A non-empty `name` picks the first device whose name contains it
  // (case-insensitive).
  static Device open(Backend backend = Backend::any, std::string_view name = {});
  // The CUDA GPU of this device number (as cudaSetDevice counts them).
  static Device open_cuda(int ordinal);

  const DeviceInfo& info() const;
  Buffer allocate(std::size_t bytes);
  void upload(Buffer& destination, std::span<const std::byte> source);
  void download(const Buffer& source, std::span<std::byte> destination);

  const std::shared_ptr<detail::DeviceImpl>& impl() const { return impl_; }

 private:
  explicit Device(std::shared_ptr<detail::DeviceImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::DeviceImpl> impl_;
};

}  // namespace gpuscan
