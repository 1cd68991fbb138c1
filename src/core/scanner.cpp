// The public Scanner: argument checks shared by every backend, then the backend's run.
#include <string>

#include "core/backend.hpp"
#include "core/reference.hpp"
#include "gpuscan/error.hpp"

namespace gpuscan {

Scanner::Scanner(Device& device, ScanSpec spec, Tuning tuning) : spec_(spec), device_(device.impl()) {
  reference::check_op(spec.dtype, spec.op);
  impl_ = device.impl()->make_scanner(spec, tuning);
}

Scanner::~Scanner() = default;
Scanner::Scanner(Scanner&&) noexcept = default;
Scanner& Scanner::operator=(Scanner&&) noexcept = default;

RunResult Scanner::run(const Buffer& in, Buffer& out, std::size_t n, std::optional<Value> init) {
  const std::size_t element = size_of(spec_.dtype);
  const Value start = init.value_or(reference::identity_value(spec_.dtype, spec_.op));
  if (start.dtype != spec_.dtype) {
    throw UsageError("init value is " + std::string(to_string(start.dtype)) + " but the scan is " +
                     std::string(to_string(spec_.dtype)));
  }
  const std::size_t out_elements = spec_.kind == Kind::reduce ? 1 : n;
  if (in.size() < n * element || out.size() < out_elements * element) {
    throw UsageError("buffers too small for " + std::to_string(n) + " elements");
  }
  if (n == 0) {
    // Nothing to scan; a reduction of nothing is its init value.
    if (spec_.kind == Kind::reduce) {
      device_->upload(*out.impl(), std::as_bytes(std::span(&start.bits, 1)).first(element));
    }
    return {};
  }
  return impl_->run(*in.impl(), *out.impl(), n, start);
}

}  // namespace gpuscan
