#include <array>
#include <utility>

#include "gpuscan/compactor.hpp"
#include "gpuscan/types.hpp"
#include "shaders/common/interface.h"

namespace gpuscan {
namespace {

// The public enums index the shaders' tables directly.
static_assert(static_cast<int>(DType::f64) == GS_DTYPE_F64);
static_assert(static_cast<int>(Op::bit_xor) == GS_OP_BIT_XOR);
static_assert(static_cast<int>(Kind::reduce) == GS_KIND_REDUCE);

template <class E, std::size_t N>
using Names = std::array<std::pair<E, std::string_view>, N>;

constexpr Names<DType, 6> dtype_names{{{DType::u32, "u32"},
                                       {DType::i32, "i32"},
                                       {DType::f32, "f32"},
                                       {DType::u64, "u64"},
                                       {DType::i64, "i64"},
                                       {DType::f64, "f64"}}};
constexpr Names<Op, 10> op_names{{{Op::add, "add"},
                                  {Op::mul, "mul"},
                                  {Op::min, "min"},
                                  {Op::max, "max"},
                                  {Op::bit_and, "bit_and"},
                                  {Op::bit_or, "bit_or"},
                                  {Op::bit_xor, "bit_xor"},
                                  {Op::bit_and, "and"},
                                  {Op::bit_or, "or"},
                                  {Op::bit_xor, "xor"}}};
constexpr Names<Kind, 3> kind_names{
    {{Kind::inclusive, "inclusive"}, {Kind::exclusive, "exclusive"}, {Kind::reduce, "reduce"}}};
constexpr Names<Algorithm, 3> algorithm_names{
    {{Algorithm::csdldf, "csdldf"}, {Algorithm::csdl, "csdl"}, {Algorithm::rts, "rts"}}};
constexpr Names<Backend, 3> backend_names{
    {{Backend::any, "any"}, {Backend::vulkan, "vulkan"}, {Backend::cuda, "cuda"}}};
constexpr Names<Compaction, 6> compaction_names{
    {{Compaction::select_if, "select"},
     {Compaction::select_flagged, "select-flagged"},
     {Compaction::unique, "unique"},
     {Compaction::partition, "partition"},
     {Compaction::run_length_encode, "rle"},
     {Compaction::partition_flagged, "partition-flagged"}}};
constexpr Names<Predicate, 6> predicate_names{{{Predicate::lt, "lt"},
                                               {Predicate::le, "le"},
                                               {Predicate::gt, "gt"},
                                               {Predicate::ge, "ge"},
                                               {Predicate::eq, "eq"},
                                               {Predicate::ne, "ne"}}};

template <class E, std::size_t N>
std::string_view name_of(const Names<E, N>& names, E value) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return "?";
}

template <class E, std::size_t N>
std::optional<E> parse(const Names<E, N>& names, std::string_view text) {
  for (const auto& [v, name] : names) {
    if (name == text) return v;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(DType v) {
  return name_of(dtype_names, v);
}
std::string_view to_string(Op v) {
  return name_of(op_names, v);
}
std::string_view to_string(Kind v) {
  return name_of(kind_names, v);
}
std::string_view to_string(Algorithm v) {
  return name_of(algorithm_names, v);
}
std::string_view to_string(Backend v) {
  return name_of(backend_names, v);
}

std::string_view to_string(Compaction v) {
  return name_of(compaction_names, v);
}
std::string_view to_string(Predicate v) {
  return name_of(predicate_names, v);
}

std::optional<DType> parse_dtype(std::string_view s) {
  return parse(dtype_names, s);
}
std::optional<Op> parse_op(std::string_view s) {
  return parse(op_names, s);
}
std::optional<Kind> parse_kind(std::string_view s) {
  return parse(kind_names, s);
}
std::optional<Algorithm> parse_algorithm(std::string_view s) {
  return parse(algorithm_names, s);
}
std::optional<Backend> parse_backend(std::string_view s) {
  return parse(backend_names, s);
}

std::optional<Compaction> parse_compaction(std::string_view s) {
  return parse(compaction_names, s);
}
std::optional<Predicate> parse_predicate(std::string_view s) {
  return parse(predicate_names, s);
}

std::size_t size_of(DType dtype) {
  return dtype == DType::u32 || dtype == DType::i32 || dtype == DType::f32 ? 4 : 8;
}

bool is_float(DType dtype) {
  return dtype == DType::f32 || dtype == DType::f64;
}

}  // namespace gpuscan
