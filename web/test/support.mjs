// Shared by the WebGPU tests: the device (Dawn through npm `webgpu`; on a machine without a
// GPU, lavapipe from web/.mesa, set up by scripts/setup-web-mesa), seeded random inputs, a
// host reference with the kernels' semantics, and a checked run through record() with a
// poisoned output buffer.
import { create, globals } from "webgpu";
import { monoidJs, DTYPES, ForwardProgressError } from "../src/index.mjs";

Object.assign(globalThis, globals);

let devicePromise = null;
let plainDevicePromise = null;

// Dawn's GPU object must outlive its adapters and devices (collected early, it takes the
// process down), so it is held here for the whole run.
const gpu = create([]);

async function openDevice(features) {
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error("no WebGPU adapter (is VK_DRIVER_FILES pointing at lavapipe?)");
  const requiredFeatures = features.filter((f) => adapter.features.has(f));
  const device = await adapter.requestDevice({ requiredFeatures });
  device.addEventListener("uncapturederror", (e) => {
    console.error(`uncaptured WebGPU error: ${e.error.message}`);
    process.exitCode = 1;
  });
  return device;
}

/** The test device, with the `subgroups` feature where the adapter has it. */
export function testDevice() {
  devicePromise ??= openDevice(["subgroups", "timestamp-query"]);
  return devicePromise;
}

/** A device without optional features (the path without subgroups, error cases). */
export function plainDevice() {
  plainDevicePromise ??= openDevice([]);
  return plainDevicePromise;
}

/** A seed from GPUSCAN_SEED or fresh; the test prints it so that a failure can be rerun. */
export function seedFor(name) {
  const base = process.env.GPUSCAN_SEED ? Number(process.env.GPUSCAN_SEED) : (Date.now() ^ (Math.random() * 2 ** 31)) >>> 0;
  let h = base;
  for (const c of name) h = (Math.imul(h ^ c.charCodeAt(0), 0x9e3779b1) >>> 0);
  return { base, seed: h >>> 0 };
}

/** mulberry32: a small seeded generator of u32 values. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Random input for (dtype, op) that keeps the scan informative (never all zeros or ones). */
export function randomInput(dtype, op, n, next) {
  const x = new DTYPES[dtype].array(n);
  for (let i = 0; i < n; i++) {
    const r = next();
    if (dtype === "f32") {
      const u = r / 2 ** 32;
      x[i] = op === "mul" ? 0.999 + 0.002 * u : op === "add" ? u * 2 - 0.5 : (u - 0.5) * 1e6;
      if ((op === "min" || op === "max") && (r & 1023) === 7) x[i] = NaN;
    } else {
      let v = r;
      if (op === "mul") v |= 1; // odd: a product of odd numbers never wraps to 0
      if (op === "and") v |= ~(1 << (r & 31)); // one bit clear: a running and stays alive
      if (op === "or") v &= 1 << (r & 31); // one bit set
      if (op === "add" || op === "xor") v = r;
      x[i] = dtype === "i32" ? v | 0 : v >>> 0;
    }
  }
  return x;
}

/** The expected output (and per element the float tolerance) in the operator order. */
export function reference(dtype, op, kind, input, init) {
  const { identity, combine } = monoidJs(dtype, op);
  const n = input.length;
  const out = new DTYPES[dtype].array(kind === "reduce" ? 1 : n);
  const tolerance = new Float64Array(kind === "reduce" ? 1 : n);
  let acc = init ?? identity;
  let exact = Number(acc);
  let magnitude = Math.abs(Number(acc)) || 0;
  for (let i = 0; i < n; i++) {
    if (kind === "exclusive") {
      out[i] = acc;
      tolerance[i] = magnitude;
    }
    acc = combine(acc, input[i]);
    exact = op === "add" ? exact + input[i] : op === "mul" ? exact * input[i] : acc;
    magnitude += op === "mul" ? 0 : Math.abs(input[i]);
    if (kind === "inclusive") {
      out[i] = dtype === "f32" && (op === "add" || op === "mul") ? exact : acc;
      tolerance[i] = op === "mul" ? Math.abs(exact) * (i + 2) : magnitude;
    }
  }
  if (kind === "exclusive" && dtype === "f32" && (op === "add" || op === "mul")) {
    let e = Number(init ?? identity);
    for (let i = 0; i < n; i++) {
      out[i] = e;
      tolerance[i] = op === "mul" ? Math.abs(e) * (i + 2) : tolerance[i];
      e = op === "add" ? e + input[i] : e * input[i];
    }
  }
  if (kind === "reduce") {
    out[0] = dtype === "f32" && (op === "add" || op === "mul") ? exact : acc;
    tolerance[0] = op === "mul" ? Math.abs(exact) * (n + 2) : magnitude;
  }
  return { out, tolerance };
}

