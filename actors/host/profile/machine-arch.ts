// Node names architectures after its own build targets; the mesh speaks the kernel's words
// (`uname -m`), which are what package repositories and container images are published under.
const KERNEL_WORDS: Readonly<Record<string, string>> = {
  x64: 'x86_64',
  ia32: 'i686',
  arm64: 'aarch64',
  arm: 'armv7l',
  // Node runs on Linux only as little-endian POWER.
  ppc64: 'ppc64le',
  loong64: 'loongarch64',
  riscv64: 'riscv64',
  s390x: 's390x',
  mips: 'mips',
  mipsel: 'mipsel',
};

/**
 * The machine architecture as the kernel names it, from Node's `process.arch`: `x64` →
 * `x86_64`, `arm64` → `aarch64`, and so on. A name Node adds later is passed on lowercased, with
 * anything but letters, digits and `_` replaced, so the profile stays valid and says something.
 */
export function machineArch(nodeArch: string): string {
  const known = KERNEL_WORDS[nodeArch];
  if (known !== undefined) return known;
  const cleaned = nodeArch.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 32);
  return cleaned === '' ? 'unknown' : cleaned;
}
