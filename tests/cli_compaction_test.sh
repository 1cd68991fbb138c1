#!/usr/bin/env bash
# `gpuscan select`, `partition` (by predicate and by flags), `unique` and `rle` end to end
# (DESIGN section 4): random .npy inputs of every dtype, outputs checked element by element
# against a reference computed here; every bad request refused with exit status 2, one
# "gpuscan: error:" line and no output file.
# Fixtures are written and outputs read with Python's struct module: no numpy needed.
# Usage: cli_compaction_test.sh path/to/gpuscan
set -euo pipefail

source "$(dirname "$(realpath "$0")")/cli_setup.sh"
seed=${GPUSCAN_TEST_SEED:-$RANDOM$RANDOM}
echo "GPUSCAN_TEST_SEED=$seed"

fail() {
  echo "FAIL: $* (GPUSCAN_TEST_SEED=$seed)" >&2
  exit 1
}

cat >npy.py <<'PY'
import ast, random, struct, sys
FORMATS = {'u4': 'I', 'i4': 'i', 'f4': 'f', 'u8': 'Q', 'i8': 'q', 'f8': 'd'}

def write(path, code, values, rows=None):
    shape = '(%d,)' % len(values) if rows is None else '(%d, %d)' % (rows, len(values) // rows)
    text = "{'descr': '<%s', 'fortran_order': False, 'shape': %s, }" % (code, shape)
    text += ' ' * ((64 - (10 + len(text) + 1) % 64) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(text)) + text.encode('latin1'))
        f.write(struct.pack('<%d%s' % (len(values), FORMATS[code]), *values))

def read(path):
    blob = open(path, 'rb').read()
    (length,) = struct.unpack('<H', blob[8:10])
    header = ast.literal_eval(blob[10:10 + length].decode('latin1'))
    code = header['descr'][1:]
    n = header['shape'][0]
    return code, list(struct.unpack('<%d%s' % (n, FORMATS[code]), blob[10 + length:]))

def make(seed):
    rng = random.Random(int(seed))
    for code in FORMATS:
        for n in (0, 1, 4099, 70001):
            values, x = [], 0
            while len(values) < n:  # runs of lengths 1..15 of small values
                x = rng.randint(-300 if code[0] != 'u' else 0, 300)
                values += [float(x) / 4 if code[0] == 'f' else x] * rng.randint(1, 15)
            write('in/%s_%d.npy' % (code, n), code, values[:n])
            write('in/%s_%d_flags.npy' % (code, n), 'u8' if code[1] == '8' else 'i4',
                  [rng.choice([0, 0, 1, 7, -1 if code[1] == '4' else 1 << 40]) for _ in range(n)])
    # 2-D inputs (7 rows of 599) and flags (599 x 7), read flattened, row-major; their 1-D
    # twins hold the same elements in the same order.
    for code in ('i8', 'f4'):
        values = read('in/%s_70001.npy' % code)[1][:4193]
        write('in/%s_flat.npy' % code, code, values)
        write('in/%s_2d.npy' % code, code, values, rows=7)
        flags = [rng.choice([0, 1]) for _ in range(4193)]
        write('in/%s_flat_flags.npy' % code, 'i4', flags)
        write('in/%s_2d_flags.npy' % code, 'i4', flags, rows=599)

def check_rle(input_path, values_path, lengths_path):
    code, x = read(input_path)
    values_code, values = read(values_path)
    lengths_code, lengths = read(lengths_path)
    assert (values_code, lengths_code) == (code, 'u8'), (values_code, lengths_code)
    heads = [i for i in range(len(x)) if i == 0 or x[i] != x[i - 1]]
    assert values == [x[i] for i in heads], 'values: %d, expected %d' % (len(values), len(heads))
    assert lengths == [e - s for s, e in zip(heads, heads[1:] + [len(x)])], 'lengths differ'

def check(op, input_path, output_path, arg=None):
    if op == 'rle':
        return check_rle(input_path, output_path, arg)
    code, x = read(input_path)
    out_code, got = read(output_path)
    assert out_code == code, (out_code, code)
    if op == 'partition':
        c = float(arg)
        expected = [v for v in x if v < c] + [v for v in x if not v < c]
    elif op == 'unique':
        expected = [v for i, v in enumerate(x) if i == 0 or v != x[i - 1]]
    elif op == 'flags':
        _, flags = read(arg)
        expected = [v for v, f in zip(x, flags) if f != 0]
    elif op == 'partition-flags':
        _, flags = read(arg)
        expected = [v for v, f in zip(x, flags) if f != 0] + [v for v, f in zip(x, flags) if f == 0]
    else:
        c = float(arg)
        test = {'lt': c.__gt__, 'le': c.__ge__, 'gt': c.__lt__, 'ge': c.__le__,
                'eq': c.__eq__, 'ne': c.__ne__}[op]
        expected = [v for v in x if test(v)]
    assert got == expected, '%s: %d elements, expected %d; first difference at %s' % (
        output_path, len(got), len(expected),
        next((i for i, (g, e) in enumerate(zip(got, expected)) if g != e), min(len(got), len(expected))))

