import { MetricsListenInvalid, MetricsListenNotLoopback } from './metrics-errors';
import { isLoopback, metricsUrl, parseMetricsListen } from './metrics-listen';

describe('--metrics-listen', () => {
  test.each([
    ['127.0.0.1:9464', { host: '127.0.0.1', port: 9464 }],
    ['9464', { host: '127.0.0.1', port: 9464 }],
    ['localhost:9464', { host: 'localhost', port: 9464 }],
    ['127.8.0.3:1', { host: '127.8.0.3', port: 1 }],
    ['[::1]:65535', { host: '::1', port: 65535 }],
    [' 127.0.0.1:9464 ', { host: '127.0.0.1', port: 9464 }],
  ])('takes the loopback address %s', (value, expected) => {
    expect(parseMetricsListen(value)).toEqual(expected);
  });

  test.each(['0.0.0.0:9464', '[::]:9464', '10.0.0.5:9464', '192.168.1.2:80', 'metrics.example.org:9464', '[::ffff:10.0.0.1]:9464', '128.0.0.1:9464'])(
    'refuses %s, which other machines may reach, unless the operator says so',
    (value) => {
      expect(() => parseMetricsListen(value)).toThrow(MetricsListenNotLoopback);
      expect(() => parseMetricsListen(value)).toThrow(`"${value}"`);
      expect(new MetricsListenNotLoopback(value).next).toMatch(/--metrics-allow-remote/);
      expect(parseMetricsListen(value, { allowRemote: true }).port).toBe(9464 - (value.endsWith(':80') ? 9384 : 0));
    },
  );

  test.each([
    ['127.0.0.1', /no port/],
    ['127.0.0.1:', /"" is not a port/],
    ['127.0.0.1:0', /"0" is not a port/],
    ['127.0.0.1:65536', /"65536" is not a port/],
    ['127.0.0.1:-1', /"-1" is not a port/],
    ['127.0.0.1:http', /"http" is not a port/],
    [':9464', /no address/],
    ['::1:9464', /IPv6 address goes in brackets/],
    ['[127.0.0.1]:9464', /not an IPv6 address/],
    ['http://127.0.0.1:9464', /without a scheme or a path/],
    ['127.0.0.1:9464/metrics', /without a scheme or a path/],
    ['local_host:9464', /neither an IP address nor a host name/],
    ['', /no port/],
  ])('refuses %s with what is wrong, whatever --metrics-allow-remote says', (value, problem) => {
    for (const allowRemote of [false, true]) {
      let thrown: unknown;
      try {
        parseMetricsListen(value, { allowRemote });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(MetricsListenInvalid);
      expect((thrown as Error).message).toMatch(problem);
      expect((thrown as Error).message).toContain(JSON.stringify(value));
      expect((thrown as MetricsListenInvalid).next).toMatch(/127\.0\.0\.1:9464/);
    }
  });

  test('knows loopback in its spellings, and nothing else as loopback', () => {
    expect(['127.0.0.1', '127.255.255.254', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'LOCALHOST'].every(isLoopback)).toBe(true);
    expect(['0.0.0.0', '::', '::2', '1.127.0.0', 'localhost.example.org', '::ffff:10.0.0.1'].some(isLoopback)).toBe(false);
  });

  test('says its URL with an IPv6 address in brackets', () => {
    expect(metricsUrl({ host: '::1', port: 9464 })).toBe('http://[::1]:9464/metrics');
    expect(metricsUrl({ host: '127.0.0.1', port: 9464 })).toBe('http://127.0.0.1:9464/metrics');
  });
});
