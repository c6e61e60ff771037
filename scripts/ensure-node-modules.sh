#!/bin/sh
# Runs `npm ci` when node_modules is missing or older than the lock file. A node_modules that
# is a link (a worktree sharing another checkout's modules) is never reinstalled from here:
# npm ci empties the directory it points at, the other checkout's, before installing.
set -eu
cd "$(dirname "$0")/.."
if [ -L node_modules ]; then
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "note: node_modules links to $(readlink node_modules) and may be older than package-lock.json; not reinstalling through the link (run npm ci where it points, if it is stale)" >&2
  fi
  exit 0
fi
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
