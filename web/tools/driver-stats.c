// What the GPU driver's compiler makes of the WebGPU kernels: registers, shared and local
// memory per pipeline (VK_KHR_pipeline_executable_properties), for the SPIR-V that Dawn
// hands the driver (tools/dump-shaders.mjs), assembled with spirv-as. Developer diagnostics
// for docs/performance.md's WebGPU rows; web/gpu-run.sh's `stats` mode builds the inputs.
//
//   cc -O1 -o driver-stats web/tools/driver-stats.c -lvulkan
//   driver-stats [--dump DIR] KERNEL.spv ...
//
// --dump DIR also writes what the driver shows of its compiled code: each internal
// representation it offers (KERNEL.N-NAME.txt or .bin), the pipeline cache's data
// (KERNEL.cache), and every ELF image found inside that data (KERNEL.N.elf; for a disassembler
// such as CUDA's nvdisasm, where the driver caches its machine code that way).
//
// The pipeline layout is the kernels' one bind group (web/src/index.mjs): bindings 0..6
// storage buffers, 7 the uniform parameters; the entry point is Tint's "dawn_entry_point".
#include <stdint.h>
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

// A device function of VK_KHR_pipeline_executable_properties.
static PFN_vkVoidFunction device_function(VkDevice device, const char* name) {
  PFN_vkVoidFunction function = vkGetDeviceProcAddr(device, name);
  if (function == NULL) {
    fprintf(stderr, "driver-stats: the driver has no %s\n", name);
    exit(1);
  }
  return function;
}

