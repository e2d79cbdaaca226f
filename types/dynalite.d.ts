/** dynalite 4 ships no types: just the part loadplane uses (an in-process DynamoDB over HTTP). */
declare module 'dynalite' {
  import type { Server } from 'node:http';

  interface DynaliteOptions {
    /** Milliseconds a new table stays CREATING (default 500). */
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    /** LevelDB directory; in memory when absent. */
    path?: string;
  }

  export default function dynalite(options?: DynaliteOptions): Server;
}
