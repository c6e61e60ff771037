import { mkdirSync } from 'node:fs';
import path from 'node:path';
import * as fs from '../../shared/fs/promised-fs';
import { HostState, emptyHostState } from '../../../schema/host-state';
import { OwnedResource } from '../../../schema/owned';
import { parseContract } from '../../../schema/parse';
import { Resource } from '../../../schema/resource';
import { vouchParsed } from '../../../schema/vouched';
import { ORIGINALS_DIR } from '../adoption/originals-dir';
import { launchFilesOf } from '../launch-state/launch-files';
import { writeFileAtomic } from '../../shared/fs/atomic-write';
import { utcTimestamp } from '../../shared/time/utc-timestamp';
import { CONTENT_DIR, ContentStore, StoredContentUnreadable } from './content-store';
import { commitStagedSync, discardStagedSync, stageFilesSync, type StagedFiles } from './replace-files-sync';
import { StateChecker } from './state-checker';
import { StoreCorrupt, StoreEvidenceWithoutState } from './store-errors';

import { LAST_GOOD_FILE, STATE_FILE } from './store-files';

export { LAST_GOOD_FILE, STATE_FILE } from './store-files';

/** Where a loaded state came from, and anything a person should hear about it. */
export interface LoadedState {
  state: HostState;
  /** `fresh`: no store yet (a new host). `last-good`: state.json was unreadable and the copy was used. */
  source: 'state' | 'last-good' | 'fresh';
  /** Why state.json was not used, when it was not; also where the unreadable file was kept. */
  problem?: string;
  /** What opening the store tidied (temporaries of killed saves, old damaged copies), when anything. */
  swept?: string;
}

/** How a store is opened. */
export interface LoadOptions {
  /**
   * Repair what is found: put state.json back from the last-good copy (the damaged one moved
   * aside), and sweep what killed saves left. Only a process holding the store lock may: a
   * reader without it (`owned`, `briefing`) changes nothing.
   */
  repair?: boolean;
  /**
   * Start from an empty store when both store files are gone, even where the state directory
   * shows the host has been used (StoreEvidenceWithoutState otherwise): for `enrol`, which is
   * how a lost store is rebuilt (re-enrolled as the same node, the mesh hands back what the
   * node owned). `problem` says what was found.
   */
  rebuild?: boolean;
}

/** How a state is saved. */
export interface SaveOptions {
  /**
   * What must be durable before the state that records it is (the directories an apply renamed
   * files into: DirectorySyncBarrier.flush). The new state is written and synced meanwhile, and
   * renamed into place only once this has settled; when it rejects, nothing is renamed and the
   * save rejects with its error. Its syncs and the state's then run side by side, and a
   * journalling file system commits them together, where one after the other each waited for
   * a commit of its own. Give it already caught (see StateHandle.update): it may settle before
   * the save begins.
   */
  after?: Promise<void>;
}

/** How many damaged copies of state.json are kept for a person to look at; older ones are swept. */
export const DAMAGED_COPIES_KEPT = 3;

const DAMAGED = /^state\.json\.damaged-/;
// The temporaries replaceFilesSync and writeFileAtomic make: `.<name>.<pid>.<random>.tmp`.
const TEMPORARY = /^\..+\.\d+\.[0-9a-z]*\.tmp$/;

/**
 * The host's store, `<state-dir>/state.json`: identity, pins, the last declaration, what the
 * host owns, the known-good version. Locally authoritative: the host operates from it and needs
 * nothing else.
 *
 * Every save writes the whole state to `state.json` and the same bytes to
 * `state.last-good.json`, each atomically, so damage to one file from outside the host (a disk,
 * an editor) leaves the other: both are written, state.json is fsynced, then both are renamed
 * into place (state.json first), then the directory is fsynced. A crash before the directory
 * fsync may leave either file one save behind, both valid, and that save had not returned, so
 * nothing was done on it. The copy's data is not fsynced: it guards against damage from outside,
 * not against a crash (state.json does that), so a power cut may leave the copy short while
 * state.json is whole; the host's next open (`repair`) finds the copy differing from state.json
 * and writes it again, durably. One fsync fewer on every save (two saves a declaration).
 * Large values (a hand-applied file's content, the last declaration's envelope) are kept once
 * in `<state-dir>/content/` and referred to by digest (see ContentStore), so a save costs the
 * same however large the contents the host holds.
 */
export class HostStore {
  private readonly checker = new StateChecker();
  private readonly content: ContentStore;
  /** Whether this store has made its directory; a directory removed under it is made again. */
  private dirMade = false;

  constructor(readonly stateDir: string) {
    this.content = new ContentStore(stateDir);
  }

  get file(): string {
    return path.join(this.stateDir, STATE_FILE);
  }

  get lastGoodFile(): string {
    return path.join(this.stateDir, LAST_GOOD_FILE);
  }

