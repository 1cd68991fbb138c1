// The C ABI (include/gpuscan/gpuscan.h) over the C++ API: argument checks, exceptions
// turned into status codes and a per-thread message.
#include "gpuscan/gpuscan.h"

#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpuscan/gpuscan.hpp"
#ifdef GPUSCAN_HAS_CUDA
#include "cuda/compact_plan.hpp"
#include "cuda/plan.hpp"
#endif

struct gpuscan_device_s {
  gpuscan::Device device;
  std::string name;
  std::mutex mutex;       // calls on one device are serialised (gpuscan.h, thread safety)
  int cuda_ordinal = -1;  // a CUDA device: its device number
};

namespace {

thread_local std::string last_error;

gpuscan_status fail(gpuscan_status status, std::string message) {
  last_error = std::move(message);
  return status;
}

// Runs `body`, mapping the library's exceptions onto status codes.
template <class F>
gpuscan_status guarded(F&& body) {
  last_error.clear();
  try {
    body();
    return GPUSCAN_OK;
  } catch (const gpuscan::UsageError& e) {
    return fail(GPUSCAN_USAGE_ERROR, e.what());
  } catch (const gpuscan::ForwardProgressError& e) {
    return fail(GPUSCAN_FORWARD_PROGRESS_ERROR, e.what());
  } catch (const gpuscan::Error& e) {
    return fail(GPUSCAN_DEVICE_ERROR, e.what());
  } catch (const std::bad_alloc&) {
    return fail(GPUSCAN_DEVICE_ERROR, "out of host memory");
  } catch (const std::exception& e) {
    return fail(GPUSCAN_DEVICE_ERROR, e.what());
  } catch (...) {
    return fail(GPUSCAN_DEVICE_ERROR, "unknown failure");
  }
}

// The C enums mirror the C++ ones value for value.
static_assert(GPUSCAN_U32 == static_cast<int>(gpuscan::DType::u32) &&
              GPUSCAN_F64 == static_cast<int>(gpuscan::DType::f64));
static_assert(GPUSCAN_ADD == static_cast<int>(gpuscan::Op::add) &&
              GPUSCAN_MIN == static_cast<int>(gpuscan::Op::min) &&
              GPUSCAN_XOR == static_cast<int>(gpuscan::Op::bit_xor));
static_assert(GPUSCAN_INCLUSIVE == static_cast<int>(gpuscan::Kind::inclusive) &&
              GPUSCAN_REDUCE == static_cast<int>(gpuscan::Kind::reduce));
static_assert(GPUSCAN_SELECT_IF == static_cast<int>(gpuscan::Compaction::select_if) &&
              GPUSCAN_UNIQUE == static_cast<int>(gpuscan::Compaction::unique) &&
              GPUSCAN_RUN_LENGTH_ENCODE ==
                  static_cast<int>(gpuscan::Compaction::run_length_encode) &&
              GPUSCAN_PARTITION_FLAGGED ==
                  static_cast<int>(gpuscan::Compaction::partition_flagged));
static_assert(GPUSCAN_LT == static_cast<int>(gpuscan::Predicate::lt) &&
              GPUSCAN_NE == static_cast<int>(gpuscan::Predicate::ne));

// The C++ enum of a C enum value, or a UsageError naming the accepted range.
template <class E, class C>
E checked(C value, C first, C last, const char* what) {
  const int v = static_cast<int>(value);
  if (v < static_cast<int>(first) || v > static_cast<int>(last)) {
    throw gpuscan::UsageError(std::string(what) + " " + std::to_string(v) + " is not a gpuscan_" +
                              what + " (" + std::to_string(static_cast<int>(first)) + " .. " +
                              std::to_string(static_cast<int>(last)) + ")");
  }
  return static_cast<E>(v);
}

gpuscan::DType dtype_of(gpuscan_dtype dtype) {
  return checked<gpuscan::DType>(dtype, GPUSCAN_U32, GPUSCAN_F64, "dtype");
}
gpuscan::Op op_of(gpuscan_op op) {
  return checked<gpuscan::Op>(op, GPUSCAN_ADD, GPUSCAN_XOR, "op");
}
gpuscan::Kind kind_of(gpuscan_kind kind) {
  return checked<gpuscan::Kind>(kind, GPUSCAN_INCLUSIVE, GPUSCAN_REDUCE, "kind");
}

// A C compaction spec as the C++ one; its enums checked.
gpuscan::CompactSpec compact_spec_of(const gpuscan_compact_spec* spec) {
  if (spec == nullptr) throw gpuscan::UsageError("spec is NULL");
  return {checked<gpuscan::Compaction>(spec->compaction, GPUSCAN_SELECT_IF,
                                       GPUSCAN_PARTITION_FLAGGED, "compaction"),
          dtype_of(spec->dtype),
          checked<gpuscan::Predicate>(spec->predicate, GPUSCAN_LT, GPUSCAN_NE, "predicate"),
          dtype_of(spec->flags_dtype), gpuscan::Algorithm::csdldf};
}

gpuscan::Backend backend_of(gpuscan_backend backend) {
  switch (backend) {
    case GPUSCAN_BACKEND_ANY:
      return gpuscan::Backend::any;
    case GPUSCAN_BACKEND_VULKAN:
      return gpuscan::Backend::vulkan;
    case GPUSCAN_BACKEND_CUDA:
      return gpuscan::Backend::cuda;
  }
  throw gpuscan::UsageError("backend " + std::to_string(static_cast<int>(backend)) +
                            " is not a gpuscan_backend (ANY, VULKAN or CUDA)");
}

void check_device(gpuscan_device device) {
  if (device == nullptr) throw gpuscan::UsageError("device is NULL (open one first)");
}

std::optional<gpuscan::Value> init_value(gpuscan::DType dtype, const void* init) {
  if (init == nullptr) return std::nullopt;
  gpuscan::Value value{dtype, 0};
  std::memcpy(&value.bits, init, gpuscan::size_of(dtype));
  return value;
}

gpuscan_device make_device(gpuscan::Device device, int cuda_ordinal) {
  auto* handle = new gpuscan_device_s{std::move(device), {}, {}, cuda_ordinal};
  handle->name = handle->device.info().name;
  return handle;
}

}  // namespace

