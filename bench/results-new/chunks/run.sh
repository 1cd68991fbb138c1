#!/usr/bin/env bash
# Runs on the device machine from .stage/chunks (one call, H100): the CUDA compaction tests
# (the chunk tests among them), the opt-in test past 2^32 elements, then select and rle at
# 2^28 (default shapes), each against cudaMemcpyAsync and CUB in the same process: the
# one-chunk path's ratios, to set beside bench/results/h100-compaction.csv (9be6a2a).
set -u
cd "$(dirname "$0")"
xz -dc bundle.txz | tar -xf - && rm bundle.txz
chmod +x bin/*
L=$OUT/bench.log
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat commit.txt; } > $L
timeout 100 ./bin/gpuscan_tests --gtest_filter='Cuda/CompactionTest.*' > $OUT/tests.log 2>&1
echo "tests rc $?" >> $OUT/tests.log
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|rc |OK \]" $OUT/tests.log | tail -25
GPUSCAN_LARGE_TESTS=1 timeout 70 ./bin/gpuscan_tests \
  --gtest_filter='Cuda/CompactionTest.CudaPast2To32Elements*' > $OUT/large.log 2>&1
echo "large rc $?" >> $OUT/large.log
grep -E "OK \]|FAILED|rc |Failure|SKIP" $OUT/large.log | head -8
for op in select rle; do
  echo "== $op" >> $L
  timeout 25 ./bin/gpuscan bench --operation $op --backend cuda --dtype u32 --sizes 268435456 \
    --runs 10 --csv $OUT/$op.csv >> $L 2>&1
  echo "$op rc $?" >> $L
done
cat $L
