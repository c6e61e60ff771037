import { createUser } from '@nats-io/nkeys';
import { LEASE_TIMINGS } from '../../../machines/lease.machine';
import { writeAuthFile } from '../broker/auth-file';
import { brokerPaths } from '../broker/broker-paths';
import { startTestPostgres, type TestPostgres } from '../../shared/testing/test-postgres';
import { startServeProcess, type ServeProcess } from './testing/serve-process';
import { startTestMesh, type TestMesh } from './testing/test-mesh';

// `mesh-control serve` as its own process, the way a service manager runs it. Two processes on one mesh (one broker, one PostgreSQL store), with the
// production lease (15 s, renewed every 5 s): the holder is killed with SIGKILL, so it gives
// nothing back, and the standby must act once the lease expires; then a holder stopped with
// SIGTERM gives it back and the standby acts at once.

let postgres: TestPostgres;
let mesh: TestMesh;
const processes: ServeProcess[] = [];

beforeAll(async () => {
  postgres = await startTestPostgres();
  mesh = await startTestMesh({ database: postgres.url });
}, 60_000);

afterAll(async () => {
  for (const serve of processes) if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill('SIGKILL');
  await Promise.all(processes.map((serve) => serve.exited));
  await mesh?.stop();
  await postgres?.stop();
});

function serve(): ServeProcess {
  const started = startServeProcess(mesh.dir);
  processes.push(started);
  return started;
}

const SERVING = /serving: epoch (\d+)/;
const STANDING_BY = /lease: standing by: the lease is held by/;

test('after kill -9 of the holder the standby acts once the lease expired, not before; after a graceful stop, long before it could have', async () => {
  const first = serve();
  await first.waitFor(SERVING);
  const second = serve();
  await second.waitFor(STANDING_BY);
  expect(second.stderr()).not.toMatch(SERVING);

  first.child.kill('SIGKILL');
  await first.exited;
  // Gone, and its key renewed at most one renewal period ago: still alive, so not taken yet.
  expect(second.stderr()).not.toMatch(SERVING);
  // Taken once it expired (ttl after the last renewal) and tried for again; the deadline is generous.
  await second.waitFor(SERVING, LEASE_TIMINGS.ttlMs + LEASE_TIMINGS.contendEveryMs + 10_000);
  expect(Number(SERVING.exec(second.stderr())?.[1])).toBeGreaterThan(Number(SERVING.exec(first.stderr())?.[1]));

  const third = serve();
  await third.waitFor(STANDING_BY);
  second.child.kill('SIGTERM');
  // The key would live at least ttl less one renewal period (10 s) more: serving within 8 s is
  // the lease given back.
  await third.waitFor(SERVING, LEASE_TIMINGS.ttlMs - LEASE_TIMINGS.renewEveryMs - 2_000);
  expect((await second.exited).code).toBe(0);
  expect(second.stderr()).toMatch(/lease: given back \(revision \d+\)/);
  third.child.kill('SIGTERM');
  expect((await third.exited).code).toBe(0);
}, 90_000);

test('a controller whose broker shuts it out exits non-zero, naming the child that kept failing and its error', async () => {
  const holder = serve();
  await holder.waitFor(SERVING);
  // The broker's user list now names another controller: this one's connection is closed and cannot come back.
  await writeAuthFile(brokerPaths(mesh.config.broker.dir).authFile, [{ role: 'controller', nkey: createUser().getPublicKey() }]);
  await mesh.broker.reload();
  const exit = await holder.exited;
  expect(exit.code).toBe(1);
  expect(holder.stderr()).toMatch(/error: supervisor "controller" gave up on child "bus" after more than 3 restarts in 60000 ms; last error: "the connection to the broker at tls:\/\/127\.0\.0\.1:\d+ (closed|is closed)/);
  expect(holder.stderr()).toMatch(/\nnext: {2}fix what makes "bus" fail/);
}, 60_000);
