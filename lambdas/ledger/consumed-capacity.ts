/**
 * Every ledger request asks DynamoDB for its ConsumedCapacity (ReturnConsumedCapacity TOTAL, which
 * costs nothing) and charges the request units to the invocation's meter (core/invocation-meter.ts),
 * when the request is made inside one. Installed on the one document client (client.ts).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { currentMeter } from '../core/invocation-meter';

/** The commands that only read (low-level and document names); every other command writes. */
const READ_COMMANDS = new Set([
  'GetItemCommand',
  'QueryCommand',
  'ScanCommand',
  'BatchGetItemCommand',
  'TransactGetItemsCommand',
  'GetCommand',
  'BatchGetCommand',
  'TransactGetCommand',
]);

export function isReadCommand(commandName: string | undefined): boolean {
  return READ_COMMANDS.has(commandName ?? '');
}

type Consumed = { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> | undefined;

/** Request units of an answer: one ConsumedCapacity, or one per table (batch and transaction commands). */
export function capacityUnits(consumed: Consumed): number {
  const all = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  return all.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
}

export function meterConsumedCapacity(client: DynamoDBDocumentClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const meter = currentMeter();
      if (!meter) return next(args);
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const read = isReadCommand(context.commandName);
      if (read) meter.reads += 1;
      else meter.writes += 1;
      const result = await next(args);
      const units = capacityUnits((result.output as { ConsumedCapacity?: Consumed }).ConsumedCapacity);
      if (read) meter.readUnits += units;
      else meter.writeUnits += units;
      return result;
    },
    { step: 'initialize', name: 'meterConsumedCapacity' },
  );
}
