#!/bin/sh
# The project's test command (`npm test`): installs what is missing, then type-check, lint,
# chart freshness and every jest suite. Ends with the plain line `N passed, N failed`, counted
# from jest's JSON results. Exits non-zero when any stage fails.
set -u
cd "$(dirname "$0")/.."
sh scripts/ensure-system.sh || exit 1
sh scripts/ensure-node-modules.sh || exit 1

status=0
stage() { # stage NAME COMMAND...
  name=$1; shift
  echo "== $name" >&2
  if ! "$@"; then
    echo "== $name FAILED" >&2
    status=1
  fi
}

stage typecheck npx tsc --noEmit -p .
stage lint npx eslint .
if [ -f scripts/charts.ts ]; then
  stage charts node scripts/run-ts.cjs scripts/charts.ts --check
fi

mkdir -p .test-results
rm -f .test-results/jest.json
# PGlite needs vm modules under jest. --forceExit: a test that times out may leave a server or
# controller of its own running, and jest would then wait for it forever instead of reporting.
NODE_OPTIONS="${NODE_OPTIONS:-} --experimental-vm-modules --no-warnings=ExperimentalWarning" \
  npx jest --forceExit --json --outputFile=.test-results/jest.json "$@" || status=1
node scripts/jest-summary.cjs .test-results/jest.json || status=1
exit $status
