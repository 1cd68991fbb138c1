#!/usr/bin/env node
// Benchmark of the WebGPU kernels on one adapter through Dawn (DESIGN.md section 7): for each
// size, every algorithm on the same input buffer, device timestamps around the run's passes,
// the L2 flushed before each run (a clear of a buffer larger than any L2), the output cleared
// before each run and every run validated on the device; the median of the runs, and each
// algorithm's throughput over memcpy's at the same n. CSV in the DESIGN schema with
// backend = webgpu, progress and a table on stderr.
//
//   node web/bench.mjs [--algorithms csdldf,rts,memcpy,csdl] [--sizes 16:28 | N1,N2,...] [--runs 20]
//                      [--dtype u32] [--op add] [--kind inclusive] [--blocking-mask M]
//                      [--stats] [--tile-order dispatch|counter] [--vectors-per-thread V]
//                      [--lookback-lanes subgroup|single] [--dawn-toggles a,-b]
//                      [--variants "name:option=value+option=value;name2:..."]
//                      [--device NAME] [--commit SHA] [--csv FILE]
import { writeFileSync } from "node:fs";
import { create, globals } from "webgpu";
import { Scanner, UsageError } from "./src/index.mjs";
import { Validator } from "./src/validate.mjs";
import { DTYPES } from "./src/monoid.mjs";

Object.assign(globalThis, globals);

const HEADER =
  "date,commit,device,backend,algorithm,dtype,op,kind,n,runs,median_ms,gelems_per_s,vs_memcpy,validated,blocking_mask,spins,lookback_steps,fallbacks,insertions";
const FLUSH_BYTES = 256 << 20; // larger than the L2 of any GPU in sight (H100: 50 MB)
const WARMUP = 3;

// --sizes as the gpuscan CLI reads it: LO:HI for 2^LO..2^HI, or N1,N2,... elements.
function parseSizes(text) {
  const range = /^(\d+):(\d+)$/.exec(text);
  if (range) {
    const [lo, hi] = [Number(range[1]), Number(range[2])];
    if (lo <= hi && hi <= 40) return Array.from({ length: hi - lo + 1 }, (_, k) => 2 ** (lo + k));
  } else if (/^\d+(,\d+)*$/.test(text)) {
    const sizes = text.split(",").map(Number);
    if (sizes.every((n) => n >= 1 && n <= 2 ** 40)) return sizes;
  }
  throw new UsageError(
    `--sizes '${text}' is neither LO:HI (powers of two, LO <= HI <= 40) nor N1,N2,... (whole numbers from 1)`);
}

// What to say about --sizes given as one whole number up to 40 (that many elements, which reads
// like LO:HI's exponent), as the gpuscan CLI says it; undefined for any other request.
function sizesNote(text) {
  if (!/^\d{1,2}$/.test(text) || Number(text) > 40) return undefined;
  return `--sizes ${text} times n = ${text} elements; for 2^${text} write --sizes ${text}:${text}`;
}

function parseArgs(argv) {
  const args = {
    algorithms: "csdldf,rts,memcpy", sizes: "16:28", runs: 20, dtype: "u32", op: "add",
    kind: "inclusive", blockingMask: undefined, stats: false, tileOrder: undefined,
    vectorsPerThread: undefined, lookbackLanes: undefined, variants: "", dawnToggles: "", device: "", commit: process.env.GPUSCAN_COMMIT ?? "", csv: "",
  };
  for (let i = 2; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, "").replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!(key in args)) throw new UsageError(`unknown option ${argv[i]}`);
    if (key === "stats") args.stats = true;
    else args[key] = argv[++i];
  }
  args.sizesNote = sizesNote(String(args.sizes));
  args.sizes = parseSizes(String(args.sizes));
  const runsText = String(args.runs);
  args.runs = Number(runsText);
  if (!/^\d+$/.test(runsText) || args.runs < 1) {
    throw new UsageError(`--runs '${runsText}' is not a whole number from 1`);
  }
  args.algorithms = args.algorithms.split(",");
  if (args.blockingMask !== undefined) args.blockingMask = Number(args.blockingMask);
  if (args.vectorsPerThread !== undefined) args.vectorsPerThread = Number(args.vectorsPerThread);
  // --variants "a:;b:subgroupSize=32+experiment=1": the chained scans once per variant, each
  // with these Scanner options on top (numbers or words), labelled algorithm:name.
  args.variants = args.variants
    ? args.variants.split(";").filter(Boolean).map((v) => {
      const [name, list = ""] = v.split(":");
      const options = {};
      for (const kv of list.split("+").filter(Boolean)) {
        const [k, value] = kv.split("=");
        options[k] = /^-?\d+$/.test(value) ? Number(value) : value;
      }
      return { name, options };
    })
    : [{ name: "", options: {} }];
  return args;
}

