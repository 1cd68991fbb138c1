// gpuscan for WebGPU (DESIGN.md section 3d): prefix scan and reduction of u32, i32 and f32
// arrays with Decoupled Fallback (csdldf, the default), decoupled look-back (csdl),
// reduce-then-scan (rts), and a copy kernel (memcpy) as the speed-of-light reference.
// Runs in browsers and in Node (Dawn, npm `webgpu`).
//
//   const scanner = await Scanner.create(device, { dtype: "u32", op: "add", kind: "inclusive" });
//   const out = await scanner.scan(new Uint32Array([1, 2, 3]));      // host convenience
//   scanner.record(encoder, inBuffer, outBuffer, n, { init });        // the caller's GPUBuffers
import { GS } from "./generated.mjs";
import { DTYPES, KINDS, OPS, monoidJs, opsFor, valueBits } from "./monoid.mjs";
import { DeviceError, ForwardProgressError, UsageError, WEB, WORKGROUP_SIZE } from "./errors.mjs";
import { bindGroupLayout, kernelSource, makePipeline } from "./pipelines.mjs";

export { DTYPES, KINDS, OPS, opsFor, monoidJs, kernelSource };
export { DeviceError, ForwardProgressError, UsageError, WEB };

export const ALGORITHMS = Object.freeze(["csdldf", "csdl", "rts", "memcpy"]);

const MAX_GRID = 65535;
// csdl's bounded wait in look-back steps (docs/protocol.md, "csdl's bounded wait"): far
// beyond any wait on a device with forward progress, and under llvmpipe's loop limit.
const CSDL_SPINS = { gpu: 1 << 22, cpu: 8192 };
const FLOAT_TOLERANCE = 1e-5;

function isCpuAdapter(info) {
  const text = `${info?.vendor ?? ""} ${info?.architecture ?? ""} ${info?.device ?? ""} ${info?.description ?? ""}`;
  return /llvmpipe|lavapipe|swiftshader|cpu/i.test(text);
}

function pick(name, value, allowed) {
  if (!allowed.includes(value)) {
    throw new UsageError(`${name} "${value}" is not one of ${allowed.join(", ")}`);
  }
  return value;
}

/**
 * A scan of one configuration on one GPUDevice: its pipelines and its spine. Runs recorded
 * on one Scanner must execute in the order they were recorded (one queue does that), as
 * they share the spine; the spine is reset inside each recorded run, so a command buffer
 * may be submitted again and again.
 */
