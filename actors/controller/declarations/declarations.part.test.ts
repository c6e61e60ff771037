import { randomBytes } from 'node:crypto';
import { useTestController } from '../enrolment/testing/test-controller';
import { sendMissingOverlays } from './declarations.part';

describe('overlays owed at start', () => {
  const t = useTestController('postgres');

  test('a node that enrolled but was never sent its overlay (the controller stopped in between) is sent it, once', async () => {
    const machine = t.machine('oscar');
    await t.ctx.store.query(
      `INSERT INTO nodes (name, lifecycle_state, public_key, nkey, wireguard_public_key, overlay_address, enrolled_at, last_seen_at)
       VALUES ('oscar', 'enrolled', $1, $2, $3, '10.77.0.9', $4, $4)`,
      [machine.identity.public_key, machine.identity.nkey_public, randomBytes(32).toString('base64'), t.ctx.now()],
    );
    await t.ctx.store.query("INSERT INTO nodes (name, lifecycle_state) VALUES ('quiet', 'released')");
    expect(await sendMissingOverlays(t.ctx)).toEqual(['oscar']);
    const sent = await t.ctx.store.query<{ kind: string; generation: number }>('SELECT kind, generation FROM declarations WHERE node = $1', ['oscar']);
    expect(sent).toEqual([{ kind: 'overlay', generation: 1 }]);
    expect(await sendMissingOverlays(t.ctx)).toEqual([]);
  });
});
