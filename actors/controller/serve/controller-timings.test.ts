import { ControllerTimingsInvalid, controllerTimingsFromEnvironment } from './controller-timings';

describe('MESH_CONTROLLER_TIMINGS', () => {
  test('unset or empty changes nothing', () => {
    expect(controllerTimingsFromEnvironment({})).toEqual({});
    expect(controllerTimingsFromEnvironment({ MESH_CONTROLLER_TIMINGS: ' ' })).toEqual({});
  });

  test('shortens the presence watch and one kind\'s period, keeping the other kind\'s', () => {
    expect(controllerTimingsFromEnvironment({ MESH_CONTROLLER_TIMINGS: 'presence=200ms, heartbeat_resident=1s' })).toEqual({
      presenceEveryMs: 200,
      heartbeatPeriods: { resident: 1000, episodic: 300_000 },
    });
  });

  test('sets how often the doctor runs', () => {
    expect(controllerTimingsFromEnvironment({ MESH_CONTROLLER_TIMINGS: 'doctor=2s' })).toEqual({ doctor: { everyMs: 2000 } });
    expect(controllerTimingsFromEnvironment({ MESH_CONTROLLER_TIMINGS: 'watchdog=200ms' })).toEqual({ conditions: { watchdogEveryMs: 200 } });
  });

  test('refuses what it cannot read, quoting it and naming what it takes', () => {
    for (const given of ['presence=fast', 'heartbeat=1s', 'presence=0ms', 'presence=-1s', 'presence=1h']) {
      const error = (() => {
        try {
          controllerTimingsFromEnvironment({ MESH_CONTROLLER_TIMINGS: given });
        } catch (thrown) {
          return thrown;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(ControllerTimingsInvalid);
      expect((error as ControllerTimingsInvalid).value).toBe(given);
      expect((error as ControllerTimingsInvalid).next).toContain('names: presence, heartbeat_resident, heartbeat_episodic');
    }
  });
});
