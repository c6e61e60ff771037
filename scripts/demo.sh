#!/bin/sh
# The main job: raise a one-machine mesh on the embedded default (PGlite) — a broker, the
# controller, and three hosts in temporary roots — enrol them with real tokens, push a
# declaration, and show `mesh-control nodes` and each host's `owned`.
set -eu
cd "$(dirname "$0")/.."
sh scripts/ensure-system.sh
sh scripts/ensure-node-modules.sh
exec node scripts/run-ts.cjs scripts/demo.ts "$@"
