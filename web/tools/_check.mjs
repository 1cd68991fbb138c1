import { Scanner } from "../src/index.mjs";
import { testDevice, rng, randomInput, reference, firstMismatch, runRecorded } from "../test/support.mjs";
const device = await testDevice();
for (const exp of [1024, 0]) for (const [dtype, op] of [["u32", "add"], ["f32", "add"], ["i32", "max"]]) {
  const s = await Scanner.create(device, { dtype, op, kind: dtype === "f32" ? "exclusive" : "inclusive", blockingMask: 0, statistics: true, experiment: exp, subgroupSize: 8, lookbackLanes: "subgroup", tileOrder: "dispatch", vectorsPerThread: 6 });
  const next = rng(7 + exp);
  let fb = 0;
  for (let r = 0; r < 6 && fb === 0; r++) {
    const n = 64 * s.tileElements + 17;
    const input = randomInput(dtype, op, n, next);
    const runs = await runRecorded(device, s, input, undefined);
    for (const run of runs) {
      const p = firstMismatch(dtype, op, run.out, reference(dtype, op, s.config.kind, run.input, undefined));
      console.log(exp, dtype, op, p ?? "ok", JSON.stringify(run.statistics ?? s.lastStatistics));
      fb += (s.lastStatistics?.fallbacks ?? 0);
    }
  }
}
process.exit(0);