  /**
   * Reads the store. A missing store is a fresh host, unless the state directory shows the host
   * has been used (StoreEvidenceWithoutState): starting empty then would take the host's own
   * files for the machine's. An unreadable state.json falls back to the last-good copy
   * (`problem` says so; with `repair`, the damaged file is moved aside and state.json put back).
   * When neither can be read this throws StoreCorrupt: starting empty would orphan everything
   * the host owns.
   */
  async load(options: LoadOptions = {}): Promise<LoadedState> {
    const loaded = await this.loadState(options);
    // The process that repairs is the one that saves: its first save need not parse again the
    // long lists the load has just parsed (see schema/vouched.ts).
    if (options.repair) {
      vouchParsed(Resource, loaded.state.local_resources);
      vouchParsed(OwnedResource, loaded.state.owned.resources);
    }
    return loaded;
  }

  private async loadState(options: LoadOptions): Promise<LoadedState> {
    const main = await this.readState(this.file);
    const copy = main.kind === 'ok' && !options.repair ? undefined : await this.readState(this.lastGoodFile);
    if (main.kind === 'ok') {
      this.content.loaded(main.json);
      // The copy is written without a sync of its own (see the class): one a power cut left short
      // or stale is written again from state.json, durably, before anything relies on it.
      // Mending it is a courtesy: a copy that cannot be replaced (a directory in its place) is
      // left for the next save to meet, as before.
      if (options.repair && (copy?.kind !== 'ok' || copy.text !== main.text)) await writeFileAtomic(this.lastGoodFile, main.text).catch(() => undefined);
      return { state: main.state, source: 'state', ...(await this.swept(options, [main.json, copy?.kind === 'ok' ? copy.json : undefined])) };
    }
    if (copy === undefined) throw new Error('unreachable: the copy is read whenever state.json is not used');
    if (main.kind === 'missing' && copy.kind === 'missing') {
      const evidence = await this.evidenceOfUse();
      if (evidence.length > 0 && !options.rebuild) throw this.evidenceWithoutState(evidence);
      if (evidence.length > 0) {
        return { state: emptyHostState(), source: 'fresh', problem: `the host store is missing (${this.file} and ${this.lastGoodFile} are both gone), though this host has been used here before: enrolling rebuilds it` };
      }
      return { state: emptyHostState(), source: 'fresh' };
    }
    if (copy.kind === 'ok') {
      const why = main.kind === 'missing' ? `${this.file} is missing` : `${this.file} is unreadable: ${main.reason}`;
      let after = ' (state.json is left as it is until the host next opens the store)';
      if (options.repair) {
        const kept = main.kind === 'missing' ? undefined : await this.moveDamagedAside();
        await writeFileAtomic(this.file, copy.text);
        after = kept === undefined ? '' : ` (the damaged file is kept at ${kept})`;
      }
      this.content.loaded(copy.json);
      return { state: copy.state, source: 'last-good', problem: `${why}; recovered from ${this.lastGoodFile}${after}`, ...(await this.swept(options, [copy.json])) };
    }
    const mainWhy = main.kind === 'missing' ? 'is missing' : `is unreadable: ${main.reason}`;
    const copyWhy = copy.kind === 'missing' ? 'is missing' : `is unreadable: ${copy.reason}`;
    throw new StoreCorrupt(`the host store cannot be read: ${this.file} ${mainWhy}, and ${this.lastGoodFile} ${copyWhy}`, {
      next:
        `restore ${STATE_FILE} from a backup into ${this.stateDir}; or, to start this machine over, move the ` +
        `directory aside and re-enrol (nox-mesh-host enrol --token …): the mesh hands back what this node owned`,
      exitCode: 4,
    });
  }

  /**
   * Writes the whole state and its last-good copy durably; refuses (ContractViolation) a state
   * that breaks the contract, leaving both files as they were. The writes are synchronous (see
   * replaceFilesSync): the promise is for callers that queue behind a save, and for `after`.
   */
  async save(state: HostState, options: SaveOptions = {}): Promise<void> {
    if (!this.dirMade) this.makeDir();
    const stored = this.referring(state);
    const bytes = Buffer.from(this.checker.serialize(stored), 'utf8');
    const files = [{ name: STATE_FILE, data: bytes }, { name: LAST_GOOD_FILE, data: bytes, sync: false }];
    let staged: StagedFiles;
    try {
      staged = stageFilesSync(this.stateDir, files);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.makeDir();
      staged = stageFilesSync(this.stateDir, files);
    }
    if (options.after !== undefined) {
      try {
        await options.after;
      } catch (error) {
        discardStagedSync(staged);
        throw error;
      }
    }
    commitStagedSync(staged);
    this.content.saved();
  }

  private referring(state: HostState): ReturnType<ContentStore['refer']> {
    try {
      return this.content.refer(state);
    } catch (error) {
      // The state directory removed under a running store: made again, as for the state files.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.makeDir();
      return this.content.refer(state);
    }
  }

