// The look-back protocol under stress (docs/protocol.md): simulated blocking at every rate
// from 1/1 to 1/512 with exact results and the statistics that must follow, runs longer
// than one binding (chunks whose totals carry into the next), repeated and out-of-order
// submissions on one Scanner, and the path without subgroups.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Scanner } from "../src/index.mjs";
import { testDevice, plainDevice, seedFor, rng, randomInput, reference, firstMismatch, runRecorded, runRecordedAcceptingCsdlGiveUp } from "./support.mjs";

async function expectExact(device, scanner, n, label, { init, repeat = 1 } = {}) {
  const { dtype, op, kind } = scanner.config;
  const { base, seed } = seedFor(label);
  const next = rng(seed);
  const input = randomInput(dtype, op, n, next);
  const runs = await runRecordedAcceptingCsdlGiveUp(device, scanner, input, init, {
    repeat,
    fresh: () => randomInput(dtype, op, n, next),
  }, label);
  if (runs === null) return [];
  for (const [r, run] of runs.entries()) {
    const problem = firstMismatch(dtype, op, run.out, reference(dtype, op, kind, run.input, init));
    assert.equal(problem, null, `${label} run ${r} (GPUSCAN_SEED=${base}): ${problem}`);
  }
  return runs;
}

test("simulated blocking at every rate 1/1 .. 1/512 stays exact; fallbacks are counted", async (t) => {
  const device = await testDevice();
  for (let k = 0; k <= 9; k++) {
    const blockingMask = (1 << k) - 1;
    for (const [dtype, op] of [["u32", "add"], ["f32", "add"], ["i32", "max"]]) {
      const scanner = await Scanner.create(device, { dtype, op, blockingMask, statistics: true });
      const n = 40 * scanner.tileElements + 17;
      const [{ statistics }] = await expectExact(device, scanner, n, `blocking mask ${blockingMask} ${dtype} ${op}`);
      // How many look-backs fall back is the device's scheduling (the next test); these
      // hold on every run.
      assert.ok(statistics.insertions <= statistics.fallbacks, JSON.stringify(statistics));
      assert.ok(statistics.lookbackSteps >= 40, `every tile but the first looks back: ${JSON.stringify(statistics)}`);
      if (dtype === "u32") t.diagnostic(`mask ${blockingMask}: ${JSON.stringify(statistics)}`);
      scanner.destroy();
    }
  }
});

// Even with every tile blocked, a tile whose predecessor has finished (a blocked tile still
// posts its inclusive value) needs no fallback, so how many happen is the scheduler's: none
// at all on one worker thread (LP_NUM_THREADS=1), which runs tiles one after the other. A
// device that runs tiles at the same time must sooner or later see a successor look back
// before its predecessor finished: some run of up to 20 must count fallbacks, and the
// fallbacks on tiles nobody posted must be counted as insertions.
test("with every tile blocked, look-backs fall back and insert", async (t) => {
  const device = await testDevice();
  const scanner = await Scanner.create(device, { blockingMask: 0, statistics: true });
  let total = { fallbacks: 0, insertions: 0 };
  let runs = 0;
  for (; runs < 20 && total.insertions === 0; runs++) {
    // The last tile partial, its last vector too: a fallback stashes that tile's vectors in
    // the output through the run's tail and reads them back.
    const [{ statistics }] = await expectExact(device, scanner, 256 * scanner.tileElements - 5, `all blocked run ${runs}`);
    total.fallbacks += statistics.fallbacks;
    total.insertions += statistics.insertions;
  }
  t.diagnostic(`${runs} runs: ${JSON.stringify(total)}`);
  const threads = Number(process.env.LP_NUM_THREADS ?? 0);
  if (process.env.LP_NUM_THREADS && threads <= 1) return;
  assert.ok(total.fallbacks > 0 && total.insertions > 0, `no look-back fell back in ${runs} runs of 256 blocked tiles`);
  scanner.destroy();
});

test("csdl and csdldf with blocking, tiles in dispatch order", async () => {
  const device = await testDevice();
  for (const tileOrder of ["counter", "dispatch"]) {
    const scanner = await Scanner.create(device, { tileOrder, blockingMask: 1 });
    await expectExact(device, scanner, 33 * scanner.tileElements - 5, `csdldf ${tileOrder}`);
    scanner.destroy();
  }
  const csdl = await Scanner.create(device, { algorithm: "csdl", blockingMask: 3 });
  await expectExact(device, csdl, 20 * csdl.tileElements + 1, "csdl blocked");
  csdl.destroy();
});

test("runs longer than one binding are chunked, each chunk's total the next one's init", async () => {
  const device = await testDevice();
  for (const algorithm of ["csdldf", "csdl", "rts", "memcpy"]) {
    for (const kind of algorithm === "memcpy" ? ["inclusive"] : ["inclusive", "exclusive", "reduce"]) {
      const probe = await Scanner.create(device, { algorithm, kind });
      const tile = probe.tileElements;
      probe.destroy();
      // Chunks of 3 tiles: the last chunk is partial and its last vector too.
      const scanner = await Scanner.create(device, { algorithm, kind, dtype: "i32", maxChunkElements: 3 * tile });
      assert.equal(scanner.chunkElements, 3 * tile);
      if (algorithm === "memcpy") {
        const { base, seed } = seedFor("memcpy chunks");
        const input = randomInput("i32", "xor", 10 * tile + 3, rng(seed));
        const [{ out }] = await runRecorded(device, scanner, input);
        assert.deepEqual(out, input, `memcpy chunks (GPUSCAN_SEED=${base})`);
      } else {
        await expectExact(device, scanner, 10 * tile + 3, `${algorithm} ${kind} chunks`, { init: -7 });
        await expectExact(device, scanner, 6 * tile, `${algorithm} ${kind} two full chunks`);
      }
      scanner.destroy();
    }
  }
});

