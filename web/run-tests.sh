#!/usr/bin/env bash
# The WebGPU tests (node's test runner on Dawn, npm webgpu), on the first adapter Dawn
# finds: where web/.mesa holds Mesa 25's lavapipe (scripts/fetch-lavapipe.sh), that one,
# since Dawn refuses the older lavapipe of Debian bookworm. Also checks that
# src/generated.mjs matches web/wgsl/ and shaders/common/interface.h.
set -euo pipefail
cd "$(dirname "$0")"
node tools/join-wgsl.mjs --check
if [[ -f .mesa/lvp_icd.json ]]; then
  export VK_DRIVER_FILES=$PWD/.mesa/lvp_icd.json VK_ICD_FILENAMES=$PWD/.mesa/lvp_icd.json
fi
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
node --test --test-reporter=spec test/*.test.mjs 2>&1 | grep -v "artificially reduced"
