#!/usr/bin/env bash
# The portal's tests, and the checks that keep its committed outputs in step with the sources:
#   1. the typed operations in src/gql match schema/schema.graphql and the pages' documents;
#   2. typecheck and component tests (Vitest);
#   3. the build in web/dist/portal (embedded in the gateway) matches the sources;
#   4. end-to-end tests in Debian's Chromium against real `egs serve --demo` processes.
# Needs Node 20.19+ with npm, and /usr/bin/chromium (apt-get install chromium) for step 4.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
root=$(git rev-parse --show-toplevel)

# Vite 7, Vitest 3 and jsdom need Node 20.19+ (Debian 12's own nodejs is 18: too old).
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' 2>/dev/null; then
  echo "web/portal/check.sh needs Node.js 20.19 or newer with npm (found: $(node -v 2>/dev/null || echo none))." >&2
  echo "Install it from NodeSource (deb.nodesource.com) or with nvm, then run this again." >&2
  exit 1
fi

drift() { # path…: fails when the working tree differs from what is committed
  git diff --exit-code -- "$@"
  local untracked
  untracked="$(git ls-files --others --exclude-standard -- "$@")"
  if [ -n "$untracked" ]; then
    echo "untracked generated files (commit them):" >&2
    echo "$untracked" >&2
    return 1
  fi
}

echo "--- npm ci"
npm ci --no-audit --no-fund

echo "--- typed operations match the schema"
npm run --silent codegen
drift src/gql

echo "--- typecheck and component tests"
npx tsc --noEmit
npx vitest run

echo "--- the committed build matches the sources"
npx vite build --logLevel warn
drift ../dist/portal

echo "--- end-to-end tests (Chromium; screenshots in test-results/screenshots, EGS_SCREENSHOTS=1 refreshes web/screenshots)"
if [ -z "${EGS_BIN:-}" ]; then
  # Built as `cargo test --workspace` builds (same targets, so the same features): the binary
  # reuses that build's dependencies instead of compiling a second copy of them all.
  (cd "$root" && cargo build --workspace --bins --tests)
fi
npx playwright test
