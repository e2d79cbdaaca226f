/** "runners 0, 3 and 7" / "runner 2": the runners a stage's message is about. */
export function runnerList(indexes: number[]): string {
  if (indexes.length === 1) return `runner ${indexes[0]}`;
  return `runners ${indexes.slice(0, -1).join(', ')} and ${indexes[indexes.length - 1]}`;
}
