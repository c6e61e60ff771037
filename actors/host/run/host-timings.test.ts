import { HostTimingsInvalid, timingsFromEnvironment } from './host-timings';

describe('timings from MESH_HOST_TIMINGS', () => {
  test('none when it is unset or blank', () => {
    expect(timingsFromEnvironment({})).toEqual({});
    expect(timingsFromEnvironment({ MESH_HOST_TIMINGS: '  ' })).toEqual({});
  });

  test('reads name=duration pairs, comma or space separated, into the host\'s and the link\'s timings', () => {
    const timings = timingsFromEnvironment({ MESH_HOST_TIMINGS: 'drift=500ms, heartbeat=2s dead_link=1m liveness_timeout=300ms standby_after=50ms attempt_timeout=3s settled_after=4s retry_first=100ms retry_cap=2s' });
    expect(timings).toEqual({
      driftIntervalMs: 500,
      heartbeatMs: 2000,
      deadLinkMs: 60_000,
      link: { livenessTimeoutMs: 300, standbyAfterMs: 50, attemptTimeoutMs: 3000, settledAfterMs: 4000 },
      backoff: { firstMs: 100, capMs: 2000 },
    });
  });

  test('refuses a name it does not know, a duration without a unit, and zero, quoting the whole value', () => {
    for (const bad of ['drfit=2s', 'drift=2', 'drift=0ms', 'drift']) {
      const error = (() => {
        try {
          timingsFromEnvironment({ MESH_HOST_TIMINGS: bad });
          return undefined;
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(HostTimingsInvalid);
      expect((error as HostTimingsInvalid).value).toBe(bad);
    }
  });
});
