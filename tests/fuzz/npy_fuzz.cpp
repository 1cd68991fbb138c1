// libFuzzer target for the CLI's .npy reader (tools/gpuscan/npy.cpp): any bytes must give
// an array or a UsageError, never a crash, a hang, another exception or a huge allocation.
// Read through a memory stream, which has no size to check up front: the pipe path.
// Built and run by scripts/fuzz (clang, with AddressSanitizer and UBSan).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>

#include "gpuscan/error.hpp"
#include "npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // fmemopen refuses an empty buffer; one byte more, never read past `size`, stands in.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> stream(
      fmemopen(const_cast<std::uint8_t*>(size ? data : reinterpret_cast<const std::uint8_t*>("")),
               size ? size : 1, "rb"),
      &std::fclose);
  if (size == 0) std::fgetc(stream.get());
  try {
    const gpuscan::cli::NpyArray array = gpuscan::cli::read_npy(stream.get(), "fuzz");
    if (array.data.size() % gpuscan::size_of(array.dtype) != 0) __builtin_trap();
  } catch (const gpuscan::UsageError&) {
    // The expected answer to malformed input.
  }
  return 0;
}
