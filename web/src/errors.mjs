// The package's error classes and the web-only layout constants, shared by its modules.
import { GS } from "./generated.mjs";

/** A request that cannot be served as asked (bad options, buffers, sizes). */
export class UsageError extends Error {
  constructor(message) {
    super(message);
    this.name = "UsageError";
  }
}
/** The device failed or misbehaved (lost, a kernel reported an impossible layout). */
export class DeviceError extends Error {
  constructor(message) {
    super(message);
    this.name = "DeviceError";
  }
}
/** csdl waited on a predecessor past its bound: the device gave no forward progress. */
export class ForwardProgressError extends Error {
  constructor(message) {
    super(message);
    this.name = "ForwardProgressError";
  }
}


// Web-only layout, beside the words of shaders/common/interface.h: each chunk of a run has
// a block of CONTROL_STRIDE control words: [0, GS_CONTROL_WORDS) as on the other backends,
// then the chunk's total (the next chunk's init value) and the subgroup-layout flag.
export const WEB = Object.freeze({
  BINDING_PARAMS: GS.GS_BINDING_COUNT,
  CONTROL_CARRY: GS.GS_CONTROL_WORDS,
  CONTROL_LAYOUT_ERROR: GS.GS_CONTROL_WORDS + 1,
  CONTROL_STRIDE: 16,
  MIN_SUBGROUP_SIZE: 4, // WebGPU's smallest
  // Tiles a look-back step of one invocation reads (the path without subgroups, CPU drivers):
  // 8 measured faster than 16 on an H100 (docs/performance.md W1, W2), and llvmpipe compiles
  // a float min/max walk over 16 for half a minute a pipeline. With subgroups: one tile a lane.
  WINDOW: 8,
  PARAMS_STRIDE: 256, // bytes between chunks' uniform blocks (minUniformBufferOffsetAlignment)
  NO_BLOCKING: 0xffffffff,
  NO_CARRY: 0xffffffff,
});

export const WORKGROUP_SIZE = 256;
