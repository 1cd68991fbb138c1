// What the GPU driver's compiler makes of the WebGPU kernels: registers, shared and local
// memory per pipeline (VK_KHR_pipeline_executable_properties), for the SPIR-V that Dawn
// hands the driver (tools/dump-shaders.mjs), assembled with spirv-as. Developer diagnostics
// for docs/performance.md's WebGPU rows; web/gpu-run.sh's `stats` mode builds the inputs.
//
//   cc -O1 -o driver-stats web/tools/driver-stats.c -lvulkan
//   driver-stats KERNEL.spv ...
//
// The pipeline layout is the kernels' one bind group (web/src/index.mjs): bindings 0..6
// storage buffers, 7 the uniform parameters; the entry point is Tint's "dawn_entry_point".
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

enum { BINDINGS = 8, PARAMS_BINDING = 7 };

static void check(VkResult result, const char* what) {
  if (result != VK_SUCCESS) {
    fprintf(stderr, "driver-stats: %s failed (VkResult %d)\n", what, result);
    exit(1);
  }
}

// VK_KHR_shader_maximal_reconvergence, which Dawn's SPIR-V asks for through the execution
// mode MaximallyReconvergesKHR (its toggle use_spirv_reconvergence_mode); spelled out here
// because Debian bookworm's Vulkan headers predate it.
#define MAXIMAL_RECONVERGENCE_EXTENSION "VK_KHR_shader_maximal_reconvergence"
enum { MAXIMAL_RECONVERGENCE_FEATURES_STYPE = 1000434000 };
typedef struct {
  VkStructureType sType;
  void* pNext;
  VkBool32 shaderMaximalReconvergence;
} MaximalReconvergenceFeatures;

static int has_extension(VkPhysicalDevice physical, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(physical, NULL, &count, NULL);
  VkExtensionProperties* extensions = calloc(count, sizeof *extensions);
  vkEnumerateDeviceExtensionProperties(physical, NULL, &count, extensions);
  int found = 0;
  for (uint32_t i = 0; i < count; i++) {
    found |= strcmp(extensions[i].extensionName, name) == 0;
  }
  free(extensions);
  return found;
}

static VkDevice create_device(VkPhysicalDevice physical) {
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR statistics = {
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  statistics.pipelineExecutableInfo = VK_TRUE;
  // Tint's SPIR-V uses the Vulkan memory model.
  VkPhysicalDeviceVulkan12Features vulkan12 = {
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &statistics};
  vulkan12.vulkanMemoryModel = VK_TRUE;
  vulkan12.vulkanMemoryModelDeviceScope = VK_TRUE;
  const char* extensions[2] = {VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME};
  uint32_t extension_count = 1;
  MaximalReconvergenceFeatures reconvergence = {
      (VkStructureType)MAXIMAL_RECONVERGENCE_FEATURES_STYPE, NULL, VK_TRUE};
  int reconverges = has_extension(physical, MAXIMAL_RECONVERGENCE_EXTENSION);
  if (reconverges) {
    extensions[extension_count++] = MAXIMAL_RECONVERGENCE_EXTENSION;
    statistics.pNext = &reconvergence;
  }
  printf("maximal reconvergence %s\n", reconverges ? "enabled" : "not offered");
  VkDeviceCreateInfo info = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &vulkan12};
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  info.enabledExtensionCount = extension_count;
  info.ppEnabledExtensionNames = extensions;
  VkDevice device;
  check(vkCreateDevice(physical, &info, NULL, &device),
        "vkCreateDevice with VK_KHR_pipeline_executable_properties");
  return device;
}

static uint32_t* read_file(const char* path, size_t* size) {
  FILE* file = fopen(path, "rb");
  if (file == NULL) {
    perror(path);
    exit(1);
  }
  fseek(file, 0, SEEK_END);
  *size = (size_t)ftell(file);
  fseek(file, 0, SEEK_SET);
  uint32_t* code = malloc(*size);
  if (code == NULL || fread(code, 1, *size, file) != *size) {
    fprintf(stderr, "driver-stats: cannot read %s\n", path);
    exit(1);
  }
  fclose(file);
  return code;
}

