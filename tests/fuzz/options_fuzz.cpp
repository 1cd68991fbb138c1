// libFuzzer target for the CLI's option parsing (tools/gpuscan/command_line.cpp and the
// option values of option_values.cpp): the input, split at NUL bytes, is the argument list
// after "gpuscan". Whatever it holds, parsing must give a command or an exit status, and
// never crash, hang or throw: 0 with nothing on stderr (--help, --version), or 2 with exactly
// one "gpuscan: error:" line (the CLI's rule for a bad request). Every argument is also
// tried as an --init value of each dtype, a --sizes list and a --shape list. Built and run by
// scripts/fuzz (clang, with AddressSanitizer and UBSan); seeds in tests/fuzz/options_corpus.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "gpuscan/error.hpp"
#include "option_values.hpp"

namespace {

// Exactly one line, "gpuscan: error: ...\n".
bool is_one_error_line(const std::string& text) {
  const std::string prefix = "gpuscan: error: ";
  return text.size() > prefix.size() + 1 && text.compare(0, prefix.size(), prefix) == 0 &&
         text.find('\n') == text.size() - 1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> arguments{"gpuscan"};
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      arguments.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (size > 0) arguments.push_back(current);
  if (arguments.size() > 64) return -1;  // not worth keeping in the corpus
  std::vector<const char*> argv;
  for (const std::string& argument : arguments) argv.push_back(argument.c_str());

  std::ostringstream out, err;
  const auto parsed =
      gpuscan::cli::parse_command_line(static_cast<int>(argv.size()), argv.data(), out, err);
  if (const int* status = std::get_if<int>(&parsed)) {
    if (*status == 0 && !err.str().empty()) __builtin_trap();
    if (*status == 2 && !is_one_error_line(err.str())) __builtin_trap();
    if (*status != 0 && *status != 2) __builtin_trap();
  } else if (!err.str().empty() || !out.str().empty()) {
    __builtin_trap();  // a command to run, with something already written
  }

  for (const std::string& argument : arguments) {
    for (int dtype = 0; dtype <= static_cast<int>(gpuscan::DType::f64); ++dtype) {
      const auto value = gpuscan::cli::parse_value(static_cast<gpuscan::DType>(dtype), argument);
      if (value && value->dtype != static_cast<gpuscan::DType>(dtype)) __builtin_trap();
    }
    try {
      for (std::size_t n : gpuscan::cli::parse_sizes(argument)) {
        if (n == 0 || n > (std::size_t{1} << 40)) __builtin_trap();
      }
    } catch (const gpuscan::UsageError&) {
      // The expected answer to anything else.
    }
    try {
      for (const gpuscan::cli::Shape& shape : gpuscan::cli::parse_shapes(argument)) {
        if (shape.rows == 0 || shape.row_length == 0 ||
            shape.row_length > (std::size_t{1} << 40) / shape.rows) {
          __builtin_trap();
        }
      }
    } catch (const gpuscan::UsageError&) {
    }
  }
  return 0;
}
