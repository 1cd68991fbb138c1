#!/usr/bin/env bash
# `gpuscan scan` end to end: .npy files in, .npy files out, every element checked against a
# reference computed here; and every kind of bad input refused with exit status 2, exactly
# one "gpuscan: error:" line on stderr and no output file (nor its temporary) left behind.
# Fixtures are written and outputs read with Python's struct module: no numpy needed.
# Usage: cli_test.sh path/to/gpuscan
set -euo pipefail

source "$(dirname "$(realpath "$0")")/cli_setup.sh"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

cat >npy.py <<'EOF'
"""Writes the test's .npy fixtures, and checks gpuscan's outputs against a sequential scan."""
import ast
import math
import struct
import sys

FORMATS = {'u4': 'I', 'i4': 'i', 'f4': 'f', 'u8': 'Q', 'i8': 'q', 'f8': 'd'}
BITS = {'u4': 32, 'i4': 32, 'u8': 64, 'i8': 64}


def write(path, descr, shape, values=(), fortran=False, version=1, data=None, raw_dict=None):
    code = descr.lstrip('<>=|')
    if data is None:
        data = struct.pack('<%d%s' % (len(values), FORMATS[code]), *values)
    text = raw_dict or "{'descr': %r, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
    prefix = 8 + (2 if version == 1 else 4)
    text += ' ' * ((64 - (prefix + len(text) + 1) % 64) % 64) + '\n'
    length = struct.pack('<H' if version == 1 else '<I', len(text))
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY' + bytes([version, 0]) + length + text.encode('latin1') + data)


def read(path, written_by_gpuscan):
    """The dtype code and values of a .npy file; what gpuscan writes must be exactly v1.0."""
    with open(path, 'rb') as f:
        blob = f.read()
    assert blob[:6] == b'\x93NUMPY', '%s: not a .npy file' % path
    version = blob[6]
    start = 10 if version == 1 else 12
    (length,) = struct.unpack('<H' if version == 1 else '<I', blob[8:start])
    text = blob[start:start + length].decode('latin1')
    header = ast.literal_eval(text)
    if written_by_gpuscan:
        assert blob[6:8] == b'\x01\x00', '%s: not version 1.0' % path
        assert (start + length) % 64 == 0 and text.endswith('\n'), '%s: header not padded' % path
        assert set(header) == {'descr', 'fortran_order', 'shape'}, header
        assert header['descr'][0] == '<', header
    assert not header['fortran_order'] and len(header['shape']) in (1, 2), header
    code = header['descr'].lstrip('<=|')
    assert code in FORMATS, header
    n = 1
    for extent in header['shape']:
        n *= extent
    data = blob[start + length:]
    assert len(data) == n * struct.calcsize(FORMATS[code]), '%s: %d data bytes' % (path, len(data))
    return code, list(struct.unpack('<%d%s' % (n, FORMATS[code]), data)), header['shape']


def wrap(code, x):
    if code not in BITS:
        return x
    bits = BITS[code]
    x &= (1 << bits) - 1
    return x - (1 << bits) if code[0] == 'i' and x >> (bits - 1) else x


def combine(code, op, a, b):
    if op == 'add': return wrap(code, a + b)
    if op == 'mul': return wrap(code, a * b)
    # Floats as C's fmin/fmax: a NaN operand is ignored unless both are NaN.
    if op in ('min', 'max') and a != a: return b
    if op in ('min', 'max') and b != b: return a
    if op == 'min': return min(a, b)
    if op == 'max': return max(a, b)
    if op == 'and': return wrap(code, a & b)
    if op == 'or': return wrap(code, a | b)
    if op == 'xor': return wrap(code, a ^ b)
    raise ValueError(op)


def identity(code, op):
    """IEEE's identities for floats: -0.0 for add (+0.0 + -0.0 is +0.0), NaN for fmin/fmax."""
    if op == 'mul': return 1
    if op == 'and': return wrap(code, -1)
    if op in ('min', 'max'):
        if code[0] == 'f': return float('nan')
        bits, signed = BITS[code], code[0] == 'i'
        if op == 'min': return (1 << (bits - signed)) - 1
        return -(1 << (bits - 1)) if signed else 0
    return -0.0 if code[0] == 'f' else 0


