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

static_assert(GS_STATE_NOT_READY == 0, "a zeroed spine word must read NOT_READY");

template <class W>
__device__ __forceinline__ W relaxed_load(W* at) {
  return ::cuda::atomic_ref<W, ::cuda::thread_scope_device>(*at).load(::cuda::memory_order_relaxed);
}

// How a tile's words sit in the spine, and how the lane that holds one word of a tile
// posts and reads it. kWords: the lanes one tile takes. Storage: the spine's atomic unit.
//
// The portable form: a value of B bits over K = B / 16 words of 32 bits, word j carrying
// bits [16j, 16j + 16) beside the state.
template <class T>
struct SplitState {
  using Storage = std::uint32_t;
  using Word = std::uint32_t;
  static constexpr int kWords = sizeof(T) * 8 / GS_PIECE_BITS;
  static constexpr int kStorageWords = 1;  // per lane
  __device__ __forceinline__ static std::uint32_t state_of(Word w) { return w & GS_STATE_MASK; }
  __device__ __forceinline__ static Word post(Storage* at, std::uint32_t state, T value, int j) {
    const auto piece = static_cast<std::uint32_t>(to_bits(value) >> (GS_PIECE_BITS * j));
    return atomicMax(at, state | (piece & GS_PIECE_MASK));
  }
  __device__ __forceinline__ static Word load(Storage* at) { return relaxed_load(at); }
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

// With 64-bit atomics: one lane per tile. Each 32-bit half of the value takes a 64-bit word
// of its own, the state in its high half (the same codes) and the half in its low half:
// one word for 32-bit types, two for 64-bit ones. The two words of a 64-bit value are
// posted and read separately, like split words: the tile counts only when both carry the
// same state.
template <class T>
struct PackedState {
  using Storage = unsigned long long;
  static constexpr int kWords = 1;
  static constexpr int kStorageWords = sizeof(T) / 4;
  struct Word {
    Storage half[kStorageWords];
  };
  __device__ __forceinline__ static std::uint32_t state_of(const Word& w) {
    const auto state_of_half = [](Storage h) {
      return static_cast<std::uint32_t>(h >> 32) & GS_STATE_MASK;
    };
    const std::uint32_t state = state_of_half(w.half[0]);
#pragma unroll
    for (int h = 1; h < kStorageWords; ++h) {
      if (state_of_half(w.half[h]) != state) return GS_STATE_NOT_READY;
    }
    return state;
  }
  __device__ __forceinline__ static Word post(Storage* at, std::uint32_t state, T value, int) {
    const std::uint64_t bits = to_bits(value);
    Word before;
#pragma unroll
    for (int h = 0; h < kStorageWords; ++h) {
      before.half[h] =
          atomicMax(at + h, (Storage{state} << 32) | ((bits >> (32 * h)) & 0xFFFFFFFFu));
    }
    return before;
  }
  __device__ __forceinline__ static Word load(Storage* at) {
    Word w;
#pragma unroll
    for (int h = 0; h < kStorageWords; ++h) w.half[h] = relaxed_load(at + h);
    return w;
  }
  __device__ __forceinline__ static T value_of(const Word& w, int) {
    std::uint64_t bits = 0;
#pragma unroll
    for (int h = 0; h < kStorageWords; ++h) bits |= (w.half[h] & 0xFFFFFFFFu) << (32 * h);
    return from_bits<T>(bits);
  }
};

// The look-back warp's view of the spine (S: SplitState or PackedState).
template <class M, class S>
struct Spine {
  using T = typename M::T;
  using Word = typename S::Word;
  using Storage = typename S::Storage;
  static constexpr int K = S::kWords;
  static constexpr int kWindow = kWarpSize / K;  // tiles one read covers

  Storage* words;

  // Where this lane's word of `tile` starts.
  __device__ __forceinline__ Storage* word_of(std::uint32_t tile) const {
    return words + (std::uint64_t{tile} * K + word_index()) * S::kStorageWords;
  }

  __device__ __forceinline__ static int word_index() { return lane_id() % K; }
  __device__ __forceinline__ static int window_slot() { return lane_id() / K; }  // 0: newest

  // Moves this lane's word of `tile` to `state` carrying `value` (the same in all K lanes of
  // the tile); a word already in a later state keeps it. Returns the word as it was before.
  __device__ __forceinline__ Word post_lane_word(std::uint32_t tile, std::uint32_t state,
                                                 T value) const {
    return S::post(word_of(tile), state, value, word_index());
  }

  // Moves `tile`'s words to `state` carrying `value`; a word already in a later state keeps
  // it. Returns, in the lanes of window slot 0, the words as they were before.
  __device__ __forceinline__ Word post(std::uint32_t tile, std::uint32_t state, T value) const {
    if (window_slot() != 0) return Word{};
    return post_lane_word(tile, state, value);
  }

  // Window `depth` of the tiles before `cursor`: slot s holds tile
  // cursor - depth * kWindow - s. Slots before tile 0 read NOT_READY.
  __device__ __forceinline__ Word read_window(std::uint32_t cursor, int depth) const {
    const std::uint32_t back = depth * kWindow + window_slot();
    if (back > cursor) return Word{};  // NOT_READY
    return S::load(word_of(cursor - back));
  }

  // The state of this lane's tile: that of all its K words if they agree, else NOT_READY
  // (a message still in flight).
  __device__ __forceinline__ static std::uint32_t tile_state(const Word& w) {
    const std::uint32_t state = S::state_of(w);  // packed: both halves agree
    bool agree = true;
#pragma unroll
    for (int j = 1; j < K; ++j) agree = agree && __shfl_xor_sync(kFullMask, state, j) == state;
    return agree ? state : GS_STATE_NOT_READY;
  }

  __device__ __forceinline__ static T tile_value(const Word& w) {
    return S::value_of(w, lane_id() - word_index());
  }

  // Combines the values of window slots [first, end) in tile order (oldest first), the
  // result in every lane. An ordered butterfly: at each step a lane joins its partner's
  // partial, the higher lane's (older tiles) on the left.
  __device__ __forceinline__ static T reduce_window(T value, int first, int end) {
    const int slot = window_slot();
    T x = word_index() == 0 && slot >= first && slot < end ? value : M::identity();
#pragma unroll
    for (int d = 1; d < kWarpSize; d <<= 1) {
      const T partner = __shfl_xor_sync(kFullMask, x, d);
      x = (lane_id() & d) == 0 ? M::combine(partner, x) : M::combine(x, partner);
    }
    return x;
  }

  // The last window slot before `end` whose tile is in `wanted`, or kWindow if none is.
  __device__ __forceinline__ static int last_slot_in(std::uint32_t state, std::uint32_t wanted,
                                                     int end) {
    const unsigned ballot =
        __ballot_sync(kFullMask, word_index() == 0 && state == wanted && window_slot() < end);
    return ballot == 0 ? kWindow : (31 - __clz(ballot)) / K;
  }

  // The first window slot whose tile is in `wanted`, or kWindow if none is.
  __device__ __forceinline__ static int first_slot_in(std::uint32_t state, std::uint32_t wanted) {
    const unsigned ballot = __ballot_sync(kFullMask, word_index() == 0 && state == wanted);
    return ballot == 0 ? kWindow : (__ffs(ballot) - 1) / K;
  }
};

}  // namespace gpuscan::cuda
