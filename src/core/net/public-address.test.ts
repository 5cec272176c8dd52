import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { errorOf } from '../../testing/error-of.js';
import { isAllowedHost, nonPublicAddress } from './public-address.js';

describe('public addresses', () => {
  it('names what a non-public address is, in every IPv4 and IPv6 spelling', () => {
    expect(nonPublicAddress('169.254.169.254')).toMatch(/^a link-local address/);
    expect(nonPublicAddress('::ffff:a9fe:a9fe')).toMatch(/^a link-local address/);
    expect(nonPublicAddress('[::ffff:10.0.0.1]')).toBe('a private address');
    expect(nonPublicAddress('0:0:0:0:0:ffff:7f00:1')).toBe('a loopback address');
    expect(nonPublicAddress('0000::FFFF:A9FE:A9FE')).toMatch(/^a link-local address/);
    expect(nonPublicAddress('100.64.1.1')).toBe('a carrier-grade NAT address');
    expect(nonPublicAddress('fe80::1')).toBe('a link-local address');
    expect(nonPublicAddress('::')).toBe('the unspecified address');
    for (const address of ['8.8.8.8', '172.32.0.1', '2606:4700::1111', 'dify.example.org']) expect(nonPublicAddress(address), address).toBeUndefined();
  });

  it('matches allowed hosts by name, whatever their case, brackets or final dot', () => {
    expect(isAllowedHost('[FD00::5]', ['fd00::5'])).toBe(true);
    expect(isAllowedHost('dify.lab.example.org.', ['Dify.Lab.Example.org'])).toBe(true);
    expect(isAllowedHost('evil.dify.lab.example.org', ['dify.lab.example.org'])).toBe(false);
  });

  it('reads DIFY_ALLOWED_HOSTS as a comma-separated list of hosts, refusing a URL in it', () => {
    expect(loadConfig({ DIFY_ALLOWED_HOSTS: ' 127.0.0.1, Dify.Lab.example.org ,[fd00::5]' }, '/tmp').dify.allowedHosts).toEqual(['127.0.0.1', 'dify.lab.example.org', 'fd00::5']);
    expect(loadConfig({}, '/tmp').dify.allowedHosts).toEqual([]);
    expect(errorOf(() => loadConfig({ DIFY_ALLOWED_HOSTS: 'https://10.0.0.5/v1' }, '/tmp')).message).toMatch(/DIFY_ALLOWED_HOSTS.*without scheme, port or path/s);
  });
});