def same(code, op, g, e):
    """Integers exactly; floats with NaN matching any NaN and, for sums, the sign of zero
    (min and max of -0.0 and +0.0 may return either)."""
    if code[0] != 'f': return g == e
    if e != e: return g != g
    return g == e and (op in ('min', 'max') or math.copysign(1, g) == math.copysign(1, e))


def scanned(code, values, kind, op, init):
    acc = identity(code, op) if init is None else (float(init) if code[0] == 'f' else int(init, 0))
    expected = []
    for x in values:
        if kind == 'exclusive': expected.append(acc)
        acc = combine(code, op, acc, x)
        if kind == 'inclusive': expected.append(acc)
    return [acc] if kind == 'reduce' else expected


def check(input_path, output_path, kind, op, init=None, axis=None):
    """Without axis the input is scanned flattened (shape (n,), or (1,) for a reduction);
    with axis -1 each row of a 2-D input on its own (shape (B, N), or (B,))."""
    code, values, shape = read(input_path, False)
    out_code, got, out_shape = read(output_path, True)
    assert out_code == code, 'output dtype %s, input %s' % (out_code, code)
    if axis is None or len(shape) == 1:
        expected = scanned(code, values, kind, op, init)
        want_shape = (len(expected),)
    else:
        rows, length = shape
        expected = []
        for r in range(rows):
            expected += scanned(code, values[r * length:(r + 1) * length], kind, op, init)
        want_shape = (rows,) if kind == 'reduce' else (rows, length)
    assert tuple(out_shape) == want_shape, 'shape %r, expected %r' % (out_shape, want_shape)
    assert len(got) == len(expected), '%d elements, expected %d' % (len(got), len(expected))
    for i, (g, e) in enumerate(zip(got, expected)):
        assert same(code, op, g, e), 'element %d is %r, expected %r' % (i, g, e)


def check_segments(input_path, offsets_path, output_path, kind, op, init=None):
    """--segments: each segment of a 1-D input on its own (shape (n,), or (S,))."""
    code, values, _ = read(input_path, False)
    _, offsets, _ = read(offsets_path, False)
    out_code, got, out_shape = read(output_path, True)
    assert out_code == code, 'output dtype %s, input %s' % (out_code, code)
    expected = []
    for begin, end in zip(offsets, offsets[1:]):
        expected += scanned(code, values[begin:end], kind, op, init)
    assert tuple(out_shape) == (len(expected),), 'shape %r, expected (%d,)' % (out_shape, len(expected))
    for i, (g, e) in enumerate(zip(got, expected)):
        assert same(code, op, g, e), 'element %d is %r, expected %r' % (i, g, e)


def random_values(n, seed, modulus):
    x, values = seed, []
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
        values.append((x >> 32) % modulus)
    return values


