#!/usr/bin/env bash
# Runs on the device machine from .stage/cudacompact: the CUDA compaction tests and a CUDA
# scan subset (the scanner's run tail moved), the CLI compaction test on CUDA, then the
# compaction benchmark with CUB and memcpy. At most 8 files come back.
set -u
cd "$(dirname "$0")"
xz -dc bins.tar.xz | tar -xf - && rm bins.tar.xz
chmod +x gpuscan_tests gpuscan
L=$OUT/bench.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $L
timeout ${TEST_S:-200} ./gpuscan_tests --gtest_filter="${FILTER:-Cuda/CompactionTest.*:Cuda/ScanBackend.*}" > $OUT/tests.log 2>&1
echo "tests rc $?" >> $OUT/tests.log
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|rc " $OUT/tests.log | head -30
GPUSCAN_TEST_CLI_BACKEND=cuda timeout 150 bash cli_compaction_test.sh ./gpuscan > $OUT/cli.log 2>&1
echo "cli rc $?" >> $OUT/cli.log
tail -2 $OUT/cli.log
for op in ${OPS:-select select-flagged partition unique rle}; do
  extra=""
  [[ $op == select || $op == rle ]] && extra="${BLOCKING---blocking}"
  timeout 150 ./gpuscan bench --operation $op --backend cuda --dtype u32 --sizes ${SIZES:-26:30} $extra ${EXTRA:-} --csv $OUT/$op.csv >> $L 2>&1
  echo "$op rc $?" >> $L
done
# Tile shapes: threads per block at 2^28 (the default is 256).
for op in select rle; do
  for wg in ${SHAPES:-128 512}; do
    echo "== $op --workgroup-size $wg" >> $L
    timeout 60 ./gpuscan bench --operation $op --backend cuda --dtype u32 --sizes 28:28 --workgroup-size $wg >> $L 2>&1
  done
done
cat $L