extern "C" {

gpuscan_status gpuscan_device_open(gpuscan_backend backend, const char* name, gpuscan_device* out) {
  return guarded([&] {
    if (out == nullptr) throw gpuscan::UsageError("out is NULL");
    *out = nullptr;
    gpuscan::Device device = gpuscan::Device::open(backend_of(backend), name ? name : "");
    const int ordinal =
        device.info().backend == gpuscan::Backend::cuda ? device.info().ordinal : -1;
    *out = make_device(std::move(device), ordinal);
  });
}

gpuscan_status gpuscan_device_open_cuda(int ordinal, gpuscan_device* out) {
  return guarded([&] {
    if (out == nullptr) throw gpuscan::UsageError("out is NULL");
    *out = nullptr;
    *out = make_device(gpuscan::Device::open_cuda(ordinal), ordinal);
  });
}

void gpuscan_device_close(gpuscan_device device) {
  delete device;
}

const char* gpuscan_device_name(gpuscan_device device) {
  return device ? device->name.c_str() : "";
}

gpuscan_backend gpuscan_device_backend(gpuscan_device device) {
  if (device == nullptr) return GPUSCAN_BACKEND_ANY;
  return device->device.info().backend == gpuscan::Backend::cuda ? GPUSCAN_BACKEND_CUDA
                                                                 : GPUSCAN_BACKEND_VULKAN;
}

gpuscan_status gpuscan_scan_host(gpuscan_device device, gpuscan_dtype dtype, gpuscan_op op,
                                 gpuscan_kind kind, const void* in, void* out, uint64_t n,
                                 const void* init) {
  return guarded([&] {
    check_device(device);
    const gpuscan::ScanSpec spec{dtype_of(dtype), op_of(op), kind_of(kind),
                                 gpuscan::Algorithm::csdldf};
    const std::size_t element = gpuscan::size_of(spec.dtype);
    if (n > SIZE_MAX / element) {
      throw gpuscan::UsageError("n = " + std::to_string(n) + " elements do not fit in memory");
    }
    if (n > 0 && in == nullptr) throw gpuscan::UsageError("in is NULL");
    if (out == nullptr) throw gpuscan::UsageError("out is NULL");
    const std::size_t out_n = spec.kind == gpuscan::Kind::reduce ? 1 : n;
    const std::lock_guard lock(device->mutex);
    gpuscan::detail::scan_host(
        device->device, spec, {static_cast<const std::byte*>(in), n * element},
        {static_cast<std::byte*>(out), out_n * element}, init_value(spec.dtype, init));
  });
}

gpuscan_status gpuscan_scan_rows_host(gpuscan_device device, gpuscan_dtype dtype, gpuscan_op op,
                                      gpuscan_kind kind, const void* in, void* out, uint64_t rows,
                                      uint64_t row_length, const void* init) {
  return guarded([&] {
    check_device(device);
    const gpuscan::ScanSpec spec{dtype_of(dtype), op_of(op), kind_of(kind),
                                 gpuscan::Algorithm::csdldf};
    const std::size_t element = gpuscan::size_of(spec.dtype);
    if (row_length != 0 && rows > SIZE_MAX / element / row_length) {
      throw gpuscan::UsageError(std::to_string(rows) + " rows of " + std::to_string(row_length) +
                                " elements do not fit in memory");
    }
    const std::size_t n = rows * row_length;
    if (n > 0 && in == nullptr) throw gpuscan::UsageError("in is NULL");
    const std::size_t out_n = spec.kind == gpuscan::Kind::reduce ? rows : n;
    if (out_n > 0 && out == nullptr) throw gpuscan::UsageError("out is NULL");
    const std::lock_guard lock(device->mutex);
    gpuscan::detail::scan_rows_host(device->device, spec,
                                    {static_cast<const std::byte*>(in), n * element},
                                    {static_cast<std::byte*>(out), out_n * element}, rows,
                                    row_length, init_value(spec.dtype, init));
  });
}

gpuscan_status gpuscan_scan_segments_host(gpuscan_device device, gpuscan_dtype dtype, gpuscan_op op,
                                          gpuscan_kind kind, const void* in, void* out,
                                          const int64_t* offsets, uint64_t segments,
                                          const void* init) {
  return guarded([&] {
    check_device(device);
    const gpuscan::ScanSpec spec{dtype_of(dtype), op_of(op), kind_of(kind),
                                 gpuscan::Algorithm::csdldf};
    if (offsets == nullptr) throw gpuscan::UsageError("offsets is NULL");
    if (segments >= SIZE_MAX / sizeof(std::int64_t)) {
      throw gpuscan::UsageError(std::to_string(segments) + " segments do not fit in memory");
    }
    const std::span<const std::int64_t> offset_span(offsets, segments + 1);
    const std::size_t element = gpuscan::size_of(spec.dtype);
    const std::int64_t last = offset_span.back();
    if (last < 0 || static_cast<std::uint64_t>(last) > SIZE_MAX / element) {
      throw gpuscan::UsageError("the last offset, " + std::to_string(last) +
                                ", is not an element count");
    }
    const auto n = static_cast<std::size_t>(last);
    if (n > 0 && in == nullptr) throw gpuscan::UsageError("in is NULL");
    const std::size_t out_n = spec.kind == gpuscan::Kind::reduce ? segments : n;
    if (out_n > 0 && out == nullptr) throw gpuscan::UsageError("out is NULL");
    const std::lock_guard lock(device->mutex);
    gpuscan::detail::scan_segments_host(
        device->device, spec, {static_cast<const std::byte*>(in), n * element},
        {static_cast<std::byte*>(out), out_n * element}, offset_span, init_value(spec.dtype, init));
  });
}

gpuscan_status gpuscan_compact_host(gpuscan_device device, const gpuscan_compact_spec* c_spec,
                                    const void* in, const void* flags, uint64_t n,
                                    const void* constant, void* out, void* second,
                                    uint64_t* count) {
  return guarded([&] {
    check_device(device);
    const gpuscan::CompactSpec spec = compact_spec_of(c_spec);
    const std::size_t element = gpuscan::size_of(spec.dtype);
    const std::size_t flag_size = gpuscan::size_of(spec.flags_dtype);
    const bool two_outputs = gpuscan::writes_second_output(spec.compaction);
    const bool flagged = gpuscan::takes_flags(spec.compaction);
    if (n > SIZE_MAX / 8) {
      throw gpuscan::UsageError("n = " + std::to_string(n) + " elements do not fit in memory");
    }
    if (n > 0 && in == nullptr) throw gpuscan::UsageError("in is NULL");
    if (n > 0 && out == nullptr) throw gpuscan::UsageError("out is NULL");
    if (count == nullptr) throw gpuscan::UsageError("count is NULL");
    if (flagged != (flags != nullptr)) {
      throw gpuscan::UsageError(std::string(to_string(spec.compaction)) +
                                (flagged ? " needs flags" : " takes no flags (pass NULL)"));
    }
    if (two_outputs != (second != nullptr) && (n > 0 || !two_outputs)) {
      throw gpuscan::UsageError(std::string(to_string(spec.compaction)) +
                                (two_outputs ? " writes a second output: second is NULL"
                                             : " writes one output (pass NULL as second)"));
    }
    std::uint64_t kept = 0;
    std::vector<std::byte> bytes;
    {
      const std::lock_guard lock(device->mutex);
      bytes = gpuscan::detail::compact_host(
          device->device, spec, {static_cast<const std::byte*>(in), n * element},
          init_value(spec.dtype, constant),
          {static_cast<const std::byte*>(flags), flagged ? n * flag_size : 0}, &kept);
    }
    // compact_host's bytes: the kept elements, then partition's rejected elements or
    // run-length encoding's lengths.
    // (Nothing kept: `out` may be NULL, and bytes.data() is for an empty result.)
    if (kept > 0) std::memcpy(out, bytes.data(), kept * element);
    if (second && bytes.size() > kept * element) {
      std::memcpy(second, bytes.data() + kept * element, bytes.size() - kept * element);
    }
    *count = kept;
  });
}

gpuscan_status gpuscan_cuda_compact(gpuscan_device device, const gpuscan_compact_spec* c_spec,
                                    const void* d_in, const void* d_flags, uint64_t n,
                                    const void* constant, void* d_out, void* d_second,
                                    uint64_t* d_count, void* stream) {
  return guarded([&] {
    check_device(device);
    const gpuscan::CompactSpec spec = compact_spec_of(c_spec);
#ifdef GPUSCAN_HAS_CUDA
    if (device->cuda_ordinal < 0) {
      throw gpuscan::UsageError("gpuscan_cuda_compact needs a CUDA device; " + device->name +
                                " is a Vulkan device (open it with GPUSCAN_BACKEND_CUDA)");
    }
    gpuscan::cuda::internal::compact_on_device(
        device->cuda_ordinal, spec, d_in, {d_out, d_second, d_count}, n,
        static_cast<cudaStream_t>(stream), init_value(spec.dtype, constant), d_flags);
#else
    (void)spec, (void)d_in, (void)d_flags, (void)n, (void)constant, (void)d_out, (void)d_second,
        (void)d_count, (void)stream;
    throw gpuscan::DeviceError("this build of gpuscan has no CUDA backend");
#endif
  });
}

}  // extern "C"

