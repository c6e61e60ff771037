#!/bin/sh
# NetworkManager dispatcher script for the Novox Mesh node host.
#
# Installed as /etc/NetworkManager/dispatcher.d/90-nox-mesh-host, owned by root, mode 0755
# (NetworkManager skips a script that is group- or world-writable or setuid). NetworkManager
# calls it with two arguments, the interface and the action, and describes the event in the
# environment (CONNECTIVITY_STATE for connectivity-change). See NetworkManager-dispatcher(8).
#
# It rouses the host on the events that change where packets go, and on no others. A rouse ends
# the host's current connection attempt, or a link that looks alive and is not; it does not end
# a backoff wait and does not reset the backoff, and rouses arriving together are one. So a rouse
# that was not needed costs the host a check, and a rouse that was missed costs up to a
# heartbeat interval (about 30 s) of believing it is in the mesh when it is not.
#
#   action               rouses  why
#   -------------------  ------  ------------------------------------------------------------
#   pre-up               no      The interface is not carrying traffic yet; `up` follows when it
#                                is. (Only scripts in pre-up.d receive it; this one is not.)
#   up                   yes     A new interface carries traffic. The default route may have
#                                moved (Wi-Fi to cable, a different network after waking), and
#                                a connection made over the old path may be dead without
#                                knowing it.
#   pre-down             no      The link still works; nothing has changed yet. (Only scripts in
#                                pre-down.d receive it.)
#   down                 no      The link is gone, a reconnection now would fail, and the
#                                backoff exists for exactly that. If another interface is still
#                                up, the heartbeat finds the dead connection within its interval.
#   vpn-pre-up           no      The tunnel is not carrying traffic yet; `vpn-up` follows.
#   vpn-up               yes     The tunnel's routes now take traffic, perhaps all of it: a
#                                connection made before may be cut off inside the tunnel, or the
#                                broker may be reachable only through it.
#   vpn-pre-down         no      The tunnel still works; nothing has changed yet.
#   vpn-down             yes     Unlike `down`, the network under the tunnel is still there:
#                                packets that went through the tunnel now go the direct way, a
#                                connection made through it is dead, and a new attempt has a
#                                route. When the tunnel fell because the network went, a `down`
#                                comes too, the attempt fails, and the backoff, not reset,
#                                absorbs it.
#   hostname             no      Names, not routes.
#   dhcp4-change         yes     A renewal or rebind may bring a new address or gateway; the old
#                                source address then no longer exists and the connection is dead
#                                while looking healthy. Telling a plain renewal from a new
#                                address would need state kept between runs; a renewal that
#                                changed nothing costs the host one check.
#   dhcp6-change         yes     The same, for DHCPv6.
#   connectivity-change  FULL    FULL: the network became usable with no `up` to say so (a
#                        only    captive portal was passed, the upstream came back); an attempt
#                                started while packets went nowhere may be stuck. NONE: as
#                                `down`. PORTAL: connections are intercepted, and an attempt
#                                would meet the portal's certificate, which the broker pin
#                                refuses. LIMITED: connectivity usually got worse (the upstream
#                                was lost), or the check is blocked on a network whose `up`
#                                already roused. UNKNOWN: the check is off or has not run, so
#                                nothing was learned.
#   reapply              yes     The device's live configuration (addresses, routes, MTU) was
#                                changed in place, with no `down` or `up` to say so.
#   dns-change           no      Names now resolve elsewhere, but an open connection goes where
#                                it went, and the next attempt resolves afresh anyway.
#   device-add           no      Given only to the one handler script a generic connection
#   device-delete        no      names under dispatcher.d/device/, never to this one; creating
#                                a device does not route through it (`up` follows if it does).
#   anything else        no      An action NetworkManager adds later rouses only once someone
#                                has decided it should, here and in network-dispatcher.test.ts.
#
# Externally created interfaces (a container's veth, a bridge) raise `up` too. That rouse is not
# needed, and it is harmless: the host keeps a link that answers.
#
# NetworkManager runs dispatcher scripts one at a time, so this one never waits for anything,
# prints nothing, and exits 0 whatever happens. Finding and signalling the host is the shared
# helper's job (MESH_HOST_ROUSE names another copy; the tests use that).

rouse=${MESH_HOST_ROUSE:-/usr/lib/nox-mesh-host/nox-mesh-host-rouse}

case ${2-} in
  up | vpn-up | vpn-down | dhcp4-change | dhcp6-change | reapply) ;;
  connectivity-change) [ "${CONNECTIVITY_STATE-}" = FULL ] || exit 0 ;;
  *) exit 0 ;;
esac

[ -x "$rouse" ] && "$rouse" >/dev/null 2>&1
exit 0
