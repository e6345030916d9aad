import { execFile } from 'node:child_process';

export interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly command: string;
}

/** Every process on the machine (`ps`, POSIX: Linux and macOS) but that `ps` itself, or none when `ps` cannot run. */
export function processTable(): Promise<ProcessInfo[]> {
  return new Promise((resolve) => {
    const ps = execFile('ps', ['-A', '-o', 'pid=,ppid=,comm='], { maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
      if (err) return resolve([]);
      resolve(
        stdout.split('\n').flatMap((line) => {
          const m = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
          return m && Number(m[1]) !== ps.pid ? [{ pid: Number(m[1]), ppid: Number(m[2]), command: (m[3] ?? '').trim() }] : [];
        }),
      );
    });
  });
}

/** The processes below `pid` (children, their children, …), nearest first. */
export async function descendants(pid: number, table?: readonly ProcessInfo[]): Promise<ProcessInfo[]> {
  const all = table ?? (await processTable());
  const out: ProcessInfo[] = [];
  let level = [pid];
  while (level.length > 0) {
    const next = all.filter((p) => level.includes(p.ppid) && p.pid !== process.pid);
    out.push(...next);
    level = next.map((p) => p.pid);
  }
  return out;
}

/** Whether a process with this pid exists (EPERM: it does, another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Ends whatever this process still has running below it once its own stop is done: a child that
 * some part of the service started (a store, a worker process, an archive dump) and did not stop.
 * SIGTERM, then SIGKILL after `graceMs`. Returns the processes it had to end (so the log names them).
 */
export async function endDescendants(graceMs: number, pid = process.pid): Promise<ProcessInfo[]> {
  const left = await descendants(pid);
  if (left.length === 0) return [];
  for (const p of left) signal(p.pid, 'SIGTERM');
  const until = Date.now() + graceMs;
  while (left.some((p) => processAlive(p.pid)) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  for (const p of left) if (processAlive(p.pid)) signal(p.pid, 'SIGKILL');
  return left;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}
