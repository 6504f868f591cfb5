#!/usr/bin/env bash
# Ask for GPU nodes from a shell script with curl and jq: get the wait times, submit a GPR,
# then poll it until it is provisioned (or print why not). Exits 0 when provisioned.
#
#   EGS_SERVER=http://localhost:8080 EGS_TOKEN=$(cat token) ./create-gpr.sh nlp-research my-run
#
# Arguments: slice name, GPR name, and optionally nodes (1) and duration (2h).
set -euo pipefail
: "${EGS_SERVER:?set EGS_SERVER to the gateway URL}"
: "${EGS_TOKEN:?set EGS_TOKEN to an access token}"
slice_name=${1:?slice name}
gpr_name=${2:?GPR name}
nodes=${3:-1}
duration=${4:-2h}

# One GraphQL request: the query and its variables (a JSON object); prints `data`, or the
# errors on stderr and exits 1.
gql() {
  local body answer
  body=$(jq -n --arg query "$1" --argjson variables "$2" '{query: $query, variables: $variables}')
  answer=$(curl -sS --fail-with-body -H "Authorization: Bearer $EGS_TOKEN" -H 'Content-Type: application/json' \
    --data "$body" "$EGS_SERVER/graphql") || { echo "$answer" >&2; exit 1; }
  if [ "$(jq '.errors // [] | length' <<<"$answer")" -gt 0 ]; then
    jq -r '.errors[].message' <<<"$answer" >&2
    exit 1
  fi
  jq '.data' <<<"$answer"
}

slice_id=$(gql '{ slices(first: 100) { nodes { id name } } }' '{}' |
  jq -r --arg name "$slice_name" '.slices.nodes[] | select(.name == $name) | .id')
[ -n "$slice_id" ] || { echo "no slice named $slice_name" >&2; exit 1; }

echo "Wait times for $nodes node(s) for $duration in $slice_name:"
gql 'query($input: WaitTimeInput!) { waitTimeEstimates(input: $input) { gpuShape cluster { name } estimatedWait startNoLaterThan } }' \
  "$(jq -n --arg s "$slice_id" --argjson n "$nodes" --arg d "$duration" '{input: {sliceId: $s, nodeCount: $n, duration: $d}}')" |
  jq -r '.waitTimeEstimates[] | "  \(.cluster.name) \(.gpuShape): wait \(.estimatedWait), starts no later than \(.startNoLaterThan)"'

created=$(gql 'mutation($input: CreateGprInput!) { createGpr(input: $input) { gpr { id phase } userErrors { field message } } }' \
  "$(jq -n --arg s "$slice_id" --arg name "$gpr_name" --argjson n "$nodes" --arg d "$duration" \
    '{input: {sliceId: $s, name: $name, nodeCount: $n, duration: $d, labels: [{key: "submitted-by", value: "create-gpr.sh"}]}}')")
if [ "$(jq '.createGpr.userErrors | length' <<<"$created")" -gt 0 ]; then
  jq -r '.createGpr.userErrors[] | "refused: \(.field | join(".")): \(.message)"' <<<"$created" >&2
  exit 1
fi
id=$(jq -r '.createGpr.gpr.id' <<<"$created")
echo "Created $gpr_name ($id); waiting until it is provisioned…"

for _ in $(seq 1 600); do
  gpr=$(gql 'query($id: ID!) { gpr(id: $id) { phase reason exitAt nodes { name } } }' "$(jq -n --arg id "$id" '{id: $id}')")
  phase=$(jq -r '.gpr.phase' <<<"$gpr")
  case "$phase" in
    PROVISIONED)
      echo "Provisioned on $(jq -r '[.gpr.nodes[].name] | join(", ")' <<<"$gpr") until $(jq -r '.gpr.exitAt' <<<"$gpr")"
      exit 0 ;;
    FAILED | CANCELLED | REJECTED | COMPLETED)
      echo "$gpr_name is $phase: $(jq -r '.gpr.reason // ""' <<<"$gpr")" >&2
      exit 1 ;;
  esac
  sleep 1
done
echo "$gpr_name is still $phase after 10 minutes" >&2
exit 1
