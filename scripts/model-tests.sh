#!/bin/sh
# Runs the path tests generated from each machine (model-tests/), then prints every model's
# state and transition coverage. Fails if a path fails or a model is not fully covered.
# Extra arguments go to jest (e.g. -t 'enrol').
set -u
cd "$(dirname "$0")/.."
rm -rf .test-results/model-coverage
npx jest model-tests "$@"
status=$?
node scripts/run-ts.cjs model-tests/print-coverage.ts .test-results/model-coverage || status=1
exit "$status"