export class Scanner {
  /**
   * @param {GPUDevice} device
   * @param {object} options dtype: u32|i32|f32; op: add|mul|min|max|and|or|xor (bitwise
   *   for integers); kind: inclusive|exclusive|reduce; algorithm: csdldf|csdl|rts|memcpy;
   *   subgroups: use the `subgroups` feature (default: where the device has it);
   *   maxSpins (csdldf patience, default 4). Test and benchmark knobs: blockingMask
   *   (simulated blocking, docs/protocol.md section 3), statistics, tileOrder
   *   (counter|dispatch), vectorsPerThread, maxChunkElements, lookbackLanes
   *   (subgroup|single), subgroupSize (compile the device's one subgroup size into the
   *   kernels; 0: read it at run time), experiment (bits of kernel changes under
   *   measurement, docs/performance.md).
   */
  static async create(device, options = {}) {
    if (!device || typeof device.createShaderModule !== "function") {
      throw new UsageError("Scanner.create needs a GPUDevice (adapter.requestDevice())");
    }
    const known = new Set([
      "dtype", "op", "kind", "algorithm", "subgroups", "maxSpins", "blockingMask",
      "statistics", "tileOrder", "vectorsPerThread", "maxChunkElements", "lookbackLanes",
      "subgroupSize", "experiment",
    ]);
    for (const key of Object.keys(options)) {
      if (!known.has(key)) throw new UsageError(`unknown option "${key}"`);
    }
    const dtype = pick("dtype", options.dtype ?? "u32", Object.keys(DTYPES));
    const op = pick("op", options.op ?? "add", Object.keys(OPS));
    if (!opsFor(dtype).includes(op)) {
      throw new UsageError(`op "${op}" is for integers; ${dtype} allows ${opsFor(dtype).join(", ")}`);
    }
    const kind = pick("kind", options.kind ?? "inclusive", Object.keys(KINDS));
    const algorithm = pick("algorithm", options.algorithm ?? "csdldf", ALGORITHMS);
    const info = device.adapterInfo ?? {};
    const cpu = isCpuAdapter(info);
    const hasSubgroups = device.features.has("subgroups");
    let subgroups = options.subgroups ?? hasSubgroups;
    if (subgroups && !hasSubgroups) {
      throw new UsageError(
        "subgroups: true needs a device created with the 'subgroups' feature " +
          "(adapter.requestDevice({ requiredFeatures: ['subgroups'] })), or pass subgroups: false",
      );
    }
    if (subgroups && info.subgroupMinSize !== undefined && info.subgroupMinSize < WEB.MIN_SUBGROUP_SIZE) {
      subgroups = false; // not a WebGPU-conformant size: take the path without subgroups
    }
    const tileOrder = pick(
      "tileOrder",
      options.tileOrder ?? (algorithm === "csdldf" && !cpu ? "dispatch" : "counter"),
      ["counter", "dispatch"],
    );
    if (tileOrder === "dispatch" && algorithm === "csdl") {
      throw new UsageError("csdl needs tiles in counter order (it waits on its predecessors)");
    }
    // The chained scans take 4 everywhere: on an H100 the driver then gives csdldf 44
    // registers and no spills, five workgroups an SM; 6 took 64 (docs/performance.md,
    // WebGPU rows W30-W32). rts and memcpy keep 6 on GPUs, where 4 ran 4-9% slower.
    const chained = algorithm === "csdldf" || algorithm === "csdl";
    const vectorsPerThread = options.vectorsPerThread ?? (cpu || chained ? 4 : 6);
    if (!Number.isInteger(vectorsPerThread) || vectorsPerThread < 1 || vectorsPerThread > 16) {
      throw new UsageError(`vectorsPerThread ${vectorsPerThread} is not an integer in 1..16`);
    }
    const maxSpins =
      algorithm === "csdl" ? CSDL_SPINS[cpu ? "cpu" : "gpu"] : (options.maxSpins ?? 4);
    if (!Number.isInteger(maxSpins) || maxSpins < 1) {
      throw new UsageError(`maxSpins ${maxSpins} is not a positive integer`);
    }
    const blockingMask = options.blockingMask ?? WEB.NO_BLOCKING;
    if (!Number.isInteger(blockingMask) || blockingMask < 0 || blockingMask > 0xffffffff) {
      throw new UsageError(`blockingMask ${blockingMask} is not a 32-bit mask (2^k - 1)`);
    }
    // Who reads the spine: a subgroup, a word a lane (the default with subgroups on GPUs), or
    // one invocation alone (the path without subgroups, and CPU drivers, where a window read
    // by lanes is no faster and llvmpipe compiles it for seconds a pipeline).
    const lookbackLanes = pick("lookbackLanes", options.lookbackLanes ?? (subgroups && !cpu ? "subgroup" : "single"), ["subgroup", "single"]);
    if (lookbackLanes === "subgroup" && !subgroups) {
      throw new UsageError('lookbackLanes "subgroup" needs subgroups');
    }
    // A GPU that runs one subgroup size gets it compiled in, as the Vulkan kernels take it
    // as a specialization constant (docs/performance.md W7); CPU drivers keep the run-time
    // size, which the tests cover there.
    const oneSize = info.subgroupMinSize !== undefined && info.subgroupMinSize === info.subgroupMaxSize;
    const subgroupSize = options.subgroupSize ?? (subgroups && !cpu && oneSize ? info.subgroupMinSize : 0);
    if (subgroupSize !== 0) {
      if (!subgroups) throw new UsageError("subgroupSize needs subgroups");
      const lo = info.subgroupMinSize ?? WEB.MIN_SUBGROUP_SIZE;
      const hi = info.subgroupMaxSize ?? 128;
      if (!Number.isInteger(subgroupSize) || (subgroupSize & (subgroupSize - 1)) !== 0 || subgroupSize < lo || subgroupSize > hi) {
        throw new UsageError(`subgroupSize ${subgroupSize} is not a power of two in the device's ${lo}..${hi}`);
      }
    }
    const experiment = options.experiment ?? 0;
    if (!Number.isInteger(experiment) || experiment < 0) {
      throw new UsageError(`experiment ${experiment} is not a set of bits`);
    }
    const statistics = Boolean(options.statistics);
    if (statistics && !(algorithm === "csdldf" || algorithm === "csdl")) {
      throw new UsageError("statistics are counted by the chained scans (csdldf, csdl) only");
    }
    const cfg = {
      dtype, op, kind, algorithm, subgroups, tileOrder, vectorsPerThread, maxSpins,
      statistics, blockingMask, lookbackLanes, subgroupSize, experiment,
    };
    const tileElements = 4 * WORKGROUP_SIZE * vectorsPerThread;
    const bindingElements = Math.floor(device.limits.maxStorageBufferBindingSize / 4);
    let chunkTiles = Math.floor(bindingElements / tileElements);
    if (options.maxChunkElements !== undefined) {
      if (!Number.isInteger(options.maxChunkElements) || options.maxChunkElements < 1) {
        throw new UsageError(`maxChunkElements ${options.maxChunkElements} is not a positive integer`);
      }
      chunkTiles = Math.min(chunkTiles, Math.max(1, Math.floor(options.maxChunkElements / tileElements)));
    }
    if (chunkTiles < 1) {
      throw new UsageError(`maxStorageBufferBindingSize ${device.limits.maxStorageBufferBindingSize} is below one tile`);
    }
    if (device.limits.maxComputeInvocationsPerWorkgroup < WORKGROUP_SIZE) {
      throw new UsageError(`the device runs at most ${device.limits.maxComputeInvocationsPerWorkgroup} invocations a workgroup; gpuscan needs ${WORKGROUP_SIZE}`);
    }
    const scanner = new Scanner(device, cfg, tileElements, chunkTiles * tileElements);
    await scanner.#build();
    return scanner;
  }

