import { testDevice } from "../test/support.mjs";
import { Scanner } from "../src/index.mjs";
const device = await testDevice();
for (const experiment of [0, 1024, 16, 272]) for (const dtype of ["u32", "f32"]) {
  const s = await Scanner.create(device, { dtype, experiment, lookbackLanes: "subgroup", subgroupSize: 8, tileOrder: "dispatch", vectorsPerThread: 6 });
  console.log("compiled", experiment, dtype);
}
const s2 = await Scanner.create(device, { experiment: 32 });
console.log("single ok", s2.config.lookbackLanes);
process.exit(0);
