// Prints what Dawn hands the driver for one Scanner configuration: the WGSL and Tint's SPIR-V
// (Dawn's dump_shaders toggle), e.g. to see what the robustness transform adds
// (docs/performance.md W6, W14). Run where web/run-tests.sh runs (lavapipe) or on a GPU:
//
//   node web/tools/dump-shaders.mjs '{"algorithm":"csdldf","lookbackLanes":"subgroup"}' \
//        [disable_robustness,disable_workgroup_init,-use_vulkan_memory_model] > dump.txt
//
// The second argument names Dawn toggles to enable, and those written -name to disable.
import { create, globals } from "webgpu";
import { Scanner } from "../src/index.mjs";

Object.assign(globalThis, globals);
const named = (process.argv[3] ?? "").split(",").filter(Boolean);
const enabled = ["dump_shaders", ...named.filter((t) => !t.startsWith("-"))];
const disabled = named.filter((t) => t.startsWith("-")).map((t) => t.slice(1));
const flags = [`enable-dawn-features=${enabled.join(",")}`];
if (disabled.length) flags.push(`disable-dawn-features=${disabled.join(",")}`);
// Dawn's GPU object must outlive its adapter and device.
globalThis.gpuscanDumpGpu = create(flags);
const adapter = await globalThis.gpuscanDumpGpu.requestAdapter();
if (!adapter) throw new Error("no WebGPU adapter");
const device = await adapter.requestDevice({
  requiredFeatures: ["subgroups"].filter((f) => adapter.features.has(f)),
});
const scanner = await Scanner.create(device, JSON.parse(process.argv[2] ?? "{}"));
console.log(`// configuration: ${JSON.stringify(scanner.config)}`);
device.destroy();
