#include "scan_command.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#include "npy.hpp"
#include "option_values.hpp"
#include "output_file.hpp"

namespace gpuscan::cli {
namespace {

bool is_bitwise(Op op) {
  return op == Op::bit_and || op == Op::bit_or || op == Op::bit_xor;
}

// --segments: an int64 vector of CSR offsets, S + 1 values from 0 to the input's length,
// not decreasing; anything else is a usage error naming the file.
std::vector<std::int64_t> read_segment_offsets(const std::string& path, const NpyArray& input,
                                               bool by_rows) {
  if (by_rows || input.shape.size() != 1) {
    throw UsageError("--segments takes a 1-D input (without --axis); '" + path +
                     "' would segment a 2-D one");
  }
  const NpyArray file = read_npy(path);
  if (file.dtype != DType::i64 || file.shape.size() != 1) {
    throw UsageError("--segments: '" + path + "' must be a 1-D int64 array of offsets, not " +
                     std::string(to_string(file.dtype)) +
                     (file.shape.size() == 1 ? "" : " with 2 dimensions"));
  }
  const std::string where = "--segments: '" + path + "' ";
  if (file.size() == 0) throw UsageError(where + "is empty (it needs S + 1 offsets, at least 0)");
  std::vector<std::int64_t> offsets(file.size());
  std::memcpy(offsets.data(), file.data.data(), file.data.size());
  try {
    detail::checked_segment_offsets(offsets);
  } catch (const UsageError& e) {
    throw UsageError("--segments: '" + path + "': " + e.what());
  }
  if (static_cast<std::uint64_t>(offsets.back()) != input.size()) {
    throw UsageError(where + "ends at " + std::to_string(offsets.back()) + ", but the input has " +
                     std::to_string(input.size()) + " elements");
  }
  return offsets;
}

}  // namespace

int run_scan(const ScanOptions& options) {
  // Everything about the request is checked before a device is opened, so that a bad
  // request is a usage error (exit 2) whatever devices the machine has.
  const NpyArray input = read_npy(options.input);
  const std::string dtype_name(to_string(input.dtype));
  if (is_float(input.dtype) && is_bitwise(options.op)) {
    throw UsageError("--op: " + std::string(to_string(options.op)) +
                     " needs an integer dtype, but '" + options.input + "' holds " + dtype_name);
  }
  // --axis: numpy's numbering; the last axis only (a row is contiguous in C order).
  const int dims = static_cast<int>(input.shape.size());
  bool by_rows = false;
  if (options.axis) {
    const int axis = *options.axis;
    if (axis < -dims || axis >= dims) {
      throw UsageError("--axis " + std::to_string(axis) + " is out of range for '" + options.input +
                       "', which has " + std::to_string(dims) + " dimension" +
                       (dims == 1 ? "" : "s"));
    }
    if (axis != -1 && axis != dims - 1) {
      throw UsageError("--axis " + std::to_string(axis) +
                       ": gpuscan scans along the last axis (-1) only; transpose the array "
                       "first (numpy: np.ascontiguousarray(a.T))");
    }
    by_rows = dims == 2;  // the last axis of a vector is the whole of it
  }
  std::vector<std::int64_t> offsets;
  if (!options.segments.empty()) offsets = read_segment_offsets(options.segments, input, by_rows);
  if ((by_rows || !offsets.empty()) && options.algorithm == Algorithm::rts) {
    throw UsageError(std::string(by_rows ? "--axis" : "--segments") +
                     " takes the chained algorithms, csdldf or csdl, not rts");
  }
  std::optional<Value> init;
  if (options.init) {
    init = parse_value(input.dtype, *options.init);
    if (!init) {
      throw UsageError("--init: '" + *options.init + "' is not a value of the input's dtype, " +
                       dtype_name);
    }
  }

  // Opened (or its temporary created) now: an OUT that cannot be written is refused before
  // the scan, and a run that fails leaves no OUT behind (output_file.hpp).
  OutputFile output_file(options.output);

  const ScanSpec spec{input.dtype, options.op, options.kind, options.algorithm};
  if (!options.segments.empty()) {
    const std::size_t segments = offsets.size() - 1;
    const std::size_t out_elements = options.kind == Kind::reduce ? segments : input.size();
    std::vector<std::byte> output(out_elements * size_of(input.dtype));
    Device device = Device::open(options.backend, options.device);
    detail::scan_segments_host(device, spec, input.data, output, offsets, init);
    write_npy(output_file, input.dtype, output);
    return 0;
  }
  if (!by_rows) {
    const std::size_t out_elements = options.kind == Kind::reduce ? 1 : input.size();
    std::vector<std::byte> output(out_elements * size_of(input.dtype));
    Device device = Device::open(options.backend, options.device);
    detail::scan_host(device, spec, input.data, output, init);
    write_npy(output_file, input.dtype, output);
    return 0;
  }
  const std::uint64_t rows = input.shape.size() == 2 ? input.shape[0] : 1;
  const std::uint64_t row_length = input.shape.back();
  std::vector<std::uint64_t> out_shape{rows};
  if (options.kind != Kind::reduce) out_shape.push_back(row_length);
  const std::size_t out_elements = options.kind == Kind::reduce ? rows : input.size();
  std::vector<std::byte> output(out_elements * size_of(input.dtype));
  Device device = Device::open(options.backend, options.device);
  detail::scan_rows_host(device, spec, input.data, output, rows, row_length, init);
  write_npy(output_file, input.dtype, output, out_shape);
  return 0;
}

}  // namespace gpuscan::cli
