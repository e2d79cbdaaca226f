/** Shared pieces of the ledger suites: a settable clock, fresh run ids, and the 50-caller race. */
import {
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type GetCommandInput,
  type PutCommandInput,
  type QueryCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { Ledger } from '../../lambdas/ledger/ledger';
import type { LedgerTable } from '../support/dynamo-backends';
import { storedSpec } from '../support/stored-spec';

/** Callers in every race: each its own owner/token, all at once over HTTP. */
export const RACERS = 50;

export interface TestClock {
  now: () => number;
  advance(ms: number): void;
}

export function testClock(startIso = '2026-03-15T12:00:00.000Z'): TestClock {
  let now = Date.parse(startIso);
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

export function ledgerOn(table: LedgerTable, clock: TestClock = testClock()): Ledger {
  return new Ledger({ client: table.client, tableName: table.tableName, clock: clock.now });
}

/** What a test does before the ledger's requests of one kind (ledgerInterleaved). */
export interface Interleave {
  /** Before each update (a conditional write). */
  update?: (input: UpdateCommandInput) => Promise<void>;
  /** Before each put (a conditional create). */
  put?: (input: PutCommandInput) => Promise<void>;
  /** Before each consistent read: after a failed condition, the fallback read of a store that returns no item with the failure (dynalite). */
  read?: (input: GetCommandInput) => Promise<void>;
  /** Before each query (a partition's items, a stage's output chunks). */
  query?: (input: QueryCommandInput) => Promise<void>;
}

/**
 * A ledger on `table` whose requests first await `before`'s step for their kind: there a test writes to
 * the item itself (through `table.client`), as another writer coming in between two of the ledger's own
 * requests would. The ledger's requests still go to the real table, conditions and all.
 */
export function ledgerInterleaved(table: LedgerTable, clock: TestClock, before: Interleave): Ledger {
  const send = async (command: unknown) => {
    if (command instanceof UpdateCommand) await before.update?.(command.input);
    if (command instanceof PutCommand) await before.put?.(command.input);
    if (command instanceof GetCommand) await before.read?.(command.input);
    if (command instanceof QueryCommand) await before.query?.(command.input);
    return table.client.send(command as UpdateCommand);
  };
  const client = new Proxy(table.client, { get: (target, prop, receiver) => (prop === 'send' ? send : Reflect.get(target, prop, receiver)) });
  return new Ledger({ client: client as DynamoDBDocumentClient, tableName: table.tableName, clock: clock.now });
}

/** A fresh run id in the shape of real ones (lowercase, 26 characters). */
export const newRunId = (): string => ulid().toLowerCase();

export const apiTrigger = { kind: 'api', caller: 'tester', idempotencyKey: 'key-1' } as const;

export async function givenRun(ledger: Ledger, runId = newRunId()): Promise<string> {
  await ledger.createRun({ runId, spec: storedSpec({ engine: 'k6', parallelism: 2 }), specHash: 'hash-a', trigger: apiTrigger });
  return runId;
}

/** Runs `call` for callers 0..RACERS-1 concurrently; returns fulfilled values and rejections apart. */
export async function race<T>(call: (caller: number) => Promise<T>): Promise<{ values: T[]; errors: unknown[] }> {
  const settled = await Promise.allSettled(Array.from({ length: RACERS }, (_, i) => call(i)));
  return {
    values: settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])),
    errors: settled.flatMap((s) => (s.status === 'rejected' ? [s.reason] : [])),
  };
}

export const countBy = <T>(items: T[], key: (item: T) => string): Record<string, number> =>
  items.reduce<Record<string, number>>((acc, item) => ({ ...acc, [key(item)]: (acc[key(item)] ?? 0) + 1 }), {});

export const errorNames = (errors: unknown[]): Record<string, number> => countBy(errors, (e) => (e as Error).name);
