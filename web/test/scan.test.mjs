// Every algorithm x dtype x op x kind on the test device (lavapipe where there is no GPU),
// at sizes around the tile and odd ones, with seeded random inputs and poisoned outputs
// (DESIGN.md section 6). GPUSCAN_SEED=<n> reruns a printed seed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Scanner, opsFor } from "../src/index.mjs";
import { testDevice, seedFor, rng, randomInput, reference, firstMismatch, runRecorded, runRecordedAcceptingCsdlGiveUp } from "./support.mjs";

const KINDS = ["inclusive", "exclusive", "reduce"];

function sizesFor(tile, level) {
  const small = [0, 1, 2, 3, 4, 5, 7, tile - 1, tile, tile + 1];
  if (level === "full") return [...small, 2 * tile - 1, 2 * tile + 3, 3 * tile + 2, 65537];
  return [1, 3, 5, tile + 1, 2 * tile + 3, 20011];
}

async function checkConfig(t, device, options, sizes, init) {
  const scanner = await Scanner.create(device, options);
  const { dtype, op, kind } = scanner.config;
  try {
    for (const n of sizes) {
      const name = `${JSON.stringify(options)} n=${n}`;
      const { base, seed } = seedFor(name);
      const input = randomInput(dtype, op, n, rng(seed));
      const initValue = init === undefined ? undefined : randomInput(dtype, op, 1, rng(seed ^ 1))[0];
      const runs = await runRecordedAcceptingCsdlGiveUp(device, scanner, input, initValue, {}, name);
      if (runs === null) continue;
      const [{ out }] = runs;
      const problem = firstMismatch(dtype, op, out, reference(dtype, op, kind, input, initValue));
      assert.equal(problem, null, `${name} init=${initValue} (GPUSCAN_SEED=${base}): ${problem}`);
    }
  } finally {
    scanner.destroy();
  }
}

test("csdldf: every dtype, operator and kind", async (t) => {
  const device = await testDevice();
  const tile = (await Scanner.create(device, {})).tileElements;
  t.diagnostic(`adapter: ${device.adapterInfo.description || device.adapterInfo.vendor}, subgroups ${device.adapterInfo.subgroupMinSize}..${device.adapterInfo.subgroupMaxSize}, tile ${tile}`);
  for (const dtype of ["u32", "i32", "f32"]) {
    for (const op of opsFor(dtype)) {
      for (const kind of KINDS) {
        const full = op === "add" && kind !== "reduce";
        await checkConfig(t, device, { dtype, op, kind }, sizesFor(tile, full ? "full" : "some"), kind === "exclusive" || op === "max" ? "init" : undefined);
      }
    }
  }
});

for (const algorithm of ["csdl", "rts"]) {
  test(`${algorithm}: every dtype and kind, several operators`, async () => {
    const device = await testDevice();
    const tile = (await Scanner.create(device, {})).tileElements;
    for (const dtype of ["u32", "i32", "f32"]) {
      for (const op of dtype === "f32" ? ["add", "min"] : ["add", "xor", "max"]) {
        for (const kind of KINDS) {
          await checkConfig(null, device, { algorithm, dtype, op, kind }, sizesFor(tile, op === "add" ? "full" : "some"), kind === "exclusive" ? "init" : undefined);
        }
      }
    }
  });
}

test("memcpy copies exactly, tails included", async () => {
  const device = await testDevice();
  const scanner = await Scanner.create(device, { algorithm: "memcpy" });
  for (const n of [1, 2, 3, 4, 5, 4097, 20011]) {
    const { base, seed } = seedFor(`memcpy ${n}`);
    const input = randomInput("u32", "xor", n, rng(seed));
    const [{ out }] = await runRecorded(device, scanner, input);
    assert.deepEqual(out, input, `memcpy n=${n} (GPUSCAN_SEED=${base})`);
  }
});
