// How a kernel becomes a pipeline: the source of one configuration is a prelude of WGSL
// constants (the interface table generated from shaders/common/interface.h, the tile
// shape, the kind and algorithm switches, the monoid of monoid.mjs and one of the two
// subgroup-level pieces) followed by the kernel's joined files (tools/join-wgsl.mjs).
// Constants rather than pipeline-overridable ones, so that every switch folds away.
import { INTERFACE_WGSL, KERNELS } from "./generated.mjs";
import { KINDS, monoidWgsl } from "./monoid.mjs";
import { DeviceError, WEB, WORKGROUP_SIZE } from "./errors.mjs";

// The subgroup size of common/lanes_subgroups.wgsl: a constant where the host knows the
// device's one size (as the Vulkan kernels' SUBGROUP_SIZE specialization constant), else
// read from the builtin at run time. A kernel whose subgroups differ from the constant says
// so through the layout flag.
function subgroupSizeWgsl(size) {
  if (size) {
    return `const SG_SIZE: u32 = ${size}u;\nfn set_subgroup_size(size: u32) {}`;
  }
  return "var<private> SG_SIZE: u32;\nfn set_subgroup_size(size: u32) { SG_SIZE = size; }";
}

function wgslPrelude(cfg) {
  const lines = [];
  if (cfg.subgroups) {
    lines.push("enable subgroups;", "diagnostic(off, subgroup_uniformity);");
  }
  lines.push(INTERFACE_WGSL);
  const c = (name, type, v) => lines.push(`const ${name}: ${type} = ${v};`);
  c("WEB_BINDING_PARAMS", "u32", `${WEB.BINDING_PARAMS}u`);
  c("WEB_CONTROL_CARRY", "u32", `${WEB.CONTROL_CARRY}u`);
  c("WEB_CONTROL_LAYOUT_ERROR", "u32", `${WEB.CONTROL_LAYOUT_ERROR}u`);
  c("MIN_SUBGROUP_SIZE", "u32", `${WEB.MIN_SUBGROUP_SIZE}u`);
  c("WINDOW", "u32", `${WEB.WINDOW}u`);
  c("WORKGROUP_SIZE", "u32", `${WORKGROUP_SIZE}u`);
  c("VECTORS_PER_THREAD", "u32", `${cfg.vectorsPerThread}u`);
  c("KIND", "u32", `${KINDS[cfg.kind]}u`);
  c("FALLBACK", "bool", cfg.algorithm === "csdldf");
  c("DISPATCH_ORDER", "bool", cfg.tileOrder === "dispatch");
  c("MAX_SPINS", "u32", `${cfg.maxSpins}u`);
  c("STATISTICS", "bool", cfg.statistics);
  c("PHASE", "u32", `${cfg.phase ?? 0}u`);
  c("MODE", "u32", `${cfg.mode ?? 0}u`);
  c("EXPERIMENT", "u32", `${cfg.experiment ?? 0}u`);
  lines.push(monoidWgsl(cfg.dtype, cfg.op));
  if (cfg.subgroups) lines.push(subgroupSizeWgsl(cfg.subgroupSize));
  lines.push(cfg.subgroups ? KERNELS.lanes_subgroups : KERNELS.lanes_emulated);
  if (cfg.lookback) {
    const lanes = cfg.subgroups && cfg.lookbackLanes !== "single";
    lines.push(lanes ? KERNELS.lookback_subgroups : KERNELS.lookback_emulated);
  }
  return lines.join("\n");
}

/** The WGSL source of one kernel for a configuration (exported for tests and tools). */
export function kernelSource(kernel, cfg) {
  return `${wgslPrelude(cfg)}\n${KERNELS[kernel]}`;
}

export async function makePipeline(device, layout, kernel, cfg) {
  device.pushErrorScope("validation");
  const module = device.createShaderModule({ code: kernelSource(kernel, cfg), label: kernel });
  const info = await module.getCompilationInfo();
  await device.popErrorScope(); // the messages below say it better
  const errors = info.messages.filter((m) => m.type === "error");
  if (errors.length) {
    throw new DeviceError(
      `WGSL of ${kernel} (${cfg.dtype} ${cfg.op}) does not compile: ` +
        errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join("; "),
    );
  }
  device.pushErrorScope("validation");
  const pipeline = device.createComputePipeline({
    layout,
    compute: { module, entryPoint: "main" },
    label: kernel,
  });
  const error = await device.popErrorScope();
  if (error) throw new DeviceError(`pipeline ${kernel}: ${error.message}`);
  return pipeline;
}

export function bindGroupLayout(device, entries) {
  return device.createBindGroupLayout({
    entries: entries.map(([binding, type]) => ({
      binding,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type },
    })),
  });
}

