/**
 * Ending a server's whole process tree: the child is its own process group (POSIX), so the
 * group is signalled (`SIGTERM`, then `SIGKILL`) and polled until none of it runs; on Windows
 * `taskkill /T /F`. Live groups are also signalled if this process exits without closing them.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import process from 'node:process';

export const IS_WINDOWS = process.platform === 'win32';
const POLL_MS = 50;

/**
 * Ends `child`'s process tree if it still runs: `SIGTERM` to its group, `SIGKILL` after
 * `graceMs` if any of it is left (on Windows, `taskkill` of the tree).
 */
export async function killProcessTree(child: ChildProcess, graceMs: number): Promise<void> {
  if (IS_WINDOWS) {
    if (child.exitCode === null && child.signalCode === null) await killWindowsTree(child, graceMs);
    return;
  }
  if (child.pid === undefined) return;
  const group = child.pid;
  if (await groupAlive(group)) {
    signalGroup(group, 'SIGTERM');
    await pollUntilGone(group, graceMs);
    if (await groupAlive(group)) {
      signalGroup(group, 'SIGKILL');
      await pollUntilGone(group, 1000);
    }
  }
}

/** Waits for `promise` at most `ms`; the timer never outlives the wait. */
export async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function signalGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // ESRCH: already gone.
  }
}

async function pollUntilGone(group: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())));
    if (!(await groupAlive(group))) return;
  }
}

/**
 * Whether any process of the group still runs. Zombies do not count: where nothing reaps
 * orphans (a container whose init does not), they would otherwise look alive forever.
 */
async function groupAlive(group: number): Promise<boolean> {
  try {
    process.kill(-group, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = await readFile(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // Gone meanwhile.
    }
    // "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === group && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

async function killWindowsTree(child: ChildProcess, graceMs: number): Promise<void> {
  const killer = spawn('taskkill', ['/T', '/F', '/PID', String(child.pid)], {
    stdio: 'ignore',
    windowsHide: true,
  });
  await within(
    new Promise<void>((resolve) => {
      killer.once('exit', () => resolve());
      killer.once('error', () => resolve());
    }),
    graceMs,
  );
  killer.unref();
}

// Process groups still running, signalled if this process exits without closing them.
const liveChildren = new Set<ChildProcess>();

function onParentExit(): void {
  for (const child of liveChildren) {
    if (child.pid === undefined) continue;
    try {
      if (IS_WINDOWS) {
        spawnSync('taskkill', ['/T', '/F', '/PID', String(child.pid)], {
          stdio: 'ignore',
          windowsHide: true,
        });
      } else {
        process.kill(-child.pid, 'SIGTERM');
      }
    } catch {
      // Already gone.
    }
  }
}

export function trackChild(child: ChildProcess): void {
  if (liveChildren.size === 0) process.on('exit', onParentExit);
  liveChildren.add(child);
}

export function untrackChild(child: ChildProcess): void {
  if (!liveChildren.delete(child)) return;
  if (liveChildren.size === 0) process.off('exit', onParentExit);
}
