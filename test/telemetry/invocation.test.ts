/**
 * The invocation wrapper's guarantees that a whole run does not exercise (lambdas/telemetry/invocation.ts,
 * log-sinks.ts, telemetry.ts): an error leaves with its URLs redacted in place (the runtime, X-Ray and
 * Step Functions see it after us); a failing tracer never replaces the work's answer or error; the
 * ColdStart metric once per container; the API's log entries keep the invocation's run id and log a
 * 500 at ERROR; Metrics' own warnings are Logger lines.
 *
 * The telemetry is the real one writing to an array; where tracing must be on (Powertools turns it
 * off outside Lambda), a tracer whose segment calls throw stands in for X-Ray.
 */
import type { Tracer } from '@aws-lambda-powertools/tracer';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { invoke } from '../../lambdas/telemetry/invocation';
import { apiLogOn } from '../../lambdas/telemetry/log-sinks';
import { createTelemetry, type Telemetry } from '../../lambdas/telemetry/telemetry';

const context = { awsRequestId: 'req-1', functionName: 'loadplane-stage' } as Context;
const keys = { runId: 'k01invocation', stage: 'Collect' };

function captured(): { telemetry: Telemetry; lines: () => Array<Record<string, unknown>> } {
  const out: string[] = [];
  const telemetry = createTelemetry({ output: (line) => out.push(line) });
  return { telemetry, lines: () => out.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

/** A tracer with tracing on whose subsegment cannot be closed and whose segment cannot be set back. */
function brokenTracer(): Tracer {
  const subsegment = {
    close() {
      throw new Error('subsegment close failed');
    },
  };
  const segment = { addNewSubsegment: () => subsegment };
  let sets = 0;
  return {
    isTracingEnabled: () => true,
    getSegment: () => segment,
    setSegment() {
      if (++sets > 1) throw new Error('segment cannot be set back');
    },
    annotateColdStart() {},
    addServiceNameAnnotation() {},
    putAnnotation() {},
    addErrorAsMetadata() {
      throw new Error('metadata refused');
    },
  } as unknown as Tracer;
}

describe('an error thrown by the work', () => {
  it('is rethrown as the same object and name, its message and the stack head with URLs redacted', async () => {
    const { telemetry } = captured();
    const failure = Object.assign(new Error('GET https://hooks.example/services/T0K3N failed: 403'), { name: 'ChannelRejected' });
    const frames = failure.stack!.split('\n').slice(1).join('\n');
    const thrown = await invoke(telemetry, context, { keys, measured: true, work: async () => Promise.reject(failure) }).catch((e: unknown) => e);
    expect(thrown).toBe(failure);
    expect(failure.name).toBe('ChannelRejected');
    expect(failure.message).toBe('GET <url> failed: 403');
    expect(failure.stack).toContain('ChannelRejected: GET <url> failed: 403');
    expect(failure.stack).not.toContain('T0K3N');
    // The frames stay as they were (their file URLs locate the failure).
    expect(failure.stack!.endsWith(frames)).toBe(true);
  });

  it('keeps `$` sequences of the message as they are', async () => {
    const { telemetry } = captured();
    const failure = new Error("cost $& at http://x.example/a and $' more");
    await invoke(telemetry, context, { keys, measured: true, work: async () => Promise.reject(failure) }).catch(() => undefined);
    expect(failure.message).toBe("cost $& at <url> and $' more");
    expect(failure.stack!.split('\n')[0]).toBe("Error: cost $& at <url> and $' more");
  });

  it('whose message cannot be set is rethrown as it is', async () => {
    const { telemetry } = captured();
    const frozen = Object.freeze(new Error('at https://frozen.example/x'));
    expect(await invoke(telemetry, context, { keys, measured: true, work: async () => Promise.reject(frozen) }).catch((e: unknown) => e)).toBe(frozen);
  });
});

describe('a tracer that fails', () => {
  it("never replaces the work's answer", async () => {
    const telemetry = { ...captured().telemetry, tracer: brokenTracer() };
    expect(await invoke(telemetry, context, { keys, measured: true, work: async () => 42 })).toBe(42);
  });

  it("never replaces the work's error", async () => {
    const telemetry = { ...captured().telemetry, tracer: brokenTracer() };
    const failure = Object.assign(new Error('store down'), { name: 'TransientStoreError' });
    expect(await invoke(telemetry, context, { keys, measured: true, work: async () => Promise.reject(failure) }).catch((e: unknown) => e)).toBe(failure);
  });

  it('never keeps the work from running', async () => {
    const tracer = brokenTracer();
    tracer.putAnnotation = () => {
      throw new Error('annotation refused');
    };
    const telemetry = { ...captured().telemetry, tracer };
    expect(await invoke(telemetry, context, { keys, measured: true, work: async () => 'ran' })).toBe('ran');
  });
});

describe('ColdStart', () => {
  it('is counted by the first invocation of a container only, by function_name, with the run id and stage', async () => {
    const { telemetry, lines } = captured();
    for (let i = 0; i < 3; i++) await invoke(telemetry, context, { keys, measured: true, work: async () => i });
    const coldStarts = lines().filter((l) => 'ColdStart' in l);
    expect(coldStarts).toEqual([
      expect.objectContaining({ ColdStart: 1, function_name: 'loadplane-stage', service: 'loadplane', runId: keys.runId, stage: keys.stage }),
    ]);
    const doc = coldStarts[0] as { _aws: { CloudWatchMetrics: Array<{ Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> } };
    expect(doc._aws.CloudWatchMetrics[0]).toMatchObject({ Dimensions: [['service', 'function_name']], Metrics: [{ Name: 'ColdStart', Unit: 'Count' }] });
  });
});

describe('the API log sink', () => {
  it("an entry with an empty or absent run id keeps the invocation's run id", async () => {
    const { telemetry, lines } = captured();
    const log = apiLogOn(telemetry.logger);
    await invoke(telemetry, context, {
      keys: { runId: 'k01fromthepath', stage: 'Api' },
      measured: false,
      work: async () => {
        log({ message: 'empty', runId: '' });
        log({ message: 'undefined', runId: undefined });
        log({ message: 'named', runId: 'k01named' });
      },
    });
    const byMessage = Object.fromEntries(
      lines()
        .filter((l) => l.stage === 'Api' && 'message' in l)
        .map((l) => [l.message, l]),
    );
    expect(byMessage.empty).toMatchObject({ runId: 'k01fromthepath', level: 'WARN' });
    expect(byMessage.undefined).toMatchObject({ runId: 'k01fromthepath', level: 'WARN' });
    expect(byMessage.named).toMatchObject({ runId: 'k01named' });
  });

  it("an entry of level 'error' (the router's 500) is an ERROR line, with no level field of its own; others are WARN", async () => {
    const { telemetry, lines } = captured();
    const log = apiLogOn(telemetry.logger);
    await invoke(telemetry, context, {
      keys: { runId: '-', stage: 'Api' },
      measured: false,
      work: async () => {
        log({ message: 'request failed', level: 'error', error: 'Boom' });
        log({ message: 'request failed too', error: 'Boom' });
      },
    });
    expect(lines().find((l) => l.message === 'request failed')).toMatchObject({ level: 'ERROR', error: 'Boom', stage: 'Api', runId: '-' });
    expect(lines().find((l) => l.message === 'request failed too')).toMatchObject({ level: 'WARN' });
  });
});

describe("Metrics' own warnings", () => {
  it('are JSON lines of the Logger, not console output', () => {
    const { telemetry, lines } = captured();
    telemetry.metrics.addDimension('Stage', '');
    expect(lines()).toEqual([expect.objectContaining({ level: 'WARN', service: 'loadplane', message: expect.stringMatching(/dimension Stage/) })]);
  });
});
