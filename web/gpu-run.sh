#!/usr/bin/env bash
# Runs the WebGPU tests and benchmarks on the GPU machine through Dawn's Vulkan backend
# (see /work/notes for the device tool). Expects, beside this script in a staging folder:
# node.xz (the node binary), dawn.node.xz (npm webgpu's dist/linux-x64/dawn.node), gl/ (the
# Vulkan loader .debs, /work/shared/tools/vulkan-loader-debs.sh) and pkg/ (web/ without
# dawn.node). Writes logs and CSVs to $OUT. Usage: gpu-run.sh COMMIT [all|tests|bench|sweep|stats|ab]
# stats: the driver's registers, shared and local memory of the chained scan for each entry
# NAME={Scanner options as JSON, no spaces}[@toggles] of STATS_CONFIGS (space-separated;
# toggles as dump-shaders.mjs takes them), from Dawn's SPIR-V (tools/dump-shaders.mjs),
# assembled by spirv-as and compiled by tools/driver-stats.c; both binaries beside this
# script. Each is compiled twice: NAME.spv as Dawn hands it over (Debian's spirv-as 2023.1
# predates MaximallyReconvergesKHR, so that mode is written as its number, !6023), and
# NAME-nomode.spv without that mode (what the register counts before W39 were of).
# With STATS_DUMP=1, also what the driver shows of its code (driver-stats --dump) in
# $OUT/dump, and each ELF image found in its pipeline cache disassembled by CUDA's nvdisasm
# where the machine has it (NAME.N.sass).
# ab: A/B of kernel variants and Dawn toggles: one process per entry of AB_TOGGLES (space-
# separated, "none" for no toggles, taken in that order so that sets alternate), each
# running every variant of AB_VARIANTS (bench.mjs --variants) beside memcpy and rts.
set -uo pipefail
cd "$(dirname "$0")"
commit=${1:-unknown}
what=${2:-all}
out=${OUT:-/tmp/out}
mkdir -p "$out" /tmp/bin
for f in gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
# Once a machine: a second call of this script in the same command skips the unpacking.
[[ -x /tmp/bin/node ]] || { xz -dc node.xz >/tmp/bin/node && chmod +x /tmp/bin/node; }
[[ -s pkg/node_modules/webgpu/dist/linux-x64/dawn.node ]] ||
  xz -dc dawn.node.xz >pkg/node_modules/webgpu/dist/linux-x64/dawn.node
export PATH=/tmp/bin:$PATH
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; node --version; echo "commit $commit"; } >"$out/machine.txt" 2>&1
cd pkg
if [[ $what == all || $what == tests ]]; then
  timeout 100 node --test --test-reporter=spec test/*.test.mjs >"$out/tests.log" 2>&1
  echo "tests exit $?" >>"$out/tests.log"
fi
lanes=subgroup
if [[ $what == all || $what == sweep ]]; then
  # Who reads the spine (a subgroup, or one invocation): both on this device, and the
  # faster at 2^28 runs the benchmark below.
  for l in subgroup single; do
    echo "== --lookback-lanes $l" >>"$out/sweep.log"
    timeout 45 node bench.mjs --sizes 24:28 --runs 10 --algorithms csdldf,memcpy --lookback-lanes $l \
      --stats --csv /dev/null 2>&1 | grep -E "device|n=2|rror" >>"$out/sweep.log"
  done
  lanes=$(awk '/^== /{l=$3} /n=2\^28 csdldf/{print $9, l}' "$out/sweep.log" | sort -g | tail -1 | cut -d" " -f2)
  echo "benchmark with --lookback-lanes ${lanes:=subgroup}" >>"$out/sweep.log"
fi
if [[ $what == all || $what == bench ]]; then
  timeout 120 node bench.mjs --sizes 16:28 --runs 20 --algorithms csdldf,rts,memcpy,csdl \
    --blocking-mask 1 --lookback-lanes "$lanes" --commit "$commit" --csv "$out/bench.csv" \
    --device "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1 | sed 's/, / (Dawn Vulkan; driver /; s/$/)/')" \
    2>"$out/bench.log"
  echo "bench exit $?" >>"$out/bench.log"
fi
if [[ $what == ab ]]; then
  i=0
  for toggles in ${AB_TOGGLES:-none}; do
    i=$((i + 1))
    t=(); [[ $toggles != none ]] && t=(--dawn-toggles "$toggles")
    echo "== process $i toggles $toggles" >>"$out/ab.log"
    timeout "${AB_TIMEOUT:-90}" node bench.mjs --sizes "${AB_SIZES:-24:28}" --runs "${AB_RUNS:-20}" \
      --algorithms "${AB_ALGORITHMS:-csdldf,rts,memcpy}" --blocking-mask 1 ${AB_STATS:+--stats} "${t[@]}" \
      --variants "$AB_VARIANTS" --commit "$commit" --csv "$out/ab-$i.csv" \
      --device "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1 | sed 's/, / (Dawn Vulkan; driver /; s/$/)/')" \
      >>"$out/ab.log" 2>&1
    echo "exit $?" >>"$out/ab.log"
  done
fi
if [[ $what == stats ]]; then
  mkdir -p /tmp/spv
  stage=$(cd .. && pwd)
  spv=()
  for entry in ${STATS_CONFIGS:-base={\}}; do
    name=${entry%%=*}
    options=${entry#*=}
    toggles=
    [[ $options == *@* ]] && toggles=${options#*@} options=${options%@*}
    node tools/dump-shaders.mjs "$options" "$toggles" >/tmp/spv/$name.txt 2>&1
    # The chained scan's SPIR-V is the first one dumped (then the reset kernel's).
    awk '/Dumped SPIRV disassembly/{n++; f=1; next} /Dumped WGSL|^\/\/ configuration|^info:|^Warning/{f=0} f && n==1' \
      /tmp/spv/$name.txt | sed 's/\(OpExecutionMode %[0-9A-Za-z_]*\) MaximallyReconvergesKHR/\1 !6023/' >/tmp/spv/$name.spvasm
    sed '/OpExecutionMode .* !6023/d; /SPV_KHR_maximal_reconvergence/d' /tmp/spv/$name.spvasm >/tmp/spv/$name-nomode.spvasm
    for v in $name $name-nomode; do
      "$stage/spirv-as" --target-env vulkan1.1spv1.4 /tmp/spv/$v.spvasm -o /tmp/spv/$v.spv && spv+=("$v.spv")
    done
  done
  dump=()
  [[ -n ${STATS_DUMP:-} ]] && mkdir -p "$out/dump" && dump=(--dump "$out/dump")
  (cd /tmp/spv && "$stage/driver-stats" "${dump[@]}" "${spv[@]}") >"$out/stats.log" 2>&1
  echo "stats exit $?" >>"$out/stats.log"
  disassembler=$(command -v nvdisasm || ls /usr/local/cuda/bin/nvdisasm 2>/dev/null)
  if [[ -n ${STATS_DUMP:-} && -n $disassembler ]]; then
    for elf in "$out"/dump/*.elf; do
      [[ -e $elf ]] && "$disassembler" -c "$elf" >"${elf%.elf}.sass" 2>&1
    done
  fi
fi
