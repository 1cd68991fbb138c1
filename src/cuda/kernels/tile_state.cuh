// Device level: the spine of tile-state words (encoding in shaders/common/tile_state.h,
// shared with the Vulkan kernels) and what the look-back warp does with it: post its own
// tile, read a window of predecessors, insert a fallback's value.
//
// In a window read, lane l holds word (l % K) of tile (cursor - l / K), so one read covers
// 32 / K tiles; a tile's K lanes are neighbours and agree on what they saw through
// shuffles. All accesses are relaxed device-scope atomics: a tile's message counts only
// when all K of its words carry the same state.
#pragma once

#include <cuda/atomic>

#include "cuda/kernels/tile_io.cuh"
#include "shaders/common/tile_state.h"

namespace gpuscan::cuda {

// The portable form: a value of B bits over K = B / 16 words of 32 bits, word j carrying
// bits [16j, 16j + 16) beside the state.
template <class T>
struct SplitState {
  using Word = std::uint32_t;
  static constexpr int kWords = sizeof(T) * 8 / GS_PIECE_BITS;
  __device__ __forceinline__ static std::uint32_t state_of(Word w) { return w & GS_STATE_MASK; }
  __device__ __forceinline__ static Word word_of(std::uint32_t state, T value, int j) {
    return state |
           (static_cast<std::uint32_t>(to_bits(value) >> (GS_PIECE_BITS * j)) & GS_PIECE_MASK);
  }
  // Joins the pieces of the K lanes from `first` on.
  __device__ __forceinline__ static T value_of(Word w, int first) {
    std::uint64_t bits = 0;
#pragma unroll
    for (int j = 0; j < kWords; ++j) {
      const std::uint64_t piece = __shfl_sync(kFullMask, w & GS_PIECE_MASK, first + j);
      bits |= piece << (GS_PIECE_BITS * j);
    }
    return from_bits<T>(bits);
  }
};

// 32-bit types: one 64-bit word, the state in the high half (the same codes), the value in
// the low half.
template <class T>
struct PackedState {
  static_assert(sizeof(T) == 4);
  using Word = unsigned long long;
  static constexpr int kWords = 1;
  __device__ __forceinline__ static std::uint32_t state_of(Word w) {
    return static_cast<std::uint32_t>(w >> 32) & GS_STATE_MASK;
  }
  __device__ __forceinline__ static Word word_of(std::uint32_t state, T value, int) {
    return (Word{state} << 32) | to_bits(value);
  }
  __device__ __forceinline__ static T value_of(Word w, int) {
    return from_bits<T>(w & 0xFFFFFFFFu);
  }
};

// The look-back warp's view of the spine (S: SplitState or PackedState).
template <class M, class S>
struct Spine {
  using T = typename M::T;
  using Word = typename S::Word;
  static constexpr int K = S::kWords;
  static constexpr int kWindow = kWarpSize / K;  // tiles one read covers

  Word* words;

  __device__ __forceinline__ static int word_index() { return lane_id() % K; }
  __device__ __forceinline__ static int window_slot() { return lane_id() / K; }  // 0: newest

  // Moves `tile`'s words to `state` carrying `value`; a word already in a later state keeps
  // it. Returns, in the lanes of window slot 0, the words as they were before.
  __device__ __forceinline__ Word post(std::uint32_t tile, std::uint32_t state, T value) const {
    if (window_slot() != 0) return Word{GS_STATE_NOT_READY};
    const int j = word_index();
    return atomicMax(&words[std::uint64_t{tile} * K + j], S::word_of(state, value, j));
  }

  // Window `depth` of the tiles before `cursor`: slot s holds tile
  // cursor - depth * kWindow - s. Slots before tile 0 read NOT_READY.
  __device__ __forceinline__ Word read_window(std::uint32_t cursor, int depth) const {
    const std::uint32_t back = depth * kWindow + window_slot();
    if (back > cursor) return Word{GS_STATE_NOT_READY};
    ::cuda::atomic_ref<Word, ::cuda::thread_scope_device> word(
        words[std::uint64_t{cursor - back} * K + word_index()]);
    return word.load(::cuda::memory_order_relaxed);
  }

  // The state of this lane's tile: that of all its K words if they agree, else NOT_READY
  // (a message still in flight).
  __device__ __forceinline__ static std::uint32_t tile_state(Word w) {
    const std::uint32_t state = S::state_of(w);
    bool agree = true;
#pragma unroll
    for (int j = 1; j < K; ++j) agree = agree && __shfl_xor_sync(kFullMask, state, j) == state;
    return agree ? state : GS_STATE_NOT_READY;
  }

  __device__ __forceinline__ static T tile_value(Word w) {
    return S::value_of(w, lane_id() - word_index());
  }

  // Combines the values of window slots [0, count) in tile order (oldest first), the
  // result in every lane. An ordered butterfly: at each step a lane joins its partner's
  // partial, the higher lane's (older tiles) on the left.
  __device__ __forceinline__ static T reduce_window(T value, int count) {
    T x = word_index() == 0 && window_slot() < count ? value : M::identity();
#pragma unroll
    for (int d = 1; d < kWarpSize; d <<= 1) {
      const T partner = __shfl_xor_sync(kFullMask, x, d);
      x = (lane_id() & d) == 0 ? M::combine(partner, x) : M::combine(x, partner);
    }
    return x;
  }

  // The first window slot whose tile is in `wanted`, or kWindow if none is.
  __device__ __forceinline__ static int first_slot_in(std::uint32_t state, std::uint32_t wanted) {
    const unsigned ballot = __ballot_sync(kFullMask, word_index() == 0 && state == wanted);
    return ballot == 0 ? kWindow : (__ffs(ballot) - 1) / K;
  }
};

}  // namespace gpuscan::cuda
