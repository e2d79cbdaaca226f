/**
 * Plain HTTP over a node:http keep-alive agent, for figures that time requests without a client
 * library's overhead: the agent's sockets, once warmed by a first round, are reused by the next.
 */
import http from 'node:http';

/** Runs `work` with `count` keep-alive agents (each keeping up to `maxFreeSockets` idle sockets, default node's 256), destroyed after. */
export async function withAgents<T>(count: number, work: (agents: http.Agent[]) => Promise<T>, maxFreeSockets?: number): Promise<T> {
  const agents = Array.from({ length: count }, () => new http.Agent({ keepAlive: true, ...(maxFreeSockets !== undefined ? { maxFreeSockets } : {}) }));
  try {
    return await work(agents);
  } finally {
    for (const agent of agents) agent.destroy();
  }
}

/** Runs `work` with one keep-alive agent, destroyed after. */
export function withAgent<T>(work: (agent: http.Agent) => Promise<T>): Promise<T> {
  return withAgents(1, ([agent]) => work(agent!));
}

/** One request; resolves with its status and body once the response has ended. */
export function send(method: string, url: string, agent: http.Agent, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, ...(body ? { headers: { 'Content-Type': 'application/json' } } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
