// The chained scan with one block per tile, the structure of shaders/chained_scan.comp: a
// block loads its tile into registers and scans it; its first warp looks back while the
// other warps wait, and the whole block reduces any tile the look-back falls back on
// (docs/protocol.md, "The look-back the kernels run").
// Several blocks share a multiprocessor, so while one waits the others keep memory busy,
// and a fallback stalls only its own block.
#pragma once

#include "cuda/kernels/look_back.cuh"
#include "cuda/kernels/row_tile_scan.cuh"
#include "cuda/kernels/tile_scan.cuh"

namespace gpuscan::cuda {

// Registers a thread may take: 64 keeps four blocks of 256 threads on a multiprocessor
// (6 rows of 64-bit types spill 20 bytes there, and still run faster than 8 rows at 80
// registers: 1-2% on an H200, up to 3% at 2^22..2^24 on an H100); 8 rows of 16 bytes take
// more, 80 keeps three.
constexpr int per_tile_registers(int vpt) {
  return vpt > 6 ? 80 : 64;
}

template <class T>
struct PerTileShared {
  BlockPartials<T, 2> partials;  // set 0: the block's tile; set 1: a fallback's reduction
  std::uint32_t tile;
  std::uint32_t verdict;  // kDone, or a tile to reduce for a fallback
  T prefix;               // what precedes the tile, once kDone
};
constexpr int kOwnSet = 0;
constexpr int kReductionSet = 1;

// kRows: a batched scan (DESIGN 3f; docs/protocol.md, "Batched scans"): the tile scans
// segmented by rows, a tile holding a row start posts its aggregate as INCLUSIVE (the
// look-backs of its successors end there), and one whose first element starts a row looks
// back not at all. kSegments (with kRows): the rows are segments whose starts are read from
// a list (rows.cuh, SegmentList; docs/protocol.md, "Segmented scans"). kAligned (without
// kRows): a batched scan on row-aligned tiles (rows.cuh, AlignedRows; docs/protocol.md,
// "Row-aligned tiles"): each row has tiles of its own, which scan, look back and store as
// the plain scan's do, and a row's first tile, like tile 0, looks back not at all.
template <class M, class S, int VPT, bool kStats, bool kRows = false, bool kSegments = false,
          bool kAligned = false>
__global__ void __launch_bounds__(kPerTileBlockLimit) __maxnreg__(per_tile_registers(VPT))
    per_tile_chained_scan(ScanArgs scan, ChainArgs chain) {
  using T = typename M::T;
  __shared__ PerTileShared<T> shared;
  __shared__ RowFlags<2> row_flags;  // kRows only
  // kSegments: the owned tile's segment starts, a bit an element and one for the next tile.
  constexpr int kSegmentWords =
      kSegments ? kPerTileBlockLimit * TileShape<T, VPT>::per_thread / 32 + 1 : 1;
  __shared__ std::uint32_t segment_words[kSegmentWords];
  const RowPositions pos(scan.rows);
  const TileSegments segments{SegmentList(scan.rows), segment_words};
  // kAligned: where tile t's elements lie, in its row; the other kernels' tiles lie in the
  // whole run, whose first tile alone begins a row. (Written apart, so that the other
  // kernels compile as they did without row-aligned tiles.)
  const auto place_of = [&](std::uint32_t t) { return AlignedRows(scan.rows).place(t); };
  const auto begins_row = [&](std::uint32_t t) {
    if constexpr (kAligned) {
      return place_of(t).row_start;
    } else {
      return t == 0;
    }
  };
  extern __shared__ uint4 parking[];  // the block's tile, while it reduces others
  const T* in = static_cast<const T*>(scan.in);
  const auto load_own_tile = [&](std::uint32_t t, Vector<T>(&loaded)[VPT]) {
    if constexpr (kAligned) {
      const TilePlace place = place_of(t);
      load_tile<T, VPT>(in + place.first, place.n, place.tile, M::identity(), loaded);
    } else {
      load_tile<T, VPT>(in, scan.n, t, M::identity(), loaded);
    }
  };
  const bool looks_back = warp_id() == 0;
  // Only the look-back warp works with the spine and the run's counters, whose half it
  // reads from the workspace (take_turn), an L2 or memory round trip. In dispatch order the
  // tile's loads go out first; for 32-bit types the window before the tile is read in both
  // halves before the turn, which then picks one, so that no read waits for the turn
  // (2^16 0.6 us and 2^28 1% faster on an H100); 64-bit types read it after the turn, as
  // two windows' words made their six-row tiles spill (u64 2.5% slower at 2^28). A tile
  // from the counter needs the counters, and so the turn, first.
  using Sp = Spine<M, S>;
  Turn turn{0, 0, 0};
  std::uint32_t tile = blockIdx.x;
  Vector<T> loaded[VPT];
  typename S::Word window{};  // NOT_READY
  LookBack<M, S, kStats> look{chain, {}};
  if (chain.dispatch_order) {
    load_own_tile(tile, loaded);
    if (looks_back && sizeof(T) == 8) {
      turn = take_turn(chain);
      if (!begins_row(tile)) window = look.spine().read_window(tile - 1, 0);
    } else if (looks_back) {
      typename S::Word windows[2]{};
      if (!begins_row(tile)) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const Sp spine{
              reinterpret_cast<typename S::Storage*>(chain.spines + half * chain.half_words)};
          windows[half] = spine.read_window(tile - 1, 0);
        }
      }
      turn = take_turn(chain);
      window = turn.half == 0 ? windows[0] : windows[1];
    }
  } else {
    if (looks_back) turn = take_turn(chain);
    if (threadIdx.x == 0) {
      shared.tile = atomicAdd(&chain.state->control[turn.half].tile_counter, 1u);
    }
    __syncthreads();
    tile = shared.tile;
    // The look-back warp reads the window before the tile while the tile loads: what it
    // already shows need not be read after the scan.
    if (looks_back && !begins_row(tile)) window = look.spine().read_window(tile - 1, 0);
    load_own_tile(tile, loaded);
  }
  if (looks_back) clear_for_next_run(chain, turn);
  Vector<T> rows[VPT];
  // A batched scan's init value joins each row's first element; `lead` is what precedes
  // the run's element 0 (the init value, or in a batched scan the rest of a continued row).
  const T row_init = init_value<T>(scan);
  const T lead = kRows ? from_bits<T>(scan.rows.lead_bits) : row_init;
  bool starts = false;  // whether a row starts in the tile
  // A batched tile without a row start scans and stores as a plain tile; a reduction's
  // tiles all take the row path, which writes each row's total at the row's end.
  if constexpr (kSegments) {
    load_segment_bits(segment_words, segments.list,
                      static_cast<std::uint32_t>(TileShape<T, VPT>::first(tile)),
                      TileShape<T, VPT>::elements(), scan.n);
  }
  const bool row_free = kRows && scan.kind != Kind::reduce &&
                        !tile_holds_row_start<T, VPT, kSegments>(pos, segments, tile, scan.n);
  T aggregate;
  if constexpr (kRows) {
    // Floats: the owner's reduction-order aggregate goes through the fallbacks' set, which
    // no fallback writes before the barrier after the look-back's first round.
    if (row_free) {
      aggregate = row_free_tile_scan<M, VPT>(loaded, shared.partials, kOwnSet, kReductionSet, rows);
    } else {
      aggregate = row_tile_local_scan<M, VPT, true, kSegments>(
          loaded, shared.partials, row_flags, kOwnSet, kReductionSet, rows, pos, &segments, scan.n,
          tile, row_init, starts);
    }
  } else {
    aggregate = tile_local_scan<M, VPT, true>(loaded, shared.partials, kOwnSet, rows);
  }
  // The lead belongs to tile 0 (up to its first row start) or a row-aligned row's first
  // tile, for its owner and for any fallback on it alike.
  if (begins_row(tile) && !starts) aggregate = M::combine(lead, aggregate);

  std::uint32_t cursor = tile - 1;
  T prefix = M::identity();
  bool done =
      begins_row(tile) ||
      (kRows && (kSegments ? segments.bit(0) : pos.distance(TileShape<T, VPT>::first(tile)) == 0));
  EarlyWindow<T> early{kNoTile, M::identity()};
  // The look-back warp's next step: walk on, and once the prefix is complete post the
  // tile's inclusive value; then tell the block (kDone, or the tile to fall back on).
  const auto look_on = [&] {
    if (!done) done = look.walk(tile, cursor, prefix, early);
    if (done && tile != 0)
      look.spine().post(tile, GS_STATE_INCLUSIVE,
                        starts ? aggregate : M::combine(prefix, aggregate));
    if (lane_id() == 0) {
      shared.verdict = done ? kDone : cursor;
      shared.prefix = begins_row(tile) ? lead : prefix;
    }
  };
  if (looks_back) {
    post_aggregate(look.spine(), chain, tile, aggregate, starts || (kAligned && begins_row(tile)));
    if (!begins_row(tile)) early = look.note_early_window(tile, window);
    look_on();
  }
  __syncthreads();
  if (shared.verdict != kDone) {
    // Fallbacks: the scanned tile waits in shared memory, so that the reductions' loads
    // have its registers.
    park_rows<T, VPT>(parking, rows);
    for (;;) {
      const std::uint32_t target = shared.verdict;
      if (target == kDone) break;
      // The reduction's own barriers keep the look-back warp from writing the next verdict
      // before every warp has read this one.
      T reduction;
      bool target_starts = false;
      if constexpr (kRows) {
        reduction = load_and_reduce_rows<M, VPT, kSegments>(
            in, scan.n, target, shared.partials, kReductionSet, pos, &segments, row_init);
        target_starts = tile_holds_row_start<T, VPT, kSegments>(pos, segments, target, scan.n);
      } else if constexpr (kAligned) {
        const TilePlace place = place_of(target);
        reduction = load_and_reduce<M, VPT>(in + place.first, place.n, place.tile, shared.partials,
                                            kReductionSet);
        // A row's first tile ends the look-back, as tile 0 ends every look-back.
        target_starts = place.row_start;
      } else {
        reduction = load_and_reduce<M, VPT>(in, scan.n, target, shared.partials, kReductionSet);
      }
      if (begins_row(target) && (kAligned || !target_starts)) {
        reduction = M::combine(lead, reduction);
      }
      if (looks_back) {
        done = look.insert(cursor, prefix, reduction, target_starts);
        look_on();
      }
      __syncthreads();
    }
    load_staged<T, VPT>(parking, rows);
  }
  if constexpr (kStats) {
    if (looks_back && lane_id() == 0) look.add_counts();
  }
  if (looks_back) hand_on_turn(chain, turn.place, std::uint64_t{scan.tile_count} * (sizeof(T) / 2));
  if constexpr (kAligned) {
    // A reduction writes its row's total at out[row].
    const TilePlace place = place_of(tile);
    T* out = static_cast<T*>(scan.out) + (scan.kind == Kind::reduce ? place.row : place.first);
    store_tile<M, VPT>(out, place.n, place.tile, place.tile_count, scan.kind, shared.prefix,
                       shared.partials, kOwnSet, rows);
  } else if (!kRows || row_free) {
    store_tile<M, VPT>(static_cast<T*>(scan.out), scan.n, tile, scan.tile_count, scan.kind,
                       shared.prefix, shared.partials, kOwnSet, rows);
  } else if constexpr (kRows) {
    store_tile_rows<M, VPT, kSegments>(static_cast<T*>(scan.out), scan.n, tile, scan.kind,
                                       shared.prefix, shared.partials, row_flags, kOwnSet, rows,
                                       pos, &segments, row_init);
  }
}

}  // namespace gpuscan::cuda
