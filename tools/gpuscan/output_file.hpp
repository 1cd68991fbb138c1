// An output the CLI writes (the scan's .npy, the bench's CSV): opened before any work is
// done, so that a target that cannot be written is a usage error up front, and completed
// only once everything succeeded.
//
// A regular file (or a path that does not exist yet) is written to a uniquely named
// temporary file beside it, created exclusively (it never replaces a file of the user's),
// and renamed over the path at commit(): a failed run leaves the old file, or none, behind.
// Anything else is written in place, through symlinks: a FIFO, a device file, a symlink
// (its target is written, the link stays). /dev/stdout, /dev/stderr and /dev/fd/N are
// written through the process's own descriptor, so `>>` appends. A directory is refused.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace gpuscan::cli {

class OutputFile {
 public:
  // Throws UsageError if `path` is a directory or cannot be opened or created.
  explicit OutputFile(std::string path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Removes the temporary file unless commit() succeeded; an in-place target is left as is.
  ~OutputFile();

  // Appends `bytes` to the content. Throws Error if writing fails.
  void write(std::span<const std::byte> bytes);
  // Ends the content and puts it in place. Throws Error if that fails.
  void commit();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string temporary_;   // empty: written in place
  bool inherited_ = false;  // a copy of one of the process's descriptors (/dev/stdout)
  int fd_ = -1;
  std::size_t written_ = 0;
  bool committed_ = false;
};

}  // namespace gpuscan::cli
