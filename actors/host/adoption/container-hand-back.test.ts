import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState } from '../../../schema/host-state';
import { ContainerResource } from '../../../schema/resource';
import type { ResourceResult } from '../../../schema/report';
import type { Applier, ApplyContext } from '../appliers/applier';
import { containerApplier } from '../appliers/container/container.applier';
import { hostLabels } from '../appliers/container/container-labels';
import { dockerBackend } from '../appliers/container/docker.backend';
import { FakeContainerEngine } from '../appliers/container/testing/fake-container-engine';
import { converge, type ConvergeDeps } from '../reconcile/converge';
import { HostStore } from '../store/host-store';
import { StateHandle } from '../store/state-handle';
import { createAdopter } from './adoption.actor';
import { ORIGINALS_DIR } from './originals-dir';

// Containers the machine had before they were declared, as an operator meets them: declared,
// undeclared, declared again, the node released, and the host killed part way. The real
// reconcile engine, adopter and store over real files; the container engine is the FAKE one
// (no engine runs here).

const web = ContainerResource.parse({ shape: 'container', name: 'web', image: 'nginx:1.27' });

let scratch: string;
let stateDir: string;
let engine: FakeContainerEngine;
let deps: ConvergeDeps;
let applier: Applier;

function host(state: StateHandle, appliers: Applier = applier): ConvergeDeps {
  const ctx: ApplyContext = { root: scratch, stateDir, runner: engine, hostUnit: 'nox-mesh-host.service' };
  return { state, appliers: { container: appliers as Applier<ContainerResource> }, ctx, adopter: createAdopter(), now: () => new Date('2026-12-01T00:00:00Z'), nodeName: () => 'runner' };
}

async function hold(resources: ContainerResource[], given: ConvergeDeps = deps): Promise<Map<string, ResourceResult>> {
  const results = await converge(resources, { removeUndeclared: true }, given);
  return new Map(results.map((result) => [result.key, result]));
}

async function kept(): Promise<string[]> {
  return fs.readdir(path.join(stateDir, ORIGINALS_DIR), { recursive: true }).catch(() => []);
}

const removals = () => engine.calls.filter((argv) => argv[1] === 'rm');

beforeEach(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'container-hand-back-'));
  stateDir = path.join(scratch, 'state');
  engine = new FakeContainerEngine('docker');
  applier = containerApplier(dockerBackend()) as Applier;
  deps = host(new StateHandle(new HostStore(stateDir), emptyHostState()));
});
afterEach(async () => { await fs.rm(scratch, { recursive: true, force: true }); });

describe('handing back a container the machine had', () => {
  test('undeclared, declared again and released: the container found there is never removed, and each time is left as it was found', async () => {
    // A host whose store was lost made it: it carries the host's labels, so adoption takes it.
    const found = engine.createByHand({ name: 'web', image: 'nginx:1.27', restart: 'unless-stopped', labels: hostLabels(web) });
    expect((await hold([web])).get('container:web')).toMatchObject({ outcome: 'unchanged', detail: expect.stringMatching(/^adopted: /) });
    expect(deps.state.current().briefing?.lines).toEqual([expect.objectContaining({ status: 'ok', original_kept_at: expect.any(String) })]);

    const undeclared = await hold([]);
    expect(undeclared.get('container:web')).toMatchObject({ outcome: 'handed_back', detail: expect.stringMatching(/left in place as it was found/) });
    expect(engine.container('web')).toMatchObject({ id: found.id, running: true });
    expect(removals()).toEqual([]);
    expect(deps.state.current().briefing).toBeNull();
    expect(deps.state.current().owned.resources).toEqual([]);
    expect(await kept()).toEqual([]);

    // Declared again: adopted afresh, its original kept again; then the node is released.
    expect((await hold([web])).get('container:web')).toMatchObject({ outcome: 'unchanged', detail: expect.stringMatching(/^adopted: /) });
    expect(await kept()).not.toEqual([]);
    expect((await hold([])).get('container:web')).toMatchObject({ outcome: 'handed_back' });
    expect(engine.container('web')).toMatchObject({ id: found.id, running: true });
    expect(removals()).toEqual([]);
    expect(deps.state.current().briefing).toBeNull();
    expect(await kept()).toEqual([]);
  });

  test("a person's container is never written over, and undeclared it keeps running with no line or record left", async () => {
    const theirs = engine.createByHand({ name: 'web', image: 'nginx:1.27', env: ['TOKEN=by-hand'] });
    expect((await hold([web])).get('container:web')).toMatchObject({ outcome: 'kept' });
    expect(await hold([])).toEqual(new Map());
    expect(engine.container('web')).toMatchObject({ id: theirs.id, running: true });
    expect(removals()).toEqual([]);
    expect(deps.state.current().briefing).toBeNull();
    expect(await kept()).toEqual([]);
  });

  test('once the person removed theirs and the host made its own, undeclaring removes only the host\'s, and says the original is not made again', async () => {
    const theirs = engine.createByHand({ name: 'web', image: 'nginx:1.26' });
    await hold([web]);
    await engine.run(['docker', 'rm', '--force', 'web']);
    expect((await hold([web])).get('container:web')).toMatchObject({ outcome: 'applied' });
    const made = engine.container('web');
    expect(made?.id).not.toBe(theirs.id);

    const undeclared = (await hold([])).get('container:web');
    expect(undeclared).toMatchObject({ outcome: 'removed' });
    expect(undeclared?.detail).toContain(`the machine's original (id ${theirs.id.slice(0, 12)})`);
    expect(engine.container('web')).toBeUndefined();
    // The record is the only account left of what the machine had: it stays, and the line says where.
    const [line] = deps.state.current().briefing?.lines ?? [];
    expect(line?.detail).toBe(undeclared?.detail);
    const record = path.join(line?.original_kept_at ?? '', 'container-web.json');
    expect(JSON.parse(await fs.readFile(record, 'utf8'))).toMatchObject({ Id: theirs.id });
  });

  test('a host killed while handing it back leaves it to the next host, which leaves the container as it was found', async () => {
    const found = engine.createByHand({ name: 'web', image: 'nginx:1.27', restart: 'unless-stopped', labels: hostLabels(web) });
    await hold([web]);
    // The first host stops for good inside the hand-back, after the store marked the key.
    let asked!: () => void;
    const reached = new Promise<void>((resolve) => { asked = resolve; });
    const stuck: Applier = { ...applier, handBack: () => { asked(); return new Promise(() => undefined); } };
    void hold([], host(deps.state, stuck));
    await reached;

    const store = new HostStore(stateDir);
    const { state } = await store.load();
    expect({ owned: state.owned.resources, applying: state.applying }).toEqual({ owned: [], applying: ['container:web'] });
    const next = host(new StateHandle(store, state));
    expect((await hold([], next)).get('container:web')).toMatchObject({ outcome: 'handed_back' });
    expect(engine.container('web')).toMatchObject({ id: found.id, running: true });
    expect(removals()).toEqual([]);
    expect(next.state.current()).toMatchObject({ briefing: null, applying: [], owned: { resources: [] } });
    expect(await kept()).toEqual([]);
  });
});