  private makeDir(): void {
    mkdirSync(this.stateDir, { recursive: true, mode: 0o700 });
    this.dirMade = true;
  }

  /**
   * Moves the unreadable state.json aside, whatever it is (a file, a directory): a rename,
   * which needs neither to read it nor to be able to.
   */
  private async moveDamagedAside(): Promise<string> {
    const stamp = utcTimestamp(Date.now()).replace(/[:.]/g, '-');
    for (let attempt = 0; ; attempt += 1) {
      const kept = path.join(this.stateDir, `${STATE_FILE}.damaged-${stamp}${attempt === 0 ? '' : `-${attempt}`}`);
      try {
        await fs.access(kept);
      } catch {
        await fs.rename(this.file, kept);
        return kept;
      }
    }
  }

  /** What in the state directory says this host has run and applied here before. */
  private async evidenceOfUse(): Promise<string[]> {
    const found: string[] = [];
    const originals = path.join(this.stateDir, ORIGINALS_DIR);
    if ((await listOrNone(originals)).length > 0) found.push(`${originals} holds originals the host kept when it adopted files`);
    const knownGood = launchFilesOf(this.stateDir).knownGood;
    if (await exists(knownGood)) found.push(`${knownGood} records a version that completed a reconcile`);
    const content = path.join(this.stateDir, CONTENT_DIR);
    if ((await listOrNone(content)).length > 0) found.push(`${content} holds contents of applied resources`);
    const damaged = (await listOrNone(this.stateDir)).filter((name) => DAMAGED.test(name));
    if (damaged.length > 0) found.push(`${path.join(this.stateDir, damaged[0] as string)} is a damaged store kept earlier`);
    return found;
  }

  private evidenceWithoutState(evidence: readonly string[]): StoreEvidenceWithoutState {
    return new StoreEvidenceWithoutState(
      `the host store is missing (${this.file} and ${this.lastGoodFile} are both gone), but this host has been used here before: ${evidence.join('; ')}`,
      {
        value: this.stateDir,
        next:
          `restore ${STATE_FILE} from a backup into ${this.stateDir}; or re-enrol this machine as the node it was ` +
          '(mesh-control token issue --node NAME, then nox-mesh-host enrol --token …): the mesh hands back what the node owned; ' +
          `or, to start over and let the host take what it finds ` +
          `as the machine's own (adopting it), move the directory aside first: mv ${this.stateDir} ${this.stateDir}.old`,
        exitCode: 4,
      },
    );
  }

  /**
   * With `repair`: removes the temporaries of saves a killed host left, the damaged copies
   * beyond the newest DAMAGED_COPIES_KEPT, and contents no state file refers to.
   */
  private async swept(options: LoadOptions, states: readonly unknown[]): Promise<{ swept?: string }> {
    if (!options.repair) return {};
    const names = await listOrNone(this.stateDir);
    const temporaries = names.filter((name) => TEMPORARY.test(name));
    const damaged = names.filter((name) => DAMAGED.test(name)).sort().reverse().slice(DAMAGED_COPIES_KEPT);
    for (const name of [...temporaries, ...damaged]) await fs.rm(path.join(this.stateDir, name), { force: true, recursive: true });
    const contentTemporaries = (await listOrNone(this.content.dir)).filter((name) => TEMPORARY.test(name));
    const contents = this.content.sweep(states.filter((state) => state !== undefined));
    const parts = [
      temporaries.length + contentTemporaries.length > 0 ? `${temporaries.length + contentTemporaries.length} temporaries of interrupted saves` : '',
      damaged.length > 0 ? `${damaged.length} damaged copies of state.json older than the newest ${DAMAGED_COPIES_KEPT}` : '',
      contents - contentTemporaries.length > 0 ? `${contents - contentTemporaries.length} stored contents nothing refers to` : '',
    ].filter((part) => part !== '');
    return parts.length === 0 ? {} : { swept: `removed ${parts.join(', ')} from ${this.stateDir}` };
  }

  private async readState(file: string): Promise<ReadResult> {
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
      return { kind: 'bad', reason: (error as Error).message };
    }
    if (text.trim() === '') return { kind: 'bad', reason: 'it is empty (truncated)' };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      return { kind: 'bad', reason: `it is not complete JSON (${(error as Error).message}); it may be truncated` };
    }
    try {
      return { kind: 'ok', state: parseContract(HostState, this.content.resolve(json), 'host state'), json, text };
    } catch (error) {
      if (error instanceof StoredContentUnreadable) return { kind: 'bad', reason: error.message };
      return { kind: 'bad', reason: (error as Error).message };
    }
  }
}

type ReadResult = { kind: 'ok'; state: HostState; json: unknown; text: string } | { kind: 'missing' } | { kind: 'bad'; reason: string };

async function listOrNone(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch {
    return [];
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}
