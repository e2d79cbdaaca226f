import { describe, expect, it } from 'vitest';
import { parseK6Argv, parseSegment, segmentSequenceProblem } from '../../../local/kube-sim/programs/k6-argv';
import { segmentShare } from '../../../local/kube-sim/programs/fraction';

describe('parseK6Argv', () => {
  it('reads a k6-operator style runner command line', () => {
    const argv = parseK6Argv([
      'k6',
      'run',
      '--quiet',
      '--execution-segment=1/3:2/3',
      '--execution-segment-sequence=0,1/3,2/3,1',
      '--vus',
      '12',
      '-d',
      '2m',
      '--tag',
      'instance_id=1',
      '/loadplane/scripts/test.js',
      '--address=0.0.0.0:6565',
      '--paused',
    ]);
    expect(argv).toEqual({
      subcommand: 'run',
      script: '/loadplane/scripts/test.js',
      vus: 12,
      durationMs: 120_000,
      stages: [],
      address: '0.0.0.0:6565',
      paused: true,
      linger: false,
      noSetup: false,
      noTeardown: false,
      outputs: [],
      quiet: true,
      verbose: false,
      segment: { start: { num: 1, den: 3 }, end: { num: 2, den: 3 } },
      segmentSequence: '0,1/3,2/3,1',
      positionals: ['/loadplane/scripts/test.js'],
    });
  });

  it.each([
    ['0,1/4,2/4,3/4,1', '1/4:2/4', undefined],
    ['0,1/4,2/4,3/4,1', '0:1/4', undefined],
    ['0,1/4,2/4,3/4,1', '3/4:1', undefined],
    ['0,0.5,1', '1/2:1', undefined],
    ['0,1/4,2/4,3/4,1', '1/4:3/4', "couldn't find segment 1/4:3/4 in sequence 0,1/4,2/4,3/4,1"],
    ['0,1/3,2/3,1', '1/4:2/4', "couldn't find segment 1/4:1/2 in sequence 0,1/3,2/3,1"],
    ['0,1/2', '1/2:1', "couldn't find segment 1/2:1 in sequence 0,1/2"],
    ['0,1/2,1', undefined, "couldn't find segment 0:1 in sequence 0,1/2,1"],
    [
      '$(LOADPLANE_K6_SEGMENT_SEQUENCE)',
      '0:1/2',
      'invalid argument "$(LOADPLANE_K6_SEGMENT_SEQUENCE)" for "--execution-segment-sequence" flag: not an increasing list of fractions',
    ],
    ['0,2/3,1/3,1', '0:2/3', 'invalid argument "0,2/3,1/3,1" for "--execution-segment-sequence" flag: not an increasing list of fractions'],
    ['1', '0:1', 'invalid argument "1" for "--execution-segment-sequence" flag: not an increasing list of fractions'],
  ])('sequence %s with segment %s: %s', (sequence, segment, problem) => {
    expect(segmentSequenceProblem(sequence, parseSegment(segment))).toBe(problem);
  });

  it('reads --linger / -l, --no-setup, --no-teardown', () => {
    expect(parseK6Argv(['k6', 'run', '--linger', '--no-setup', '--no-teardown', 'x.js'])).toMatchObject({ linger: true, noSetup: true, noTeardown: true });
    expect(parseK6Argv(['k6', 'run', '-l', 'x.js'])).toMatchObject({ linger: true, noSetup: false, noTeardown: false });
  });

  it('everything after -- is positional, as cobra parses it', () => {
    const argv = parseK6Argv(['k6', 'run', '--quiet', '--', '/s/test.js', '--address=0.0.0.0:6565', '--paused']);
    expect(argv).toMatchObject({
      script: '/s/test.js',
      positionals: ['/s/test.js', '--address=0.0.0.0:6565', '--paused'],
      paused: false,
      address: 'localhost:6565',
    });
  });

  it('defaults: not paused, k6 listening on localhost only', () => {
    expect(parseK6Argv(['k6', 'run', 'script.js'])).toMatchObject({ paused: false, address: 'localhost:6565', script: 'script.js' });
  });

  it('reads stages and short flags', () => {
    expect(parseK6Argv(['k6', 'run', '-s', '30s:10', '--stage=1m:20', '-u', '3', '-p', 'x.js'])).toMatchObject({
      vus: 3,
      stages: [
        { durationMs: 30_000, target: 10 },
        { durationMs: 60_000, target: 20 },
      ],
      paused: true,
      script: 'x.js',
    });
  });

  it('the script of k6 inspect', () => {
    expect(parseK6Argv(['k6', 'inspect', '--execution-requirements', '/s/a.js'])).toMatchObject({ subcommand: 'inspect', script: '/s/a.js' });
  });
});

describe('execution segments', () => {
  it.each([
    ['0:1/2', 0, 1, 1, 2],
    ['1/2', 0, 1, 1, 2],
    ['0.25:50%', 25, 100, 50, 100],
  ])('%s', (text, sn, sd, en, ed) => {
    expect(parseSegment(text)).toEqual({ start: { num: sn, den: sd }, end: { num: en, den: ed } });
  });

  it.each([3, 7, 10])('the shares of %i equal segments add up to the whole, for any whole', (n) => {
    for (const whole of [0, 1, 2, 10, 99, 1001]) {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += segmentShare(parseSegment(`${i}/${n}:${i + 1}/${n}`)!, whole);
      expect(sum).toBe(whole);
    }
  });
});
