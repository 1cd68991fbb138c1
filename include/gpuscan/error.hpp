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

}  // namespace gpuscan