if __name__ == '__main__':
    if sys.argv[1] == 'make':
        make(sys.argv[2])
    else:
        try:
            check(*sys.argv[2:])
        except AssertionError as e:
            sys.exit('check %s: %s' % (' '.join(sys.argv[2:]), e))
PY
"$python" npy.py make "$seed"

# ok CHECK-ARGS -- GPUSCAN-ARGS: a run that must succeed, leaving exactly out/o.npy, which
# must match the reference. With --algorithm csdl, giving up is also accepted: exit status 1,
# csdl's one-line ForwardProgressError and no output (its documented outcome on a device
# without forward progress, which lavapipe on a busy machine is).
ok() {
  local check=() status=0
  while [[ $1 != -- ]]; do check+=("$1"); shift; done
  shift
  "$gpuscan" "$@" 2>stderr || status=$?
  if [[ $status != 0 ]]; then
    if [[ " $* " == *" csdl "* && $status == 1 && -z $(ls -A out) ]] &&
      grep -q "look-backs gave up" stderr; then
      echo "note: csdl gave up, as it may without forward progress: $(cat stderr)"
      return
    fi
    fail "gpuscan $*: exit status $status ($(cat stderr))"
  fi
  [[ $(ls -A out) == o.npy ]] || fail "gpuscan $*: out/ holds $(ls -A out)"
  "$python" npy.py check "${check[0]}" "${check[1]}" out/o.npy "${check[@]:2}" || fail "gpuscan $*"
  rm out/o.npy
}

# Every dtype at sizes 0, 4099 and 70001 (some predicates each, so that the test stays near
# a minute on lavapipe: each run opens the device and builds its pipeline); every predicate
# on f32 and u64.
for code in u4 i4 f4 u8 i8 f8; do
  for n in 0 4099 70001; do
    input=in/${code}_$n.npy
    ok unique "$input" -- unique "$input" out/o.npy
    ok lt "$input" 10 -- select "$input" out/o.npy --lt 10
  done
  for n in 4099 70001; do
    ok flags "in/${code}_$n.npy" "in/${code}_${n}_flags.npy" -- select "in/${code}_$n.npy" out/o.npy --flags "in/${code}_${n}_flags.npy"
  done
  echo "ok: $code: select (lt, flags) and unique at 0, 4099, 70001"
done
for code in f4 u8; do
  for p in le gt ge eq ne; do
    ok $p in/${code}_70001.npy 10 -- select in/${code}_70001.npy out/o.npy --$p 10
  done
  echo "ok: $code: every predicate"
done
for code in u4 i8 f8; do
  for n in 0 4099 70001; do
    "$gpuscan" partition in/${code}_$n.npy out/o.npy --lt 10 >stdout || fail "partition ${code}_$n"
    "$python" npy.py check partition in/${code}_$n.npy out/o.npy 10 || fail "partition ${code}_$n"
    [[ $(cat stdout) == "selected: "* ]] || fail "partition printed $(cat stdout)"
    rm out/o.npy
  done
  echo "ok: $code: partition --lt at 0, 4099, 70001 ($(cat stdout))"
done
# Partition by flags: 4-byte flags (i4) and 8-byte ones (u8, some set only in the high word).
for code in i4 f8; do
  for n in 0 70001; do
    input=in/${code}_$n.npy flags=in/${code}_${n}_flags.npy
    "$gpuscan" partition "$input" out/o.npy --flags "$flags" >stdout || fail "partition --flags ${code}_$n"
    "$python" npy.py check partition-flags "$input" out/o.npy "$flags" || fail "partition --flags ${code}_$n"
    [[ $(cat stdout) == "selected: "* ]] || fail "partition --flags printed $(cat stdout)"
    rm out/o.npy
  done
  echo "ok: $code: partition --flags at 0, 70001 ($(cat stdout))"