namespace {

// How gpuscan_cuda_scan, _rows and _segments divide their n elements: `rows` rows (1: one
// scan), or where `segmented`, `segments` CSR segments at d_offsets.
struct Layout {
  uint64_t rows = 1;
  bool segmented = false;
  const int64_t* d_offsets = nullptr;
  uint64_t segments = 0;
};

gpuscan_status cuda_scan(const char* caller, gpuscan_device device, gpuscan_dtype dtype,
                         gpuscan_op op, gpuscan_kind kind, const void* d_in, void* d_out,
                         uint64_t n, const Layout& layout, const void* init, void* stream) {
  return guarded([&] {
    check_device(device);
    const gpuscan::ScanSpec spec{dtype_of(dtype), op_of(op), kind_of(kind),
                                 gpuscan::Algorithm::csdldf};
#ifdef GPUSCAN_HAS_CUDA
    if (device->cuda_ordinal < 0) {
      throw gpuscan::UsageError(std::string(caller) + " needs a CUDA device; " + device->name +
                                " is a Vulkan device (open it with GPUSCAN_BACKEND_CUDA)");
    }
    gpuscan::cuda::internal::scan_on_device(
        device->cuda_ordinal, spec, d_in, d_out, n, static_cast<cudaStream_t>(stream),
        init_value(spec.dtype, init),
        {layout.rows, layout.segmented, layout.d_offsets, layout.segments});
#else
    (void)caller, (void)spec, (void)d_in, (void)d_out, (void)n, (void)layout, (void)init,
        (void)stream;
    throw gpuscan::DeviceError("this build of gpuscan has no CUDA backend");
#endif
  });
}

}  // namespace

