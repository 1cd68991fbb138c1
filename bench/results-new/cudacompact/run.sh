#!/usr/bin/env bash
# Runs on the device machine from .stage/cudacompact (copied to bench/results-new/cudacompact
# in the branch): the CUDA compaction tests (CLI=1: also the CLI compaction test), a sweep of
# tile shapes at 2^27 (threads x rows x tile state, CUB and memcpy in each process), then
# every operation at 2^26..2^30 with the fastest shape of the sweep (select with --blocking).
set -u
cd "$(dirname "$0")"
xz -dc bundle.txz | tar -xf - && rm bundle.txz
chmod +x bin/*
L=$OUT/bench.log
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat commit.txt; } > $L
if [[ ${TESTS:-1} == 1 ]]; then
  timeout ${TEST_S:-170} ./bin/gpuscan_tests --gtest_filter="${FILTER:-Cuda/CompactionTest.*}" > $OUT/tests.log 2>&1
  echo "tests rc $?" >> $OUT/tests.log
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|rc |OK \]" $OUT/tests.log | tail -30
  if [[ ${CLI:-0} == 1 ]]; then
    GPUSCAN_TEST_CLI_BACKEND=cuda timeout 90 bash cli_compaction_test.sh ./bin/gpuscan > $OUT/cli.log 2>&1
    echo "cli rc $?" >> $OUT/cli.log
    tail -2 $OUT/cli.log
  fi
fi
S=$OUT/sweep.log
: > $S
for op in ${OPS:-select unique select-flagged partition rle}; do
  for cfg in ${SHAPES:-128:4:packed 128:8:packed 128:8:split 256:8:split}; do
    IFS=: read wg rows ts <<< "$cfg"
    line=$(timeout 40 ./bin/gpuscan bench --operation $op --backend cuda --dtype u32 --sizes ${SWEEP_SIZE:-27:27} --runs 5 --workgroup-size $wg --vectors-per-thread $rows --tile-state $ts 2>&1 | grep -E "^$op +[0-9]")
    echo "$op $cfg $line" | tee -a $S
  done
done
for op in ${OPS:-select unique select-flagged partition rle}; do
  best=$(grep -E "^$op [0-9]" $S | awk '{print $7, $2}' | sort -gr | head -1 | cut -d' ' -f2)
  IFS=: read wg rows ts <<< "$best"
  extra=""
  [[ $op == select ]] && extra="--blocking"
  echo "== $op: $wg threads, $rows rows, $ts (fastest at 2^27)" >> $L
  timeout ${FULL_S:-80} ./bin/gpuscan bench --operation $op --backend cuda --dtype u32 --sizes ${SIZES:-26:30} --workgroup-size $wg --vectors-per-thread $rows --tile-state $ts $extra --csv $OUT/$op.csv >> $L 2>&1
  echo "$op rc $?" >> $L
done
cat $L
