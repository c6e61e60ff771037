import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Resource } from '../../../schema/resource';
import { ProcessRunner } from '../../shared/process/command-runner';
import { createAdopter } from '../adoption/adoption.actor';
import { actionApplier } from '../appliers/action.applier';
import { fileApplier } from '../appliers/file.applier';
import { DEFAULT_SETTINGS, openHost, type HostContext } from '../host-context';
import { reconcilePass } from '../reconcile/reconcile-pass';
import { launchFilesOf } from './launch-files';
import { runningPackageVersion } from './running-package-version';

// The host's half of the launcher's contract, through a real reconcile pass over a temporary
// root: a pass that runs to its end clears the start counter and records the version, even when
// a resource failed (that is the machine's trouble, not the binary's); a pass cut short by
// shutdown leaves both as the launcher wrote them.

let scratch: string;
let host: HostContext;

const openTestHost = (): Promise<HostContext> =>
  openHost(
    { ...DEFAULT_SETTINGS, root: path.join(scratch, 'root'), stateDir: path.join(scratch, 'state') },
    { runner: new ProcessRunner(), appliers: { file: fileApplier, action: actionApplier }, adopter: createAdopter() },
  );

beforeEach(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'completed-reconcile-'));
  await fs.mkdir(path.join(scratch, 'root'));
  host = await openTestHost();
  // The launcher has started the host twice, the second time after rolling back.
  const files = launchFilesOf(host.settings.stateDir);
  await fs.mkdir(files.dir, { recursive: true });
  await fs.writeFile(files.attempts, '2\n');
  await fs.writeFile(files.rolledBack, '0.0.9-1\n');
  await fs.writeFile(files.knownGood, '0.0.9-1\n');
});

afterEach(async () => {
  await host.close();
  await fs.rm(scratch, { recursive: true, force: true });
});

async function passOver(resources: Resource[]) {
  await host.state.update((state) => ({ ...state, local_resources: resources }));
  return reconcilePass(host, ['declaration']);
}

async function launchFiles() {
  const files = launchFilesOf(host.settings.stateDir);
  const read = (file: string) => fs.readFile(file, 'utf8').catch(() => null);
  return { knownGood: await read(files.knownGood), attempts: await read(files.attempts), rolledBack: await read(files.rolledBack) };
}

const motd = Resource.parse({ shape: 'file', path: '/etc/motd', content: { text: 'hello\n' } });
const failing = Resource.parse({ shape: 'action', name: 'fails', argv: ['sh', '-c', 'echo no >&2; exit 1'], timeout_seconds: 10, guard: { creates: '/never' } });

describe('a reconcile pass and the launcher', () => {
  test('a pass with nothing failed writes known-good with the running version and clears the counter and the roll-back marker', async () => {
    const report = await passOver([motd]);

    expect(report.counts).toEqual({ applied: 1 });
    expect(await launchFiles()).toEqual({ knownGood: `${runningPackageVersion()}\n`, attempts: null, rolledBack: null });
  });

  test('a pass with nothing to do completes too: the first pass of a restarted host', async () => {
    await passOver([motd]);
    // The launcher starts the host again, counting the start.
    await host.close();
    await fs.writeFile(launchFilesOf(path.join(scratch, 'state')).attempts, '1\n');
    host = await openTestHost();

    const report = await passOver([motd]);

    expect(report.counts).toEqual({ unchanged: 1 });
    expect((await launchFiles()).attempts).toBeNull();
  });

  test('a pass that completes with a failed resource still proves the binary runs', async () => {
    const report = await passOver([motd, failing]);

    expect(report.counts).toEqual({ applied: 1, failed: 1 });
    expect(await launchFiles()).toEqual({ knownGood: `${runningPackageVersion()}\n`, attempts: null, rolledBack: null });
  });

  test('a pass cut short by shutdown leaves known-good, the counter and the marker as the launcher left them', async () => {
    await host.state.update((state) => ({ ...state, local_resources: [motd] }));
    const stopping = new AbortController();
    stopping.abort();
    await reconcilePass(host, ['declaration'], stopping.signal);

    expect(await launchFiles()).toEqual({ knownGood: '0.0.9-1\n', attempts: '2\n', rolledBack: '0.0.9-1\n' });
  });
});
