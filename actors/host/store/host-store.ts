import { mkdirSync } from 'node:fs';
import path from 'node:path';
import * as fs from '../../shared/fs/promised-fs';
import { HostState, emptyHostState } from '../../../schema/host-state';
import { parseContract } from '../../../schema/parse';
import { writeFileAtomic } from './atomic-write';
import { replaceFilesSync } from './replace-files-sync';
import { StateChecker } from './state-checker';
import { StoreCorrupt } from './store-errors';

import { LAST_GOOD_FILE, STATE_FILE } from './store-files';

export { LAST_GOOD_FILE, STATE_FILE } from './store-files';

/** Where a loaded state came from, and anything a person should hear about it. */
export interface LoadedState {
  state: HostState;
  /** `fresh`: no store yet (a new host). `last-good`: state.json was unreadable and the copy was used. */
  source: 'state' | 'last-good' | 'fresh';
  /** Why state.json was not used, when it was not; also where the unreadable file was kept. */
  problem?: string;
}

/**
 * The host's store, `<state-dir>/state.json`: identity, pins, the last declaration, what the
 * host owns, the known-good version. Locally authoritative: the host operates from it and needs
 * nothing else.
 *
 * Every save writes the whole state to `state.json` and the same bytes to
 * `state.last-good.json`, each atomically, so damage to one file from outside the host (a disk,
 * an editor) leaves the other: both are written and fsynced, then renamed into place (state.json
 * first), then the directory is fsynced. A crash before the directory fsync may leave either
 * file one save behind, both valid, and that save had not returned, so nothing was done on it.
 */
export class HostStore {
  private readonly checker = new StateChecker();
  /** Whether this store has made its directory; a directory removed under it is made again. */
  private dirMade = false;

  constructor(readonly stateDir: string) {}

  get file(): string {
    return path.join(this.stateDir, STATE_FILE);
  }

  get lastGoodFile(): string {
    return path.join(this.stateDir, LAST_GOOD_FILE);
  }

  /**
   * Reads the store. A missing store is a fresh host. An unreadable state.json falls back to the
   * last-good copy (the damaged file is kept beside it, and `problem` says so). When neither can
   * be read this throws StoreCorrupt: starting empty would orphan everything the host owns.
   */
  async load(): Promise<LoadedState> {
    const main = await readState(this.file);
    if (main.kind === 'ok') return { state: main.state, source: 'state' };
    const copy = await readState(this.lastGoodFile);
    if (main.kind === 'missing' && copy.kind === 'missing') return { state: emptyHostState(), source: 'fresh' };
    if (copy.kind === 'ok') {
      const kept = main.kind === 'missing' ? undefined : await this.keepDamaged();
      const why = main.kind === 'missing' ? `${this.file} is missing` : `${this.file} is unreadable: ${main.reason}`;
      await writeFileAtomic(this.file, serialize(copy.state));
      return {
        state: copy.state,
        source: 'last-good',
        problem: `${why}; recovered from ${this.lastGoodFile}${kept ? ` (the damaged file is kept at ${kept})` : ''}`,
      };
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
   * replaceFilesSync): the promise is for callers that queue behind a save.
   */
  async save(state: HostState): Promise<void> {
    const bytes = Buffer.from(this.checker.serialize(state), 'utf8');
    const files = [{ name: STATE_FILE, data: bytes }, { name: LAST_GOOD_FILE, data: bytes }];
    if (!this.dirMade) this.makeDir();
    try {
      replaceFilesSync(this.stateDir, files);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.makeDir();
      replaceFilesSync(this.stateDir, files);
    }
  }

  private makeDir(): void {
    mkdirSync(this.stateDir, { recursive: true, mode: 0o700 });
    this.dirMade = true;
  }

  private async keepDamaged(): Promise<string> {
    const kept = path.join(this.stateDir, `${STATE_FILE}.damaged-${Date.now()}`);
    await fs.copyFile(this.file, kept);
    return kept;
  }
}

function serialize(state: HostState): string {
  return `${JSON.stringify(state, null, 2)}\n`;
}

type ReadResult = { kind: 'ok'; state: HostState } | { kind: 'missing' } | { kind: 'bad'; reason: string };

async function readState(file: string): Promise<ReadResult> {
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
    return { kind: 'ok', state: parseContract(HostState, json, 'host state') };
  } catch (error) {
    return { kind: 'bad', reason: (error as Error).message };
  }
}
