// The compaction kernels' launcher for one element type, GS_CUDA_DTYPE (CMake compiles this
// file once per type, in parallel, apart from the scan's kernels.cu so that neither rebuilds
// the other). Per type: six operations with the built-in predicates, both tile states, with
// and without statistics, each operation at its policy's rows (compaction_policy.hpp); and
// select-if, select-flagged and unique in place (in_place.cuh).
#include "cuda/compaction_kernel_launch.cuh"
#include "cuda/element.hpp"
#include "cuda/kernels/in_place.cuh"

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

// Select-if, select-flagged and unique with the output over the input (in_place.cuh), in
// the tile state `chain` names, with or without statistics.
template <class T, Compaction kOp, class Pred>
void launch_in_place(const CompactArgs& a, ChainArgs chain, cudaStream_t stream, const Pred& pred) {
  constexpr int kRows = compaction_policy(kOp).rows;
  const auto with_state = [&](auto state) {
    using S = decltype(state);
    if (chain.statistics) {
      launch_tiles<T, kOp, S, kRows, false>(compact_tiles_in_place<T, kOp, S, true, kRows, Pred>, a,
                                            chain, stream, pred);
    } else {
      launch_tiles<T, kOp, S, kRows, false>(compact_tiles_in_place<T, kOp, S, false, kRows, Pred>,
                                            a, chain, stream, pred);
    }
  };
  if (chain.packed) {
    with_state(PackedState<std::uint64_t>{});
  } else {
    with_state(SplitState<std::uint64_t>{});
  }
}

}  // namespace

template <class T>
void launch_compaction(const CompactArgs& a, ChainArgs chain, cudaStream_t stream) {
  with_compaction(a.compaction, [&](auto op) {
    constexpr bool kInPlace = op() == Compaction::select_if || op() == Compaction::select_flagged ||
                              op() == Compaction::unique;
    if constexpr (kInPlace) {
      if (a.in == a.out) {
        if constexpr (op() == Compaction::select_if) {
          launch_in_place<T, op()>(a, chain, stream, BuiltinPredicate<T>::of(a));
        } else {
          launch_in_place<T, op()>(a, chain, stream, NoPredicate{});
        }
        return;
      }
    }
    if constexpr (op() == Compaction::select_if || op() == Compaction::partition) {
      launch_compaction_kernel<T, op()>(a, chain, stream, BuiltinPredicate<T>::of(a));
    } else {
      launch_compaction_kernel<T, op()>(a, chain, stream, NoPredicate{});
    }
  });
}

template void launch_compaction<Element>(const CompactArgs&, ChainArgs, cudaStream_t);

}  // namespace gpuscan::cuda