/** The first mismatch between got and the reference, as a message, or null. */
export function firstMismatch(dtype, op, got, { out, tolerance }) {
  if (got.length !== out.length) return `length ${got.length}, expected ${out.length}`;
  const float = dtype === "f32";
  for (let i = 0; i < out.length; i++) {
    const g = got[i];
    const w = out[i];
    let ok;
    if (float && (Number.isNaN(w) || Number.isNaN(g))) ok = Number.isNaN(w) && Number.isNaN(g);
    else if (float && (op === "add" || op === "mul")) ok = Math.abs(g - w) <= 1e-5 * tolerance[i] + 1e-30;
    else ok = g === w;
    if (!ok) return `out[${i}] = ${g}, expected ${w}`;
  }
  return null;
}

const POISON = 0xdeadbeef;

/**
 * Runs `scanner` on `input` through record(), the output buffer poisoned first; returns
 * the output (a typed array; one element for reduce) and the statistics.
 */
export async function runRecorded(device, scanner, input, init, { repeat = 1, fresh } = {}) {
  const { dtype, kind } = scanner.config;
  const A = DTYPES[dtype].array;
  const n = input.length;
  const outCount = kind === "reduce" ? 1 : n;
  const U = GPUBufferUsage;
  const inBuffer = device.createBuffer({ size: Math.max(16, 4 * n), usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
  const outBuffer = device.createBuffer({ size: Math.max(16, 4 * outCount), usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
  const read = device.createBuffer({ size: Math.max(16, 4 * outCount), usage: U.MAP_READ | U.COPY_DST });
  const results = [];
  const recordings = [];
  try {
    for (let r = 0; r < repeat; r++) {
      // A WebGPU command buffer is submitted once; repeated runs re-record on the same
      // Scanner and buffers, which must find the spine reset (the reset is recorded too).
      device.pushErrorScope("validation");
      const encoder = device.createCommandEncoder();
      const recording = scanner.record(encoder, inBuffer, outBuffer, n, { init });
      recordings.push(recording);
      encoder.copyBufferToBuffer(outBuffer, 0, read, 0, Math.max(4, 4 * outCount));
      const data = r === 0 || !fresh ? input : fresh(r);
      if (n) device.queue.writeBuffer(inBuffer, 0, data.buffer, data.byteOffset, 4 * n);
      device.queue.writeBuffer(outBuffer, 0, new Uint32Array(Math.max(4, outCount)).fill(POISON));
      device.queue.submit([encoder.finish()]);
      const error = await device.popErrorScope();
      if (error) throw new Error(`WebGPU validation: ${error.message}`);
      const statistics = await recording.check();
      await read.mapAsync(GPUMapMode.READ);
      const out = new A(read.getMappedRange().slice(0, 4 * outCount));
      read.unmap();
      results.push({ input: data, out, statistics });
    }
  } finally {
    for (const recording of recordings) recording.release();
    inBuffer.destroy();
    outBuffer.destroy();
    read.destroy();
  }
  return results;
}

// csdl waits for its predecessors, and on a device without forward progress (a CPU driver,
// whose threads the OS may preempt, the more the busier the machine) a wait can end in
// ForwardProgressError: csdl's documented outcome there, with no output to check. As in the
// C++ suites (tests/test_support.hpp), a csdl run that meets it is tried up to three times,
// then the check passes with a note (null); any other algorithm's ForwardProgressError fails.
export async function runRecordedAcceptingCsdlGiveUp(device, scanner, input, init, options, label) {
  for (let attempt = 1; ; ++attempt) {
    try {
      return await runRecorded(device, scanner, input, init, options);
    } catch (e) {
      if (!(e instanceof ForwardProgressError) || scanner.config.algorithm !== "csdl") throw e;
      if (attempt < 3) continue;
      console.log(`note: csdl gave up 3 times in a row (its documented outcome without forward progress); ${label} passes unchecked`);
      return null;
    }
  }
}
