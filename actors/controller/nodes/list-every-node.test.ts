import { ControlReplyMalformed } from '../control/control-errors';
import type { VerbAnswer } from '../control/verb-registry';
import { listEveryNode, type AskNodePage } from './list-every-node';
import type { NodeListing } from './list-nodes';
import type { NodePage } from './list-node-page';
import { NODE_PAGE_MAX } from './node-page-args';

function listing(name: string): NodeListing {
  return {
    name, lifecycle_state: 'enrolled', host_kind: 'resident', silence_bound_seconds: 90, address: null, version_running: '0.1.0',
    last_seen_at: null, last_seen: 'never seen', disconnected_since: null, last_away: null, host_away_seconds: null,
    overlay_reach: null,
  };
}

/** A controller that pages over a fixed, sorted fleet the way nodes.list does, and keeps what it was asked. */
class FakeFleet {
  readonly asked: Array<{ after?: string; limit: number }> = [];
  constructor(readonly names: readonly string[]) {}
  readonly ask: AskNodePage = async (args) => {
    this.asked.push(args);
    const rest = this.names.filter((name) => args.after === undefined || name > args.after);
    const nodes = rest.slice(0, args.limit).map(listing);
    const page: NodePage = { nodes, next_after: rest.length > args.limit ? (nodes.at(-1)?.name ?? null) : null };
    return { result: page, text: '' };
  };
}

const answering = (...results: unknown[]): AskNodePage => {
  let call = 0;
  return async (): Promise<VerbAnswer> => ({ result: results[call++], text: '' });
};

describe('listEveryNode', () => {
  test('asks page after page, each after the last name of the one before, until a page says none follow', async () => {
    const names = Array.from({ length: 11 }, (_, index) => `node-${String(index).padStart(2, '0')}`);
    const fleet = new FakeFleet(names);
    const nodes = await listEveryNode(fleet.ask, 4);
    expect(nodes.map((node) => node.name)).toEqual(names);
    expect(fleet.asked).toEqual([{ limit: 4 }, { after: 'node-03', limit: 4 }, { after: 'node-07', limit: 4 }]);
  });

  test('asks for pages of the largest size unless told, so a fleet that fits in one is one call', async () => {
    const fleet = new FakeFleet(['attic', 'kitchen']);
    expect((await listEveryNode(fleet.ask)).map((node) => node.name)).toEqual(['attic', 'kitchen']);
    expect(fleet.asked).toEqual([{ limit: NODE_PAGE_MAX }]);
  });

  test('lists nothing for an empty fleet', async () => {
    expect(await listEveryNode(new FakeFleet([]).ask)).toEqual([]);
  });

  test('refuses a page whose next page would not move on, instead of asking for ever', async () => {
    const ask = answering(
      { nodes: [listing('a'), listing('b')], next_after: 'b' },
      { nodes: [listing('b')], next_after: 'b' },
    );
    const error = await listEveryNode(ask, 2).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ControlReplyMalformed);
    expect((error as ControlReplyMalformed).message).toBe('the controller\'s answer to `nodes.list` could not be read: the page after "b" says the next begins after "b", which is not further on');
  });

  test('refuses an answer that is not a page, as from a controller of another version', async () => {
    for (const result of [{ nodes: [listing('a')] }, { nodes: 'a', next_after: null }, null, { nodes: [], next_after: 7 }]) {
      await expect(listEveryNode(answering(result))).rejects.toThrow(/could not be read: its result is not a page of nodes with next_after/);
    }
  });
});
