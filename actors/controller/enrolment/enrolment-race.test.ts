import { EnrolReply } from '../../../schema/enrolment';
import { enrolmentSubject } from '../../shared/bus/subjects';
import { brokerPasswordFor } from '../../shared/crypto';
import { useTestController } from './testing/test-controller';

// PostgreSQL, where transactions really run side by side: PGlite takes them one at a time.
describe('twenty machines racing with one token on PostgreSQL', () => {
  const t = useTestController('postgres');

  test('exactly one becomes a node; every other is told the token was already used', async () => {
    const token = await t.issue();
    const password = brokerPasswordFor(token.secret, token.token_id);
    const machines = Array.from({ length: 20 }, (_, i) => t.machine(`racer${i}`));
    const connections = await Promise.all(machines.map(() => t.broker.connectAsEnrolment(token.token_id, password, { reconnect: false })));
    const replies = await Promise.all(
      machines.map(async (machine, i) => {
        const answer = await connections[i]?.request(enrolmentSubject(token.token_id), JSON.stringify(t.requestFor(machine, token)), { timeout: 15_000 });
        return EnrolReply.parse(answer?.json());
      }),
    );

    const winners = replies.filter((reply) => reply.ok);
    expect(winners).toHaveLength(1);
    const losers = replies.filter((reply) => !reply.ok);
    expect(losers).toHaveLength(19);
    for (const reply of losers) {
      expect(reply).toMatchObject({ ok: false, refusal: 'token_used' });
      expect(reply.ok === false && reply.message).toMatch(/already used/);
      expect(reply.ok === false && reply.next).toMatch(/token issue/);
    }
    const nodes = await t.ctx.store.query<{ name: string }>("SELECT name FROM nodes WHERE name LIKE 'racer%'");
    expect(nodes.map((row) => row.name)).toEqual([winners[0]?.ok === true ? winners[0].node : '']);
    // Every machine was answered before the token's user went, and then it went.
    await t.retired(token);
    await Promise.all(connections.map((connection) => connection.closed()));
  });
});
