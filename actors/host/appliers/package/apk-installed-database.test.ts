import { parseApkInstalled } from './apk-installed-database';

// Two blocks as apk writes them on Alpine (trimmed of most file entries).
const INSTALLED = `C:Q1/WBl2VJ3y1ePPYhFoyzs6O0Pglk=
P:musl
V:1.2.4-r2
A:x86_64
S:383152
I:622592
T:the musl c library (libc) implementation
U:https://musl.libc.org/
L:MIT
o:musl
m:Timo Teräs <timo.teras@iki.fi>
t:1696012167
c:7cc4dc6d4c9bb0a44e3c21bd4a9bc7ba0e8ab9d2
F:lib
R:ld-musl-x86_64.so.1
a:0:0:755
Z:Q1B+vvCJBpaHm7Bba4WAO0Q2dKAh8=

C:Q1Ysc3jyFXAnVWcEWqVXPqvX8x0hE=
P:busybox
V:1.36.1-r5
A:x86_64
S:507831
I:962560
T:Size optimized toolbox of many common UNIX utilities
U:https://busybox.net/
L:GPL-2.0-only
D:so:libc.musl-x86_64.so.1
p:cmd:busybox=1.36.1-r5
F:bin
R:busybox

`;

describe('parseApkInstalled', () => {
  test('reads each package\'s name and version from apk\'s installed database', () => {
    expect(parseApkInstalled(INSTALLED)).toEqual(
      new Map([
        ['musl', '1.2.4-r2'],
        ['busybox', '1.36.1-r5'],
      ]),
    );
  });

  test('an empty database holds nothing, and a block without a version is not counted', () => {
    expect(parseApkInstalled('').size).toBe(0);
    expect(parseApkInstalled('P:half-written\nA:x86_64\n').size).toBe(0);
  });

  test('does not take a provides line (p:) for the name', () => {
    expect([...parseApkInstalled('P:busybox\np:cmd:sh=1\nV:1.36.1-r5\n').keys()]).toEqual(['busybox']);
  });
});
