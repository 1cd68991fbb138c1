#!/usr/bin/env bash
set -uo pipefail
tar -C build -xJf build/gpu-bundle.txz
r=$OUT/r; mkdir -p $r
B=build/bin
b() { local name=$1; shift; echo "== $name: $*"; $B/gpuscan bench --backend cuda "$@" --csv $r/$name.csv 2>&1 | grep -v "^bench: n =" | grep -v "^bench: wrote" | grep -E "csdldf|cub"; }
for round in 1 2; do
b small-default-$round --sizes 10:22 --runs 30 --algorithms csdldf,cub,memcpy
b small-vpt4-$round --sizes 10:22 --runs 30 --algorithms csdldf,cub,memcpy --vectors-per-thread 4
done
b split --sizes 24:30 --tile-state split --algorithms csdldf,cub,memcpy
echo "== CUDA tests"
timeout 200 $B/gpuscan_cuda_tests --gtest_brief=1 2>&1 | tail -30 > $r/cuda-tests.log
tail -3 $r/cuda-tests.log
cd $OUT && tar -czf results.tgz r && rm -rf r