def make():
    big = random_values(300007, 1, 2**32)
    write('in/u32.npy', '<u4', '(%d,)' % len(big), big)
    small = random_values(1000, 2, 2**32)
    write('in/u32_small.npy', '<u4', '(1000,)', small)
    # Odd factors keep a product scan from collapsing to zero.
    write('in/u32_odd.npy', '<u4', '(777,)', [2 * v + 1 for v in random_values(777, 3, 8)])
    write('in/u32_empty.npy', '<u4', '(0,)')
    # Readers must take version 2.0 headers, descrs without a byte order, and dicts
    # without the trailing comma.
    write('in/u32_v2.npy', '<u4', '(1000,)', small, version=2)
    write('in/u32_plain.npy', 'u4', '(1000,)', small)
    write('in/u32_tight.npy', '<u4', None, small, raw_dict="{'descr':'<u4','fortran_order':False,'shape':(1000,)}")
    signed = [v - 500 for v in random_values(4099, 4, 1000)]
    write('in/i32.npy', '<i4', '(4099,)', signed)
    # Eighths sum exactly in any order, so float sums compare exactly too.
    write('in/f32.npy', '<f4', '(100,)', [v / 8 - 4 for v in random_values(100, 5, 64)])
    write('in/f64.npy', '<f8', '(3000,)', [v / 8 - 4 for v in random_values(3000, 6, 64)])
    write('in/u64.npy', '<u8', '(5000,)', [v << 20 for v in random_values(5000, 7, 2**44)])
    write('in/i64.npy', '<i8', '(5000,)', [v - 2**40 for v in random_values(5000, 8, 2**41)])

    # Bad inputs.
    with open('in/bad_magic.npy', 'wb') as f:
        f.write(b'\x93NUMPX\x01\x00' + bytes(120))
    with open('in/empty_file.npy', 'wb') as f:
        pass
    write('in/f16.npy', '<f2', '(4,)', data=bytes(8))
    write('in/big_endian.npy', '>u4', '(4,)', data=bytes(16))
    write('in/object.npy', '|O', '(4,)', data=bytes(32))
    write('in/bool.npy', '|b1', '(4,)', data=bytes(4))
    write('in/two_d.npy', '<u4', '(2, 3)', range(6))
    rows = random_values(97 * 301, 5, 2**32)
    write('in/u32_rows.npy', '<u4', '(97, 301)', rows)
    write('in/f64_rows.npy', '<f8', '(301, 7)', [v / 2**20 - 2048 for v in rows[:301 * 7]])
    write('in/i32_empty_rows.npy', '<i4', '(5, 0)', [])
    # CSR offsets over in/u32.npy (300007 elements): empty segments first, inside and last.
    cuts = sorted(v % 300008 for v in random_values(200, 9, 2**32))
    offsets = [0, 0] + cuts[:100] + [cuts[100]] * 3 + cuts[100:] + [300007]
    write('in/segments.npy', '<i8', '(%d,)' % len(offsets), offsets)
    write('in/segments_f64.npy', '<i8', '(6,)', [0, 0, 1, 1000, 1000, 3000])
    write('in/segments_short.npy', '<i8', '(3,)', [0, 5, 300000])
    write('in/segments_late.npy', '<i8', '(2,)', [1, 300007])
    write('in/segments_falling.npy', '<i8', '(4,)', [0, 10, 9, 300007])
    write('in/segments_u64.npy', '<u8', '(2,)', [0, 300007])
    write('in/segments_empty.npy', '<i8', '(0,)', [])
    write('in/three_d.npy', '<u4', '(2, 2, 2)', range(8))
    write('in/scalar.npy', '<u4', '()', [7])
    write('in/fortran.npy', '<u4', '(4,)', range(4), fortran=True)
    write('in/truncated.npy', '<u4', '(1000,)', range(999))
    write('in/bad_version.npy', '<u4', '(4,)', range(4), version=4)
    write('in/bad_dict.npy', '<u4', None, range(4), raw_dict="{'descr': '<u4', 'shape': (4,) ")
    write('in/shape_not_tuple.npy', '<u4', '(3)', range(3))
    # Headers that promise far more than follows (read through a pipe, where the size of
    # what follows is unknown): 2^40 elements, and 4 GiB.
    write('in/promises_2_40.npy', '<u4', '(%d,)' % 2**40, range(3))
    write('in/promises_4_gib.npy', '<u4', '(%d,)' % 2**30, range(3))
    # Float values where a wrong identity shows: signed zeros in sums, NaNs in min/max.
    write('in/f32_negative_zero.npy', '<f4', '(1,)', [-0.0])
    write('in/f64_negative_zeros.npy', '<f8', '(5000,)', [-0.0] * 5000)
    write('in/f32_nans.npy', '<f4', '(2,)', [float('nan')] * 2)
    write('in/f64_nans_then_one.npy', '<f8', '(5000,)', [float('nan')] * 2500 + [1.0] + [float('nan')] * 2499)


if __name__ == '__main__':
    try:
        if sys.argv[1] == 'make':
            make()
        elif sys.argv[1] == 'check_segments':
            check_segments(*sys.argv[2:])
        elif sys.argv[1] == 'check_rows':
            check(*sys.argv[2:6], sys.argv[6] if len(sys.argv) > 6 else None, axis=-1)
        else:
            check(*sys.argv[2:])
    except AssertionError as e:
        sys.exit('%s: %s' % (' '.join(sys.argv[2:]), e))
