/**
 * When a Gatling runner's load began, from the head of its log (EngineAdapter.startFromLog). The
 * runner script starts `gatling.sh` at the common instant; the bundle compiles the simulation, then
 * Gatling's Runner prints `Simulation <class> started...` and starts injecting users
 * (gatling-app/src/main/scala/io/gatling/app/Runner.scala, 3.10.5; the same text through 3.15,
 * test/fixtures/gatling-console/README.md). The kubelet's timestamp of that line is when the load began;
 * the line before it (the launcher's `GATLING_HOME is set to …`, or a compiler line) had been written
 * before it did.
 */
import type { LogStart } from '../engine-adapter';

/** Gatling's start line (Runner.scala: `Simulation ${simulationName} started...`). */
const STARTED = /^Simulation \S+ started\.\.\.$/;

/**
 * `2026-01-01T00:00:00.123456789Z <text>`: the kubelet's `timestamps=true` prefix (RFC 3339, nanoseconds,
 * UTC as the kubelet writes it; an offset is read too) and the line's text.
 */
const STAMPED = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d) (.*)$/;

/** A log line's kubelet timestamp (epoch ms, truncated to the ms) and text; undefined for a line without one. */
export function stampedLine(line: string): { at: number; text: string } | undefined {
  const m = STAMPED.exec(line);
  if (!m) return undefined;
  const seconds = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(seconds)) return undefined;
  const ms = m[2] === undefined ? 0 : Number(m[2].padEnd(3, '0').slice(0, 3));
  return { at: seconds + ms, text: m[4]!.replace(/\r$/, '') };
}

/**
 * The first `Simulation … started...` line of a timestamped log head: its time, and the time of the
 * stamped line before it. A last line without its newline (the head's byte limit cut it) is not read.
 */
export function gatlingStartFromLog(timestampedLogHead: string): LogStart | undefined {
  const lines = timestampedLogHead.split('\n');
  // The piece after the last newline: empty, or a line the limit cut.
  lines.pop();
  let previous: number | undefined;
  for (const line of lines) {
    const stamped = stampedLine(line);
    if (!stamped) continue;
    if (STARTED.test(stamped.text)) return { at: stamped.at, ...(previous !== undefined ? { after: previous } : {}) };
    previous = stamped.at;
  }
  return undefined;
}
