import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SeatCommand, SeatsCommand } from './seat.command';
import { runCommand } from './testing/run-command';

// What `seat` refuses before it asks the controller anything (the mesh directory here is
// empty, so reaching the controller would fail differently), and what its help shows.

describe('seat and seats on the command line, before the controller is asked', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'seat-command-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('a seat name that is not a label is refused, saying what a name is and where the names are', async () => {
    const result = await runCommand(SeatCommand, ['seat', 'DNS Resolver', '--add', 'alpha', '--dir', dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: seat name: expected a seat name: lowercase letters, digits and "-"/);
    expect(result.stderr).toMatch(/\nnext: {2}list the seats with mesh-control seats\n$/);
  });

  test('--replicated with --single is refused as usage, under --json as one named error', async () => {
    const result = await runCommand(SeatCommand, ['seat', 'build-cache', '--replicated', '--single', '--dir', dir, '--json']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout).error).toMatchObject({ condition: 'SeatChangeUnclear', value: 'build-cache', next: expect.stringContaining('mesh-control seat build-cache --add NODE') });
    const nothing = await runCommand(SeatCommand, ['seat', 'build-cache', '--dir', dir]);
    expect([nothing.code, nothing.stderr]).toEqual([2, expect.stringMatching(/^error: seat was given no change; nothing was changed: "build-cache"\nnext: {2}say one change: /)]);
  });

  test('a node name that cannot be a node is refused before anything is asked', async () => {
    const result = await runCommand(SeatCommand, ['seat', 'mesh-dns-resolver', '--remove', 'Alpha_1', '--dir', dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/next: {2}list the seats and their holders with mesh-control seats\n$/);
  });

  test('help shows an example of each and says why replication is the operator\'s word', async () => {
    const seat = await runCommand(SeatCommand, ['seat', '--help']);
    expect(seat.stdout).toContain('mesh-control seat mesh-dns-resolver --add alpha');
    expect(seat.stdout).toContain("the operator's word");
    expect((await runCommand(SeatsCommand, ['seats', '--help'])).stdout).toContain('mesh-control seats --json');
  });
});