// The pipeline's one executable (a compute pipeline has no other).
static VkPipelineExecutableInfoKHR executable_of(VkPipeline pipeline) {
  VkPipelineExecutableInfoKHR executable = {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
  executable.pipeline = pipeline;
  return executable;
}

static void print_statistics(VkDevice device, VkPipeline pipeline) {
  PFN_vkGetPipelineExecutableStatisticsKHR get_statistics =
      (PFN_vkGetPipelineExecutableStatisticsKHR)device_function(
          device, "vkGetPipelineExecutableStatisticsKHR");
  VkPipelineExecutableInfoKHR executable = executable_of(pipeline);
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

static void write_file(const char* path, const void* data, size_t size) {
  FILE* file = fopen(path, "wb");
  if (file == NULL || fwrite(data, 1, size, file) != size) {
    fprintf(stderr, "driver-stats: cannot write %s\n", path);
    exit(1);
  }
  fclose(file);
}

// The last path component, for names of dump files.
static const char* base_name(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// Writes each internal representation of the pipeline's one executable to DIR and lists them.
static void dump_internal_representations(VkDevice device, VkPipeline pipeline, const char* dir,
                                          const char* name) {
  PFN_vkGetPipelineExecutableInternalRepresentationsKHR get_representations =
      (PFN_vkGetPipelineExecutableInternalRepresentationsKHR)device_function(
          device, "vkGetPipelineExecutableInternalRepresentationsKHR");
  VkPipelineExecutableInfoKHR executable = executable_of(pipeline);
  uint32_t count = 0;
  check(get_representations(device, &executable, &count, NULL),
        "vkGetPipelineExecutableInternalRepresentationsKHR");
  VkPipelineExecutableInternalRepresentationKHR* representations =
      calloc(count ? count : 1, sizeof *representations);
  for (uint32_t i = 0; i < count; i++) {
    representations[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR;
  }
  // First the sizes, then the data.
  check(get_representations(device, &executable, &count, representations),
        "vkGetPipelineExecutableInternalRepresentationsKHR");
  printf(" internal representations=%u", count);
  for (uint32_t i = 0; i < count; i++) {
    VkPipelineExecutableInternalRepresentationKHR* r = &representations[i];
    r->pData = malloc(r->dataSize ? r->dataSize : 1);
  }
  check(get_representations(device, &executable, &count, representations),
        "vkGetPipelineExecutableInternalRepresentationsKHR");
  for (uint32_t i = 0; i < count; i++) {
    const VkPipelineExecutableInternalRepresentationKHR* r = &representations[i];
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%u-%s.%s", dir, name, i, r->name, r->isText ? "txt" : "bin");
    for (char* c = path + strlen(dir) + 1; *c; c++) {
      if (*c == ' ' || *c == '/') *c = '_';
    }
    // Text representations count their terminating zero.
    size_t size = r->isText && r->dataSize > 0 ? r->dataSize - 1 : r->dataSize;
    write_file(path, r->pData, size);
    printf(" [%s: %zu bytes]", r->name, size);
    free(r->pData);
  }
  free(representations);
}

// Writes each 64-bit ELF image inside `data` to DIR/NAME.N.elf (an image ends where its
// section header table ends) and returns how many it found.
static unsigned write_elf_images(const unsigned char* data, size_t size, const char* dir,
                                 const char* name) {
  char path[4096];
  unsigned elves = 0;
  for (size_t at = 0; at + 64 <= size; at++) {
    if (memcmp(data + at,
               "\x7f"
               "ELF",
               4) != 0 ||
        data[at + 4] != 2)
      continue;
    uint64_t section_offset;
    uint16_t section_size, section_count;
    memcpy(&section_offset, data + at + 0x28, 8);
    memcpy(&section_size, data + at + 0x3A, 2);
    memcpy(&section_count, data + at + 0x3C, 2);
    uint64_t end = section_offset + (uint64_t)section_size * section_count;
    if (end < 64 || end > size - at) continue;
    snprintf(path, sizeof path, "%s/%s.%u.elf", dir, name, elves++);
    write_file(path, data + at, (size_t)end);
  }
  return elves;
}

// Writes the pipeline cache's data to DIR, and each ELF image inside it.
static void dump_cache(VkDevice device, VkPipelineCache cache, const char* dir, const char* name) {
  size_t size = 0;
  check(vkGetPipelineCacheData(device, cache, &size, NULL), "vkGetPipelineCacheData");
  unsigned char* data = malloc(size ? size : 1);
  check(vkGetPipelineCacheData(device, cache, &size, data), "vkGetPipelineCacheData");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.cache", dir, name);
  write_file(path, data, size);
  printf(" cache=%zu bytes elf images=%u", size, write_elf_images(data, size, dir, name));
  free(data);
}

int main(int argc, char** argv) {
  const char* dump_dir = NULL;
  if (argc > 1 && strcmp(argv[1], "--dump") == 0) {
    if (argc < 4) {
      fprintf(stderr, "usage: driver-stats [--dump DIR] KERNEL.spv ...\n");
      return 2;
    }
    dump_dir = argv[2];
    argv += 2;
    argc -= 2;
  }
  if (argc < 2) {
    fprintf(stderr, "usage: driver-stats [--dump DIR] KERNEL.spv ...\n");
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
    if (dump_dir) info.flags |= VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR;
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = "dawn_entry_point";
    info.layout = layout;
    // A cache of its own a pipeline, so that its data holds this pipeline's code only.
    VkPipelineCache cache = VK_NULL_HANDLE;
    if (dump_dir) {
      VkPipelineCacheCreateInfo cache_info = {VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
      check(vkCreatePipelineCache(device, &cache_info, NULL, &cache), "vkCreatePipelineCache");
    }
    VkPipeline pipeline;
    check(vkCreateComputePipelines(device, cache, 1, &info, NULL, &pipeline),
          "vkCreateComputePipelines");
    printf("%s:", argv[a]);
    print_statistics(device, pipeline);
    if (dump_dir) {
      dump_internal_representations(device, pipeline, dump_dir, base_name(argv[a]));
      dump_cache(device, cache, dump_dir, base_name(argv[a]));
      vkDestroyPipelineCache(device, cache, NULL);
    }
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
