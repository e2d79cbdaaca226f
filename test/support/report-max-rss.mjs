// Preload for child processes under test (`node --import <this> …`): at exit, writes the process's
// own peak resident set size in KiB to the file named by LOADPLANE_MAXRSS_FILE. On Linux that is
// VmHWM from /proc/self/status: getrusage's maxRSS (process.resourceUsage().maxRSS) survives exec and
// starts from the parent's RSS at fork, so a child of a 276 MB vitest worker reported 276 MB whatever
// it did. maxRSS is the fallback where /proc is missing.
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.env.LOADPLANE_MAXRSS_FILE;

/** This process's own peak RSS in KiB (VmHWM), or undefined without /proc. */
function ownPeakRssKb() {
  try {
    const match = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

if (file) {
  process.on('exit', () => {
    try {
      writeFileSync(file, String(ownPeakRssKb() ?? process.resourceUsage().maxRSS));
    } catch {
      // The test then reports the file missing.
    }
  });
}