  #device;
  #pipelines = {};
  #layout;
  #buffers = []; // everything this scanner allocated, destroyed by destroy()
  #spine = null;
  #spineValues = null;
  #dummy; // stands in for an empty vector view (n < 4) and unused bindings;
  #dummyOut; // writable ones get buffers of their own: WebGPU forbids aliasing them
  #dummyValues;

  constructor(device, cfg, tileElements, chunkElements) {
    this.#device = device;
    this.config = Object.freeze({ ...cfg });
    this.tileElements = tileElements;
    this.chunkElements = chunkElements;
    this.lastStatistics = null;
  }

  async #build() {
    const d = this.#device;
    const S = "storage";
    const R = "read-only-storage";
    this.#layout = bindGroupLayout(d, [
      [GS.GS_BINDING_INPUT_VECTORS, R],
      [GS.GS_BINDING_INPUT_SCALARS, R],
      [GS.GS_BINDING_OUTPUT_VECTORS, S],
      [GS.GS_BINDING_OUTPUT_SCALARS, S],
      [GS.GS_BINDING_SPINE_WORDS, S],
      [GS.GS_BINDING_SPINE_VALUES, S],
      [GS.GS_BINDING_CONTROL, S],
      [WEB.BINDING_PARAMS, "uniform"],
    ]);
    const layout = d.createPipelineLayout({ bindGroupLayouts: [this.#layout] });
    const cfg = this.config;
    const jobs = {};
    if (cfg.algorithm === "csdldf" || cfg.algorithm === "csdl") {
      jobs.scan = await makePipeline(d, layout, "chained_scan", { ...cfg, lookback: true });
      jobs.reset = await makePipeline(d, layout, "reset", cfg);
    } else if (cfg.algorithm === "rts") {
      jobs.reduce = await makePipeline(d, layout, "rts", { ...cfg, phase: GS.GS_RTS_REDUCE });
      jobs.spine = await makePipeline(d, layout, "rts", { ...cfg, phase: GS.GS_RTS_SPINE });
      jobs.scan = await makePipeline(d, layout, "rts", { ...cfg, phase: GS.GS_RTS_SCAN });
    } else {
      jobs.scan = await makePipeline(d, layout, "memcpy", cfg);
    }
    for (const [k, p] of Object.entries(jobs)) this.#pipelines[k] = await p;
    this.#dummy = this.#buffer(16, GPUBufferUsage.STORAGE);
    this.#dummyOut = this.#buffer(16, GPUBufferUsage.STORAGE);
    this.#dummyValues = this.#buffer(16, GPUBufferUsage.STORAGE);
  }

  #buffer(size, usage, label) {
    const b = this.#device.createBuffer({ size: Math.max(16, Math.ceil(size / 4) * 4), usage, label });
    this.#buffers.push(b);
    return b;
  }

  // The spine grows to the largest chunk recorded; a smaller one stays referenced by the
  // command buffers recorded with it, so it is kept until destroy().
  #spineFor(tiles) {
    const bytes = 4 * 2 * tiles;
    if (!this.#spine || this.#spine.size < bytes) {
      this.#spine = this.#buffer(bytes, GPUBufferUsage.STORAGE, "gpuscan spine");
    }
    return this.#spine;
  }
  #spineValuesFor(tiles) {
    if (!this.#spineValues || this.#spineValues.size < 4 * tiles) {
      this.#spineValues = this.#buffer(4 * tiles, GPUBufferUsage.STORAGE, "gpuscan rts spine");
    }
    return this.#spineValues;
  }

  /** The default init: the operator's identity. */
  get identity() {
    return monoidJs(this.config.dtype, this.config.op).identity;
  }

  #checkBuffer(name, buffer, bytes, usage, usageName) {
    if (!buffer || typeof buffer.size !== "number") {
      throw new UsageError(`${name} must be a GPUBuffer`);
    }
    if (buffer.size < bytes) {
      throw new UsageError(`${name} holds ${buffer.size} bytes; the run needs ${bytes}`);
    }
    if ((buffer.usage & usage) !== usage) {
      throw new UsageError(`${name} needs usage ${usageName}`);
    }
  }

  /**
   * Records the run into `encoder`: n elements of inBuffer (from offset 0) scanned into
   * outBuffer (n elements; 1 for kind reduce). inBuffer needs STORAGE usage (and COPY_SRC
   * when n % 4 != 0), outBuffer STORAGE | COPY_DST. in and out must differ (a fallback
   * re-reads its predecessors' input). Returns a Recording, whose check() reads back, once
   * the work has run, the statistics and any csdl give-up (ForwardProgressError).
   * `timestampWrites` ({ querySet, beginningOfPassWriteIndex, endOfPassWriteIndex })
   * brackets all of the run's passes.
   */
  record(encoder, inBuffer, outBuffer, n, { init, timestampWrites } = {}) {
    const cfg = this.config;
    const d = this.#device;
    if (!Number.isSafeInteger(n) || n < 0) throw new UsageError(`n ${n} is not a count`);
    if (inBuffer === outBuffer) {
      throw new UsageError("inBuffer and outBuffer are the same buffer: in-place scans are refused (a fallback re-reads its predecessors' input)");
    }
    const reduce = cfg.kind === "reduce";
    const initBits = init === undefined ? valueBits(cfg.dtype, this.identity) : this.#initBits(init);
    const rem = n % 4;
    const U = GPUBufferUsage;
    this.#checkBuffer("inBuffer", inBuffer, 4 * n, U.STORAGE | (rem ? U.COPY_SRC : 0),
      rem ? "STORAGE | COPY_SRC" : "STORAGE");
    const outBytes = reduce ? 4 : 4 * n;
    const outCopied = reduce || rem;
    this.#checkBuffer("outBuffer", outBuffer, outBytes, U.STORAGE | (outCopied ? U.COPY_DST : 0),
      outCopied ? "STORAGE | COPY_DST" : "STORAGE");

    const chunks = [];
    for (let start = 0; start < n; start += this.chunkElements) {
      chunks.push({ start, n: Math.min(this.chunkElements, n - start) });
    }
    const control = this.#buffer(4 * WEB.CONTROL_STRIDE * Math.max(1, chunks.length),
      U.STORAGE | U.COPY_SRC | U.COPY_DST, "gpuscan control");
    encoder.clearBuffer(control);
    const recording = new Recording(this, control, chunks.length);
    if (n === 0) {
      if (reduce) {
        const initBuffer = this.#buffer(4, U.COPY_SRC | U.COPY_DST | U.STORAGE, "gpuscan init");
        d.queue.writeBuffer(initBuffer, 0, new Uint32Array([initBits]));
        encoder.copyBufferToBuffer(initBuffer, 0, outBuffer, 0, 4);
        recording.buffers.push(initBuffer);
      }
      return recording;
    }
    const params = this.#buffer(WEB.PARAMS_STRIDE * chunks.length, U.UNIFORM | U.COPY_DST, "gpuscan params");
    const tailIn = this.#buffer(16, U.STORAGE | U.COPY_DST, "gpuscan tail in");
    const tailOut = this.#buffer(16, U.STORAGE | U.COPY_SRC, "gpuscan tail out");
    if (rem) encoder.copyBufferToBuffer(inBuffer, 4 * (n - rem), tailIn, 0, 4 * rem);
    const maxTiles = Math.ceil(Math.min(n, this.chunkElements) / this.tileElements);
    const spine = this.#spineFor(maxTiles);
    const spineValues = cfg.algorithm === "rts" ? this.#spineValuesFor(maxTiles) : this.#dummyValues;
    const words = new Uint32Array((WEB.PARAMS_STRIDE / 4) * chunks.length);
    const toleranceBits = new Uint32Array(new Float32Array([FLOAT_TOLERANCE]).buffer)[0];
    chunks.forEach((chunk, c) => {
      const tiles = Math.ceil(chunk.n / this.tileElements);
      const gridWidth = Math.min(tiles, MAX_GRID);
      chunk.tiles = tiles;
      chunk.grid = [gridWidth, Math.ceil(tiles / gridWidth)];
      words.set([
        chunk.n, tiles, gridWidth, cfg.blockingMask, initBits,
        c === 0 ? WEB.NO_CARRY : (c - 1) * WEB.CONTROL_STRIDE + WEB.CONTROL_CARRY,
        c * WEB.CONTROL_STRIDE, toleranceBits,
      ], (WEB.PARAMS_STRIDE / 4) * c);
    });
    d.queue.writeBuffer(params, 0, words);

    chunks.forEach((chunk, c) => {
      const last = c === chunks.length - 1;
      const vectorBytes = Math.floor(chunk.n / 4) * 16;
      const bind = (binding, buffer, offset = 0, size = undefined) => ({
        binding, resource: { buffer, offset, size },
      });
      const group = d.createBindGroup({
        layout: this.#layout,
        entries: [
          vectorBytes ? bind(GS.GS_BINDING_INPUT_VECTORS, inBuffer, 4 * chunk.start, vectorBytes)
            : bind(GS.GS_BINDING_INPUT_VECTORS, this.#dummy),
          bind(GS.GS_BINDING_INPUT_SCALARS, tailIn),
          vectorBytes && !reduce
            ? bind(GS.GS_BINDING_OUTPUT_VECTORS, outBuffer, 4 * chunk.start, vectorBytes)
            : bind(GS.GS_BINDING_OUTPUT_VECTORS, this.#dummyOut),
          bind(GS.GS_BINDING_OUTPUT_SCALARS, tailOut),
          bind(GS.GS_BINDING_SPINE_WORDS, spine),
          bind(GS.GS_BINDING_SPINE_VALUES, spineValues),
          bind(GS.GS_BINDING_CONTROL, control),
          bind(WEB.BINDING_PARAMS, params, WEB.PARAMS_STRIDE * c, 32),
        ],
      });
      const timing = {};
      if (timestampWrites) {
        timing.timestampWrites = { querySet: timestampWrites.querySet };
        if (c === 0 && timestampWrites.beginningOfPassWriteIndex !== undefined) {
          timing.timestampWrites.beginningOfPassWriteIndex = timestampWrites.beginningOfPassWriteIndex;
        }
        if (last && timestampWrites.endOfPassWriteIndex !== undefined) {
          timing.timestampWrites.endOfPassWriteIndex = timestampWrites.endOfPassWriteIndex;
        }
        if (Object.keys(timing.timestampWrites).length === 1) delete timing.timestampWrites;
      }
      const pass = encoder.beginComputePass({ label: `gpuscan ${cfg.algorithm} chunk ${c}`, ...timing });
      pass.setBindGroup(0, group);
      const p = this.#pipelines;
      if (p.reset) {
        pass.setPipeline(p.reset);
        pass.dispatchWorkgroups(Math.min(1024, Math.ceil((2 * chunk.tiles) / WORKGROUP_SIZE) || 1));
      }
      if (p.reduce) {
        pass.setPipeline(p.reduce);
        pass.dispatchWorkgroups(...chunk.grid);
        pass.setPipeline(p.spine);
        pass.dispatchWorkgroups(1);
      }
      pass.setPipeline(p.scan);
      pass.dispatchWorkgroups(...chunk.grid);
      pass.end();
    });
    if (reduce) encoder.copyBufferToBuffer(tailOut, 0, outBuffer, 0, 4);
    else if (rem) encoder.copyBufferToBuffer(tailOut, 0, outBuffer, 4 * (n - rem), 4 * rem);
    recording.buffers.push(params, tailIn, tailOut);
    return recording;
  }

  #initBits(init) {
    try {
      return valueBits(this.config.dtype, init);
    } catch (e) {
      throw new UsageError(e.message);
    }
  }

  /**
   * Scans a host array (a typed array of the Scanner's dtype, or any array of numbers)
   * on the device. Returns a typed array of n values, or for kind reduce one number.
   */
  async scan(data, { init } = {}) {
    const cfg = this.config;
    const A = DTYPES[cfg.dtype].array;
    if (ArrayBuffer.isView(data) && !(data instanceof A)) {
      throw new UsageError(`scan of a ${cfg.dtype} Scanner needs a ${A.name}, not a ${data.constructor.name}`);
    }
    const input = data instanceof A ? data : A.from(data);
    const n = input.length;
    const reduce = cfg.kind === "reduce";
    const d = this.#device;
    const U = GPUBufferUsage;
    if (n === 0 && !reduce) return new A(0);
    const inBuffer = d.createBuffer({ size: Math.max(16, 4 * n), usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
    const outBytes = reduce ? 4 : 4 * n;
    const outBuffer = d.createBuffer({ size: Math.max(16, outBytes), usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
    const readBuffer = d.createBuffer({ size: Math.max(16, outBytes), usage: U.MAP_READ | U.COPY_DST });
    let recording;
    try {
      if (n) d.queue.writeBuffer(inBuffer, 0, input.buffer, input.byteOffset, 4 * n);
      d.pushErrorScope("validation");
      const encoder = d.createCommandEncoder();
      recording = this.record(encoder, inBuffer, outBuffer, n, { init });
      encoder.copyBufferToBuffer(outBuffer, 0, readBuffer, 0, Math.max(4, outBytes));
      d.queue.submit([encoder.finish()]);
      const error = await d.popErrorScope();
      if (error) throw new DeviceError(`the scan was refused by the device: ${error.message}`);
      await recording.check();
      await readBuffer.mapAsync(GPUMapMode.READ);
      const out = new A(readBuffer.getMappedRange().slice(0, outBytes));
      readBuffer.unmap();
      return reduce ? out[0] : out;
    } finally {
      inBuffer.destroy();
      outBuffer.destroy();
      readBuffer.destroy();
      recording?.release();
    }
  }

  /** Frees the Scanner's buffers; recorded work that still uses them must have completed. */
  destroy() {
    for (const b of this.#buffers) b.destroy();
    this.#buffers = [];
    this.#spine = this.#spineValues = null;
  }

  _forget(buffer) {
    const i = this.#buffers.indexOf(buffer);
    if (i >= 0) this.#buffers.splice(i, 1);
  }

  _device() {
    return this.#device;
  }
}

/** What record() returns: the run's control words, readable once the run has executed. */
export class Recording {
  constructor(scanner, control, chunks) {
    this.scanner = scanner;
    this.control = control;
    this.chunks = chunks;
    this.buffers = [control]; // what only this recording uses
  }

  /** Frees the recording's own buffers (after its last submission has completed). */
  release() {
    for (const b of this.buffers) {
      this.scanner._forget(b);
      b.destroy();
    }
    this.buffers = [];
  }

  /** The control words of every chunk (a Uint32Array of chunks * CONTROL_STRIDE words). */
  async readControl() {
    return readBack(this.scanner, this.control);
  }

  /**
   * Reads the control words after the run: raises DeviceError when a kernel found subgroups
   * laid out other than it assumes, ForwardProgressError when csdl gave up; returns the
   * statistics summed over chunks ({ spins, lookbackSteps, fallbacks, insertions }).
   */
  async check() {
    const words = await this.readControl();
    const sum = (w) => {
      let s = 0;
      for (let c = 0; c < Math.max(1, this.chunks); c++) s += words[c * WEB.CONTROL_STRIDE + w];
      return s;
    };
    if (sum(WEB.CONTROL_LAYOUT_ERROR)) {
      throw new DeviceError("the device laid out a workgroup's subgroups in an order the kernels do not support; create the Scanner with subgroups: false");
    }
    if (sum(GS.GS_CONTROL_LOOKBACK_ABANDONED)) {
      throw new ForwardProgressError("csdl gave up waiting on a predecessor tile: this device gives no forward-progress guarantee between workgroups; use csdldf (the default)");
    }
    const stats = {
      spins: sum(GS.GS_CONTROL_SPINS),
      lookbackSteps: sum(GS.GS_CONTROL_LOOKBACK_STEPS),
      fallbacks: sum(GS.GS_CONTROL_FALLBACKS),
      insertions: sum(GS.GS_CONTROL_INSERTIONS),
    };
    this.scanner.lastStatistics = stats;
    return stats;
  }
}

async function readBack(scanner, buffer) {
  const device = scanner._device();
  const read = device.createBuffer({ size: buffer.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buffer, 0, read, 0, buffer.size);
  device.queue.submit([encoder.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const words = new Uint32Array(read.getMappedRange().slice(0));
  read.unmap();
  read.destroy();
  return words;
}
