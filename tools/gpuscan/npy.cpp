#include "npy.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>

#include "gpuscan/error.hpp"

namespace gpuscan::cli {
namespace {

// Element bytes go between the file and the device unconverted.
static_assert(std::endian::native == std::endian::little,
              "gpuscan reads .npy data as little-endian");

constexpr std::string_view magic = "\x93NUMPY";
// The dict of a sane header is a few dozen bytes; the bound keeps a corrupt length from
// turning into a huge allocation.
constexpr std::size_t max_header_bytes = std::size_t{1} << 20;

// The type codes of NumPy's 'descr' (without the byte-order character).
constexpr std::array<std::pair<DType, std::string_view>, 6> type_codes{{{DType::u32, "u4"},
                                                                        {DType::i32, "i4"},
                                                                        {DType::f32, "f4"},
                                                                        {DType::u64, "u8"},
                                                                        {DType::i64, "i8"},
                                                                        {DType::f64, "f8"}}};

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

std::string quoted(std::string_view text) {
  // Messages are one line: header bytes that are not printable ASCII show as '?'.
  std::string out = "'";
  for (char c : text) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  out.push_back('\'');
  return out;
}

std::string system_error() {
  return std::strerror(errno);
}

// The header's dict, as NumPy writes it: a Python literal with string keys whose values
// are strings, True/False, or tuples of integers.
struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<std::uint64_t>> shape;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  Header parse() {
    Header header;
    expect('{');
    while (!consume('}')) {
      const std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        header.descr = parse_string();
      } else if (key == "fortran_order") {
        header.fortran_order = parse_bool();
      } else if (key == "shape") {
        header.shape = parse_tuple();
      } else {
        fail("unexpected key " + quoted(key));
      }
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (at_ != text_.size()) fail("text after the dict");
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    std::ostringstream message;
    message << path_ << ": bad .npy header (" << why << " at byte " << at_ << " of the dict)";
    throw UsageError(message.str());
  }

  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n')) {
      ++at_;
    }
  }

  bool consume(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!consume(c)) fail(std::string("expected '") + c + "'");
  }

  bool consume_word(std::string_view word) {
    skip_space();
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  std::string parse_string() {
    skip_space();
    if (at_ == text_.size() || (text_[at_] != '\'' && text_[at_] != '"')) fail("expected a string");
    const char quote = text_[at_++];
    std::string value;
    while (at_ < text_.size() && text_[at_] != quote) {
      // A backslash takes the next character as it is: enough for the descrs read here.
      if (text_[at_] == '\\' && at_ + 1 < text_.size()) ++at_;
      value.push_back(text_[at_++]);
    }
    if (at_ == text_.size()) fail("unterminated string");
    ++at_;
    return value;
  }

  bool parse_bool() {
    if (consume_word("True")) return true;
    if (consume_word("False")) return false;
    fail("expected True or False");
  }

  std::vector<std::uint64_t> parse_tuple() {
    expect('(');
    std::vector<std::uint64_t> items;
    while (!consume(')')) {
      items.push_back(parse_integer());
      if (!consume(',')) {
        // In Python, (3) is the integer 3: a one-element tuple is written (3,).
        if (items.size() == 1) fail("expected a tuple, such as (3,)");
        expect(')');
        break;
      }
    }
    return items;
  }

  std::uint64_t parse_integer() {
    skip_space();
    if (at_ == text_.size() || text_[at_] < '0' || text_[at_] > '9') fail("expected a dimension");
    std::uint64_t value = 0;
    for (; at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9'; ++at_) {
      const auto digit = static_cast<std::uint64_t>(text_[at_] - '0');
      if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
        fail("dimension too large");
      }
      value = value * 10 + digit;
    }
    if (at_ < text_.size() && text_[at_] == 'L') ++at_;  // Python 2 NumPy wrote longs as 10L
    return value;
  }

  std::string_view text_;
  const std::string& path_;
  std::size_t at_ = 0;
};

DType parse_descr(const std::string& descr, const std::string& path) {
  std::string_view code = descr;
  // '<' little-endian; '=' and none mean native, which is little-endian here (see the
  // static_assert); '|' is "not applicable", which NumPy also accepts for these types.
  if (!code.empty() && (code.front() == '<' || code.front() == '=' || code.front() == '|')) {
    code.remove_prefix(1);
  }
  for (const auto& [dtype, name] : type_codes) {
    if (code == name) return dtype;
  }
  throw UsageError(path + ": unsupported dtype " + quoted(descr) +
                   " (supported: little-endian <u4, <i4, <f4, <u8, <i8, <f8)");
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::ostringstream text;
  text << '(';
  for (std::size_t i = 0; i < shape.size(); ++i) text << (i ? ", " : "") << shape[i];
  text << (shape.size() == 1 ? ",)" : ")");
  return text.str();
}

// Reads exactly `bytes` bytes into `destination`; false if the file ends first.
bool read_exactly(std::FILE* file, void* destination, std::size_t bytes) {
  return std::fread(destination, 1, bytes, file) == bytes;
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  File file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw UsageError("cannot open '" + path + "': " + system_error());
  return read_npy(file.get(), path);
}

