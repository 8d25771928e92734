#!/bin/sh
# The README's first command: a demo vault, a few memories, recall over them, and a
# context block for an agent's session.
set -eu
K="${KENOMEM:-kenomem}"
VAULT="${DEMO_VAULT:-demo-vault}"
rm -rf "$VAULT"
export KENOMEM_VAULT="$VAULT"
"$K" init "$VAULT" >/dev/null
echo "== a demo vault at $VAULT"
"$K" remember "Prefers short, direct answers without pleasantries" --tag preference
"$K" remember "The production database is PostgreSQL 15 on db1.internal" --tag infra --importance 7
"$K" remember "Deploys go out on Tuesdays after the 10:00 stand-up" --tag work
"$K" remember "Yesterday we decided to move the product launch to March" --tag launch --importance 8
"$K" remember "To restart the API, run: systemctl restart api, then check /healthz" --tag infra
"$K" remember "Mara is the design lead; she owns the onboarding flow" --tag people
"$K" remember "The production database is PostgreSQL 15 on db1.internal." --tag infra
echo
echo "== kenomem recall database"
"$K" recall database
echo
echo "== kenomem recall 'when is the launch' --explain"
"$K" recall when is the launch --explain
echo
echo "== kenomem recall restart api --json (what an agent reads)"
"$K" recall restart api --limit 1 --json
echo
echo "== kenomem list"
"$K" list
echo
echo "== an agent's session: its scratchpad and what it said"
"$K" working set --session demo "Task: plan the launch
Pending:
- confirm the date with Mara
- book the deploy slot" >/dev/null
"$K" log "the launch slides are due on Friday" --session demo --who you >/dev/null
echo
echo "== kenomem context 'deploy the launch build' --session demo --budget 400"
"$K" context "deploy the launch build" --session demo --budget 400