done
for code in u4 i4 f4 u8 i8 f8; do
  for n in 0 1 4099 70001; do
    "$gpuscan" rle in/${code}_$n.npy out/v.npy out/l.npy || fail "rle ${code}_$n: exit status $?"
    [[ $(ls -A out | tr '\n' ' ') == "l.npy v.npy " ]] || fail "rle ${code}_$n: out/ holds $(ls -A out)"
    "$python" npy.py check rle in/${code}_$n.npy out/v.npy out/l.npy || fail "rle ${code}_$n"
    rm out/v.npy out/l.npy
  done
done
echo "ok: rle of every dtype at 0, 1, 4099, 70001"
# A 2-D input (and flags) is read flattened, row-major, as numpy's x[mask] reads it.
for code in i8 f4; do
  ok lt in/${code}_flat.npy 10 -- select in/${code}_2d.npy out/o.npy --lt 10
  ok flags in/${code}_flat.npy in/${code}_flat_flags.npy -- select in/${code}_2d.npy out/o.npy --flags in/${code}_2d_flags.npy
  ok unique in/${code}_flat.npy -- unique in/${code}_2d.npy out/o.npy
  "$gpuscan" rle in/${code}_2d.npy out/v.npy out/l.npy || fail "rle ${code}_2d: exit status $?"
  "$python" npy.py check rle in/${code}_flat.npy out/v.npy out/l.npy || fail "rle ${code}_2d"
  rm out/v.npy out/l.npy
done
echo "ok: select (lt, flags), unique and rle of 2-D inputs, flattened"
ok lt in/f4_4099.npy -2.5 -- select in/f4_4099.npy out/o.npy --lt -2.5 --algorithm csdl
# GPUSCAN_TEST_CLI_BACKEND=cuda: the named backend of this check (and the default device of
# the others) is CUDA's, on a machine without a Vulkan driver.
backend=${GPUSCAN_TEST_CLI_BACKEND:-vulkan}
ok unique in/i8_70001.npy -- unique in/i8_70001.npy out/o.npy --algorithm csdl --backend "$backend"
echo "ok: csdl, --backend $backend"

refused() {
  local what=$1 status=0
  shift
  "$gpuscan" "$@" >/dev/null 2>stderr || status=$?
  [[ $status == 2 ]] || fail "$what: exit status $status, expected 2 (stderr: $(cat stderr))"
  [[ $(wc -l <stderr) == 1 && $(head -c 16 stderr) == "gpuscan: error: " ]] ||
    fail "$what: stderr is not one 'gpuscan: error:' line: $(cat stderr)"
  [[ -z $(ls -A out) ]] || fail "$what: left $(ls -A out) behind"
  echo "ok: $what: $(cat stderr)"
}
refused "no predicate" select in/u4_1.npy out/o.npy
refused "two predicates" select in/u4_1.npy out/o.npy --lt 1 --gt 2
refused "a predicate and flags" select in/u4_1.npy out/o.npy --lt 1 --flags in/u4_1_flags.npy
refused "a constant not of the dtype" select in/i4_1.npy out/o.npy --lt 1.5
refused "a constant out of range" select in/u4_1.npy out/o.npy --ge -1
refused "float flags" select in/u4_1.npy out/o.npy --flags in/f4_1.npy
refused "flags of another length" select in/u4_4099.npy out/o.npy --flags in/u4_1_flags.npy
refused "missing input" select in/missing.npy out/o.npy --lt 1
refused "missing flags" select in/u4_1.npy out/o.npy --flags in/missing.npy
refused "partition by flags of another length" partition in/u4_4099.npy out/o.npy --flags in/u4_1_flags.npy
refused "partition by float flags" partition in/u4_1.npy out/o.npy --flags in/f4_1.npy
refused "partition by a predicate and flags" partition in/u4_1.npy out/o.npy --lt 1 --flags in/u4_1_flags.npy
refused "partition without a predicate" partition in/u4_1.npy out/o.npy
refused "rts" unique in/u4_1.npy out/o.npy --algorithm rts
refused "unknown algorithm" unique in/u4_1.npy out/o.npy --algorithm fast
refused "an OUT in a missing folder" unique in/u4_1.npy nowhere/o.npy
refused "rle without LENGTHS" rle in/u4_1.npy out/v.npy
refused "rle with a predicate" rle in/u4_1.npy out/v.npy out/l.npy --lt 3
refused "rle of a missing input" rle in/missing.npy out/v.npy out/l.npy
refused "rle into one file twice" rle in/u4_4099.npy out/v.npy out/v.npy
refused "rle into one file by two names" rle in/u4_4099.npy out/v.npy out/../out/v.npy
refused "rle with LENGTHS in a missing folder" rle in/u4_4099.npy out/v.npy nowhere/l.npy
refused "bench --selected for unique" bench --operation unique --selected 54
refused "bench --run-bits out of range" bench --operation rle --run-bits 40
refused "bench --operation with an unknown operation" bench --operation sort
refused "bench --operation past one run" bench --operation select --sizes 40:40
refused "bench --row-claims with --operation" bench --operation select --row-claims round
refused "bench --staged-positions without --operation" bench --staged-positions words
refused "bench --staged-positions unknown" bench --operation select --staged-positions bogus
if [[ $backend == vulkan ]]; then
  # The tile-state and staged-positions knobs reach the compaction (every run validated).
  "$gpuscan" bench --backend vulkan --operation partition --staged-positions words \
    --tile-state split --sizes 70001 --runs 2 >stdout 2>stderr ||
    fail "bench --staged-positions words: $(cat stderr)"
  grep -Eq "^partition +70001 .* 2/2$" stdout || fail "bench --staged-positions words: $(cat stdout)"
  echo "ok: bench --staged-positions words --tile-state split validates every run"
