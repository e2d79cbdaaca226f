import { describe, expect, it } from 'vitest';
import { clusterLocation, DEFAULT_CONFIG, loadConfig, loadLedgerSettings } from '../../lambdas/core/config';
import { validateSpec } from '../../lambdas/core/spec';
import { NotifyPolicy } from '../../lambdas/core/status';

describe('deployment config', () => {
  it('defaults to the documented limits', () => {
    const config = loadConfig({});
    expect(config).toEqual(DEFAULT_CONFIG);
    expect(config.maxParallelism).toBe(100);
    expect(config.maxRunDurationSeconds).toBe(86_400);
    expect(config.maxPrepareSeconds).toBe(3_600);
    expect(config.maxReadySeconds).toBe(3_600);
    expect(config.maxScriptBytes).toBe(524_288);
  });

  it('overlays LOADPLANE_CONFIG on the defaults', () => {
    const config = loadConfig({
      LOADPLANE_CONFIG: JSON.stringify({ maxParallelism: 8, allowedClusters: [{ name: 'prod', namespaces: ['load'] }] }),
    });
    expect(config.maxParallelism).toBe(8);
    expect(config.allowedClusters).toEqual([{ name: 'prod', namespaces: ['load'] }]);
    expect(config.maxScriptBytes).toBe(DEFAULT_CONFIG.maxScriptBytes);
  });

  it('a LOADPLANE_CONFIG written before the phase limits existed gets their defaults', () => {
    const config = loadConfig({ LOADPLANE_CONFIG: JSON.stringify({ maxRunDurationSeconds: 7_200 }) });
    expect(config).toMatchObject({ maxRunDurationSeconds: 7_200, maxPrepareSeconds: 3_600, maxReadySeconds: 3_600 });
  });

  it("the deployment's notify policy is the default of a spec that names none; a spec's own policy wins", () => {
    const config = loadConfig({ LOADPLANE_CONFIG: JSON.stringify({ notify: { defaultChannels: [], secretPrefix: 'p/', defaultPolicy: 'atLeastOnce' } }) });
    const spec = { name: 'n', engine: 'k6', parallelism: 1, script: { filename: 's.js', inline: 'export default function () {}' } };
    const without = validateSpec(spec, config);
    const own = validateSpec({ ...spec, notify: { policy: 'atMostOnce' } }, config);
    expect(without.ok && without.spec.notify.policy).toBe(NotifyPolicy.atLeastOnce);
    expect(own.ok && own.spec.notify.policy).toBe(NotifyPolicy.atMostOnce);
    // A LOADPLANE_CONFIG written before the field existed keeps at-most-once.
    expect(loadConfig({ LOADPLANE_CONFIG: JSON.stringify({ notify: { defaultChannels: [], secretPrefix: 'p/' } }) }).notify.defaultPolicy).toBe(
      NotifyPolicy.atMostOnce,
    );
  });

  it.each([
    ['not json', '{', /not valid JSON/],
    ['a zero phase limit', JSON.stringify({ maxReadySeconds: 0 }), /maxReadySeconds/],
    ['a fractional phase limit', JSON.stringify({ maxPrepareSeconds: 1.5 }), /maxPrepareSeconds/],
    ['a bad limit', JSON.stringify({ maxParallelism: 0 }), /maxParallelism/],
    ['an empty allow-list', JSON.stringify({ allowedImagePrefixes: [] }), /allowedImagePrefixes/],
  ])('rejects %s, naming the field', (_label, raw, message) => {
    expect(() => loadConfig({ LOADPLANE_CONFIG: raw })).toThrow(message);
  });

  it('maxParallelism may be raised to 1,000 runners and no further, the error naming the field and the limit', () => {
    expect(loadConfig({ LOADPLANE_CONFIG: JSON.stringify({ maxParallelism: 1000 }) }).maxParallelism).toBe(1000);
    expect(() => loadConfig({ LOADPLANE_CONFIG: JSON.stringify({ maxParallelism: 1001 }) })).toThrow(/maxParallelism: must be at most 1000\b/);
  });

  it('reads ledger settings, with an endpoint only when one is set', () => {
    expect(loadLedgerSettings({})).toEqual({ tableName: 'loadplane', endpoint: undefined, region: 'us-east-1' });
    expect(loadLedgerSettings({ LOADPLANE_TABLE: 't', LOADPLANE_DYNAMODB_ENDPOINT: 'http://127.0.0.1:1', AWS_REGION: 'eu-west-1' })).toEqual({
      tableName: 't',
      endpoint: 'http://127.0.0.1:1',
      region: 'eu-west-1',
    });
  });

  it('an allowed cluster may name its region, its EKS name and a role; where it is follows from them, the stack region by default', () => {
    const role = 'arn:aws:iam::210987654321:role/loadplane-access';
    const config = loadConfig({
      LOADPLANE_CONFIG: JSON.stringify({
        allowedClusters: [
          { name: 'perf', namespaces: ['lt'] },
          { name: 'perf-us', eksName: 'perf', region: 'us-east-1', roleArn: role, namespaces: ['lt'] },
        ],
      }),
    });
    expect(config.allowedClusters.map((c) => clusterLocation(c, 'eu-west-1'))).toEqual([
      { name: 'perf', eksName: 'perf', region: 'eu-west-1' },
      { name: 'perf-us', eksName: 'perf', region: 'us-east-1', roleArn: role },
    ]);
  });

  it('a bad region, EKS name or role, or a role of another partition than the region, is named with every other problem', () => {
    const clusters = [
      { name: 'a', region: 'Frankfurt', namespaces: ['lt'] },
      { name: 'b', region: 'eu-west', eksName: 'has space', namespaces: ['lt'] },
      { name: 'c', roleArn: 'arn:aws:iam::123:role/short', namespaces: ['lt'] },
      { name: 'd', region: 'cn-north-1', roleArn: 'arn:aws:iam::123456789012:role/lp', namespaces: ['lt'] },
    ];
    expect(() => loadConfig({ LOADPLANE_CONFIG: JSON.stringify({ allowedClusters: clusters }) })).toThrow(
      'LOADPLANE_CONFIG is invalid: ' +
        [
          'allowedClusters.0.region: must be an AWS region such as eu-west-1, got "Frankfurt"',
          'allowedClusters.1.region: must be an AWS region such as eu-west-1, got "eu-west"',
          'allowedClusters.1.eksName: must be an EKS cluster name (letters, digits, - and _, at most 100)',
          'allowedClusters.2.roleArn: must be an IAM role ARN (arn:<partition>:iam::<12-digit account>:role/<name>), got "arn:aws:iam::123:role/short"',
          "allowedClusters.3.roleArn: is a role of partition aws, but the cluster's region cn-north-1 is in aws-cn",
        ].join('; '),
    );
  });
});
