#!/usr/bin/env bash
# One machine's cores as one process or as ranks: tokens/s of analyze on GPT-2-small
# (random weights, 12 x 768, T = 512) for 1 rank x N threads against N ranks x 1 thread,
# and the ranks' reduction (all ranks' statistics into rank 0) as a share of the run.
# Usage: bench/distributed.sh [windows] [build dir]  (default 24 windows, build/)
# Ranks are started as torchrun starts them: plain processes with its variables.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
windows=${1:-24}
posgeom=${2:-$root/build}/src/posgeom
cores=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$posgeom" random-model --arch gpt2 --layers 12 --dim 768 --heads 12 --vocab 50257 --positions 1024 --out "$work/gpt2" -q
args=(analyze --model "$work/gpt2" --corpus random --seq-len 512 --num-seqs "$windows" --screenot-k 3 -q)

# tokens/s over the pass (forward and accumulate, plus the reduction where there is one)
report() {
  python3 - "$1" "$2" "$windows" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
t = s["timings"]
pass_s = t["forward_and_accumulate_s"]
reduce_s = t.get("rank_reduce_s", 0.0)
tokens = int(sys.argv[3]) * 512
print(f"{sys.argv[2]:<24} {tokens / pass_s:8.1f} tokens/s   pass {pass_s:6.2f} s   "
      f"reduction {reduce_s:5.2f} s ({100 * reduce_s / pass_s:4.1f}% of the pass)   metrics {t['metrics_s']:5.2f} s")
PY
}

"$posgeom" --threads "$cores" "${args[@]}" --out "$work/one"
report "$work/one" "1 rank x $cores threads"

port=$((20000 + RANDOM % 20000))
pids=()
for ((r = 0; r < cores; ++r)); do
  RANK=$r WORLD_SIZE=$cores LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$posgeom" --threads 1 "${args[@]}" --out "$work/ranks" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
report "$work/ranks" "$cores ranks x 1 thread"
