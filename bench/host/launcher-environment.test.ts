import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describeEnvironment, LAUNCHER_SCRIPT, LauncherAllocatorSettingsNotFound, launcherAllocatorEnvironment } from './launcher-environment';

const REPO_DIR = path.resolve(__dirname, '..', '..');

describe('launcherAllocatorEnvironment', () => {
  let repo: string;

  beforeEach(async () => {
    repo = await mkdtemp(path.join(os.tmpdir(), 'launcher-environment-'));
    await mkdir(path.join(repo, 'launcher'));
  });

  afterEach(async () => {
    await rm(repo, { recursive: true, force: true });
  });

  async function launcher(text: string): Promise<string> {
    const file = path.join(repo, LAUNCHER_SCRIPT);
    await writeFile(file, text);
    return file;
  }

  it('finds both allocator settings the checkout\'s launcher hands the host, with their defaults', () => {
    expect(launcherAllocatorEnvironment(REPO_DIR)).toEqual({ MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_THRESHOLD_: '32768' });
  });

  it('reads only the line that starts the host, followed across a backslash', async () => {
    await launcher([
      '#!/bin/sh',
      '# MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} "$host_bin" run, in a comment, is not the start',
      'MALLOC_PERTURB_=${MALLOC_PERTURB_:-7} "$pm" add "$package"',
      'supervise() {',
      '\tMALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-65536} \\',
      '\t\tMALLOC_TOP_PAD_=${MALLOC_TOP_PAD_:-0} "$host_bin" run --state-dir "$state_dir" &',
      '}',
      '',
    ].join('\n'));
    expect(launcherAllocatorEnvironment(repo)).toEqual({ MALLOC_TRIM_THRESHOLD_: '65536', MALLOC_TOP_PAD_: '0' });
  });

  it('refuses, naming the file, when the line that starts the host sets no allocator default', async () => {
    const file = await launcher('#!/bin/sh\nMALLOC_TRIM_THRESHOLD_=131072 "$host_bin" run --state-dir "$state_dir" &\n');
    expect(() => launcherAllocatorEnvironment(repo)).toThrow(LauncherAllocatorSettingsNotFound);
    expect(() => launcherAllocatorEnvironment(repo)).toThrow(file);
  });

  it('refuses, naming the file, when no line starts the host', async () => {
    const file = await launcher('#!/bin/sh\nMALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-131072} exec "$HOST" &\n');
    expect(() => launcherAllocatorEnvironment(repo)).toThrow(LauncherAllocatorSettingsNotFound);
    expect(() => launcherAllocatorEnvironment(repo)).toThrow(file);
  });
});

describe('describeEnvironment', () => {
  it('writes the settings as the shell would read them, in order', () => {
    expect(describeEnvironment({ MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_THRESHOLD_: '32768' })).toBe('MALLOC_TRIM_THRESHOLD_=131072 MALLOC_MMAP_THRESHOLD_=32768');
  });
});
