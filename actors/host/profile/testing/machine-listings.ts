// What real machines print and write, for the parsers' tests and the inventory's: a status
// file as dpkg writes it, a pacman desc, systemctl, rc-status and the container engines' lists.

/**
 * A status file as dpkg writes it: multi-line descriptions with " ." blank lines, conffiles,
 * packages in every state a real machine has (installed, held, removed with its configuration
 * kept, half-installed, unpacked, waiting for a trigger), and libc6 for two architectures.
 */
export const DPKG_STATUS = `Package: base-files
Essential: yes
Status: install ok installed
Priority: required
Section: admin
Installed-Size: 346
Maintainer: Santiago Vila <sanvila@debian.org>
Architecture: amd64
Multi-Arch: foreign
Version: 12.4+deb12u5
Replaces: base, dpkg (<= 1.15.0), miscutils
Provides: base
Pre-Depends: awk
Breaks: debian-security-support (<< 2019.04.25), initscripts (<< 2.88dsf-13.3), sendfile (<< 2.1b.20080616-5.2~)
Conffiles:
 /etc/debian_version 2a6c9c11c5a5cf8c4e6f2bb4e0e5ab5c
 /etc/dpkg/origins/debian c47b6815f67ad1aeccb0d4529bd0b990
Description: Debian base system miscellaneous files
 This package contains the basic filesystem hierarchy of a Debian system, and
 several important miscellaneous files, such as /etc/debian_version,
 /etc/host.conf, /etc/issue, /etc/motd, /etc/profile, and others,
 .
 and the text of several common licenses in use on Debian systems.

Package: nginx-common
Status: deinstall ok config-files
Priority: optional
Section: httpd
Installed-Size: 1122
Maintainer: Debian Nginx Maintainers <pkg-nginx-maintainers@alioth-lists.debian.net>
Architecture: all
Version: 1.22.1-9
Conffiles:
 /etc/nginx/nginx.conf 3d2cf3d9a48a2e7b5e1f34b39bcf4f73
Description: small, powerful, scalable web/proxy server - common files
 Nginx ("engine X") is a high-performance web and reverse proxy server
 .
 This package contains base configuration files used by all flavors of
 nginx.

Package: libc6
Status: install ok installed
Priority: optional
Section: libs
Installed-Size: 12987
Maintainer: GNU Libc Maintainers <debian-glibc@lists.debian.org>
Architecture: amd64
Multi-Arch: same
Source: glibc
Version: 2.36-9+deb12u7
Description: GNU C Library: Shared libraries
 Contains the standard libraries that are used by nearly all programs on
 the system.

Package: libc6
Status: install ok installed
Priority: optional
Section: libs
Maintainer: GNU Libc Maintainers <debian-glibc@lists.debian.org>
Architecture: i386
Multi-Arch: same
Source: glibc
Version: 2.36-9+deb12u7
Description: GNU C Library: Shared libraries

Package: openssh-server
Status: hold ok installed
Priority: optional
Section: net
Architecture: amd64
Version: 1:9.2p1-2+deb12u3
Description: secure shell (SSH) server, for secure access from remote machines

Package: man-db
Status: install ok triggers-pending
Architecture: amd64
Version: 2.11.2-2
Triggers-Pending: /usr/share/man
Description: tools for reading manual pages

Package: broken-upgrade
Status: install reinstreq half-installed
Architecture: amd64
Version: 0.9-1
Description: a package whose unpacking was interrupted

Package: wget
Status: install ok unpacked
Architecture: amd64
Version: 1.21.3-1+deb12u1
Description: retrieves files from the web
`;

/** A desc of pacman's local database as pacman 6 writes it. */
export function pacmanDesc(name: string, version: string): string {
  return [
    '%NAME%', name, '',
    '%VERSION%', version, '',
    '%BASE%', name, '',
    '%DESC%', `${name}, as packaged for Arch`, '',
    '%URL%', `https://example.org/${name}`, '',
    '%ARCH%', 'x86_64', '',
    '%BUILDDATE%', '1729000000', '',
    '%INSTALLDATE%', '1729100000', '',
    '%PACKAGER%', 'Arch Packager <packager@example.org>', '',
    '%SIZE%', '123456', '',
    '%REASON%', '1', '',
    '%LICENSE%', 'GPL-2.0-only', 'MIT', '',
    '%VALIDATION%', 'pgp', '',
    '%DEPENDS%', 'glibc', 'zlib>=1.2', '',
    '',
  ].join('\n');
}

/** `systemctl list-unit-files --type=service --no-legend` (systemd 252) on a Debian 12 server. */
export const UNIT_FILES = `apparmor.service                       enabled         enabled
cron.service                           enabled         enabled
dbus-org.freedesktop.timesync1.service alias           -
getty@.service                         enabled         enabled
nginx.service                          enabled         enabled
postgresql@.service                    indirect        enabled
rescue.service                         static          -
ssh.service                            enabled         enabled
systemd-journald.service               static          -
systemd-timesyncd.service              enabled         enabled
unattended-upgrades.service            disabled        enabled
apache2.service                        masked          enabled
`;