extern "C" {

gpuscan_status gpuscan_cuda_scan(gpuscan_device device, gpuscan_dtype dtype, gpuscan_op op,
                                 gpuscan_kind kind, const void* d_in, void* d_out, uint64_t n,
                                 const void* init, void* stream) {
  return cuda_scan("gpuscan_cuda_scan", device, dtype, op, kind, d_in, d_out, n, {}, init, stream);
}

gpuscan_status gpuscan_cuda_scan_rows(gpuscan_device device, gpuscan_dtype dtype, gpuscan_op op,
                                      gpuscan_kind kind, const void* d_in, void* d_out,
                                      uint64_t rows, uint64_t row_length, const void* init,
                                      void* stream) {
  if (row_length != 0 && rows > UINT64_MAX / row_length) {
    return guarded([&] {
      throw gpuscan::UsageError(std::to_string(rows) + " rows of " + std::to_string(row_length) +
                                " elements are too many");
    });
  }
  return cuda_scan("gpuscan_cuda_scan_rows", device, dtype, op, kind, d_in, d_out,
                   rows * row_length, {.rows = rows}, init, stream);
}

gpuscan_status gpuscan_cuda_scan_segments(gpuscan_device device, gpuscan_dtype dtype, gpuscan_op op,
                                          gpuscan_kind kind, const void* d_in, void* d_out,
                                          uint64_t n, const int64_t* d_offsets, uint64_t segments,
                                          const void* init, void* stream) {
  return cuda_scan("gpuscan_cuda_scan_segments", device, dtype, op, kind, d_in, d_out, n,
                   {.segmented = true, .d_offsets = d_offsets, .segments = segments}, init, stream);
}

gpuscan_status gpuscan_cuda_pointer_device(const void* d_pointer, int* ordinal) {
  return guarded([&] {
    if (ordinal == nullptr) throw gpuscan::UsageError("ordinal is NULL");
    *ordinal = -1;
    if (d_pointer == nullptr) throw gpuscan::UsageError("d_pointer is NULL");
#ifdef GPUSCAN_HAS_CUDA
    cudaPointerAttributes attributes{};
    const cudaError_t status = cudaPointerGetAttributes(&attributes, d_pointer);
    if (status != cudaSuccess) {
      cudaGetLastError();  // not sticky: clear it so the caller's next CUDA call is unaffected
      throw gpuscan::DeviceError(std::string("cudaPointerGetAttributes failed: ") +
                                 cudaGetErrorString(status));
    }
    if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged) {
      throw gpuscan::UsageError(
          "the pointer is not CUDA device memory (host or unregistered memory); gpuscan scans "
          "host arrays through gpuscan_scan_host");
    }
    *ordinal = attributes.device;
#else
    throw gpuscan::DeviceError("this build of gpuscan has no CUDA backend");
#endif
  });
}

const char* gpuscan_last_error(void) {
  return last_error.c_str();
}

const char* gpuscan_version(void) {
  return GPUSCAN_VERSION;
}

}  // extern "C"
