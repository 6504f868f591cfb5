#!/usr/bin/env bash
# Rebuilds the GraphiQL playground and fails if web/dist/graphiql differs from
# what is committed (CI drift check). Works from any cwd.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

npm ci --no-audit --no-fund
npm run build

# Modified or deleted committed files:
git diff --exit-code -- ../dist/graphiql
# New files the build produced that are not committed:
untracked="$(git ls-files --others --exclude-standard -- ../dist/graphiql)"
if [ -n "$untracked" ]; then
  echo "untracked build output (commit it):" >&2
  echo "$untracked" >&2
  exit 1
fi
echo "web/dist/graphiql is up to date"
