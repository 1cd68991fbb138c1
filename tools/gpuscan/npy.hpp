// NumPy .npy files: the 1-D and 2-D (C order), little-endian arrays of gpuscan's element
// types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "gpuscan/types.hpp"
#include "output_file.hpp"

namespace gpuscan::cli {

struct NpyArray {
  DType dtype = DType::u32;
  std::vector<std::uint64_t> shape;  // (n,) or (rows, row length)
  std::vector<std::byte> data;       // size() / size_of(dtype) elements, row after row

  std::size_t size() const { return data.size() / size_of(dtype); }
};

// Reads a version 1.0, 2.0 or 3.0 file. Anything it cannot hold (another dtype, a
// big-endian one, a shape of other than one or two dimensions, Fortran order, a short file) is
// a UsageError
// that names the file and the problem.
NpyArray read_npy(const std::string& path);
// The same from an open stream (a pipe, memory), `path` naming it in messages.
NpyArray read_npy(std::FILE* stream, const std::string& path);

// Writes a version 1.0 file holding `data` (size_of(dtype) bytes per element) to `file`
// and commits it (output_file.hpp: a regular file is replaced atomically). The shape is
// (n,), or `shape` where given (its product must be n). Throws Error if writing fails.
void write_npy(OutputFile& file, DType dtype, std::span<const std::byte> data,
               const std::vector<std::uint64_t>& shape = {});
// The same without the commit, for a command that writes several files and puts them in
// place only once all are written.
void write_npy_content(OutputFile& file, DType dtype, std::span<const std::byte> data,
                       const std::vector<std::uint64_t>& shape = {});

// The header's dict for `dtype` and `shape`, e.g.
// "{'descr': '<u4', 'fortran_order': False, 'shape': (3,), }".
std::string npy_header_dict(DType dtype, const std::vector<std::uint64_t>& shape);

}  // namespace gpuscan::cli
