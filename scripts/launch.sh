#!/usr/bin/env bash
# Starts N cooperating processes of one command for data-parallel training (README "Distributed
# training"), as torchrun does: each gets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT.
#
#   scripts/launch.sh N -- tisa-train pretrain --config c.yaml --run-dir runs/x
#
# One machine: MASTER_ADDR=127.0.0.1 and a free MASTER_PORT are chosen. Several machines: run the
# same line on every machine with NNODES (machines), NODE_RANK (0..NNODES-1), MASTER_ADDR (address
# of node 0, reachable from all) and MASTER_PORT set; ranks are NODE_RANK·N + local rank.
#
# Waits for all processes. If one exits non-zero, the others are stopped (SIGTERM, then SIGKILL
# after TISA_LAUNCH_GRACE seconds, default 10) and the script exits with that process's code.
# Ctrl-C / SIGTERM are passed on to all processes.
set -uo pipefail

usage() {
  echo "usage: $0 N -- command [args...]   (env: NNODES, NODE_RANK, MASTER_ADDR, MASTER_PORT)" >&2
  exit 2
}

[[ $# -ge 3 && "$2" == "--" ]] || usage
nproc_per_node="$1"
shift 2
[[ "$nproc_per_node" =~ ^[1-9][0-9]*$ ]] || { echo "launch.sh: N must be a positive integer, got '$nproc_per_node'" >&2; exit 2; }

nnodes="${NNODES:-1}"
node_rank="${NODE_RANK:-0}"
[[ "$nnodes" =~ ^[1-9][0-9]*$ ]] || { echo "launch.sh: NNODES='$nnodes' is not a positive integer" >&2; exit 2; }
[[ "$node_rank" =~ ^[0-9]+$ && "$node_rank" -lt "$nnodes" ]] ||
  { echo "launch.sh: NODE_RANK='$node_rank' must be in [0, NNODES=$nnodes)" >&2; exit 2; }

if [[ "$nnodes" -gt 1 ]]; then
  [[ -n "${MASTER_ADDR:-}" && -n "${MASTER_PORT:-}" ]] ||
    { echo "launch.sh: NNODES=$nnodes needs MASTER_ADDR (address of node 0) and MASTER_PORT" >&2; exit 2; }
fi
master_addr="${MASTER_ADDR:-127.0.0.1}"

port_is_free() {  # nothing listens on 127.0.0.1:$1
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
if [[ -n "${MASTER_PORT:-}" ]]; then
  master_port="$MASTER_PORT"
else
  master_port=""
  for _ in $(seq 1 50); do
    candidate=$((20000 + RANDOM % 40000))
    if port_is_free "$candidate"; then master_port="$candidate"; break; fi
  done
  [[ -n "$master_port" ]] || { echo "launch.sh: found no free port; set MASTER_PORT" >&2; exit 1; }
fi

world_size=$((nnodes * nproc_per_node))
pids=()
for ((local = 0; local < nproc_per_node; ++local)); do
  rank=$((node_rank * nproc_per_node + local))
  RANK="$rank" LOCAL_RANK="$local" WORLD_SIZE="$world_size" LOCAL_WORLD_SIZE="$nproc_per_node" \
    MASTER_ADDR="$master_addr" MASTER_PORT="$master_port" "$@" &
  pids+=($!)
done
echo "[launch] $nproc_per_node process(es) of $world_size (node $node_rank/$nnodes) at $master_addr:$master_port: ${pids[*]}" >&2

stop_all() {  # $1 = signal
  for pid in "${pids[@]}"; do kill "-$1" "$pid" 2>/dev/null; done
}
on_signal() {
  echo "[launch] signal received: stopping all processes" >&2
  stop_all TERM
  wait
  exit 130
}
trap 'on_signal' INT TERM

declare -A done_rc=()
status=0
while [[ ${#done_rc[@]} -lt ${#pids[@]} ]]; do
  for i in "${!pids[@]}"; do
    pid="${pids[$i]}"
    [[ -n "${done_rc[$pid]:-}" ]] && continue
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid"
      rc=$?
      done_rc[$pid]="$rc"
      if [[ "$rc" -ne 0 && "$status" -eq 0 ]]; then
        status="$rc"
        echo "[launch] local rank $i (pid $pid) exited with code $rc: stopping the others" >&2
        stop_all TERM
        grace="${TISA_LAUNCH_GRACE:-10}"
        for ((t = 0; t < grace * 10; ++t)); do
          alive=0
          for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
          [[ "$alive" -eq 0 ]] && break
          sleep 0.1
        done
        stop_all KILL
      fi
    fi
  done
  sleep 0.1
done
exit "$status"
