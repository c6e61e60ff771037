import { cpuSeconds, residentMb, treeCpuSeconds } from './proc-stat';

describe('proc-stat', () => {
  test('reads this process\'s resident memory and a CPU time that grows with work', () => {
    expect(residentMb(process.pid)).toBeGreaterThan(10);
    const before = cpuSeconds(process.pid);
    const until = Date.now() + 60;
    let spin = 0;
    while (Date.now() < until) spin += 1;
    expect(spin).toBeGreaterThan(0);
    expect(cpuSeconds(process.pid)).toBeGreaterThan(before);
  });

  test('says the process has ended when there is no such pid', () => {
    expect(() => residentMb(2 ** 22 + 1)).toThrow();
  });
});

describe('treeCpuSeconds', () => {
  test('counts a busy child with its parent', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 400; while (Date.now() < end);']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const withChild = treeCpuSeconds(process.pid);
    const alone = cpuSeconds(process.pid);
    await new Promise((resolve) => child.once('close', resolve));
    expect(withChild - alone).toBeGreaterThan(0.05);
  });

  test('keeps the time of a child that has ended and been waited for: the sum never goes down', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 400; while (Date.now() < end);']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const whileRunning = treeCpuSeconds(process.pid);
    await new Promise((resolve) => child.once('close', resolve));
    const afterEnd = treeCpuSeconds(process.pid);
    expect(afterEnd).toBeGreaterThanOrEqual(whileRunning);
    expect(afterEnd - cpuSeconds(process.pid)).toBeGreaterThan(0.05);
  });
});
