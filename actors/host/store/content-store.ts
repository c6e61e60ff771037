import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { HostState, StoredHostState } from '../../../schema/host-state';
import { replaceFilesSync } from './replace-files-sync';

/** The folder under the state directory that holds the large values the store refers to. */
export const CONTENT_DIR = 'content';

/** A value whose JSON is longer than this is kept in CONTENT_DIR, and state.json refers to it. */
export const INLINE_MAX_BYTES = 4096;

const DIGEST_NAME = /^[0-9a-f]{64}$/;

/** What one value became in state.json: itself, or a reference to the file holding its JSON. */
interface Placement {
  digest?: string;
}

/** A value state.json refers to that could not be read back whole. */
export class StoredContentUnreadable extends Error {}

/**
 * The large values of the host store, each in `<state-dir>/content/<sha256>` (see
 * StoredContent): a hand-applied file's content and the last declaration's envelope. Written
 * once, when a value is first saved, and durable before the state that refers to it; the store
 * then rewrites only its references, however large the contents. A value is known by object
 * identity between saves (the state is changed by copying, so an unchanged content is the same
 * object), so it is neither serialised nor hashed again.
 */
export class ContentStore {
  private readonly placed = new WeakMap<object, Placement>();
  /** Digests whose file is on disk whole: written or checked by this process. */
  private readonly present = new Set<string>();
  /** Digests the last saved state referred to. */
  private referenced = new Set<string>();
  /** Digests the state from the last `refer` refers to, not yet known to be saved. */
  private pending = new Set<string>();

  constructor(private readonly stateDir: string) {}

  get dir(): string {
    return path.join(this.stateDir, CONTENT_DIR);
  }

  /**
   * The state as state.json holds it: every large value replaced by its reference, each one's
   * file written (and synced) first when it is not on disk yet.
   */
  refer(state: HostState): StoredHostState {
    const writes: Array<{ name: string; data: Buffer }> = [];
    const used = new Set<string>();
    const place = (value: object): object => {
      let placement = this.placed.get(value);
      let json: Buffer | undefined;
      if (placement === undefined) {
        json = Buffer.from(JSON.stringify(value), 'utf8');
        placement = json.length > INLINE_MAX_BYTES ? { digest: sha256(json) } : {};
        this.placed.set(value, placement);
      }
      if (placement.digest === undefined) return value;
      // Its file may have been removed since (the value was dropped, then held again).
      if (!this.present.has(placement.digest)) writes.push({ name: placement.digest, data: json ?? Buffer.from(JSON.stringify(value), 'utf8') });
      used.add(placement.digest);
      return { stored: placement.digest };
    };
    // A resource whose content stays inline is handed on as the very object: the store's checker
    // knows a resource the declaration's parse gave by the object (schema/vouched.ts).
    const local_resources = state.local_resources.map((resource) => {
      if (resource.shape !== 'file') return resource;
      const content = place(resource.content);
      return content === resource.content ? resource : { ...resource, content: content as never };
    });
    const held = state.last_declaration;
    const envelope = held !== null && typeof held.envelope === 'object' && held.envelope !== null ? place(held.envelope) : held?.envelope;
    if (writes.length > 0) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      replaceFilesSync(this.dir, unique(writes));
      for (const write of writes) this.present.add(write.name);
    }
    this.pending = used;
    return { ...state, local_resources, last_declaration: held === null ? null : { ...held, envelope } };
  }

  /**
   * Called once the state from the last `refer` is durable: the files no state refers to any
   * more are removed (a crash before this leaves them, and the next open sweeps them).
   */
  saved(): void {
    for (const digest of this.referenced) {
      if (this.pending.has(digest)) continue;
      rmSync(path.join(this.dir, digest), { force: true });
      this.present.delete(digest);
    }
    this.referenced = this.pending;
  }

  /**
   * The raw JSON of a state file with every reference replaced by the value it refers to, each
   * checked against its digest. Throws StoredContentUnreadable naming the file that is missing
   * or damaged.
   */
  resolve(json: unknown): unknown {
    if (typeof json !== 'object' || json === null) return json;
    const state = json as { local_resources?: unknown; last_declaration?: unknown };
    const local = Array.isArray(state.local_resources)
      ? state.local_resources.map((resource: unknown) => {
          if (typeof resource !== 'object' || resource === null) return resource;
          const content = (resource as { content?: unknown }).content;
          return referenceIn(content) === undefined ? resource : { ...resource, content: this.read(referenceIn(content) as string) };
        })
      : state.local_resources;
    let held = state.last_declaration;
    if (typeof held === 'object' && held !== null) {
      const digest = referenceIn((held as { envelope?: unknown }).envelope);
      if (digest !== undefined) held = { ...held, envelope: this.read(digest) };
    }
    return { ...state, local_resources: local, last_declaration: held };
  }

  /** Notes which digests the state just loaded refers to, so the next save knows what it replaces. */
  loaded(json: unknown): void {
    this.referenced = new Set(referencesIn(json));
  }

  /**
   * Removes every file in CONTENT_DIR that none of `states` (state files' raw JSON) refers to:
   * what a save killed before it finished, or before it removed what it replaced, left.
   * Returns how many were removed.
   */
  sweep(states: readonly unknown[]): number {
    const keep = new Set(states.flatMap((state) => referencesIn(state)));
    let removed = 0;
    for (const name of listOrNone(this.dir)) {
      if (keep.has(name)) continue;
      rmSync(path.join(this.dir, name), { force: true, recursive: true });
      removed += 1;
    }
    return removed;
  }

  private read(digest: string): unknown {
    const file = path.join(this.dir, digest);
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new StoredContentUnreadable(code === 'ENOENT' ? `it refers to ${file}, which is missing` : `it refers to ${file}, which cannot be read: ${(error as Error).message}`);
    }
    const actual = sha256(bytes);
    if (actual !== digest) throw new StoredContentUnreadable(`it refers to ${file}, which is damaged (its SHA-256 is ${actual})`);
    const value = JSON.parse(bytes.toString('utf8')) as unknown;
    if (typeof value === 'object' && value !== null) this.placed.set(value, { digest });
    this.present.add(digest);
    return value;
  }
}

/** The digest a value refers to when it is a reference (`{"stored": "<sha256>"}`), else undefined. */
function referenceIn(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const keys = Object.keys(value);
  const stored = (value as { stored?: unknown }).stored;
  return keys.length === 1 && typeof stored === 'string' && DIGEST_NAME.test(stored) ? stored : undefined;
}

/** Every digest a state file's raw JSON refers to. */
function referencesIn(json: unknown): string[] {
  if (typeof json !== 'object' || json === null) return [];
  const state = json as { local_resources?: unknown; last_declaration?: { envelope?: unknown } | null };
  const found: string[] = [];
  if (Array.isArray(state.local_resources)) {
    for (const resource of state.local_resources) {
      const digest = referenceIn((resource as { content?: unknown } | null)?.content);
      if (digest !== undefined) found.push(digest);
    }
  }
  const envelope = referenceIn(state.last_declaration?.envelope);
  if (envelope !== undefined) found.push(envelope);
  return found;
}

function listOrNone(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function unique(writes: Array<{ name: string; data: Buffer }>): Array<{ name: string; data: Buffer }> {
  return [...new Map(writes.map((write) => [write.name, write])).values()];
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