/** `systemctl list-units --type=service --all --no-legend` on the same server. */
export const UNITS = `apparmor.service                  loaded    active   exited  Load AppArmor profiles
cron.service                      loaded    active   running Regular background program processing daemon
getty@tty1.service                loaded    active   running Getty on tty1
nginx.service                     loaded    failed   failed  A high performance web server and a reverse proxy server
● plymouth-quit.service           not-found inactive dead    plymouth-quit.service
postgresql@15-main.service        loaded    active   running PostgreSQL Cluster 15-main
rescue.service                    loaded    inactive dead    Rescue Shell
ssh.service                       loaded    activating auto-restart OpenBSD Secure Shell server
systemd-journald.service          loaded    active   running Journal Service
systemd-timesyncd.service         loaded    active   running Network Time Synchronization
`;

/** `rc-status --all` on an Alpine server. */
export const RC_STATUS = `Runlevel: default
 sshd                                                              [  started  ]
 crond                                                             [  started  ]
 nginx                                                             [  crashed  ]
 chronyd                                                           [  started 02:14:07 (0) ]
Runlevel: boot
 hwclock                                                           [  started  ]
 networking                                                        [  started  ]
Runlevel: sysinit
 devfs                                                             [  started  ]
Runlevel: nonetwork
Runlevel: shutdown
 killprocs                                                         [  stopped  ]
Dynamic Runlevel: hotplugged
Dynamic Runlevel: needed/wanted
 sysfs                                                             [  started  ]
Dynamic Runlevel: manual
 docker                                                            [  started  ]
 postgresql                                                        [  stopped  ]
`;

/** `docker ps --all --format '{{json .}}'`: one JSON object a line. */
export const DOCKER_PS = [
  '{"Command":"\\"/docker-entrypoint.…\\"","CreatedAt":"2026-08-01 10:00:00 +0000 UTC","ID":"3f1c2a","Image":"nginx:1.27","Labels":"","LocalVolumes":"0","Mounts":"","Names":"web","Networks":"bridge","Ports":"0.0.0.0:80->80/tcp","RunningFor":"3 weeks ago","Size":"0B","State":"running","Status":"Up 3 weeks"}',
  '{"Command":"\\"docker-entrypoint.s…\\"","ID":"9ab0d1","Image":"postgres:16","Names":"db,web/db","State":"exited","Status":"Exited (0) 2 days ago"}',
  '',
].join('\n');

/** `podman ps --all --format json`: one JSON array. */
export const PODMAN_PS = JSON.stringify([
  { Id: 'a1', Image: 'docker.io/library/redis:7', Names: ['cache'], State: 'running', Status: 'Up 5 minutes' },
  { Id: 'b2', Image: 'quay.io/prometheus/node-exporter:v1.8.2', Names: ['node-exporter'], State: 'created' },
]);

/** apk's `lib/apk/db/installed` on an Alpine 3.20 machine: one block per package, files listed. */
export const APK_INSTALLED = `C:Q1nCwbyNbn3WNqeUaMfnhC4wRO6C8=
P:musl
V:1.2.5-r0
A:x86_64
S:411323
I:662528
T:the musl c library (libc) implementation
U:https://musl.libc.org/
L:MIT
o:musl
m:Natanael Copa <ncopa@alpinelinux.org>
t:1712131200
c:3f0d3a4d3a2c1c0b0b7a3b1e1b3a1c0c0b7a3b1e
p:so:libc.musl-x86_64.so.1=1
F:lib
R:ld-musl-x86_64.so.1
a:0:0:755
Z:Q1/AU0g7MU7S1z8vbPf1ixUVQSQ5s=
R:libc.musl-x86_64.so.1
a:0:0:777
Z:Q17yJ3JFNypA4mxhJJr0ou6CzsJVI=

C:Q1v2d9k2Kx1bZ3bP2kX8g0Zq6bqkY=
P:busybox
V:1.36.1-r29
A:x86_64
S:508862
I:955000
T:Size optimized toolbox of many common UNIX utilities
U:https://busybox.net/
L:GPL-2.0-only
o:busybox
m:Sören Tempel <soeren+alpine@soeren-tempel.net>
t:1716400000
c:1e2e3a4d3a2c1c0b0b7a3b1e1b3a1c0c0b7a3b1e
D:so:libc.musl-x86_64.so.1
F:bin
R:busybox
a:0:0:755
Z:Q1Vb2m3LtNcNy2q3EjIH1L0VXwdSY=

C:Q1a0bXnmcFkw1ZRfH1yXqBg8P1z0E=
P:openrc
V:0.54-r1
A:x86_64
T:OpenRC manages the services, startup and shutdown of a host
D:ifupdown-any so:libc.musl-x86_64.so.1
F:sbin
R:openrc
a:0:0:755

`;