static void print_statistics(VkDevice device, VkPipeline pipeline) {
  PFN_vkGetPipelineExecutableStatisticsKHR get_statistics =
      (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(
          device, "vkGetPipelineExecutableStatisticsKHR");
  VkPipelineExecutableInfoKHR executable = {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
  executable.pipeline = pipeline;
  uint32_t count = 0;
  check(get_statistics(device, &executable, &count, NULL), "vkGetPipelineExecutableStatisticsKHR");
  VkPipelineExecutableStatisticKHR* statistics = calloc(count, sizeof *statistics);
  for (uint32_t i = 0; i < count; i++) {
    statistics[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
  }
  check(get_statistics(device, &executable, &count, statistics),
        "vkGetPipelineExecutableStatisticsKHR");
  for (uint32_t i = 0; i < count; i++) {
    const VkPipelineExecutableStatisticKHR* s = &statistics[i];
    printf(" %s=", s->name);
    switch (s->format) {
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
        printf("%s", s->value.b32 ? "true" : "false");
        break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
        printf("%lld", (long long)s->value.i64);
        break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
        // NVIDIA's 580 driver reports local memory as 2^36 plus the bytes: the low 32 bits
        // are kept (no statistic here comes near 2^32).
        printf("%llu", (unsigned long long)(s->value.u64 & 0xFFFFFFFFull));
        break;
      default:
        printf("%g", s->value.f64);
    }
  }
  free(statistics);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: driver-stats KERNEL.spv ...\n");
    return 2;
  }
  VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "gpuscan driver-stats";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo instance_info = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  instance_info.pApplicationInfo = &app;
  VkInstance instance;
  check(vkCreateInstance(&instance_info, NULL, &instance), "vkCreateInstance");
  uint32_t count = 1;
  VkPhysicalDevice physical;
  vkEnumeratePhysicalDevices(instance, &count, &physical);
  if (count == 0) {
    fprintf(stderr, "driver-stats: no Vulkan device\n");
    return 1;
  }
  VkPhysicalDeviceProperties properties;
  vkGetPhysicalDeviceProperties(physical, &properties);
  printf("device %s\n", properties.deviceName);
  VkDevice device = create_device(physical);

  VkDescriptorSetLayoutBinding bindings[BINDINGS];
  for (uint32_t b = 0; b < BINDINGS; b++) {
    bindings[b] = (VkDescriptorSetLayoutBinding){
        b,
        b == PARAMS_BINDING ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        1, VK_SHADER_STAGE_COMPUTE_BIT, NULL};
  }
  VkDescriptorSetLayoutCreateInfo set_info = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = BINDINGS;
  set_info.pBindings = bindings;
  VkDescriptorSetLayout set_layout;
  check(vkCreateDescriptorSetLayout(device, &set_info, NULL, &set_layout),
        "vkCreateDescriptorSetLayout");
  VkPipelineLayoutCreateInfo layout_info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &set_layout;
  VkPipelineLayout layout;
  check(vkCreatePipelineLayout(device, &layout_info, NULL, &layout), "vkCreatePipelineLayout");

  for (int a = 1; a < argc; a++) {
    size_t size;
    uint32_t* code = read_file(argv[a], &size);
    VkShaderModuleCreateInfo module_info = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = size;
    module_info.pCode = code;
    VkShaderModule module;
    check(vkCreateShaderModule(device, &module_info, NULL, &module), "vkCreateShaderModule");
    VkComputePipelineCreateInfo info = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = "dawn_entry_point";
    info.layout = layout;
    VkPipeline pipeline;
    check(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, NULL, &pipeline),
          "vkCreateComputePipelines");
    printf("%s:", argv[a]);
    print_statistics(device, pipeline);
    printf("\n");
    vkDestroyPipeline(device, pipeline, NULL);
    vkDestroyShaderModule(device, module, NULL);
    free(code);
  }
  vkDestroyPipelineLayout(device, layout, NULL);
  vkDestroyDescriptorSetLayout(device, set_layout, NULL);
  vkDestroyDevice(device, NULL);
  vkDestroyInstance(instance, NULL);
  return 0;
}
