// Values of the CLI's options that need more than CLI11 checks: a scan's --init, read once
// the input's dtype is known, and bench's --sizes and --shape. Apart from the commands so that the
// option-parsing fuzz target (tests/fuzz/options_fuzz.cpp) can call them without a device.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gpuscan/types.hpp"

namespace gpuscan::cli {

// `text` as a value of `dtype`: integers in decimal or 0x hex and in range, floats as
// strtod reads them (inf and nan included); nullopt if it is not one.
std::optional<Value> parse_value(DType dtype, const std::string& text);

// "10:28" -> 2^10 .. 2^28; "1000,4096" -> those sizes. Anything else, a size of 0 or one
// over 2^40 elements is a UsageError.
std::vector<std::size_t> parse_sizes(const std::string& text);

// What to say about --sizes given as one whole number up to 40: it asks for that many
// elements, and reads like the exponent of LO:HI. nullopt for any other request.
std::optional<std::string> sizes_note(const std::string& text);

// bench's --shape: rows x row length of a batched benchmark.
struct Shape {
  std::size_t rows = 0, row_length = 0;
};
// "64x128256,8x16777216" -> those shapes; "table" -> the batched target's seven. Anything
// else, a shape with 0 rows or length, or one over 2^40 elements is a UsageError.
std::vector<Shape> parse_shapes(const std::string& text);

}  // namespace gpuscan::cli
