import { splitListen } from './split-listen';

describe('splitListen', () => {
  it.each([
    ['9464', { host: '127.0.0.1', portText: '9464' }],
    ['127.0.0.2:80', { host: '127.0.0.2', portText: '80' }],
    ['[::1]:8470', { host: '::1', portText: '8470' }],
    [' localhost:1 ', { host: 'localhost', portText: '1' }],
  ])('splits %s', (value, expected) => {
    expect(splitListen(value, 8470)).toEqual(expected);
  });

  it.each([
    ['127.0.0.1', 'there is no port (HOST:PORT)'],
    ['::1:8470', 'an IPv6 address goes in brackets, as [::1]:8470'],
  ])('says why %s is not an address and a port', (value, problem) => {
    expect(splitListen(value, 8470)).toEqual({ problem });
  });
});
