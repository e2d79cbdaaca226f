import { describe, expect, it } from 'vitest';
import {
  admitDeadlines,
  expectedDurationFromInspect,
  jobDeadlineSeconds,
  parseK6Duration,
  readyDeadline,
  runDeadline,
  runGraceSeconds,
} from '../../lambdas/core/deadlines';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const S = 1000;
const DAY = 86_400;

describe('admitDeadlines', () => {
  it.each([
    ['defaults: total falls back to the deployment maximum', { prepare: 600, ready: 600 }, DAY, { prepareBy: NOW + 600 * S, totalBy: NOW + DAY * S }],
    ['an explicit total', { prepare: 600, ready: 600, total: 3600 }, DAY, { prepareBy: NOW + 600 * S, totalBy: NOW + 3600 * S }],
    ['a total above the maximum is capped by it', { prepare: 60, ready: 60, total: 2 * DAY }, DAY, { prepareBy: NOW + 60 * S, totalBy: NOW + DAY * S }],
    ['prepare never outlives the total', { prepare: 900, ready: 60, total: 300 }, DAY, { prepareBy: NOW + 300 * S, totalBy: NOW + 300 * S }],
  ])('%s', (_label, timeouts, maxRun, expected) => {
    expect(admitDeadlines(NOW, timeouts, maxRun)).toEqual(expected);
  });
});

describe('readyDeadline', () => {
  const launchedAt = NOW + 120 * S;
  it.each([
    ['launch + ready', NOW + DAY * S, launchedAt + 600 * S],
    ['capped by the total', NOW + 300 * S, NOW + 300 * S],
  ])('%s', (_label, totalBy, expected) => {
    expect(readyDeadline(launchedAt, { ready: 600 }, totalBy)).toBe(expected);
  });
});

describe('runDeadline', () => {
  const startedAt = NOW + 300 * S;
  const totalBy = NOW + DAY * S;
  it.each<[string, number | undefined, number | undefined, number, number]>([
    ['the spec’s run timeout wins over the expectation', 1800, 60, totalBy, startedAt + 1800 * S],
    ['expected + 60 s grace for a short test', undefined, 90, totalBy, startedAt + 150 * S],
    ['expected + 10 % grace for a long test', undefined, 7200, totalBy, startedAt + 7920 * S],
    ['grace switches at 600 s (10 % = 60 s)', undefined, 600, totalBy, startedAt + 660 * S],
    ['capped by the total', undefined, 7200, startedAt + 3600 * S, startedAt + 3600 * S],
    ['the run timeout is capped by the total too', 7200, undefined, startedAt + 60 * S, startedAt + 60 * S],
    ['no run timeout and no expectation: the total', undefined, undefined, totalBy, totalBy],
  ])('%s', (_label, run, expected, total, deadline) => {
    expect(runDeadline(startedAt, run === undefined ? {} : { run }, expected, total)).toBe(deadline);
  });

  it.each([
    [0, 60],
    [599, 60],
    [601, 61],
    [DAY, 8640],
  ])('grace for %i s expected is %i s', (expected, grace) => {
    expect(runGraceSeconds(expected)).toBe(grace);
  });
});

describe('jobDeadlineSeconds', () => {
  it.each([
    ['whole seconds', NOW + 3600 * S, 3600],
    ['a part second rounds up, never cutting the run short', NOW + 1500, 2],
    ['at the deadline: still positive (Kubernetes requires it)', NOW, 1],
    ['past the deadline', NOW - 10 * S, 1],
  ])('%s', (_label, deadline, seconds) => {
    expect(jobDeadlineSeconds(NOW, deadline)).toBe(seconds);
  });
});

describe('parseK6Duration', () => {
  it.each<[string, number | undefined]>([
    ['30s', 30],
    ['1m30s', 90],
    ['2h0m0s', 7200],
    ['1.5s', 1.5],
    ['1m0.25s', 60.25],
    ['500ms', 0.5],
    ['1h2m3s', 3723],
    ['0s', 0],
    ['250µs', 0.00025],
    ['', undefined],
    ['-1m', undefined],
    ['90', undefined],
    ['1d', undefined],
    ['1m 30s', undefined],
    ['abc', undefined],
  ])('%j → %s', (text, seconds) => {
    expect(parseK6Duration(text)).toBe(seconds);
  });
});

describe('expectedDurationFromInspect', () => {
  it.each<[string, unknown, number | undefined]>([
    ['totalDuration (gracefulStop included) in whole seconds', { maxVUs: 10, totalDuration: '1m30s', thresholds: {} }, 90],
    ['fractions round up', { maxVUs: 1, totalDuration: '40.5s' }, 41],
    ['a long ramp', { maxVUs: 500, totalDuration: '2h0m30s' }, 7230],
    ['no totalDuration', { maxVUs: 10 }, undefined],
    ['a malformed totalDuration', { totalDuration: 'soon' }, undefined],
    ['a number instead of a string', { totalDuration: 90 }, undefined],
    ['not an object', 'k6 inspect failed', undefined],
    ['null', null, undefined],
  ])('%s', (_label, output, seconds) => {
    expect(expectedDurationFromInspect(output)).toBe(seconds);
  });
});
