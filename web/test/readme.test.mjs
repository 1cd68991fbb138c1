// The README's WebGPU example, as written there, and the clear errors it promises.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Scanner, UsageError } from "../src/index.mjs";
import { testDevice, plainDevice } from "./support.mjs";

test("the README example", async () => {
  const device = await testDevice();
  const scanner = await Scanner.create(device, { dtype: "u32", op: "add", kind: "inclusive" });
  assert.deepEqual(await scanner.scan(new Uint32Array([3, 1, 4, 1, 5])), new Uint32Array([3, 4, 8, 9, 14]));
  const total = await (await Scanner.create(device, { dtype: "f32", op: "max", kind: "reduce" }))
    .scan(new Float32Array([2.5, -1, 7]), { init: 0 });
  assert.equal(total, 7);
  assert.deepEqual(await scanner.scan(new Uint32Array(0)), new Uint32Array(0));
  const sum = await Scanner.create(device, { kind: "reduce" });
  assert.equal(await sum.scan(new Uint32Array(0), { init: 9 }), 9);
});

test("bad requests are refused with a UsageError that says what works", async () => {
  const device = await testDevice();
  const refuse = (promise, pattern) => assert.rejects(promise, (e) => e instanceof UsageError && pattern.test(e.message));
  await refuse(Scanner.create(device, { dtype: "u64" }), /u32, i32, f32/);
  await refuse(Scanner.create(device, { dtype: "f32", op: "xor" }), /for integers; f32 allows add, mul, min, max/);
  await refuse(Scanner.create(device, { kind: "scan" }), /inclusive, exclusive, reduce/);
  await refuse(Scanner.create(device, { algorithm: "cub" }), /csdldf, csdl, rts, memcpy/);
  await refuse(Scanner.create(device, { colour: "red" }), /unknown option "colour"/);
  await refuse(Scanner.create(device, { algorithm: "csdl", tileOrder: "dispatch" }), /counter order/);
  await refuse(Scanner.create(await plainDevice(), { subgroups: true }), /'subgroups' feature/);
  await assert.rejects(Scanner.create(null), UsageError);
  const scanner = await Scanner.create(device, { dtype: "i32" });
  await refuse(scanner.scan(new Uint32Array(4)), /needs a Int32Array/);
  await refuse(scanner.scan(new Int32Array(4), { init: 2 ** 31 }), /not a i32/);
  const U = GPUBufferUsage;
  const small = device.createBuffer({ size: 16, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
  const other = device.createBuffer({ size: 16, usage: U.STORAGE });
  const encoder = device.createCommandEncoder();
  assert.throws(() => scanner.record(encoder, small, small, 4), /in-place/);
  assert.throws(() => scanner.record(encoder, small, other, 5), /holds 16 bytes; the run needs 20/);
  assert.throws(() => scanner.record(encoder, small, other, 3), /outBuffer needs usage STORAGE \| COPY_DST/);
  assert.throws(() => scanner.record(encoder, small, other, -1), /not a count/);
  small.destroy();
  other.destroy();
});
