#!/bin/sh
# Installs the tools the host is compared with, from Debian's packages, each only when it is
# missing: puppet-agent (puppet apply), ansible (ansible-playbook) and cfengine3 (cf-agent).
# Run by `npm run bench` (the full run only, never --quick); as root, since apt-get is.
# Prints one line per package: `present NAME`, `installed NAME`, or `unavailable NAME: why`,
# and exits 0 even when one is unavailable: the table says so for that tool.
set -u
export DEBIAN_FRONTEND=noninteractive

updated=no
candidate() { # candidate PACKAGE: the version apt would install, empty when none
  apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '(none)'
}

for package in puppet-agent ansible cfengine3; do
  if dpkg-query -W -f '${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    echo "present $package"
    continue
  fi
  if [ -z "$(candidate "$package")" ] && [ "$updated" = no ]; then
    apt-get update -qq >/dev/null 2>&1 || true
    updated=yes
  fi
  if [ -z "$(candidate "$package")" ]; then
    echo "unavailable $package: no candidate in this system's package lists"
    continue
  fi
  if apt-get install -y -qq --no-install-recommends "$package" >/tmp/ensure-peers-$$.log 2>&1; then
    echo "installed $package"
  else
    echo "unavailable $package: apt-get install failed: $(tail -n 1 /tmp/ensure-peers-$$.log)"
  fi
  rm -f /tmp/ensure-peers-$$.log
done
exit 0
