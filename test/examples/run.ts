import { type ChildProcess, spawn } from 'node:child_process';

export const ROOT = new URL('../..', import.meta.url).pathname;

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `command args` from the repository root to its end, collecting both outputs. */
export function runCommand(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Runs `node <script> [args]` from the repository root, as the example's README says, to its end. */
export function runExample(script: string, env: NodeJS.ProcessEnv, args: string[] = []): Promise<Ran> {
  return runCommand(process.execPath, [script, ...args], env);
}

/** Starts a long-running example and resolves with the first stdout line matching `ready`. */
export async function startExample(
  script: string,
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  args: string[] = [],
): Promise<{ child: ChildProcess; match: RegExpExecArray; output: () => string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, env });
  let out = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = ready.exec(out);
      if (m) resolve(m);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (d) => {
      out += d;
    });
    child.once('exit', (code) =>
      reject(new Error(`${script} exited (${code}) before it was ready:\n${out}`)),
    );
  });
  return {
    child,
    match,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
