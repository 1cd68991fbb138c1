#include "scan_command.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include "npy.hpp"
#include "output_file.hpp"

namespace gpuscan::cli {
namespace {

template <class T>
std::optional<Value> parse_integer(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  // Parse the magnitude wide, then check it against T's range: "-0x80000000" is an i32.
  std::uint64_t magnitude = 0;
  const char* const end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, magnitude, base);
  if (text.empty() || error != std::errc{} || stop != end) return std::nullopt;

  using U = std::make_unsigned_t<T>;
  const auto max = static_cast<std::uint64_t>(std::numeric_limits<T>::max());
  if (!negative) {
    if (magnitude > max) return std::nullopt;
    return Value::of(static_cast<T>(magnitude));
  }
  // A signed type's most negative value has magnitude max + 1; an unsigned one's is 0.
  if (magnitude > (std::is_signed_v<T> ? max + 1 : 0)) return std::nullopt;
  return Value::of(static_cast<T>(U{0} - static_cast<U>(magnitude)));
}

template <class T>
std::optional<Value> parse_float(const std::string& text) {
  // strtod would skip leading spaces; a value with them is as malformed as one with trailing.
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  errno = 0;
  char* stop = nullptr;
  // strtof for f32 rounds once, where strtod and a cast could round twice.
  T value;
  if constexpr (std::is_same_v<T, float>) {
    value = std::strtof(text.c_str(), &stop);
  } else {
    value = std::strtod(text.c_str(), &stop);
  }
  if (stop != text.c_str() + text.size()) return std::nullopt;
  // Overflow is out of range; underflow to a subnormal or zero is just rounding.
  if (errno == ERANGE && std::isinf(value)) return std::nullopt;
  return Value::of(value);
}

bool is_bitwise(Op op) {
  return op == Op::bit_and || op == Op::bit_or || op == Op::bit_xor;
}

}  // namespace

std::optional<Value> parse_value(DType dtype, const std::string& text) {
  switch (dtype) {
    case DType::u32:
      return parse_integer<std::uint32_t>(text);
    case DType::i32:
      return parse_integer<std::int32_t>(text);
    case DType::f32:
      return parse_float<float>(text);
    case DType::u64:
      return parse_integer<std::uint64_t>(text);
    case DType::i64:
      return parse_integer<std::int64_t>(text);
    case DType::f64:
      return parse_float<double>(text);
  }
  return std::nullopt;
}

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
