// The compaction kernels' launcher for one element type, GS_CUDA_DTYPE (CMake compiles this
// file once per type, in parallel, apart from the scan's kernels.cu so that neither rebuilds
// the other). Per type: six operations with the built-in predicates, both tile states, with
// and without statistics, each operation at its policy's rows (compaction_policy.hpp).
#include "cuda/compaction_kernel_launch.cuh"
#include "cuda/element.hpp"

namespace gpuscan::cuda {
namespace {

template <class F>
void with_compaction(Compaction compaction, F&& f) {
  switch (compaction) {
    case Compaction::select_flagged:
      return f(std::integral_constant<Compaction, Compaction::select_flagged>{});
    case Compaction::unique:
      return f(std::integral_constant<Compaction, Compaction::unique>{});
    case Compaction::partition:
      return f(std::integral_constant<Compaction, Compaction::partition>{});
    case Compaction::partition_flagged:
      return f(std::integral_constant<Compaction, Compaction::partition_flagged>{});
    case Compaction::run_length_encode:
      return f(std::integral_constant<Compaction, Compaction::run_length_encode>{});
    default:
      return f(std::integral_constant<Compaction, Compaction::select_if>{});
  }
}

}  // namespace

template <class T>
void launch_compaction(const CompactArgs& a, ChainArgs chain, cudaStream_t stream) {
  with_compaction(a.compaction, [&](auto op) {
    if constexpr (op() == Compaction::select_if || op() == Compaction::partition) {
      launch_compaction_kernel<T, op()>(a, chain, stream, BuiltinPredicate<T>::of(a));
    } else {
      launch_compaction_kernel<T, op()>(a, chain, stream, NoPredicate{});
    }
  });
}

template void launch_compaction<Element>(const CompactArgs&, ChainArgs, cudaStream_t);

}  // namespace gpuscan::cuda
