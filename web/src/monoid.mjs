// The element types and operators of the WebGPU package (DESIGN.md sections 3 and 3d): for
// each (dtype, op) the WGSL that defines T, its identity and its combine function, which a
// pipeline's source begins with, and the same semantics in JS for host-side checks.
// Operands are always (earlier, later). Integer add and mul wrap modulo 2^32; float min and
// max ignore a NaN operand unless both are NaN (fmin/fmax).
import { GS } from "./generated.mjs";

export const DTYPES = Object.freeze({
  u32: { code: GS.GS_DTYPE_U32, wgsl: "u32", array: Uint32Array, isFloat: false },
  i32: { code: GS.GS_DTYPE_I32, wgsl: "i32", array: Int32Array, isFloat: false },
  f32: { code: GS.GS_DTYPE_F32, wgsl: "f32", array: Float32Array, isFloat: true },
});

export const OPS = Object.freeze({
  add: GS.GS_OP_ADD,
  mul: GS.GS_OP_MUL,
  min: GS.GS_OP_MIN,
  max: GS.GS_OP_MAX,
  and: GS.GS_OP_BIT_AND,
  or: GS.GS_OP_BIT_OR,
  xor: GS.GS_OP_BIT_XOR,
});

export const KINDS = Object.freeze({
  inclusive: GS.GS_KIND_INCLUSIVE,
  exclusive: GS.GS_KIND_EXCLUSIVE,
  reduce: GS.GS_KIND_REDUCE,
});

const BITWISE = new Set(["and", "or", "xor"]);

/** The operators `dtype` allows: bitwise ones for integers only. */
export function opsFor(dtype) {
  return Object.keys(OPS).filter((op) => !(DTYPES[dtype].isFloat && BITWISE.has(op)));
}

// The identity's bits, per dtype and op.
function identityBits(dtype, op) {
  switch (op) {
    case "mul":
      return dtype === "f32" ? 0x3f800000 : 1;
    case "min":
      return { u32: 0xffffffff, i32: 0x7fffffff, f32: 0x7f800000 }[dtype];
    case "max":
      return { u32: 0, i32: 0x80000000, f32: 0xff800000 }[dtype];
    case "and":
      return 0xffffffff;
    default:
      return 0;
  }
}

/** WGSL declarations of T, TV, t_bits, t_from_bits, identity() and combine(). */
export function monoidWgsl(dtype, op) {
  const t = DTYPES[dtype].wgsl;
  const isFloat = DTYPES[dtype].isFloat;
  const bits = identityBits(dtype, op) >>> 0;
  // A float identity that is infinite must not be a constant expression (WGSL refuses
  // infinite constants), so it comes from a private variable's bits.
  const identity = isFloat
    ? `var<private> IDENTITY_BITS: u32 = ${bits}u;\nfn identity() -> T { return bitcast<f32>(IDENTITY_BITS); }`
    : `fn identity() -> T { return bitcast<${t}>(${bits}u); }`;
  let body;
  switch (op) {
    case "add":
      body = "return a + b;";
      break;
    case "mul":
      body = "return a * b;";
      break;
    case "min":
    case "max":
      body = isFloat
        ? `if (is_nan(a)) { return b; }\n  if (is_nan(b)) { return a; }\n  return ${op}(a, b);`
        : `return ${op}(a, b);`;
      break;
    case "and":
      body = "return a & b;";
      break;
    case "or":
      body = "return a | b;";
      break;
    case "xor":
      body = "return a ^ b;";
      break;
  }
  return `alias T = ${t};
alias TV = vec4<${t}>;
const T_IS_FLOAT: bool = ${isFloat};
const OP: u32 = ${OPS[op]}u;
fn t_bits(x: T) -> u32 { return bitcast<u32>(x); }
fn t_from_bits(x: u32) -> T { return bitcast<T>(x); }
// NaN by its bits: WGSL lets implementations assume that float operations see no NaN.
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
${identity}
fn combine(a: T, b: T) -> T {
  ${body}
}
`;
}

/** The JS counterpart: { identity, combine } over the values a typed array of dtype holds. */
export function monoidJs(dtype, op) {
  const A = DTYPES[dtype].array;
  const cast = (x) => new A([x])[0];
  const identity = new A(new Uint32Array([identityBits(dtype, op) >>> 0]).buffer)[0];
  const nan = Number.isNaN;
  const fns = {
    add: (a, b) => (dtype === "f32" ? Math.fround(a + b) : cast(a + b)),
    mul: (a, b) => (dtype === "f32" ? Math.fround(a * b) : cast(Math.imul(a, b))),
    min: (a, b) => (nan(a) ? b : nan(b) ? a : Math.min(a, b)),
    max: (a, b) => (nan(a) ? b : nan(b) ? a : Math.max(a, b)),
    and: (a, b) => cast(a & b),
    or: (a, b) => cast(a | b),
    xor: (a, b) => cast(a ^ b),
  };
  return { identity, combine: fns[op] };
}

/** Bits of `value` as dtype (throws a RangeError when it is not a value of the type). */
export function valueBits(dtype, value) {
  if (typeof value !== "number" && typeof value !== "bigint") {
    throw new TypeError(`init must be a number, not ${typeof value}`);
  }
  const v = Number(value);
  if (dtype !== "f32") {
    const [lo, hi] = dtype === "u32" ? [0, 2 ** 32 - 1] : [-(2 ** 31), 2 ** 31 - 1];
    if (!Number.isInteger(v) || v < lo || v > hi) {
      throw new RangeError(`init ${value} is not a ${dtype} (an integer in [${lo}, ${hi}])`);
    }
  }
  const a = new DTYPES[dtype].array([v]);
  return new Uint32Array(a.buffer)[0];
}
