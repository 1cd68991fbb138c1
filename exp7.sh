#!/usr/bin/env bash
set -uo pipefail
tar -C build -xJf build/gpu-bundle.txz
B=build/bin
s() { local dtype=$1; shift; echo "-- $dtype $*"; $B/gpuscan bench --backend cuda --dtype $dtype --runs 20 --algorithms csdldf,memcpy "$@" 2>&1 | grep -E " csdldf "; }
for round in 1 2; do
s u64 --sizes 67108864,268435456,1073741824
s u64 --sizes 67108864,268435456,1073741824 --vectors-per-thread 6
done
s u64 --sizes 22:24
s u64 --sizes 22:24 --vectors-per-thread 6
