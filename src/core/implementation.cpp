// The benchmark's implementations by name (gpuscan/testing.hpp): apart from the benchmark so
// that the CLI's option parsing needs nothing else of the library (tests/fuzz/options_fuzz.cpp).
#include <array>
#include <utility>

#include "gpuscan/testing.hpp"

namespace gpuscan::testing {
namespace {

constexpr std::array<std::pair<Implementation, std::string_view>, 5> implementation_names{{
    {Implementation::csdldf, "csdldf"},
    {Implementation::csdl, "csdl"},
    {Implementation::rts, "rts"},
    {Implementation::memcpy, "memcpy"},
    {Implementation::cub, "cub"},
}};

}  // namespace

std::string_view to_string(Implementation implementation) {
  for (const auto& [value, name] : implementation_names) {
    if (value == implementation) return name;
  }
  return "?";
}

std::optional<Implementation> parse_implementation(std::string_view text) {
  for (const auto& [value, name] : implementation_names) {
    if (name == text) return value;
  }
  return std::nullopt;
}

Implementation implementation_of(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::csdl:
      return Implementation::csdl;
    case Algorithm::rts:
      return Implementation::rts;
    case Algorithm::csdldf:
      break;
  }
  return Implementation::csdldf;
}

}  // namespace gpuscan::testing
