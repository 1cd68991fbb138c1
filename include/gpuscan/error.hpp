// Every failure of the library is a gpuscan::Error with a message a user can act on.
#pragma once

#include <stdexcept>

namespace gpuscan {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The request itself is wrong (an operator the type has no meaning for, a size too large).
class UsageError : public Error {
 public:
  using Error::Error;
};

// No device, a driver call failed, or the device lacks a feature the request needs.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// A decoupled look-back (csdl) waited so long for a predecessor tile that it gave up: the
// device did not let that tile's workgroup make progress. The output is wrong; csdldf,
// which never waits unboundedly, is safe on such devices.
class ForwardProgressError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

}  // namespace gpuscan
