import type { ControlReply } from '../../../schema/control';
import { generateNodeIdentity, ready } from '../../shared/crypto';
import { ArgumentInvalid, ArgumentNotDeclared } from '../control/control-errors';
import { VerbRegistry, type VerbAnswer } from '../control/verb-registry';
import type { ControllerContext } from '../controller-context';
import { recordLastSeen, upsertNode } from '../store/nodes.repo';
import { useTestStore } from '../store/testing/use-test-store';
import { formatLastSeen } from './format-last-seen';
import { formatNodePage } from './format-node-page';
import { listEveryNode } from './list-every-node';
import type { NodeListing } from './list-nodes';
import type { NodePage } from './list-node-page';
import { NODE_PAGE_DEFAULT, NODE_PAGE_MAX, type NodePageArgs } from './node-page-args';
import { nodesPart } from './nodes.part';

/** What the broker carries for an answer: the dispatcher sends the ControlReply as JSON. */
function replyBytes(answer: VerbAnswer): number {
  const reply: ControlReply = { ok: true, result: answer.result, text: answer.text };
  return Buffer.byteLength(JSON.stringify(reply));
}

/** The broker's limit on one message (nats-server's max_payload, which the mesh leaves at its default). */
const MAX_PAYLOAD = 1024 * 1024;

const NOW = new Date('2026-08-31T12:00:00Z');

/** A 63-character node name, the longest a node may have, that sorts by `index`. */
function longestName(index: number): string {
  return `w${String(index).padStart(4, '0')}${'x'.repeat(58)}`;
}

/** The longest version a host may report (schema/primitives.ts HostVersion: 64 characters). */
const LONGEST_VERSION = `1.${'9'.repeat(62)}`;

/**
 * The largest a node's listing can be: the longest name and version, the longest state and
 * address, and a last contact as long ago as a date can be.
 */
function worstListing(index: number): NodeListing {
  const longAgo = new Date(-8.64e15);
  const lastAway = { back_at: longAgo.toISOString(), seconds: 8.64e12 };
  return {
    name: longestName(index),
    lifecycle_state: 'disconnected',
    host_kind: 'episodic',
    silence_bound_seconds: 900,
    address: '255.255.255.255',
    version_running: LONGEST_VERSION,
    last_seen_at: NOW.toISOString(),
    last_seen: formatLastSeen(longAgo, NOW),
    disconnected_since: longAgo.toISOString(),
    last_away: lastAway,
    host_away_seconds: 123456789012.5,
    // The longest word the overlay says.
    overlay_reach: 'no-wireguard',
  };
}

/** The answer to a full page of worst-case nodes, built as the verb builds it, with the longest `after` and a next page. */
function worstPageAnswer(limit: number): VerbAnswer {
  const nodes = Array.from({ length: limit }, (_, index) => worstListing(index + 1));
  const page: NodePage = { nodes, next_after: nodes.at(-1)?.name ?? null };
  const args: NodePageArgs = { after: longestName(0), limit };
  return { result: page, text: formatNodePage(page, args, NOW) };
}

describe('the size of a page of nodes.list', () => {
  test('a page of the most nodes allowed, every one as long as a listing can be, is under half the broker\'s 1 MB limit', () => {
    const bytes = replyBytes(worstPageAnswer(NODE_PAGE_MAX));
    expect(bytes).toBeLessThan(MAX_PAYLOAD / 2);
    // What a node costs at worst, for the note on NODE_PAGE_MAX.
    expect(bytes / NODE_PAGE_MAX).toBeLessThan(850);
  });

  test('the default page of the longest listings is under a quarter of the broker\'s limit', () => {
    expect(replyBytes(worstPageAnswer(NODE_PAGE_DEFAULT))).toBeLessThan(MAX_PAYLOAD / 4);
  });

  test('a whole fleet of 10,000 nodes would not fit in one answer, which is why the verb pages', () => {
    expect(replyBytes(worstPageAnswer(10_000))).toBeGreaterThan(MAX_PAYLOAD);
  });
});

