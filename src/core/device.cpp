// The public Device and Buffer: backend selection, then forwarding to the backend.
#include "core/backend.hpp"
#include "gpuscan/error.hpp"
#include "vulkan/vulkan_device.hpp"
#ifdef GPUSCAN_HAS_CUDA
#include "cuda/cuda_device.hpp"
#endif

namespace gpuscan {

std::size_t Buffer::size() const {
  return impl_->size();
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> devices;
#ifdef GPUSCAN_HAS_CUDA
  devices = cuda::list_devices();
#endif
  try {
    for (DeviceInfo& info : vulkan::list_devices()) devices.push_back(std::move(info));
  } catch (const DeviceError&) {
    if (devices.empty()) throw;  // no Vulkan loader or driver: fine while CUDA has devices
  }
  return devices;
}

Device Device::open(Backend backend, std::string_view name) {
#ifdef GPUSCAN_HAS_CUDA
  if (backend == Backend::cuda) return Device(cuda::open_device(name));
  // Any backend: CUDA where a CUDA GPU (of that name) exists.
  if (backend == Backend::any) {
    try {
      return Device(cuda::open_device(name));
    } catch (const DeviceError&) {
    }
  }
#else
  if (backend == Backend::cuda) {
    throw DeviceError("this build of gpuscan has no CUDA backend; use --backend vulkan");
  }
#endif
  return Device(vulkan::open_device(name));
}

Device Device::open_cuda([[maybe_unused]] int ordinal) {
#ifdef GPUSCAN_HAS_CUDA
  return Device(cuda::open_device(ordinal));
#else
  throw DeviceError("this build of gpuscan has no CUDA backend");
#endif
}

const DeviceInfo& Device::info() const {
  return impl_->info();
}

Buffer Device::allocate(std::size_t bytes) {
  return Buffer(impl_->allocate(bytes));
}

void Device::upload(Buffer& destination, std::span<const std::byte> source) {
  impl_->upload(*destination.impl(), source);
}

void Device::download(const Buffer& source, std::span<std::byte> destination) {
  impl_->download(*source.impl(), destination);
}

}  // namespace gpuscan
