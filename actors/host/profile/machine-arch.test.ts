import { machineArch } from './machine-arch';

describe('the machine architecture', () => {
  test.each([
    ['x64', 'x86_64'],
    ['arm64', 'aarch64'],
    ['arm', 'armv7l'],
    ['ia32', 'i686'],
    ['ppc64', 'ppc64le'],
    ['riscv64', 'riscv64'],
    ['loong64', 'loongarch64'],
  ])('names Node\'s %s as the kernel does: %s', (node, kernel) => {
    expect(machineArch(node)).toBe(kernel);
  });

  test('passes on a name it does not know in a form the profile accepts', () => {
    expect(machineArch('Wasm-32')).toBe('wasm_32');
    expect(machineArch('')).toBe('unknown');
  });
});
