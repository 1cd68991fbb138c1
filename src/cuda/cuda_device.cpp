#include "cuda/cuda_device.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "cuda/check.hpp"
#include "cuda/cuda_compactor.hpp"
#include "cuda/cuda_scanner.hpp"
#include "cuda/memory.hpp"
#include "cuda/policy.hpp"
#include "gpuscan/error.hpp"

namespace gpuscan::cuda {
namespace {

bool contains_ignoring_case(std::string_view text, std::string_view part) {
  const auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  return std::search(text.begin(), text.end(), part.begin(), part.end(),
                     [&](char a, char b) { return lower(a) == lower(b); }) != text.end();
}

std::string version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

DeviceInfo describe(int ordinal) {
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, ordinal), "reading device properties");
  int driver = 0, runtime = 0;
  check(cudaDriverGetVersion(&driver), "reading the driver version");
  check(cudaRuntimeGetVersion(&runtime), "reading the runtime version");
  DeviceInfo info;
  info.backend = Backend::cuda;
  info.name = properties.name;
  info.type = properties.integrated ? "integrated GPU" : "discrete GPU";
  info.driver = "CUDA driver " + version(driver) + ", runtime " + version(runtime) + ", sm_" +
                std::to_string(properties.major) + std::to_string(properties.minor);
  info.subgroup_size = static_cast<std::uint32_t>(properties.warpSize);
  info.ordinal = ordinal;
  info.max_binding_bytes = properties.totalGlobalMem;
  return info;
}

}  // namespace

std::vector<DeviceInfo> list_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no GPU: not an error, just no CUDA devices
    return {};
  }
  std::vector<DeviceInfo> devices;
  for (int i = 0; i < count; ++i) devices.push_back(describe(i));
  return devices;
}

std::shared_ptr<detail::DeviceImpl> open_device(std::string_view name) {
  const std::vector<DeviceInfo> devices = list_devices();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (name.empty() || contains_ignoring_case(devices[i].name, name)) {
      return std::make_shared<CudaDevice>(static_cast<int>(i), devices[i]);
    }
  }
  if (devices.empty()) throw DeviceError("no CUDA GPU found (no driver or no device)");
  throw DeviceError("no CUDA GPU matches '" + std::string(name) + "'");
}

std::shared_ptr<detail::DeviceImpl> open_device(int ordinal) {
  const std::vector<DeviceInfo> devices = list_devices();
  if (ordinal < 0 || static_cast<std::size_t>(ordinal) >= devices.size()) {
    throw DeviceError("no CUDA GPU of device number " + std::to_string(ordinal) + " (" +
                      std::to_string(devices.size()) + " found)");
  }
  return std::make_shared<CudaDevice>(ordinal, devices[static_cast<std::size_t>(ordinal)]);
}

CudaDevice::CudaDevice(int ordinal, DeviceInfo info) : ordinal_(ordinal), info_(std::move(info)) {
  select();
  check(cudaDeviceGetAttribute(&major_, cudaDevAttrComputeCapabilityMajor, ordinal_),
        "reading the compute capability");
  check(cudaDeviceGetAttribute(&minor_, cudaDevAttrComputeCapabilityMinor, ordinal_),
        "reading the compute capability");
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating a stream");
}

CudaDevice::~CudaDevice() {
  cudaStreamDestroy(stream_);
}

void CudaDevice::select() const {
  check(cudaSetDevice(ordinal_), "selecting the device");
}

std::shared_ptr<detail::BufferImpl> CudaDevice::allocate(std::size_t bytes) {
  select();
  return std::make_shared<DeviceMemory>(bytes);
}

void CudaDevice::upload(detail::BufferImpl& destination, std::span<const std::byte> source) {
  select();
  auto& memory = dynamic_cast<DeviceMemory&>(destination);
  if (source.size() > memory.size()) throw UsageError("upload larger than the buffer");
  // On the device's stream, then waited for: a plain cudaMemcpy from pageable memory may
  // return before its DMA is done, and it is not ordered with the stream's kernels.
  check(
      cudaMemcpyAsync(memory.data(), source.data(), source.size(), cudaMemcpyHostToDevice, stream_),
      "uploading");
  check(cudaStreamSynchronize(stream_), "uploading");
}

void CudaDevice::download(const detail::BufferImpl& source, std::span<std::byte> destination,
                          std::size_t source_offset) {
  select();
  const auto& memory = dynamic_cast<const DeviceMemory&>(source);
  if (source_offset + destination.size() > memory.size()) {
    throw UsageError("download past the end of the buffer");
  }
  check(cudaMemcpyAsync(destination.data(), memory.as<std::byte>() + source_offset,
                        destination.size(), cudaMemcpyDeviceToHost, stream_),
        "downloading");
  check(cudaStreamSynchronize(stream_), "downloading");
}

const detail::ScanPolicy& CudaDevice::policy(DType dtype) const {
  return policy_for(major_, minor_, dtype);
}

std::unique_ptr<detail::ScannerImpl> CudaDevice::make_scanner(const ScanSpec& spec,
                                                              const testing::Options& options) {
  select();
  return std::make_unique<CudaScanner>(info_, stream_, spec, policy(spec.dtype), options);
}

std::unique_ptr<detail::CompactorImpl> CudaDevice::make_compactor(const CompactSpec& spec,
                                                                  const testing::Options& options) {
  select();
  return std::make_unique<CudaCompactor>(info_, stream_, spec, policy(spec.dtype), options);
}

}  // namespace gpuscan::cuda
