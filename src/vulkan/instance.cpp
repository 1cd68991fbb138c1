#include "vulkan/instance.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "vulkan/check.hpp"

namespace gpuscan::vulkan {
namespace {

std::atomic<std::uint64_t> message_count{0};

VKAPI_ATTR VkBool32 VKAPI_CALL
on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
                      const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  ++message_count;
  std::fprintf(stderr, "gpuscan: Vulkan validation: %s\n", data->pMessage);
  return VK_FALSE;
}

bool validation_requested() {
  const char* value = std::getenv("GPUSCAN_VALIDATION");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

bool has_layer(const char* name) {
  std::uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vkEnumerateInstanceLayerProperties(&count, layers.data());
  return std::any_of(layers.begin(), layers.end(), [name](const VkLayerProperties& l) {
    return std::strcmp(l.layerName, name) == 0;
  });
}

std::string type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "CPU";
    default:
      return "other";
  }
}

int preference(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 3;
    default:
      return 4;
  }
}

}  // namespace

std::uint64_t validation_message_count() {
  return message_count.load();
}

std::shared_ptr<Instance> Instance::get() {
  static std::mutex mutex;
  static std::weak_ptr<Instance> current;
  const std::lock_guard lock(mutex);
  auto instance = current.lock();
  if (!instance) {
    instance = std::shared_ptr<Instance>(new Instance());
    current = instance;
  }
  return instance;
}

void Instance::open_loader() {
  // The loader is opened at run time (volk), so that a machine without it can still use the
  // CUDA backend.
  static const VkResult loader = volkInitialize();
  if (loader != VK_SUCCESS) {
    throw DeviceError(
        "no Vulkan loader found (libvulkan.so.1; Debian: apt-get install libvulkan1)");
  }
}

void Instance::use_application_instance(VkInstance instance) {
  open_loader();
  // gpuscan's command pointers come from the loader gpuscan opened; those of instance level
  // are the loader's, the same for every instance it made, so one instance loads them.
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  if (volkGetLoadedInstance() == VK_NULL_HANDLE) volkLoadInstanceOnly(instance);
}

Instance::Instance() {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "gpuscan";
  app.pEngineName = "gpuscan";
  app.apiVersion = VK_API_VERSION_1_3;

  open_loader();
  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  const bool validate = validation_requested();
  if (validate) {
    if (!has_layer("VK_LAYER_KHRONOS_validation")) {
      throw DeviceError(
          "GPUSCAN_VALIDATION=1 but the Vulkan validation layer is not installed "
          "(Debian: apt-get install vulkan-validationlayers)");
    }
    layers.push_back("VK_LAYER_KHRONOS_validation");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                   VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = on_validation_message;

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<std::uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  if (validate) info.pNext = &messenger_info;
  const VkResult result = vkCreateInstance(&info, nullptr, &instance_);
  if (result == VK_ERROR_INCOMPATIBLE_DRIVER) {
    throw DeviceError("no Vulkan driver found (Debian: apt-get install mesa-vulkan-drivers)");
  }
  check(result, "vkCreateInstance");
  volkLoadInstance(instance_);
  if (validate) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    check(create(instance_, &messenger_info, nullptr, &messenger_),
          "vkCreateDebugUtilsMessengerEXT");
  }
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    destroy(instance_, messenger_, nullptr);
  }
  vkDestroyInstance(instance_, nullptr);
}

Instance::PhysicalDevice Instance::describe(VkPhysicalDevice handle) {
  VkPhysicalDeviceSubgroupProperties subgroup{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceVulkan12Properties v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  v12.pNext = &subgroup;
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &v12;
  vkGetPhysicalDeviceProperties2(handle, &props);
  DeviceInfo info;
  info.backend = Backend::vulkan;
  info.name = props.properties.deviceName;
  info.type = type_name(props.properties.deviceType);
  info.driver = std::string(v12.driverName) + " " + v12.driverInfo;
  info.subgroup_size = subgroup.subgroupSize;
  info.max_binding_bytes = props.properties.limits.maxStorageBufferRange;
  return {handle, info};
}

std::vector<Instance::PhysicalDevice> Instance::devices() const {
  std::uint32_t count = 0;
  check(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> handles(count);
  check(vkEnumeratePhysicalDevices(instance_, &count, handles.data()),
        "vkEnumeratePhysicalDevices");

  std::vector<PhysicalDevice> result;
  std::vector<int> rank;
  for (VkPhysicalDevice handle : handles) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(handle, &props);
    if (props.apiVersion < VK_API_VERSION_1_3) continue;
    result.push_back(describe(handle));
    rank.push_back(preference(props.deviceType));
  }
  // Stable: among devices of one type, the driver's order stands.
  std::vector<std::size_t> order(result.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return rank[a] < rank[b]; });
  std::vector<PhysicalDevice> sorted;
  for (std::size_t i : order) sorted.push_back(result[i]);
  return sorted;
}

const char* result_name(VkResult result) {
  switch (result) {
    case VK_SUCCESS:
      return "VK_SUCCESS";
    case VK_NOT_READY:
      return "VK_NOT_READY";
    case VK_TIMEOUT:
      return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
      return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
      return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_LAYER_NOT_PRESENT:
      return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
      return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      return "VK_ERROR_INCOMPATIBLE_DRIVER";
    default:
      return "VkResult error";
  }
}

}  // namespace gpuscan::vulkan