function median(values) {
  const v = [...values].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

async function main() {
  const args = parseArgs(process.argv);
  // Without this toggle Dawn rounds timestamps to 65.5 us steps. Dawn's GPU object must
  // outlive its adapter and device (collected early, it takes the process down).
  // --dawn-toggles: Dawn toggles to enable, and those written -name to disable (e.g.
  // -use_spirv_reconvergence_mode: Tint then leaves out SPIR-V's MaximallyReconvergesKHR).
  const named = args.dawnToggles ? args.dawnToggles.split(",").filter(Boolean) : [];
  const enabled = named.filter((t) => !t.startsWith("-"));
  const disabled = ["timestamp_quantization", ...named.filter((t) => t.startsWith("-")).map((t) => t.slice(1))];
  const toggles = [`disable-dawn-features=${disabled.join(",")}`];
  if (enabled.length) toggles.push(`enable-dawn-features=${enabled.join(",")}`);
  globalThis.gpuscanBenchGpu = create(toggles);
  const gpu = globalThis.gpuscanBenchGpu;
  const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) throw new Error("no WebGPU adapter");
  if (!adapter.features.has("timestamp-query")) throw new Error("the adapter has no timestamp-query");
  const features = ["timestamp-query", "subgroups"].filter((f) => adapter.features.has(f));
  const device = await adapter.requestDevice({
    requiredFeatures: features,
    requiredLimits: {
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      maxBufferSize: adapter.limits.maxBufferSize,
    },
  });
  device.addEventListener("uncapturederror", (e) => {
    console.error(`WebGPU error: ${e.error.message}`);
    process.exit(1);
  });
  const info = device.adapterInfo;
  // Dawn's description of an NVIDIA adapter names only the driver: --device names the GPU.
  const deviceName = (args.device || info.description || `${info.vendor} ${info.architecture}`).replace(/,/g, " ");
  console.error(`device: ${deviceName} (${info.vendor} ${info.architecture}), subgroups ${info.subgroupMinSize}..${info.subgroupMaxSize}, features ${features.join(" ")}`);
  if (args.sizesNote) console.error(`bench: note: ${args.sizesNote}`);

  const U = GPUBufferUsage;
  const A = DTYPES[args.dtype].array;
  const maxN = Math.max(...args.sizes);
  const input = device.createBuffer({ size: 4 * maxN, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
  const output = device.createBuffer({ size: 4 * maxN, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
  const flush = device.createBuffer({ size: FLUSH_BYTES, usage: U.STORAGE | U.COPY_DST });
  {
    // Random input in slices (bounded host memory), small values so sums stay informative.
    let seed = 12345;
    const slice = new A(1 << 22);
    for (let at = 0; at < maxN; at += slice.length) {
      const count = Math.min(slice.length, maxN - at);
      for (let i = 0; i < count; i++) {
        seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
        slice[i] = args.dtype === "f32" ? (seed >>> 8) / 2 ** 24 : seed >>> 24;
      }
      device.queue.writeBuffer(input, 4 * at, slice, 0, count);
    }
  }
  // One configuration per algorithm; with --blocking-mask the chained scans run both
  // unblocked and blocked, so that their ratio comes from one process.
  const configs = [];
  for (const base of args.algorithms) {
    const chained = base === "csdldf" || base === "csdl";
    for (const variant of chained ? args.variants : [{ name: "", options: {} }]) {
      const algorithm = variant.name ? `${base}:${variant.name}` : base;
      for (const blockingMask of chained && args.blockingMask !== undefined ? [undefined, args.blockingMask] : [undefined]) {
        const options = { dtype: args.dtype, op: args.op, kind: args.kind, algorithm: base, blockingMask };
        if (args.tileOrder && base === "csdldf") options.tileOrder = args.tileOrder;
        if (args.vectorsPerThread) options.vectorsPerThread = args.vectorsPerThread;
        if (args.lookbackLanes && chained) options.lookbackLanes = args.lookbackLanes;
        if (args.stats && chained) options.statistics = true;
        Object.assign(options, variant.options);
        const scanner = await Scanner.create(device, options);
        const label = blockingMask === undefined ? algorithm : `${algorithm}/blocked`;
        configs.push({ label, algorithm, scanner, validator: await Validator.create(device, scanner, WARMUP + args.runs) });
      }
    }
  }
  // Run r of every configuration, then run r + 1: a slow spell of the device hits all alike
  // (docs/performance.md, "Same input, taking turns"). Configuration c's run r writes
  // timestamps 2 * (c * total + r) and the one after.
  const total = WARMUP + args.runs;
  const stampCount = 2 * total * configs.length;
  const querySet = device.createQuerySet({ type: "timestamp", count: stampCount });
  const resolve = device.createBuffer({ size: 8 * stampCount, usage: U.QUERY_RESOLVE | U.COPY_SRC });
  const read = device.createBuffer({ size: 8 * stampCount, usage: U.MAP_READ | U.COPY_DST });

  // The device kept busy for about half a second before the first timed run, so that its
  // clocks are up (docs/performance.md V12: an idle H100 started timing at 345 MHz).
  {
    const encoder = device.createCommandEncoder();
    for (let i = 0; i < 500; i++) encoder.copyBufferToBuffer(input, 0, output, 0, 4 * maxN);
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
  }

  const rows = [];
  const date = new Date().toISOString();
  for (const n of args.sizes) {
    const results = {};
    const recordings = configs.map(() => []);
    for (let r = 0; r < total; r++) {
      configs.forEach(({ scanner, validator }, c) => {
        const at = 2 * (c * total + r);
        const encoder = device.createCommandEncoder();
        encoder.clearBuffer(flush);
        encoder.clearBuffer(output, 0, 4 * n);
        recordings[c].push(scanner.record(encoder, input, output, n, {
          timestampWrites: { querySet, beginningOfPassWriteIndex: at, endOfPassWriteIndex: at + 1 },
        }));
        validator.record(encoder, input, output, n, r);
        device.queue.submit([encoder.finish()]);
      });
    }
    const encoder = device.createCommandEncoder();
    encoder.resolveQuerySet(querySet, 0, stampCount, resolve, 0);
    encoder.copyBufferToBuffer(resolve, 0, read, 0, 8 * stampCount);
    device.queue.submit([encoder.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const stamps = new BigUint64Array(read.getMappedRange().slice(0));
    read.unmap();
    for (const [c, { label, scanner, validator }] of configs.entries()) {
      const times = [];
      for (let r = WARMUP; r < total; r++) {
        const at = 2 * (c * total + r);
        times.push(Number(stamps[at + 1] - stamps[at]) / 1e6);
      }
      const errors = (await validator.counts()).slice(WARMUP);
      const statistics = scanner.config.statistics ? await recordings[c][total - 1].check() : null;
      for (const rec of recordings[c]) rec.release();
      const ms = median(times);
      results[label] = {
        ms, gelems: n / (ms * 1e-3) / 1e9, validated: errors.filter((e) => e === 0).length, statistics,
        blocking: scanner.config.blockingMask === 0xffffffff ? "" : scanner.config.blockingMask,
      };
      if (errors.some((e) => e !== 0)) console.error(`${label} n=${n}: validation errors ${errors.join(" ")}`);
    }
    const copy = results.memcpy?.gelems;
    for (const { label, algorithm } of configs) {
      const r = results[label];
      const s = r.statistics;
      const vs = copy ? (r.gelems / copy).toFixed(4) : "";
      rows.push([
        date, args.commit, deviceName, "webgpu", algorithm, args.dtype, args.op, args.kind, n, args.runs,
        r.ms.toFixed(6), r.gelems.toFixed(4), vs, r.validated, r.blocking,
        s ? s.spins : "", s ? s.lookbackSteps : "", s ? s.fallbacks : "", s ? s.insertions : "",
      ].join(","));
      const size = Number.isInteger(Math.log2(n)) ? `2^${Math.log2(n)}` : `${n}`;
      console.error(`n=${size} ${label.padEnd(14)} ${r.ms.toFixed(4).padStart(9)} ms ${r.gelems.toFixed(2).padStart(8)} G/s  vs memcpy ${vs}  validated ${r.validated}/${args.runs}${s ? " " + JSON.stringify(s) : ""}`);
    }
  }
  const csv = [HEADER, ...rows].join("\n") + "\n";
  if (args.csv) writeFileSync(args.csv, csv);
  else process.stdout.write(csv);
  device.destroy();
}

main().catch((e) => {
  console.error(`bench: ${e.message}`);
  process.exit(e instanceof UsageError ? 2 : 1);
});
