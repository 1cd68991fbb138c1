#include "option_values.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include "gpuscan/error.hpp"

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

// The largest benchmark size: 2^40 elements, as for LO:HI (more than any device holds, and
// far from where a size in bytes would overflow).
constexpr std::size_t max_size_log2 = 40;

// Digits only: std::stoull alone would take "-1" as 2^64 - 1 and skip leading spaces.
std::size_t parse_count(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    throw std::invalid_argument(text);
  }
  return std::stoull(text);  // out_of_range past 2^64 - 1
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

std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> sizes;
  try {
    if (const auto colon = text.find(':'); colon != std::string::npos) {
      const std::size_t lo = parse_count(text.substr(0, colon));
      const std::size_t hi = parse_count(text.substr(colon + 1));
      if (lo > hi || hi > max_size_log2) throw std::invalid_argument(text);
      for (std::size_t k = lo; k <= hi; ++k) sizes.push_back(std::size_t{1} << k);
    } else {
      std::size_t start = 0;
      while (start <= text.size()) {
        const std::size_t end = std::min(text.find(',', start), text.size());
        sizes.push_back(parse_count(text.substr(start, end - start)));
        start = end + 1;
      }
    }
  } catch (const std::exception&) {
    throw UsageError("--sizes '" + text +
                     "' is neither LO:HI (powers of two, LO <= HI <= 40) nor N1,N2,... (whole "
                     "numbers)");
  }
  for (std::size_t n : sizes) {
    if (n == 0) throw UsageError("--sizes: a benchmark size must be at least 1");
    if (n > std::size_t{1} << max_size_log2) {
      throw UsageError("--sizes: " + std::to_string(n) + " is more than 2^40 elements");
    }
  }
  return sizes;
}

std::optional<std::string> sizes_note(const std::string& text) {
  if (text.empty() || text.size() > 2 ||
      text.find_first_not_of("0123456789") != std::string::npos ||
      parse_count(text) > max_size_log2) {
    return std::nullopt;
  }
  return "--sizes " + text + " times n = " + text + " elements; for 2^" + text + " write --sizes " +
         text + ":" + text;
}

std::vector<Shape> parse_shapes(const std::string& text) {
  if (text == "table") {
    // DESIGN section 8 (issue: batched scans): one long row to a million short ones.
    return {{1, std::size_t{1} << 28},
            {64, 128256},
            {256, 128256},
            {1024, 32000},
            {8, std::size_t{1} << 24},
            {65536, 1024},
            {std::size_t{1} << 20, 64}};
  }
  std::vector<Shape> shapes;
  const auto refuse = [&] {
    return UsageError("--shape '" + text +
                      "': expected rows x row length as BxN, a comma-separated list of them, or "
                      "'table'");
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    const std::size_t x = item.find('x');
    if (x == std::string::npos) throw refuse();
    Shape shape;
    try {
      shape.rows = parse_count(item.substr(0, x));
      shape.row_length = parse_count(item.substr(x + 1));
    } catch (const std::exception&) {
      throw refuse();
    }
    if (shape.rows == 0 || shape.row_length == 0) {
      throw UsageError("--shape " + item + ": a benchmark shape needs rows and row length >= 1");
    }
    if (shape.row_length > (std::size_t{1} << 40) / shape.rows) {
      throw UsageError("--shape " + item + ": more than 2^40 elements");
    }
    shapes.push_back(shape);
    start = end + 1;
  }
  return shapes;
}

}  // namespace gpuscan::cli
