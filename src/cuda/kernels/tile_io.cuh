// Moving a tile between global memory and registers, 16 bytes per load or store.
//
// A warp owns a contiguous block of the tile: VPT rows of 32 vectors, row k of lane l at
// vector (warp * VPT + k) * 32 + l. Every load and store instruction of a warp thus covers
// 512 contiguous bytes, and a thread's VPT loads are independent, so they are all in
// flight at once. Full tiles take the vector path; only the last tile checks bounds.
#pragma once

#include <cstdint>
#include <cstring>

#include "cuda/kernels/team.cuh"

namespace gpuscan::cuda {

constexpr int kVectorBytes = 16;

template <class T>
struct Vector {
  static constexpr int size = kVectorBytes / sizeof(T);
  T x[size];
  __device__ __forceinline__ T& last() { return x[size - 1]; }
  __device__ __forceinline__ const T& last() const { return x[size - 1]; }
};

template <class T, int VPT, class Team = WholeBlock>
struct TileShape {
  static constexpr int per_thread = VPT * Vector<T>::size;
  // A warp's rows follow one another in the tile: its part is as large as its rows, and a
  // thread's row k + 1 lies a row of the warp after its row k.
  static constexpr std::uint32_t per_warp = kWarpSize * per_thread;
  static constexpr std::uint32_t row_stride = kWarpSize * Vector<T>::size;
  __device__ __forceinline__ static std::uint32_t elements() {
    return Team::threads() * per_thread;
  }
  // Offset in the tile of this thread's row k.
  __device__ __forceinline__ static std::uint32_t row_offset(int k) {
    return ((warp_id() * VPT + k) * kWarpSize + lane_id()) * Vector<T>::size;
  }
  // Offset of this thread's row k in its warp's part: row_offset(k) - warp_id() * per_warp.
  // Written out rather than as that difference, which changed the compaction kernels' code and
  // spills (ptxas); row_offset written as the sum changed the u32 scan's.
  __device__ __forceinline__ static std::uint32_t row_in_warp(int k) {
    return (k * kWarpSize + lane_id()) * Vector<T>::size;
  }
  __device__ __forceinline__ static std::uint64_t first(std::uint32_t tile) {
    return std::uint64_t{tile} * elements();
  }
};

// Whether p allows 16-byte accesses. The caller's pointers need only be aligned to the
// element size (DESIGN 3a); data that is not 16-byte aligned takes the element path below,
// as the last tile does (a uniform branch per tile: tile offsets are whole vectors).
template <class T>
__device__ __forceinline__ bool vector_aligned(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % kVectorBytes == 0;
}

// Past L1, but not marked first to leave L2: a fallback reads a tile again soon after its
// owner did, and evict-first loads made those reads go to memory. Evict-first measured
// 2-4% slower on an H100 even unblocked, and slower still under blocking.
template <class T>
__device__ __forceinline__ Vector<T> load_vector(const T* p) {
  const uint4 raw = __ldcg(reinterpret_cast<const uint4*>(p));
  Vector<T> v;
  std::memcpy(&v, &raw, sizeof(v));
  return v;
}

template <class T>
__device__ __forceinline__ void store_vector(T* p, const Vector<T>& v) {
  uint4 raw;
  std::memcpy(&raw, &v, sizeof(raw));
  __stcs(reinterpret_cast<uint4*>(p), raw);
}

// This thread's rows of `tile`; elements past n read as `fill`.
template <class T, int VPT, class Team = WholeBlock>
__device__ __forceinline__ void load_tile(const T* in, std::uint64_t n, std::uint32_t tile, T fill,
                                          Vector<T> (&rows)[VPT]) {
  using Shape = TileShape<T, VPT, Team>;
  const std::uint64_t first = Shape::first(tile);
  const T* base = in + first;
  if (first + Shape::elements() <= n && vector_aligned(base)) {
#pragma unroll
    for (int k = 0; k < VPT; ++k) rows[k] = load_vector(base + Shape::row_offset(k));
    return;
  }
  const std::uint64_t valid = n - first;  // may exceed the tile
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
#pragma unroll
    for (int e = 0; e < Vector<T>::size; ++e) {
      const std::uint32_t i = Shape::row_offset(k) + e;
      rows[k].x[e] = i < valid ? base[i] : fill;
    }
  }
}

// This thread's rows as park_rows left them (each thread reads back only what it wrote).
template <class T, int VPT>
__device__ __forceinline__ void load_staged(const uint4* buffer, Vector<T> (&rows)[VPT]) {
  using Shape = TileShape<T, VPT>;  // row offsets do not depend on the team
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const uint4 raw = buffer[Shape::row_offset(k) / Vector<T>::size];
    std::memcpy(&rows[k], &raw, sizeof(raw));
  }
}

// Parks this thread's scanned rows in `buffer`, where load_staged finds them again.
template <class T, int VPT>
__device__ __forceinline__ void park_rows(uint4* buffer, const Vector<T> (&rows)[VPT]) {
  using Shape = TileShape<T, VPT>;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    uint4 raw;
    std::memcpy(&raw, &rows[k], sizeof(raw));
    buffer[Shape::row_offset(k) / Vector<T>::size] = raw;
  }
}

template <class T, int VPT, class Team = WholeBlock>
__device__ __forceinline__ void store_row(T* out, std::uint64_t n, std::uint32_t tile, int k,
                                          const Vector<T>& row) {
  using Shape = TileShape<T, VPT, Team>;
  const std::uint64_t first = Shape::first(tile);
  T* base = out + first;
  if (first + Shape::elements() <= n && vector_aligned(base)) {
    store_vector(base + Shape::row_offset(k), row);
    return;
  }
  const std::uint64_t valid = n - first;
#pragma unroll
  for (int e = 0; e < Vector<T>::size; ++e) {
    const std::uint32_t i = Shape::row_offset(k) + e;
    if (i < valid) base[i] = row.x[e];
  }
}

template <class T>
__device__ __forceinline__ std::uint64_t to_bits(T x) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &x, sizeof(T));
  return bits;
}

template <class T>
__device__ __forceinline__ T from_bits(std::uint64_t bits) {
  T x;
  std::memcpy(&x, &bits, sizeof(T));
  return x;
}

}  // namespace gpuscan::cuda
