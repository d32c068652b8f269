#!/bin/sh
# Makes the namespace exist and registers the agent's search attributes on it, with the temporal
# CLI (temporalio/admin-tools image). Idempotent. The worker starts only after this succeeds.
# Keep the list in step with workflows/search-attributes.ts (a test checks it).
set -eu

ADDRESS="${TEMPORAL_ADDRESS:-temporal:7233}"
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
ATTRIBUTES="AgentStatus=Keyword AgentStopReason=Keyword AgentStep=Int AgentToolCalls=Int AgentPrincipal=Keyword"

attempt=0
until temporal operator cluster health --address "$ADDRESS" >/dev/null 2>&1; do
  attempt=$((attempt + 1))
  if [ "$attempt" -ge 60 ]; then echo "Temporal at $ADDRESS is not healthy" >&2; exit 1; fi
  echo "waiting for Temporal at $ADDRESS"
  sleep 2
done

if ! temporal operator namespace describe --address "$ADDRESS" --namespace "$NAMESPACE" >/dev/null 2>&1; then
  temporal operator namespace create --address "$ADDRESS" --namespace "$NAMESPACE" --retention 30d
  echo "namespace $NAMESPACE created"
fi

existing="$(temporal operator search-attribute list --address "$ADDRESS" --namespace "$NAMESPACE")"
for pair in $ATTRIBUTES; do
  name="${pair%%=*}"
  type="${pair#*=}"
  if printf '%s\n' "$existing" | grep -qw "$name"; then
    echo "search attribute $name already registered"
  else
    temporal operator search-attribute create --address "$ADDRESS" --namespace "$NAMESPACE" --name "$name" --type "$type"
    echo "search attribute $name=$type registered"
  fi
done

# The frontend caches search attributes; wait until a query that uses them is accepted, so the
# first run started after this container exits can already set them.
attempt=0
until temporal workflow list --address "$ADDRESS" --namespace "$NAMESPACE" --limit 1 \
  --query "AgentStatus = 'running' AND AgentStep >= 0 AND AgentToolCalls >= 0 AND AgentStopReason = 'x' AND AgentPrincipal = 'x'" >/dev/null 2>&1; do
  attempt=$((attempt + 1))
  if [ "$attempt" -ge 90 ]; then echo "search attributes are still not queryable" >&2; exit 1; fi
  sleep 2
done
echo "namespace $NAMESPACE is ready for the agent"