describe('nodes.list, over a real PostgreSQL', () => {
  const t = useTestStore('postgres');
  const verbs = new VerbRegistry();
  const list = (args: Record<string, unknown>): Promise<VerbAnswer> => verbs.call({ store: t.store, now: () => NOW, config: { overlay: { cidr: '10.77.0.0/16', listen_port: 51820, interface: 'mesh0' } } } as unknown as ControllerContext, 'nodes.list', args);
  const pageOf = (answer: VerbAnswer): NodePage => answer.result as NodePage;

  beforeAll(async () => {
    await ready();
    await nodesPart.start({} as ControllerContext, verbs);
  });

  /** Every name in the store, in the order the listing promises: JavaScript's `<`, byte by byte for ASCII names. */
  async function everyName(): Promise<string[]> {
    const rows = await t.store.query<{ name: string }>('SELECT name FROM nodes');
    return rows.map((row) => row.name).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  test('lists every node exactly once and in name order across pages smaller than the fleet', async () => {
    // Inserted out of order, with names a locale's collation would order otherwise (hyphens, digits).
    const names = ['kitchen', 'a-b', 'ab', 'a0', '0', '9z', 'b', 'a', 'lab-2', 'lab-10', 'lab2', 'shelf', 'attic', 'z', 'm-1', 'm1', 'm', 'c', 'd-d', 'dd', 'e', 'f', 'g'];
    for (const [index, name] of names.entries()) {
      await upsertNode(t.store, index % 2 === 0 ? { name, lifecycle_state: 'released' } : { name, lifecycle_state: 'revoked' }, NOW);
    }
    const expected = await everyName();
    expect(expected).toEqual(expect.arrayContaining(names));

    const pages: NodePage[] = [];
    let after: string | undefined;
    do {
      const page = pageOf(await list(after === undefined ? { limit: 5 } : { after, limit: 5 }));
      pages.push(page);
      after = page.next_after ?? undefined;
    } while (after !== undefined);

    const listed = pages.flatMap((page) => page.nodes.map((node) => node.name));
    expect(listed).toEqual(expected);
    expect(new Set(listed).size).toBe(listed.length);
    expect(pages.length).toBe(Math.ceil(expected.length / 5));
    for (const page of pages.slice(0, -1)) {
      expect(page.nodes).toHaveLength(5);
      expect(page.next_after).toBe(page.nodes.at(-1)?.name);
    }
    expect(pages.at(-1)?.next_after).toBeNull();

    // The CLI's walk reads the same, and a fleet this small is one page of the default size.
    expect((await listEveryNode((args) => list(args), 5)).map((node) => node.name)).toEqual(expected);
    const whole = pageOf(await list({}));
    expect(whole.nodes.map((node) => node.name)).toEqual(expected);
    expect(whole.next_after).toBeNull();
  });

  test('a page of the longest names and versions the store holds is no bigger than the computed worst case', async () => {
    for (let index = 1; index <= 12; index += 1) {
      const identity = generateNodeIdentity();
      const name = longestName(index);
      await upsertNode(t.store, { name, lifecycle_state: 'disconnected', public_key: identity.public_key, nkey: identity.nkey_public, version_running: LONGEST_VERSION }, NOW);
      await t.store.query('UPDATE nodes SET overlay_address = $2 WHERE name = $1', [name, `100.100.100.${100 + index}`]);
      await recordLastSeen(t.store, name, new Date('1970-01-02T00:00:00Z'));
      // Away once before, for as long as the store can say, and said by an episodic host.
      await t.store.query(
        `UPDATE nodes SET host_kind = 'episodic', disconnected_since = '0001-01-01T00:00:00Z', away_from = '0001-01-01T00:00:00Z', away_until = '1970-01-01T00:00:00Z',
                host_away_seconds = 123456789012.5, host_away_reported_at = '1970-01-01T00:00:00Z' WHERE name = $1`,
        [name],
      );
    }

    const full = await list({ after: longestName(0), limit: 7 });
    expect(pageOf(full).nodes.map((node) => node.name)).toEqual([1, 2, 3, 4, 5, 6, 7].map(longestName));
    expect(pageOf(full).nodes[0]).toEqual({
      name: longestName(1),
      lifecycle_state: 'disconnected',
      host_kind: 'episodic',
      silence_bound_seconds: 900,
      address: '100.100.100.101',
      version_running: LONGEST_VERSION,
      last_seen_at: '1970-01-02T00:00:00.000Z',
      last_seen: 'last seen 20695 days ago',
      disconnected_since: '0001-01-01T00:00:00.000Z',
      last_away: { back_at: '1970-01-01T00:00:00.000Z', seconds: 62135596800 },
      host_away_seconds: 123456789012.5,
      // Made without an inventory: it said no addresses.
      overlay_reach: 'unreported',
    });
    const bound = replyBytes(worstPageAnswer(7));
    expect(replyBytes(full)).toBeLessThanOrEqual(bound);
    // Close to it, so the worst case is a fair model of what the store answers, not a loose guess.
    expect(replyBytes(full)).toBeGreaterThan(bound * 0.95);

    const rest = await list({ after: longestName(7), limit: 7 });
    expect(pageOf(rest).nodes.map((node) => node.name).slice(0, 5)).toEqual([8, 9, 10, 11, 12].map(longestName));
    expect(replyBytes(rest)).toBeLessThanOrEqual(bound);
  });

  test('refuses paging arguments it cannot use, naming the argument and what it takes', async () => {
    const refusal = async (args: Record<string, unknown>): Promise<unknown> => list(args).catch((error: unknown) => error);

    const tooMany = await refusal({ limit: NODE_PAGE_MAX + 1 });
    expect(tooMany).toBeInstanceOf(ArgumentInvalid);
    expect((tooMany as ArgumentInvalid).argument).toBe('limit');
    expect((tooMany as ArgumentInvalid).message).toBe(
      `\`nodes.list\` argument \`limit\`: must be at most ${NODE_PAGE_MAX}, so that a page fits in one message on the broker; nothing was done: "${NODE_PAGE_MAX + 1}"`,
    );

    expect(((await refusal({ limit: 0 })) as ArgumentInvalid).message).toMatch(/^`nodes.list` argument `limit`: must be at least 1;/);
    expect(((await refusal({ limit: 2.5 })) as ArgumentInvalid).message).toMatch(/^`nodes.list` argument `limit`: must be a whole number of nodes;/);
    expect(((await refusal({ limit: '10' })) as ArgumentInvalid).message).toMatch(/^`nodes.list` argument `limit`: must be a whole number of nodes;/);

    const badName = await refusal({ after: 'Kitchen!' });
    expect(badName).toBeInstanceOf(ArgumentInvalid);
    expect((badName as ArgumentInvalid).argument).toBe('after');
    expect((badName as ArgumentInvalid).message).toMatch(/^`nodes.list` argument `after`: expected a node name: 1-63 lowercase letters/);

    const offset = await refusal({ offset: 500 });
    expect(offset).toBeInstanceOf(ArgumentNotDeclared);
    expect((offset as ArgumentNotDeclared).next).toMatch(/^nodes.list takes `after`, `limit`;/);
  });

  test('says in its text how to get the next page, and that none follow a name past the last', async () => {
    const first = await list({ limit: 2 });
    const next = pageOf(first).next_after;
    expect(next).toBe(pageOf(first).nodes[1]?.name);
    expect(first.text).toMatch(/^NAME +STATE +KIND +ADDRESS +VERSION +LAST SEEN +AWAY\n/);
    expect(first.text.split('\n').at(-1)).toBe(`more nodes follow: mesh-control nodes --after ${next} --limit 2`);

    const past = await list({ after: 'zzzz' });
    expect(past.result).toEqual({ nodes: [], next_after: null });
    expect(past.text).toBe('no nodes follow "zzzz" (nodes are listed by name)');
  });
});
