import { emptyHostState, type HostState } from '../../../schema/host-state';
import type { Admitted } from './admit-declaration';
import { recordDeclaration } from './record-declaration';

const envelope = { format: 'mesh-envelope-1', payload: 'e30=', signature: 'c2ln', signer: 'a2V5' } as const;

function admitted(generation: number, epoch: number): Admitted {
  return {
    ok: true,
    envelope,
    digest: 'b'.repeat(64),
    declaration: { node: 'alpha', epoch, generation, kind: 'full', issued_at: '2026-08-27T14:02:00Z', resources: [] },
  };
}

const before: HostState = {
  ...emptyHostState(),
  highest_epoch: 5,
  sequence: 3,
  report_sequence: 9,
  local_resources: [{ shape: 'directory', path: '/srv/repair', mode: '0755', owner: 'root', group: 'root' }],
};

describe('taking an admitted declaration', () => {
  test('holds it as its envelope with its generation and digest, counts it, and drops what was applied by hand', () => {
    const after = recordDeclaration(before, admitted(4, 7));
    expect(after.last_declaration).toEqual({ envelope, applied_generation: 4, digest: 'b'.repeat(64) });
    expect(after.highest_epoch).toBe(7);
    expect(after.sequence).toBe(4);
    expect(after.report_sequence).toBe(9);
    expect(after.local_resources).toEqual([]);
  });

  test('never lowers the epoch fence', () => {
    expect(recordDeclaration(before, admitted(4, 5)).highest_epoch).toBe(5);
    expect(recordDeclaration({ ...before, highest_epoch: 8 }, admitted(4, 5)).highest_epoch).toBe(8);
  });

  const pinned: HostState = {
    ...before,
    pins: { broker_url: 'tls://broker.example:4222', broker_fingerprint: 'f'.repeat(64), controller_public_key: 'k'.repeat(43) + '=' },
  };
  const withPins = (pins: string[] | undefined): Admitted => {
    const taken = admitted(4, 7);
    return { ...taken, declaration: { ...taken.declaration, ...(pins === undefined ? {} : { broker_fingerprints: pins }) } };
  };

  test('pins the broker\'s next certificate beside the current one, then the new one alone after the switch', () => {
    const during = recordDeclaration(pinned, withPins(['f'.repeat(64), 'a'.repeat(64)]));
    expect(during.pins).toEqual({ ...pinned.pins, broker_fingerprint: 'f'.repeat(64), next_broker_fingerprint: 'a'.repeat(64) });
    const after = recordDeclaration(during, withPins(['a'.repeat(64)]));
    expect(after.pins).toEqual({ ...pinned.pins, broker_fingerprint: 'a'.repeat(64) });
  });

  test('leaves the pins as they are when the declaration names no broker certificate', () => {
    const during = recordDeclaration(pinned, withPins(['f'.repeat(64), 'a'.repeat(64)]));
    expect(recordDeclaration(during, withPins(undefined)).pins).toEqual(during.pins);
  });

  const withServers = (urls: string[] | undefined): Admitted => {
    const taken = admitted(4, 7);
    return { ...taken, declaration: { ...taken.declaration, ...(urls === undefined ? {} : { broker_urls: urls }) } };
  };

  test('takes the servers of a cluster a declaration names, keeping the token\'s address first while it is one of them', () => {
    const servers = ['tls://m1.example:4222', 'tls://broker.example:4222', 'tls://m3.example:4222'];
    const after = recordDeclaration(pinned, withServers(servers));
    expect(after.pins).toEqual({ ...pinned.pins, broker_urls: servers });
    const moved = recordDeclaration(after, withServers(['tls://m1.example:4222', 'tls://m3.example:4222']));
    expect(moved.pins?.broker_url).toBe('tls://m1.example:4222');
    expect(moved.pins?.broker_urls).toEqual(['tls://m1.example:4222', 'tls://m3.example:4222']);
    expect(recordDeclaration(moved, withServers(undefined)).pins).toEqual(moved.pins);
  });
});
