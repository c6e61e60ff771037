import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clockTicksPerSecond, cpuSeconds, residentMb, treeCpuSeconds } from './proc-stat';

// A /proc tree written here: what a process is given in a while depends on the machine's load,
// which a unit test cannot know, so the readings are checked against values set, not measured.

let proc: string;
beforeEach(async () => { proc = await fs.mkdtemp(path.join(os.tmpdir(), 'proc-')); });
afterEach(async () => { await fs.rm(proc, { recursive: true, force: true }); });

/** Writes /proc/<pid>/stat with parent `ppid` and utime, stime, cutime, cstime in ticks. */
async function processStat(pid: number, ppid: number, ticks: [number, number, number, number], name = 'node'): Promise<void> {
  const after = Array.from({ length: 50 }, (_, index) => String(index + 4));
  after[0] = String(ppid);
  ticks.forEach((value, index) => { after[10 + index] = String(value); });
  await fs.mkdir(path.join(proc, String(pid)), { recursive: true });
  await fs.writeFile(path.join(proc, String(pid), 'stat'), `${pid} (${name}) S ${after.join(' ')}\n`);
}

const seconds = (ticks: number) => ticks / clockTicksPerSecond();

describe('proc-stat', () => {
  test('reads resident memory from VmRSS, in MB', async () => {
    await fs.mkdir(path.join(proc, '10'));
    await fs.writeFile(path.join(proc, '10', 'status'), 'Name:\tnode\nVmRSS:\t   51200 kB\nThreads:\t7\n');
    expect(residentMb(10, proc)).toBe(50);
  });

  test('says the process has ended when there is no such pid, or no VmRSS line', async () => {
    expect(() => residentMb(11, proc)).toThrow();
    await fs.mkdir(path.join(proc, '12'));
    await fs.writeFile(path.join(proc, '12', 'status'), 'Name:\tzombie\n');
    expect(() => residentMb(12, proc)).toThrow(/has ended/);
  });

  test('reads a process\'s own CPU time past a name with spaces and brackets, leaving out its children\'s', async () => {
    await processStat(10, 1, [30, 20, 500, 500], 'a (b) c');
    expect(cpuSeconds(10, proc)).toBeCloseTo(seconds(50), 9);
  });
});

describe('treeCpuSeconds', () => {
  test('counts the living children with their parent, and not another process', async () => {
    await processStat(10, 1, [30, 20, 0, 0]);
    await processStat(11, 10, [100, 0, 0, 0]);
    await processStat(12, 10, [0, 7, 0, 0]);
    await processStat(13, 1, [999, 999, 0, 0]);
    expect(treeCpuSeconds(10, proc)).toBeCloseTo(seconds(50 + 100 + 7), 9);
  });

  test('keeps the time of children that have ended and been waited for', async () => {
    await processStat(10, 1, [30, 20, 400, 100]);
    expect(treeCpuSeconds(10, proc)).toBeCloseTo(seconds(550), 9);
  });
});