EOF

"$python" npy.py make

# scan_ok IN KIND OP [INIT] [EXTRA OPTIONS...]: a run that must succeed and match the
# reference, leaving exactly its output in out/.
scan_ok() {
  local input=$1 kind=$2 op=$3 init=${4:-}
  shift 3
  (($# > 0)) && shift
  local args=(scan "$input" out/result.npy --kind "$kind" --op "$op" "$@")
  [[ -n $init ]] && args+=(--init "$init")
  "$gpuscan" "${args[@]}" || fail "gpuscan ${args[*]}: exit status $?"
  [[ $(ls -A out) == result.npy ]] || fail "gpuscan ${args[*]}: out/ holds $(ls -A out)"
  "$python" npy.py check "$input" out/result.npy "$kind" "$op" ${init:+"$init"}
  rm out/result.npy
  echo "ok: gpuscan ${args[*]}"
}

scan_ok in/u32.npy inclusive add
scan_ok in/u32.npy exclusive add 0x10
scan_ok in/u32.npy reduce add 5
scan_ok in/u32_small.npy exclusive max 3000000000
scan_ok in/u32_small.npy reduce min 4294967295
scan_ok in/u32_small.npy inclusive xor 0xdeadbeef
scan_ok in/u32_odd.npy inclusive mul
scan_ok in/u32_odd.npy reduce or 0x100000
scan_ok in/u32_odd.npy exclusive and 0xFFFFFFFE
scan_ok in/u32_empty.npy inclusive add
scan_ok in/u32_empty.npy reduce add 42
scan_ok in/u32_v2.npy inclusive add "" --algorithm rts
scan_ok in/u32_plain.npy exclusive add 7 --algorithm csdl
scan_ok in/u32_tight.npy reduce max
scan_ok in/i32.npy inclusive add -2147483648
scan_ok in/f32.npy inclusive max -inf
scan_ok in/f32.npy inclusive add 0.5
scan_ok in/f64.npy exclusive add -2.25
scan_ok in/u64.npy inclusive add 0xffffffffffffffff
scan_ok in/i64.npy reduce min
# IEEE identities: -0.0 for sums, NaN for min and max (numpy's fmin/fmax).
scan_ok in/f32_negative_zero.npy exclusive add -0.0
scan_ok in/f32_negative_zero.npy inclusive add
scan_ok in/f64_negative_zeros.npy inclusive add
scan_ok in/f64_negative_zeros.npy reduce add
scan_ok in/f32_nans.npy reduce min
scan_ok in/f32_nans.npy reduce max
scan_ok in/f32_nans.npy exclusive max
scan_ok in/f64_nans_then_one.npy inclusive min
scan_ok in/f64_nans_then_one.npy inclusive max
# 2-D input: flattened as numpy's axis=None without --axis.
scan_ok in/two_d.npy inclusive add
scan_ok in/u32_rows.npy exclusive add 7

# rows_ok IN KIND OP [INIT]: --axis -1, each row of a 2-D input on its own (a batched
# scan), leaving exactly its output in out/.
rows_ok() {
  local input=$1 kind=$2 op=$3 init=${4:-}
  local args=(scan "$input" out/result.npy --kind "$kind" --op "$op" --axis -1)
  [[ -n $init ]] && args+=(--init "$init")
  "$gpuscan" "${args[@]}" || fail "gpuscan ${args[*]}: exit status $?"
  [[ $(ls -A out) == result.npy ]] || fail "gpuscan ${args[*]}: out/ holds $(ls -A out)"
  "$python" npy.py check_rows "$input" out/result.npy "$kind" "$op" ${init:+"$init"}
  rm out/result.npy
  echo "ok: gpuscan ${args[*]}"
}
rows_ok in/u32_rows.npy inclusive add
rows_ok in/u32_rows.npy exclusive add 0x10
rows_ok in/u32_rows.npy reduce max
rows_ok in/f64_rows.npy inclusive add -1.5
rows_ok in/f64_rows.npy reduce add
rows_ok in/i32_empty_rows.npy reduce add 3
rows_ok in/i32_empty_rows.npy inclusive add
rows_ok in/u32.npy inclusive add

# segments_ok IN OFFSETS KIND OP [INIT]: --segments, each CSR segment of a 1-D input on its
# own, leaving exactly its output in out/.
segments_ok() {
  local input=$1 offsets=$2 kind=$3 op=$4 init=${5:-}
  local args=(scan "$input" out/result.npy --kind "$kind" --op "$op" --segments "$offsets")
  [[ -n $init ]] && args+=(--init "$init")
  "$gpuscan" "${args[@]}" || fail "gpuscan ${args[*]}: exit status $?"
  [[ $(ls -A out) == result.npy ]] || fail "gpuscan ${args[*]}: out/ holds $(ls -A out)"
  "$python" npy.py check_segments "$input" "$offsets" out/result.npy "$kind" "$op" ${init:+"$init"}
  rm out/result.npy
  echo "ok: gpuscan ${args[*]}"
}
segments_ok in/u32.npy in/segments.npy inclusive add
segments_ok in/u32.npy in/segments.npy exclusive add 0x10
segments_ok in/u32.npy in/segments.npy reduce max 3
segments_ok in/f64.npy in/segments_f64.npy inclusive add -1.5
segments_ok in/f64.npy in/segments_f64.npy reduce add 0.25

# refused STATUS WHAT ARGS...: gpuscan ARGS must exit with STATUS and one "gpuscan: error:"
# line, and leave out/ empty.
refused() {
  local expected=$1 what=$2 status=0
  shift 2
  "$gpuscan" "$@" >/dev/null 2>stderr || status=$?
  [[ $status == "$expected" ]] || fail "$what: exit status $status, expected $expected (stderr: $(cat stderr))"
  [[ $(wc -l <stderr) == 1 && $(head -c 16 stderr) == "gpuscan: error: " ]] ||
    fail "$what: stderr is not one 'gpuscan: error:' line: $(cat stderr)"
  [[ -z $(ls -A out) ]] || fail "$what: left $(ls -A out) behind"
  echo "ok: $what: $(cat stderr)"
}

refused 2 "missing file" scan in/missing.npy out/o.npy
refused 2 "empty file" scan in/empty_file.npy out/o.npy
refused 2 "wrong magic" scan in/bad_magic.npy out/o.npy
refused 2 "version 4.0" scan in/bad_version.npy out/o.npy
refused 2 "malformed header" scan in/bad_dict.npy out/o.npy
refused 2 "dtype <f2" scan in/f16.npy out/o.npy
refused 2 "dtype >u4" scan in/big_endian.npy out/o.npy
refused 2 "dtype |O" scan in/object.npy out/o.npy
refused 2 "dtype |b1" scan in/bool.npy out/o.npy
refused 2 "3-D shape" scan in/three_d.npy out/o.npy
grep -q "a.reshape(-1)" stderr || fail "3-D shape: no reshape hint: $(cat stderr)"
refused 2 "--axis 0 of a 2-D array" scan in/u32_rows.npy out/o.npy --axis 0
refused 2 "--axis 2 of a 2-D array" scan in/u32_rows.npy out/o.npy --axis 2
refused 2 "--axis 1 of a 1-D array" scan in/u32.npy out/o.npy --axis 1
refused 2 "--axis not a number" scan in/u32_rows.npy out/o.npy --axis last
refused 2 "--segments not reaching n" scan in/u32.npy out/o.npy --segments in/segments_short.npy
refused 2 "--segments not from 0" scan in/u32.npy out/o.npy --segments in/segments_late.npy
refused 2 "--segments decreasing" scan in/u32.npy out/o.npy --segments in/segments_falling.npy
refused 2 "--segments of dtype u64" scan in/u32.npy out/o.npy --segments in/segments_u64.npy
refused 2 "--segments empty" scan in/u32.npy out/o.npy --segments in/segments_empty.npy
refused 2 "--segments missing" scan in/u32.npy out/o.npy --segments in/missing.npy
refused 2 "--segments of a 2-D input" scan in/u32_rows.npy out/o.npy --segments in/segments.npy
refused 2 "--segments with rts" scan in/u32.npy out/o.npy --segments in/segments.npy --algorithm rts
refused 2 "shape ()" scan in/scalar.npy out/o.npy
refused 2 "Fortran order" scan in/fortran.npy out/o.npy
grep -q "np.ascontiguousarray(a)" stderr || fail "Fortran order: no C-order hint: $(cat stderr)"
refused 2 "truncated data" scan in/truncated.npy out/o.npy
refused 2 "unknown --kind" scan in/u32_small.npy out/o.npy --kind sideways
refused 2 "unknown --op" scan in/u32_small.npy out/o.npy --op sub
refused 2 "unknown --algorithm" scan in/u32_small.npy out/o.npy --algorithm bubble
refused 2 "unknown --backend" scan in/u32_small.npy out/o.npy --backend metal
refused 2 "unknown option" scan in/u32_small.npy out/o.npy --frobnicate
refused 2 "missing OUT" scan in/u32_small.npy
refused 2 "bitwise op on f32" scan in/f32.npy out/o.npy --op xor
refused 2 "--init not a number" scan in/u32_small.npy out/o.npy --init twelve
refused 2 "--init out of range" scan in/u32_small.npy out/o.npy --init 4294967296
refused 2 "--init negative u32" scan in/u32_small.npy out/o.npy --init -1
refused 2 "--init i32 below range" scan in/i32.npy out/o.npy --init -2147483649
refused 2 "--init trailing text" scan in/f32.npy out/o.npy --op max --init 1.5x
refused 2 "--init f32 overflow" scan in/f32.npy out/o.npy --op max --init 1e39
# bench refuses what the device or an algorithm cannot take before any progress output.
refused 2 "unknown --tile-order" bench --tile-order bogus --sizes 100
refused 2 "unknown --row-claims" bench --row-claims bogus --shape 4x100
refused 2 "cub on Vulkan" bench --backend vulkan --algorithms cub --sizes 100
refused 2 "staged tiles on Vulkan" bench --backend vulkan --staged-tiles 2 --sizes 100
refused 2 "warm code on Vulkan" bench --backend vulkan --warm-code --sizes 100
refused 2 "--hot with --warm-code" bench --hot --warm-code --sizes 100
refused 2 "csdl under blocking" bench --algorithms csdl,memcpy --blocking --sizes 100
refused 2 "workgroup size not a power of two" bench --backend vulkan --workgroup-size 100 --sizes 100
refused 2 "shape (3), not a tuple" scan in/shape_not_tuple.npy out/o.npy
# An OUT that cannot be written is refused before the scan runs.
refused 2 "OUT in a missing directory" scan in/u32_small.npy out/missing/o.npy
refused 2 "OUT a directory" scan in/u32_small.npy out
mkdir -p dirs/d && ln -s ../dirs/d dirs/link
refused 2 "OUT a link to a directory" scan in/u32_small.npy dirs/link
# bench checks its request before opening a device, and its CSV before running.
refused 2 "--csv in a missing directory" bench --sizes 1000 --runs 1 --algorithms memcpy --csv /nonexistent/x.csv
refused 2 "--sizes -1" bench --sizes -1
refused 2 "--sizes 1,-1" bench --sizes 1,-1
refused 2 "--sizes too large" bench --sizes 18446744073709551615
refused 2 "--sizes with spaces" bench --sizes " 5"
refused 2 "--runs 0" bench --runs 0 --sizes 100
grep -q -- "--runs" stderr && ! grep -q 1797693 stderr || fail "--runs 0: unclear message: $(cat stderr)"
refused 2 "--runs -3" bench --runs -3 --sizes 100
refused 2 "--max-spins 0" bench --max-spins 0 --sizes 100
refused 2 "--max-spins -1" bench --max-spins -1 --sizes 100
VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json \
  refused 2 "bitwise op on f32, no driver" bench --dtype f32 --op xor --sizes 100
# bench --shape with the default algorithms runs those that have batched kernels (not rts).
"$gpuscan" bench --shape 3x1000 --runs 1 >stdout 2>stderr || fail "bench --shape: $(cat stderr)"
grep -q "3x1000 csdldf" stdout && ! grep -q " rts " stdout ||
  fail "bench --shape: expected csdldf and no rts: $(cat stdout)"
echo "ok: bench --shape with the default algorithms"
# Rows of row-aligned tiles (four tiles of 4096 elements or more on a CPU driver, a GPU's
# 6144), claimed round the rows: every run validated.
"$gpuscan" bench --backend vulkan --shape 3x24580 --runs 2 --row-claims round \
  --algorithms csdldf >stdout 2>stderr || fail "bench --row-claims round: $(cat stderr)"
grep -q "3x24580 csdldf .* 2/2" stdout || fail "bench --row-claims round: $(cat stdout)"
echo "ok: bench --row-claims round validates every run"

# --sizes N is N elements; where N could be LO:HI's exponent bench says how to ask for 2^N,
# and nowhere else.
"$gpuscan" bench --sizes 5 --runs 1 --algorithms memcpy >stdout 2>stderr ||
  fail "bench --sizes 5: $(cat stderr)"
grep -q "^ *5 memcpy" stdout || fail "bench --sizes 5: not n = 5: $(cat stdout)"
grep -q "for 2^5 write --sizes 5:5" stderr || fail "bench --sizes 5: no note: $(cat stderr)"
for sizes in 5:5 41 5,6; do
  "$gpuscan" bench --sizes $sizes --runs 1 --algorithms memcpy >stdout 2>stderr ||
    fail "bench --sizes $sizes: $(cat stderr)"
  ! grep -q "note:" stderr || fail "bench --sizes $sizes: a note: $(cat stderr)"
done
echo "ok: bench notes --sizes N that reads like an exponent"

# refused_from_pipe STATUS WHAT FILE ARGS...: as refused, with FILE's bytes on a pipe as
# standard input (no size to check up front).
refused_from_pipe() {
  local expected=$1 what=$2 file=$3 status=0
  shift 3
  "$gpuscan" "$@" < <(cat "$file") >/dev/null 2>stderr || status=$?
  [[ $status == "$expected" ]] || fail "$what: exit status $status, expected $expected (stderr: $(cat stderr))"
  [[ $(wc -l <stderr) == 1 && $(head -c 16 stderr) == "gpuscan: error: " ]] ||
    fail "$what: stderr is not one 'gpuscan: error:' line: $(cat stderr)"
  [[ -z $(ls -A out) ]] || fail "$what: left $(ls -A out) behind"
  echo "ok: $what: $(cat stderr)"
}
refused_from_pipe 2 "2^40 elements promised through a pipe" in/promises_2_40.npy scan /dev/stdin out/o.npy
# 4 GiB promised: read as it arrives, so 1 GiB of address space is plenty.
(
  ulimit -v $((1 << 20))
  if "$gpuscan" --version >/dev/null 2>&1; then
    refused_from_pipe 2 "4 GiB promised through a pipe" in/promises_4_gib.npy scan /dev/stdin out/o.npy
  else  # AddressSanitizer reserves terabytes of address space up front
    echo "note: gpuscan does not start in 1 GiB of address space: the 4 GiB case was not run"
  fi
)

# Outputs: a regular file is replaced atomically through a unique temporary file; anything
# else is written in place. out_ok GOT IN: GOT must hold IN's inclusive sum.
out_ok() {
  "$python" npy.py check "$2" "$1" inclusive add || fail "$1 does not hold the scan of $2"
}
mkdir -p elsewhere
# An existing OUT.partial is someone's file: never clobbered, never deleted.
echo keep >out/o.npy.partial
"$gpuscan" scan in/u32_small.npy out/o.npy || fail "scan beside an existing OUT.partial"
[[ $(cat out/o.npy.partial) == keep ]] || fail "out/o.npy.partial was clobbered"
out_ok out/o.npy in/u32_small.npy
# The temporary file is gone, whatever its name.
[[ $(ls -A out | sort | tr '\n' ' ') == "o.npy o.npy.partial " ]] || fail "out/ holds $(ls -A out)"
rm out/o.npy out/o.npy.partial
echo "ok: an existing OUT.partial is left alone"
# A regular OUT keeps its permissions when replaced.
cp in/u32.npy elsewhere/mode.npy && chmod 640 elsewhere/mode.npy
"$gpuscan" scan in/u32_small.npy elsewhere/mode.npy || fail "scan over an existing file"
[[ $(stat -c %a elsewhere/mode.npy) == 640 ]] || fail "replaced OUT has mode $(stat -c %a elsewhere/mode.npy)"
out_ok elsewhere/mode.npy in/u32_small.npy
echo "ok: a replaced OUT keeps its permissions"
# A symlink is written through: the link stays, its target gets the output; a dangling
# link's target is created.
cp in/u32.npy elsewhere/target.npy
ln -s ../elsewhere/target.npy out/link.npy
ln -s ../elsewhere/new.npy out/dangling.npy
"$gpuscan" scan in/u32_small.npy out/link.npy || fail "scan into a symlink"
"$gpuscan" scan in/u32_small.npy out/dangling.npy || fail "scan into a dangling symlink"
[[ -L out/link.npy && -L out/dangling.npy ]] || fail "a symlink OUT was replaced"
out_ok elsewhere/target.npy in/u32_small.npy
out_ok elsewhere/new.npy in/u32_small.npy
rm out/link.npy out/dangling.npy
echo "ok: symlinks are written through"
# A FIFO gets the data (and stays a FIFO).
mkfifo out/fifo
timeout 60 cat out/fifo >elsewhere/from_fifo.npy &
reader=$!
"$gpuscan" scan in/u32_small.npy out/fifo || fail "scan into a FIFO"
wait $reader || fail "the FIFO's reader got nothing (status $?)"
[[ -p out/fifo ]] || fail "the FIFO was replaced"
out_ok elsewhere/from_fifo.npy in/u32_small.npy
rm out/fifo
echo "ok: a FIFO is written in place"
# Standard output, as /dev/fd/1 (/dev/stdout's target), into a file and into a pipe.
"$gpuscan" scan in/u32_small.npy /dev/fd/1 >elsewhere/stdout.npy || fail "scan into /dev/fd/1"
out_ok elsewhere/stdout.npy in/u32_small.npy
"$gpuscan" scan in/u32_small.npy /dev/fd/1 | cat >elsewhere/stdout_pipe.npy
out_ok elsewhere/stdout_pipe.npy in/u32_small.npy
# Appended where standard output appends (its own descriptor, not a reopened file).
echo log >elsewhere/append.txt
"$gpuscan" scan in/u32_small.npy /dev/stdout >>elsewhere/append.txt || fail "scan into /dev/stdout >>"
[[ $(head -n 1 elsewhere/append.txt) == log ]] || fail "/dev/stdout >> overwrote what was there"
tail -c +5 elsewhere/append.txt >elsewhere/appended.npy
out_ok elsewhere/appended.npy in/u32_small.npy
echo "ok: standard output is written in place"
# A device file stays one: /dev/full (as /dev/fd/3) reports the failed write, exit 1; a
# null device made here (where mknod is allowed) takes the output.
refused 1 "OUT /dev/full" scan in/u32_small.npy /dev/fd/3 3>/dev/full
[[ -c /dev/full ]] || fail "/dev/full is no longer a device"
if mknod elsewhere/null c 1 3 2>/dev/null; then
  "$gpuscan" scan in/u32_small.npy elsewhere/null || fail "scan into a null device"
  [[ -c elsewhere/null ]] || fail "the null device was replaced"
  echo "ok: a device file is written in place"
else
  echo "note: mknod not permitted here: the null device case was not run"
fi
# Device failures exit 1.
refused 1 "no such device" scan in/u32_small.npy out/o.npy --device no-such-device

# A large --max-spins on a CPU driver: csdldf's longest wait (64 x max_spins look-back
# steps) is capped under llvmpipe's loop limit, so every run under blocking stays exact.
"$gpuscan" bench --backend vulkan --algorithms csdldf --max-spins 10000 --blocking \
  --sizes 262144 --runs 2 >elsewhere/bench.txt 2>&1 ||
  fail "bench --max-spins 10000 --blocking: $(tail -3 elsewhere/bench.txt)"
echo "ok: bench --max-spins 10000 --blocking validates every run"

echo "cli_test: all passed"
