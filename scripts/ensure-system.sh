#!/bin/sh
# Installs the system packages the project's tests and the demo need, and only those missing.
# Debian/Ubuntu (apt). Run as root, or install the listed packages yourself.
set -eu

missing=""
need() { # need COMMAND-OR-PATH PACKAGE
  case "$1" in
    /*) [ -e "$1" ] || missing="$missing $2" ;;
    *) command -v "$1" >/dev/null 2>&1 || missing="$missing $2" ;;
  esac
}

need nats-server nats-server
need /usr/lib/postgresql/15/bin/initdb postgresql
need pacman pacman-package-manager
need dpkg-deb dpkg
need openssl openssl
need start-stop-daemon dpkg
need runuser util-linux
need zstd zstd
need bsdtar libarchive-tools
need systemctl systemd
need makepkg makepkg
need zsh zsh
need fish fish
need groff groff-base
need man man-db
# The dashboard's browser test, and the overlay's userspace WireGuard between network namespaces.
need chromium chromium
need wireguard-go wireguard-go
need wg wireguard-tools
need ip iproute2
need ping iputils-ping
# Mesh names: the resolver seat's DNS server, run on hosts of the overlay's namespaces.
need dnsmasq dnsmasq-base

[ -n "$missing" ] || exit 0
missing=$(printf '%s\n' $missing | sort -u | tr '\n' ' ')
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "These system packages are needed and missing: $missing" >&2
  echo "Install them with your package manager (as root), then run this again." >&2
  exit 1
fi
echo "Installing system packages: $missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
