/** How the bench sorts DynamoDB requests: the commands that only read (low-level and document names); every other command writes. */
const READ_COMMANDS = new Set([
  'GetItemCommand',
  'QueryCommand',
  'ScanCommand',
  'BatchGetItemCommand',
  'TransactGetItemsCommand',
  'GetCommand',
  'BatchGetCommand',
]);

export function isReadCommand(commandName: string | undefined): boolean {
  return READ_COMMANDS.has(commandName ?? '');
}
