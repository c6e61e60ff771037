#!/bin/sh
# `npm run e2e`: the end-to-end suites (`*.e2e.test.ts`: real hosts, brokers and stores started as
# processes), kept apart from `npm test` because they are the slowest; CI runs both. One at a
# time, since each starts its own fleet. Extra arguments go to jest: `npm run e2e -- overlay`.
# Ends with the plain line `N passed, N failed`; exits non-zero when any test fails.
set -u
cd "$(dirname "$0")/.."
sh scripts/ensure-system.sh || exit 1
sh scripts/ensure-node-modules.sh || exit 1
mkdir -p .test-results
rm -f .test-results/e2e.json
status=0
# --forceExit: as in scripts/test.sh, a timed-out test must not leave jest waiting forever.
NODE_OPTIONS="${NODE_OPTIONS:-} --experimental-vm-modules --no-warnings=ExperimentalWarning" \
  npx jest --forceExit -c jest.e2e.config.cjs --runInBand --json --outputFile=.test-results/e2e.json "$@" || status=1
node scripts/jest-summary.cjs .test-results/e2e.json || status=1
exit $status
