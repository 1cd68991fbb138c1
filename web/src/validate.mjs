// Checks a benchmark run on the device without reading the output back (DESIGN.md section
// 7): validate.wgsl counts the elements that do not follow from their predecessor and the
// input, into control word GS_CONTROL_VALIDATION_ERRORS of a slot's block.
import { GS } from "./generated.mjs";
import { UsageError, WEB, WORKGROUP_SIZE } from "./errors.mjs";
import { bindGroupLayout, makePipeline } from "./pipelines.mjs";
import { valueBits, monoidJs } from "./monoid.mjs";

export class Validator {
  /** For the runs of `scanner` (its dtype, op, kind; memcpy runs are checked as copies). */
  static async create(device, scanner, slots) {
    const cfg = scanner.config;
    if (cfg.kind === "reduce") throw new UsageError("the validator checks scans and copies, not reductions");
    const mode = cfg.algorithm === "memcpy" ? GS.GS_VALIDATE_COPY : GS.GS_VALIDATE_SCAN;
    const layout = bindGroupLayout(device, [
      [GS.GS_BINDING_INPUT_SCALARS, "read-only-storage"],
      [GS.GS_BINDING_OUTPUT_SCALARS, "read-only-storage"],
      [GS.GS_BINDING_CONTROL, "storage"],
      [WEB.BINDING_PARAMS, "uniform"],
    ]);
    const pipeline = await makePipeline(
      device, device.createPipelineLayout({ bindGroupLayouts: [layout] }), "validate", { ...cfg, mode },
    );
    return new Validator(device, cfg, layout, pipeline, slots);
  }

  constructor(device, cfg, layout, pipeline, slots) {
    Object.assign(this, { device, cfg, layout, pipeline, slots });
    const U = GPUBufferUsage;
    this.errors = device.createBuffer({ size: 4 * WEB.CONTROL_STRIDE * slots, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
    this.params = device.createBuffer({ size: WEB.PARAMS_STRIDE * slots, usage: U.UNIFORM | U.COPY_DST });
  }

  /** Records the check of out against in (n elements) into error slot `slot`. */
  record(encoder, inBuffer, outBuffer, n, slot, init) {
    const initBits = valueBits(this.cfg.dtype, init ?? monoidJs(this.cfg.dtype, this.cfg.op).identity);
    const tolerance = new Uint32Array(new Float32Array([1e-5]).buffer)[0];
    this.device.queue.writeBuffer(this.params, WEB.PARAMS_STRIDE * slot, new Uint32Array([
      n, 0, 0, 0, initBits, WEB.NO_CARRY, WEB.CONTROL_STRIDE * slot, tolerance,
    ]));
    encoder.clearBuffer(this.errors, 4 * WEB.CONTROL_STRIDE * slot, 4 * WEB.CONTROL_STRIDE);
    const group = this.device.createBindGroup({
      layout: this.layout,
      entries: [
        { binding: GS.GS_BINDING_INPUT_SCALARS, resource: { buffer: inBuffer, size: 4 * n } },
        { binding: GS.GS_BINDING_OUTPUT_SCALARS, resource: { buffer: outBuffer, size: 4 * n } },
        { binding: GS.GS_BINDING_CONTROL, resource: { buffer: this.errors } },
        { binding: WEB.BINDING_PARAMS, resource: { buffer: this.params, offset: WEB.PARAMS_STRIDE * slot, size: 32 } },
      ],
    });
    const pass = encoder.beginComputePass({ label: "gpuscan validate" });
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(Math.min(4096, Math.max(1, Math.ceil(n / WORKGROUP_SIZE))));
    pass.end();
  }

  /** The error count of every slot. */
  async counts() {
    const read = this.device.createBuffer({ size: this.errors.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = this.device.createCommandEncoder();
    encoder.copyBufferToBuffer(this.errors, 0, read, 0, this.errors.size);
    this.device.queue.submit([encoder.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const words = new Uint32Array(read.getMappedRange().slice(0));
    read.unmap();
    read.destroy();
    return Array.from({ length: this.slots }, (_, s) => words[s * WEB.CONTROL_STRIDE + GS.GS_CONTROL_VALIDATION_ERRORS]);
  }

  destroy() {
    this.errors.destroy();
    this.params.destroy();
  }
}
