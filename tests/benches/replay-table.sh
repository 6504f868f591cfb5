#!/usr/bin/env bash
# Replays the five public ITP cluster traces (cluster01..cluster05, from the ElasticFlow
# artifact, MIT licence) at nominal load and at 80 % of the nodes, under EGS and both baselines,
# and prints the rows of the replay table in docs/scheduling.md.
#
#   tests/benches/replay-table.sh DIR     # DIR holds cluster01.csv.gz … cluster05.csv.gz
#
# Builds `egs` in release first. Each row: waited GPRs, promises kept (no higher arrival / all),
# promises moved later without cause (0 / 1 failure a day), the start range's coverage (p10 / p90)
# and median width over the wait, the expected start within 10 min and its median relative error
# (waited GPRs), mean and p95 delay (EGS / FIFO / EASY), band means (EGS · FIFO · EASY), and the
# replay's wall time.
set -euo pipefail
dir=${1:?give the folder that holds cluster01.csv.gz … cluster05.csv.gz}
cd "$(dirname "$0")/../.."
cargo build --release --quiet --bin egs
egs=target/release/egs
command -v jq >/dev/null || { echo "needs jq" >&2; exit 1; }

# trace nominal-nodes 80%-nodes
configs="cluster01 14 11
cluster02 44 35
cluster03 32 26
cluster04 128 102
cluster05 11 9"

h() { jq -r "$1 / 3600 | . * 10 | round / 10"; }
f2() { jq -r "if $1 == null then \"–\" else ($1 * 100 | round / 100) end"; }

echo "| trace | nodes | waited | kept, no higher arrival / all | moved later without cause (0 / 1 failure a day) | range coverage p10 / p90 | range width / wait, median | within 10 min, waited | rel. error median, waited | mean delay h: EGS / FIFO / EASY | p95 delay h: EGS / FIFO / EASY | band means h (low, medium, high): EGS · FIFO · EASY | wall s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
while read -r trace nominal reduced; do
  for nodes in "$nominal" "$reduced"; do
    label="$nodes"; [ "$nodes" = "$nominal" ] && label="$nodes (nominal)" || label="$nodes (80 %)"
    start=$(date +%s.%N)
    fifo=$("$egs" replay --trace "$dir/$trace.csv.gz" --nodes "$nodes")
    wall=$(echo "$(date +%s.%N) - $start" | bc)
    easy=$("$egs" replay --trace "$dir/$trace.csv.gz" --nodes "$nodes" --baseline easy | jq '.baseline')
    failing=$("$egs" replay --trace "$dir/$trace.csv.gz" --nodes "$nodes" --failures-per-day 1 | jq '.promise_moved_later_without_cause')
    r() { echo "$fifo" | jq -r "$1"; }
    band_means() { jq -r '[.low, .medium, .high] | map(.queue_delay_mean_s / 3600 * 10 | round / 10 | tostring) | join("/")'; }
    bands="$(echo "$fifo" | jq .by_priority_band | band_means) · $(echo "$fifo" | jq .baseline.by_priority_band | band_means) · $(echo "$easy" | jq .by_priority_band | band_means)"
    printf '| %s | %s | %s | %s / %s | %s / %s | %s / %s | %s | %s | %s | %s / %s / %s | %s / %s / %s | %s | %.1f |\n' \
      "$trace" "$label" "$(r .waited_jobs)" \
      "$(echo "$fifo" | f2 .promise_kept_no_higher_arrival)" "$(echo "$fifo" | f2 .promise_kept_all)" \
      "$(r .promise_moved_later_without_cause)" "$failing" \
      "$(echo "$fifo" | f2 .range_coverage_p10)" "$(echo "$fifo" | f2 .range_coverage_p90)" "$(echo "$fifo" | f2 .range_width_rel_median)" \
      "$(echo "$fifo" | f2 .estimate_within_10min_waited)" "$(echo "$fifo" | f2 .estimate_rel_error_median_waited)" \
      "$(echo "$fifo" | jq -r .queue_delay_mean_s | h .)" "$(echo "$fifo" | jq -r .baseline.queue_delay_mean_s | h .)" "$(echo "$easy" | jq -r .queue_delay_mean_s | h .)" \
      "$(echo "$fifo" | jq -r .queue_delay_p95_s | h .)" "$(echo "$fifo" | jq -r .baseline.queue_delay_p95_s | h .)" "$(echo "$easy" | jq -r .queue_delay_p95_s | h .)" \
      "$bands" "$wall"
  done
done <<< "$configs"
