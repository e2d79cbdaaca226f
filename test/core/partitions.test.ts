import { describe, expect, it } from 'vitest';
import { parseRoleArn, partitionOf, regionProblem, stsHost } from '../../lambdas/core/partitions';

describe('partitionOf', () => {
  // Regions and their partitions as AWS lists them (the SDK's partitions data, aws-iam-authenticator's table).
  it.each([
    ['us-east-1', 'aws', 'amazonaws.com'],
    ['eu-west-1', 'aws', 'amazonaws.com'],
    ['ap-southeast-7', 'aws', 'amazonaws.com'],
    ['il-central-1', 'aws', 'amazonaws.com'],
    ['mx-central-1', 'aws', 'amazonaws.com'],
    ['cn-north-1', 'aws-cn', 'amazonaws.com.cn'],
    ['cn-northwest-1', 'aws-cn', 'amazonaws.com.cn'],
    ['us-gov-west-1', 'aws-us-gov', 'amazonaws.com'],
    ['us-gov-east-1', 'aws-us-gov', 'amazonaws.com'],
    ['us-iso-east-1', 'aws-iso', 'c2s.ic.gov'],
    ['us-isob-east-1', 'aws-iso-b', 'sc2s.sgov.gov'],
    ['eu-isoe-west-1', 'aws-iso-e', 'cloud.adc-e.uk'],
    ['us-isof-south-1', 'aws-iso-f', 'csp.hci.ic.gov'],
    ['eusc-de-east-1', 'aws-eusc', 'amazonaws.eu'],
  ])('%s is in %s (%s)', (region, id, dnsSuffix) => {
    expect(partitionOf(region)).toMatchObject({ id, dnsSuffix });
  });

  it.each(['eu-west', 'EU-WEST-1', 'cn-north', 'us-gov', 'aws-global', 'eu_west_1', ''])('%j is no region, so in no partition', (region) => {
    expect(partitionOf(region)).toBeUndefined();
  });

  it("a region of a prefix no partition lists is aws's, as the SDK resolves it", () => {
    expect(partitionOf('xy-central-1')).toMatchObject({ id: 'aws', dnsSuffix: 'amazonaws.com' });
  });
});

describe('stsHost', () => {
  it.each([
    ['eu-central-1', 'sts.eu-central-1.amazonaws.com'],
    ['cn-north-1', 'sts.cn-north-1.amazonaws.com.cn'],
    ['us-gov-west-1', 'sts.us-gov-west-1.amazonaws.com'],
  ])('%s: %s', (region, host) => expect(stsHost(region)).toBe(host));
});

describe('regionProblem', () => {
  it('names the shape for a non-region, nothing for a region', () => {
    expect(regionProblem('Frankfurt')).toBe('must be an AWS region such as eu-west-1, got "Frankfurt"');
    expect(regionProblem('eu-west')).toBe('must be an AWS region such as eu-west-1, got "eu-west"');
    expect(regionProblem('cn-northwest-1')).toBeUndefined();
    expect(regionProblem('xy-central-1')).toBeUndefined();
  });
});

describe('parseRoleArn', () => {
  it.each([
    ['arn:aws:iam::123456789012:role/loadplane-access', { partition: 'aws', account: '123456789012', name: 'loadplane-access' }],
    ['arn:aws-cn:iam::123456789012:role/team/load/lp+access=1', { partition: 'aws-cn', account: '123456789012', name: 'lp+access=1' }],
    ['arn:aws-us-gov:iam::123456789012:role/lp', { partition: 'aws-us-gov', account: '123456789012', name: 'lp' }],
  ])('%s', (arn, parsed) => expect(parseRoleArn(arn)).toEqual(parsed));

  it.each([
    'arn:aws:iam::123456789012:user/alice',
    'arn:aws:iam::12345678901:role/short-account',
    'arn:aws:sts::123456789012:assumed-role/lp/session',
    'arn:aws-mars:iam::123456789012:role/lp',
    `arn:aws:iam::123456789012:role/${'x'.repeat(65)}`,
    'arn:aws:iam:eu-west-1:123456789012:role/regional',
  ])('%s is not a role ARN', (arn) => expect(parseRoleArn(arn)).toBeUndefined());
});
