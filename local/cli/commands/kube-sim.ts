import { InvalidArgumentError, type Command } from 'commander';
import { untilInterrupted } from '../interrupted';
import { MAX_KUBE_SIM_TIME_SCALE, parseKubeSimTimeScale } from './run';

export { MAX_KUBE_SIM_TIME_SCALE };

export function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('expected a port 0-65535');
  return port;
}

/** `loadplane kube-sim`: a simulated cluster in the foreground until SIGINT/SIGTERM. */
export function registerKubeSim(program: Command): void {
  program
    .command('kube-sim')
    .description('run kube-sim, a simulated Kubernetes cluster (kubectl works against it), until interrupted')
    .option('--port <n>', 'port to listen on (0 = random)', parsePort, 0)
    .option('--time-scale <x>', `simulated seconds per real second (at most ${MAX_KUBE_SIM_TIME_SCALE})`, parseKubeSimTimeScale, 1)
    .action(async (opts: { port: number; timeScale: number }) => {
      const { startKubeSim } = await import('../../kube-sim/index');
      const sim = await startKubeSim({ port: opts.port, timeScale: opts.timeScale });
      console.log(`kube-sim listening on ${sim.url} (time scale ${sim.timeScale}x)`);
      console.log(`try: kubectl --server ${sim.url} get jobs -A`);
      await untilInterrupted();
      await sim.close();
      console.log('kube-sim stopped');
    });
}
