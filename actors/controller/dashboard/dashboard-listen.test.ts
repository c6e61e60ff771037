import { DashboardListenInvalid } from './dashboard-errors';
import { dashboardOrigin, parseDashboardListen } from './dashboard-listen';

test('takes a loopback address and port, a bare port, [::1] and localhost', () => {
  expect(parseDashboardListen('127.0.0.1:8470')).toEqual({ host: '127.0.0.1', port: 8470 });
  expect(parseDashboardListen('9000')).toEqual({ host: '127.0.0.1', port: 9000 });
  expect(parseDashboardListen('0')).toEqual({ host: '127.0.0.1', port: 0 });
  expect(parseDashboardListen('[::1]:8470')).toEqual({ host: '::1', port: 8470 });
  expect(parseDashboardListen('localhost:8470')).toEqual({ host: '127.0.0.1', port: 8470 });
  expect(dashboardOrigin('::1', 8470)).toBe('http://[::1]:8470');
});

test('refuses an address other machines reach, a name, and what is not an address, naming the tunnel to use instead', () => {
  for (const value of ['0.0.0.0:8470', '192.168.1.4:8470', '[::]:8470', 'example.com:8470', '127.0.0.1', '127.0.0.1:70000', '::1:8470', 'http://127.0.0.1:8470']) {
    expect(() => parseDashboardListen(value)).toThrow(DashboardListenInvalid);
  }
  expect(() => parseDashboardListen('0.0.0.0:8470')).toThrow(expect.objectContaining({ next: expect.stringContaining('ssh -L') }));
});