fi
# --sizes N is N elements here too, with the note on how to ask for 2^N.
"$gpuscan" bench --backend "$backend" --operation unique --sizes 12 --runs 1 >stdout 2>stderr ||
  fail "bench --operation unique --sizes 12: $(cat stderr)"
grep -Eq "^unique +12 .* 1/1$" stdout || fail "bench --operation --sizes 12: $(cat stdout)"
grep -q "for 2^12 write --sizes 12:12" stderr || fail "bench --operation --sizes 12: $(cat stderr)"
echo "ok: bench --operation notes --sizes N that reads like an exponent"
# bench --operation --csv: DESIGN section 7's header and nothing else, a row per run and
# size with its 19 fields (the limit and its share are in the table only).
header="date,commit,device,backend,algorithm,dtype,op,kind,n,runs,median_ms,gelems_per_s,vs_memcpy,"
header+="validated,blocking_mask,spins,lookback_steps,fallbacks,insertions"
for operation in select partition-flagged; do
  "$gpuscan" bench --backend "$backend" --operation "$operation" --sizes 4099 --runs 1 --blocking \
    --csv "$operation.csv" >stdout 2>stderr || fail "bench --operation $operation --csv: $(cat stderr)"
  [ "$(head -1 "$operation.csv")" = "$header" ] || fail "bench --operation $operation --csv: header"
  "$python" - "$operation.csv" <<'PY' || fail "bench --operation $operation --csv: rows"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))[1:]
assert len(rows) >= 4 and all(len(row) == 19 for row in rows), rows
assert any(row[14] for row in rows) and any(not row[14] for row in rows), rows  # blocking_mask
PY
  echo "ok: bench --operation $operation --csv writes DESIGN's schema"
done
# bench/merge_rows.py (bench/gpu-run.sh's compaction record): the rows matching --replace go,
# the new files' rows follow, after --blocked-only only their blocked ones; a file with
# another header and a malformed --replace are refused with status 2.
merge="$(dirname "$(realpath "$0")")/../bench/merge_rows.py"
"$python" "$merge" merged.csv select.csv --replace "backend=$backend,dtype=u32" \
  partition-flagged.csv --blocked-only select.csv >/dev/null || fail "merge_rows.py"
"$python" - merged.csv select.csv partition-flagged.csv <<'PY' || fail "merge_rows.py: rows"
import sys
merged, select, flagged = (open(name).read().splitlines() for name in sys.argv[1:])
blocked = [line for line in select[1:] if line.split(",")[-5] != ""]  # blocking_mask
assert blocked and len(blocked) < len(select) - 1, select
assert merged == flagged + blocked, (merged, flagged, blocked)
PY
head -1 select.csv | sed 's/,insertions$//' >old.csv
status=0
"$python" "$merge" merged2.csv select.csv --replace dtype=u32 old.csv 2>stderr || status=$?
[ "$status" = 2 ] && grep -q "another header" stderr && [ ! -e merged2.csv ] ||
  fail "merge_rows.py: another header: status $status, $(cat stderr)"
status=0
"$python" "$merge" merged2.csv select.csv --replace dtype u32 2>stderr || status=$?
[ "$status" = 2 ] && [ ! -e merged2.csv ] || fail "merge_rows.py: bad --replace: status $status"
echo "ok: merge_rows.py replaces what it is told, keeps the rest, refuses other headers"
echo "cli_compaction_test: all passed"
