import type { Msg } from '@nats-io/transport-node';
import { z } from 'zod';
import { controlSubject, declarationSubject, enrolmentSubject } from '../../shared/bus/subjects';
import { useTestController } from '../enrolment/testing/test-controller';
import { eventually } from '../serve/testing/eventually';
import { startControlDispatcher, type ControlDispatcher } from './control-dispatcher';
import { VerbRegistry } from './verb-registry';

// The responders' own wall, behind the accounts: a request whose reply subject the broker did not
// map is not answered, whoever could send it, so no answer is ever published with the
// controller's rights on a subject a sender picked. Within the controller's account only a
// controller can send such a request; the test does, from the controller's own connection.

describe('responders answer only replies the broker maps back to a requester', () => {
  const t = useTestController('postgres');
  let dispatcher: ControlDispatcher;
  let calls = 0;
  const landed: Msg[] = [];

  beforeAll(async () => {
    const verbs = new VerbRegistry();
    verbs.register('test.echo', z.object({}), async () => {
      calls += 1;
      return { result: 'echoed', text: 'echoed' };
    }, { query: true });
    dispatcher = startControlDispatcher(t.ctx, verbs);
    t.ctx.nc.subscribe(declarationSubject('victim'), { callback: (_error, message) => void landed.push(message) });
    await t.ctx.nc.flush();
  });

  afterAll(async () => {
    await dispatcher?.stop();
  });

  test('a control call whose reply names a declaration slot is refused and logged, and the verb does not run', async () => {
    t.ctx.nc.publish(controlSubject('test.echo'), JSON.stringify({ format: 'mesh-control-1', verb: 'test.echo', args: {} }), { reply: declarationSubject('victim') });
    await eventually('the refusal to be logged', () => t.logs.some((line) => line.includes(`refused a call from a sender in the controller's account whose reply subject "${declarationSubject('victim')}"`)));
    await t.ctx.nc.flush();
    expect(calls).toBe(0);
    expect(landed).toEqual([]);
  });

  test('a control call asked on a controller\'s own inbox is answered', async () => {
    const answer = await t.ctx.nc.request(controlSubject('test.echo'), JSON.stringify({ format: 'mesh-control-1', verb: 'test.echo', args: {} }), { timeout: 5000 });
    expect(answer.json()).toMatchObject({ ok: true, result: 'echoed' });
    expect(calls).toBe(1);
  });

  test('an enrolment request whose reply names a declaration slot is refused unanswered and counted against its token', async () => {
    const token = await t.issue();
    t.ctx.nc.publish(enrolmentSubject(token.token_id), '{}', { reply: declarationSubject('victim') });
    await eventually('the refusal to be counted', () => t.logs.some((line) => line.includes(`a request with token ${token.token_id} from a sender in the controller's account: its reply subject "${declarationSubject('victim')}" is not one the broker maps back to the host; not answered (1 of 5 bad requests on this token)`)));
    await t.ctx.nc.flush();
    expect(landed).toEqual([]);
    const [row] = await t.ctx.store.query<{ malformed_requests: number }>('SELECT malformed_requests FROM tokens WHERE id = $1', [token.token_id]);
    expect(row?.malformed_requests).toBe(1);
  });
});
