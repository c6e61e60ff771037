#!/bin/sh
# The main job: raise a one-machine mesh on the embedded default (PGlite) — a broker, the
# controller, and three hosts in temporary roots — enrol them with real tokens, push a
# declaration, and show `mesh-control nodes` and each host's `owned`.
set -eu
cd "$(dirname "$0")/.."
sh scripts/ensure-system.sh
sh scripts/ensure-node-modules.sh
if [ ! -f scripts/demo.ts ]; then
  cat >&2 <<'TXT'
The one-machine mesh is not built yet. When enrolment lands this command will:
  1. mesh-control init --dir ./demo        (keys, broker TLS and config, PGlite store)
  2. start nats-server from ./demo/broker  (TLS, JetStream, nkey users)
  3. mesh-control serve                    (the controller, a supervised actor system)
  4. three hosts in ./demo/hosts/{a,b,c}   (nox-mesh-host enrol --token …, then run)
  5. push a declaration and print `mesh-control nodes` and each host's `owned`.
What works today: bin/nox-mesh-host version, and `npm test`.
TXT
  exit 3
fi
exec node scripts/run-ts.cjs scripts/demo.ts "$@"
