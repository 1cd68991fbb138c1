// Encoding of one spine word (portable split tile state), shared by host and shaders.
//
// A tile's value of B bits is split over K = B/16 words. Word j carries value bits
// [16j, 16j+16) in its low 16 bits and the tile's state in its top two bits. States are
// ordered so that atomicMax can only move a word forward: INCLUSIVE > READY > NOT_READY.
#ifndef GPUSCAN_TILE_STATE_H
#define GPUSCAN_TILE_STATE_H

#define GS_STATE_NOT_READY 0x00000000u
#define GS_STATE_READY 0x40000000u
#define GS_STATE_INCLUSIVE 0x80000000u
#define GS_STATE_MASK 0xC0000000u
#define GS_PIECE_BITS 16u
#define GS_PIECE_MASK 0x0000FFFFu

#endif
