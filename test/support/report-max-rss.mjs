// Preload for child processes under test (`node --import <this> …`): at exit, writes the process's
// peak resident set size in KiB (process.resourceUsage().maxRSS) to the file named by LOADPLANE_MAXRSS_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.LOADPLANE_MAXRSS_FILE;
if (file) {
  process.on('exit', () => {
    try {
      writeFileSync(file, String(process.resourceUsage().maxRSS));
    } catch {
      // The test then reports the file missing.
    }
  });
}