NpyArray read_npy(std::FILE* stream, const std::string& path) {
  // Magic, major and minor version, then the header length: 2 bytes in 1.0, 4 in 2.0 and 3.0.
  std::array<unsigned char, 8> preamble{};
  if (!read_exactly(stream, preamble.data(), preamble.size()) ||
      std::string_view(reinterpret_cast<const char*>(preamble.data()), magic.size()) != magic) {
    throw UsageError(path + ": not a .npy file (no \\x93NUMPY magic)");
  }
  const unsigned major = preamble[6], minor = preamble[7];
  if (major < 1 || major > 3 || minor != 0) {
    throw UsageError(path + ": unsupported .npy version " + std::to_string(major) + "." +
                     std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  std::array<unsigned char, 4> length{};
  if (!read_exactly(stream, length.data(), length_bytes)) {
    throw UsageError(path + ": truncated .npy header");
  }
  std::size_t header_bytes = 0;
  for (std::size_t i = length_bytes; i-- > 0;) header_bytes = header_bytes << 8 | length[i];
  if (header_bytes > max_header_bytes) {
    throw UsageError(path + ": .npy header of " + std::to_string(header_bytes) +
                     " bytes is too long");
  }
  std::string text(header_bytes, '\0');
  if (!read_exactly(stream, text.data(), text.size())) {
    throw UsageError(path + ": truncated .npy header");
  }

  const Header header = HeaderParser(text, path).parse();
  if (!header.descr || !header.fortran_order || !header.shape) {
    throw UsageError(path + ": .npy header lacks 'descr', 'fortran_order' or 'shape'");
  }
  NpyArray array;
  array.dtype = parse_descr(*header.descr, path);
  if (*header.fortran_order) {
    throw UsageError(path +
                     ": Fortran-order arrays are not supported (save a C-order copy: numpy's "
                     "np.ascontiguousarray(a))");
  }
  if (header.shape->empty() || header.shape->size() > 2) {
    throw UsageError(path + ": shape " + shape_text(*header.shape) +
                     " is not 1-D or 2-D (gpuscan reads a vector or rows; reshape it first, "
                     "e.g. numpy's a.reshape(-1))");
  }
  array.shape = *header.shape;
  const std::size_t element = size_of(array.dtype);
  const std::uint64_t limit = std::numeric_limits<std::size_t>::max() / element;
  std::uint64_t n = 1;
  for (const std::uint64_t extent : array.shape) {
    if (extent != 0 && n > limit / extent) {
      throw UsageError(path + ": shape " + shape_text(array.shape) + " holds too many elements");
    }
    n *= extent;
  }
  const std::size_t data_bytes = static_cast<std::size_t>(n) * element;

  // Check a regular file's size first, so that a header promising more than the file
  // holds fails before allocating for it.
  const auto truncated = [&](std::size_t available) {
    return UsageError(path + ": truncated: the header promises " + std::to_string(n) +
                      " elements (" + std::to_string(data_bytes) + " bytes) but " +
                      std::to_string(available) + " bytes follow it");
  };
  struct stat status {};
  if (fstat(fileno(stream), &status) == 0 && S_ISREG(status.st_mode)) {
    const long offset = std::ftell(stream);
    if (offset >= 0 && status.st_size >= offset) {
      const auto available = static_cast<std::size_t>(status.st_size - offset);
      if (available < data_bytes) throw truncated(available);
      array.data.reserve(data_bytes);  // all of it is there
    }
  }
  // Read in pieces, the buffer growing with what arrives: a header through a pipe that
  // promises more than follows fails after reading what there is, without allocating
  // (let alone zero-filling) what it promised.
  constexpr std::size_t first_piece = std::size_t{1} << 20;
  std::size_t got = 0;
  while (got < data_bytes) {
    // Pieces double with what has arrived: memory stays within twice the data read.
    const std::size_t want = std::min(std::max(first_piece, got), data_bytes - got);
    array.data.resize(got + want);
    const std::size_t read = std::fread(array.data.data() + got, 1, want, stream);
    got += read;
    if (read < want) {
      if (std::ferror(stream)) throw UsageError("cannot read '" + path + "': " + system_error());
      throw truncated(got);
    }
  }
  // Bytes after the data are ignored, as numpy.load does.
  return array;
}

std::string npy_header_dict(DType dtype, const std::vector<std::uint64_t>& shape) {
  std::string_view code;
  for (const auto& [d, name] : type_codes) {
    if (d == dtype) code = name;
  }
  std::ostringstream dict;
  dict << "{'descr': '<" << code << "', 'fortran_order': False, 'shape': " << shape_text(shape)
       << ", }";
  return dict.str();
}

void write_npy(OutputFile& file, DType dtype, std::span<const std::byte> data,
               const std::vector<std::uint64_t>& shape) {
  write_npy_content(file, dtype, data, shape);
  file.commit();
}

void write_npy_content(OutputFile& file, DType dtype, std::span<const std::byte> data,
                       const std::vector<std::uint64_t>& shape) {
  // NumPy pads the header with spaces and a final newline so that the data starts on a
  // 64-byte boundary; numpy.load does not need it, but memory-mapping readers may.
  const std::vector<std::uint64_t> flat{data.size() / size_of(dtype)};
  std::string header = npy_header_dict(dtype, shape.empty() ? flat : shape);
  const std::size_t unpadded = magic.size() + 4 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  const auto header_bytes = static_cast<std::uint16_t>(header.size());
  std::string preamble(magic);
  preamble.push_back('\x01');  // version 1.0
  preamble.push_back('\x00');
  preamble.push_back(static_cast<char>(header_bytes & 0xff));
  preamble.push_back(static_cast<char>(header_bytes >> 8));
  file.write(std::as_bytes(std::span(preamble)));
  file.write(std::as_bytes(std::span(header)));
  file.write(data);
}

}  // namespace gpuscan::cli
