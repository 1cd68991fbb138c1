#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuscan/error.hpp"

namespace gpuscan::cli {
namespace {

std::string system_error() {
  return std::strerror(errno);
}

// The directory part of `path` ("." for a bare name), where its temporary file goes: a
// rename is atomic only within one file system.
std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The permissions a newly created file gets (0666 less the umask), which mkstemp's 0600
// would otherwise narrow.
mode_t new_file_mode() {
  const mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

bool write_all(int fd, std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes = bytes.subspan(static_cast<std::size_t>(written));
  }
  return true;
}

// The descriptor a path names, for /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N:
// written through a copy of the process's own descriptor, so that its offset and append
// mode hold (`gpuscan scan in.npy /dev/stdout >>log` appends; reopening would not).
std::optional<int> inherited_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
        path.find_first_not_of("0123456789", prefix.size()) == std::string::npos &&
        path.size() - prefix.size() <= 9) {
      return std::stoi(path.substr(prefix.size()));
    }
  }
  return std::nullopt;
}

}  // namespace

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw UsageError("the output path is empty");
  if (const auto inherited = inherited_descriptor(path_)) {
    fd_ = ::fcntl(*inherited, F_DUPFD_CLOEXEC, 0);
    if (fd_ < 0) throw UsageError("cannot write '" + path_ + "': " + system_error());
    inherited_ = true;
    return;
  }
  struct stat link {};
  const bool exists = ::lstat(path_.c_str(), &link) == 0;
  if (!exists && errno != ENOENT) {
    throw UsageError("cannot write '" + path_ + "': " + system_error());
  }
  if (exists && S_ISDIR(link.st_mode)) throw UsageError("'" + path_ + "' is a directory");

  if (!exists || S_ISREG(link.st_mode)) {
    // A unique name, created exclusively: an existing file of that name is never touched.
    std::string name = directory_of(path_) + "/." + name_of(path_) + ".XXXXXX.partial";
    std::vector<char> buffer(name.begin(), name.end());
    buffer.push_back('\0');
    fd_ = ::mkostemps(buffer.data(), static_cast<int>(std::strlen(".partial")), O_CLOEXEC);
    if (fd_ < 0) throw UsageError("cannot create '" + path_ + "': " + system_error());
    temporary_ = buffer.data();
    // The replaced file's permissions, or a new file's usual ones.
    const mode_t mode = exists ? link.st_mode & 07777 : new_file_mode();
    if (::fchmod(fd_, mode) != 0) {
      const std::string why = system_error();
      ::close(fd_);
      ::unlink(temporary_.c_str());
      throw UsageError("cannot create '" + path_ + "': " + why);
    }
    return;
  }

  // A symlink, FIFO, device file or socket: written in place, through links. Not truncated
  // now, so that a run that fails leaves a file behind a link as it was.
  struct stat target {};
  if (::stat(path_.c_str(), &target) == 0 && S_ISDIR(target.st_mode)) {
    throw UsageError("'" + path_ + "' is a directory");
  }
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) throw UsageError("cannot write '" + path_ + "': " + system_error());
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temporary_.empty()) ::unlink(temporary_.c_str());
}

void OutputFile::write(std::span<const std::byte> bytes) {
  if (!write_all(fd_, bytes)) throw Error("cannot write '" + path_ + "': " + system_error());
  written_ += bytes.size();
}

void OutputFile::commit() {
  // Written in place over a regular file behind a link: drop what was longer than this.
  struct stat status {};
  if (temporary_.empty() && !inherited_ && ::fstat(fd_, &status) == 0 && S_ISREG(status.st_mode) &&
      ::ftruncate(fd_, static_cast<off_t>(written_)) != 0) {
    throw Error("cannot write '" + path_ + "': " + system_error());
  }
  // close reports what a network file system only finds out when the data goes out.
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) throw Error("cannot write '" + path_ + "': " + system_error());
  if (!temporary_.empty() && std::rename(temporary_.c_str(), path_.c_str()) != 0) {
    throw Error("cannot write '" + path_ + "': " + system_error());
  }
  committed_ = true;
}

}  // namespace gpuscan::cli
