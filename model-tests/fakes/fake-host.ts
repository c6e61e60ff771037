import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fromPromise } from 'xstate';
import type { EnrolInput, LifecycleIdentity, ReleaseInput } from '../../machines/lifecycle.machine';

/** What the fake host reports to whoever runs its lifecycle, as the real link and store will. */
export type FakeHostEvent = { type: 'link.lost' } | { type: 'link.restored' } | { type: 'declaration.final' };


/**
 * A fake of the node host and the controller behind it, for the lifecycle's model tests until
 * the real host's enrolment and release exist. It is a fake, not a mock: it has real,
 * observable state in a temporary root (the installed launcher, `var/lib/mesh-host/state.json`
 * holding the identity) and records what it was asked. Its enrol and release actors wait
 * until a test decides how they end (`acceptEnrolment`, `refuseEnrolment`, `completeRelease`,
 * `failRelease`), and honour the AbortSignal they are given, as the real ones must.
 */
export class FakeHost {
  /** Everything asked of the fake, in order: `install`, `enrol <token>`, `release <node>`, … */
  readonly asked: string[] = [];
  /** True while the fake broker link is up. */
  linked = false;
  /** Release attempts since the last final declaration was delivered. */
  releaseAttempts = 0;
  /** The actors to provide to the lifecycle machine. */
  readonly logic = {
    enrol: fromPromise<LifecycleIdentity, EnrolInput>(({ input, signal }) => this.startEnrolment(input, signal)),
    release: fromPromise<void, ReleaseInput>(({ input, signal }) => this.startRelease(input, signal)),
  };

  private readonly enrolment = new PendingWork<LifecycleIdentity, EnrolInput>('enrolment', this.asked);
  private readonly release = new PendingWork<void, ReleaseInput>('release', this.asked);
  private readonly listeners: Array<(event: FakeHostEvent) => void> = [];

  private constructor(
    /** The fake machine's filesystem root, a fresh temporary directory. */
    readonly root: string,
  ) {}

  /** A fake host on an unmanaged machine: an empty temporary root. */
  static async create(): Promise<FakeHost> {
    return new FakeHost(await mkdtemp(join(tmpdir(), 'fake-host-')));
  }

  /** The host's state directory inside the fake root. */
  get stateDir(): string {
    return join(this.root, 'var', 'lib', 'mesh-host');
  }

  /** Where the package puts the launcher inside the fake root. */
  get launcher(): string {
    return join(this.root, 'usr', 'lib', 'nox-mesh-host', 'launch');
  }

  /** Calls `listener` with every link change and final declaration. */
  onEvent(listener: (event: FakeHostEvent) => void): void {
    this.listeners.push(listener);
  }

  /** What the package manager does: puts the launcher in place and makes the state directory. */
  async install(): Promise<void> {
    this.asked.push('install');
    await mkdir(dirname(this.launcher), { recursive: true });
    await writeFile(this.launcher, '#!/bin/sh\nexec nox-mesh-host run\n', { mode: 0o755 });
    await mkdir(this.stateDir, { recursive: true });
  }

  /** True when the launcher is installed. */
  async isInstalled(): Promise<boolean> {
    return exists(this.launcher);
  }

  /** The identity in the fake store, or null when there is none. */
  async readIdentity(): Promise<LifecycleIdentity | null> {
    try {
      const store = JSON.parse(await readFile(join(this.stateDir, 'state.json'), 'utf8')) as { identity?: { node: string } | null };
      return store.identity ?? null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /** The enrolment waiting for an answer, or null. */
  pendingEnrolment(): EnrolInput | null {
    return this.enrolment.input;
  }

  /** The release under way, or null. */
  pendingRelease(): ReleaseInput | null {
    return this.release.input;
  }

  /** The controller accepts the token: the identity is written to the store and the link comes up. */
  async acceptEnrolment(identity: LifecycleIdentity): Promise<void> {
    const pending = this.enrolment.take();
    await this.writeIdentity(identity);
    this.linked = true;
    pending.resolve(identity);
  }

  /** The enrolment fails with `error` (token expired, fingerprint mismatch, …); nothing is written. */
  refuseEnrolment(error: unknown): void {
    this.enrolment.take().reject(error);
  }

  /** The fake controller pushes a final declaration over the link. */
  deliverFinal(): void {
    if (!this.linked) throw new Error('fake host: a final declaration arrives only over the link, and the link is down');
    this.asked.push('final declaration');
    this.releaseAttempts = 0;
    this.emit({ type: 'declaration.final' });
  }

  /** The release finishes: the identity is dropped from the store and the link closes. */
  async completeRelease(): Promise<void> {
    const pending = this.release.take();
    await this.writeIdentity(null);
    this.linked = false;
    pending.resolve();
  }

  /** The release fails with `error`; the identity stays. */
  failRelease(error: unknown): void {
    this.release.take().reject(error);
  }

  /** The broker goes away. */
  dropLink(): void {
    if (!this.linked) throw new Error('fake host: the link is already down');
    this.linked = false;
    this.emit({ type: 'link.lost' });
  }

  /** The broker is reachable again. */
  restoreLink(): void {
    if (this.linked) throw new Error('fake host: the link is already up');
    this.linked = true;
    this.emit({ type: 'link.restored' });
  }

  /** Removes the fake root. */
  async dispose(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }

  private startEnrolment(input: EnrolInput, signal: AbortSignal): Promise<LifecycleIdentity> {
    this.asked.push(`enrol ${input.token}`);
    return this.enrolment.start(input, signal);
  }

  private startRelease(input: ReleaseInput, signal: AbortSignal): Promise<void> {
    this.asked.push(`release ${input.node}`);
    this.releaseAttempts += 1;
    return this.release.start(input, signal);
  }

  private async writeIdentity(identity: LifecycleIdentity | null): Promise<void> {
    await mkdir(this.stateDir, { recursive: true });
    await writeFile(join(this.stateDir, 'state.json'), `${JSON.stringify({ identity }, null, 2)}\n`);
  }

  private emit(event: FakeHostEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}

// One piece of work a test ends by hand; leaving the state that asked for it aborts it.
class PendingWork<TResult, TInput> {
  private current: { input: TInput; resolve(result: TResult): void; reject(error: unknown): void } | null = null;

  constructor(
    private readonly kind: string,
    private readonly asked: string[],
  ) {}

  get input(): TInput | null {
    return this.current?.input ?? null;
  }

  start(input: TInput, signal: AbortSignal): Promise<TResult> {
    if (this.current !== null) return Promise.reject(new Error(`fake host: asked for a second ${this.kind} while one is under way`));
    return new Promise<TResult>((resolve, reject) => {
      const work = { input, resolve, reject };
      this.current = work;
      signal.addEventListener('abort', () => {
        if (this.current !== work) return;
        this.current = null;
        this.asked.push(`${this.kind} cancelled`);
        reject(signal.reason);
      });
    });
  }

  take(): { resolve(result: TResult): void; reject(error: unknown): void } {
    const work = this.current;
    if (work === null) throw new Error(`fake host: no ${this.kind} is under way`);
    this.current = null;
    return work;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