test("repeated runs on one Scanner and buffers stay exact (the reset is recorded)", async () => {
  const device = await testDevice();
  for (const algorithm of ["csdldf", "csdl", "rts"]) {
    const scanner = await Scanner.create(device, { algorithm, blockingMask: algorithm === "rts" ? undefined : 7 });
    await expectExact(device, scanner, 12 * scanner.tileElements + 1, `${algorithm} repeated`, { repeat: 4 });
    scanner.destroy();
  }
});

test("work recorded on one Scanner may be submitted in any order", async () => {
  const device = await testDevice();
  const scanner = await Scanner.create(device, { kind: "exclusive" });
  const n = 9 * scanner.tileElements + 2;
  const { base, seed } = seedFor("any order");
  const next = rng(seed);
  const U = GPUBufferUsage;
  const jobs = [0, 1, 2].map((j) => {
    const input = randomInput("u32", "add", n, next);
    const inBuffer = device.createBuffer({ size: 4 * n, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
    const outBuffer = device.createBuffer({ size: 4 * n, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
    const read = device.createBuffer({ size: 4 * n, usage: U.MAP_READ | U.COPY_DST });
    device.queue.writeBuffer(inBuffer, 0, input);
    device.queue.writeBuffer(outBuffer, 0, new Uint32Array(n).fill(0xdeadbeef));
    const encoder = device.createCommandEncoder();
    const recording = scanner.record(encoder, inBuffer, outBuffer, n, { init: j });
    encoder.copyBufferToBuffer(outBuffer, 0, read, 0, 4 * n);
    return { input, init: j, read, commands: encoder.finish(), recording, buffers: [inBuffer, outBuffer, read] };
  });
  device.queue.submit([jobs[2].commands, jobs[0].commands]);
  device.queue.submit([jobs[1].commands]);
  for (const job of jobs) {
    await job.read.mapAsync(GPUMapMode.READ);
    const out = new Uint32Array(job.read.getMappedRange().slice(0));
    job.read.unmap();
    const problem = firstMismatch("u32", "add", out, reference("u32", "add", "exclusive", job.input, job.init));
    assert.equal(problem, null, `job ${job.init} (GPUSCAN_SEED=${base}): ${problem}`);
    job.recording.release();
    job.buffers.forEach((b) => b.destroy());
  }
  scanner.destroy();
});

test("the path without the subgroups feature", async (t) => {
  // The first dispatch of these pipelines compiles for tens of seconds on llvmpipe, so only
  // two configurations run here; the kernels share every file but the subgroup level.
  const device = await plainDevice();
  assert.equal(device.features.has("subgroups"), false);
  for (const options of [{ dtype: "u32", op: "add", blockingMask: 3 }, { dtype: "f32", op: "max", kind: "exclusive" }]) {
    const scanner = await Scanner.create(device, options);
    assert.equal(scanner.config.subgroups, false);
    const tile = scanner.tileElements;
    for (const n of [1, 5, tile + 3, 7 * tile + 1]) {
      await expectExact(device, scanner, n, `no subgroups ${JSON.stringify(options)} n=${n}`, { init: options.dtype === "f32" ? -2.5 : undefined });
    }
    scanner.destroy();
  }
});

test("the look-back by a subgroup (the GPU default) and by one invocation agree", async () => {
  // CPU drivers default to one invocation and to the subgroup size read at run time; the
  // subgroup's window read (both words of one tile a lane), with the size read or
  // compiled in (the GPU default where the device runs one size), is proved here on a few
  // configurations, with blocking and chunks.
  const device = await testDevice();
  if (!device.features.has("subgroups")) return;
  const { subgroupMinSize, subgroupMaxSize } = device.adapterInfo;
  const lanes = [{ lookbackLanes: "subgroup" }, { lookbackLanes: "single" }];
  if (subgroupMinSize && subgroupMinSize === subgroupMaxSize) {
    lanes.push({ lookbackLanes: "subgroup", subgroupSize: subgroupMinSize });
  }
  for (const lane of lanes) {
    for (const options of [
      { dtype: "u32", op: "add", blockingMask: 1, statistics: true },
      { dtype: "f32", op: "add", kind: "exclusive", blockingMask: 0 },
      { dtype: "i32", op: "max", kind: "reduce", tileOrder: "dispatch", blockingMask: 3 },
      { dtype: "u32", op: "xor", tileOrder: "dispatch", blockingMask: 0 },
    ]) {
      const scanner = await Scanner.create(device, { ...options, ...lane, maxChunkElements: 8 * 4096 * 6 });
      assert.equal(scanner.config.lookbackLanes, lane.lookbackLanes);
      await expectExact(device, scanner, 21 * scanner.tileElements + 3, `${JSON.stringify(lane)} ${JSON.stringify(options)}`, { init: options.dtype === "f32" ? 1.5 : undefined });
      scanner.destroy();
    }
  }
});
