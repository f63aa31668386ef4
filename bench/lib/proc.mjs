// Child processes under test, measured from outside through /proc so the load generator's own
// memory and CPU never mix into the figures.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

const CLK_TCK = 100; // Linux USER_HZ; /proc/<pid>/stat times are in these ticks.

/** Spawns `node args...` and resolves once every wanted stdout line prefix was seen. */
export function spawnNode(args, { wait = [], env, nodeFlags = [], timeoutMs = 20_000 } = {}) {
  const child = spawn(process.execPath, [...nodeFlags, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
    if (stderr.length > 20_000) stderr = stderr.slice(-10_000);
  });
  return new Promise((resolve, reject) => {
    const found = {};
    let buf = '';
    const timer = setTimeout(() => fail(new Error(`timed out waiting for ${wait.join(', ')}`)), timeoutMs);
    const fail = (err) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')}: ${err.message}\n${stderr}`));
    };
    child.once('exit', (code) => fail(new Error(`exited with ${code} before it was ready`)));
    child.once('error', fail);
    child.stdout.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        for (const prefix of wait) if (line.startsWith(prefix)) found[prefix] = line.slice(prefix.length).trim();
      }
      if (wait.every((p) => p in found)) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        child.stdout.removeAllListeners('data');
        child.stdout.resume();
        resolve({ child, lines: found, stderr: () => stderr });
      }
    });
  });
}

export function exited(child, timeoutMs = 15_000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pid ${child.pid} did not exit within ${timeoutMs} ms`)), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

function status(pid) {
  return readFileSync(`/proc/${pid}/status`, 'utf8');
}

function kbField(text, name) {
  const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Peak resident set size so far (VmHWM), in bytes. */
export function peakRss(pid = process.pid) {
  return kbField(status(pid), 'VmHWM');
}

/** Current resident set size (VmRSS), in bytes. */
export function currentRss(pid = process.pid) {
  return kbField(status(pid), 'VmRSS');
}

/** User + system CPU seconds the process has used so far (all its threads). */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at state (field 3).
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / CLK_TCK;
}

/** CPU use of a process over a stretch of wall time: 1.0 = one core fully busy. */
export class CpuMeter {
  constructor(pid) {
    this.pid = pid;
    this.reset();
  }
  reset() {
    this.cpu0 = this.pid === process.pid ? selfCpu() : cpuSeconds(this.pid);
    this.t0 = performance.now();
  }
  cores() {
    const cpu = this.pid === process.pid ? selfCpu() : cpuSeconds(this.pid);
    return (cpu - this.cpu0) / ((performance.now() - this.t0) / 1000);
  }
}

function selfCpu() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** CPU seconds all processes of the machine have used so far (from /proc/stat). */
export function machineCpuSeconds() {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return (user + nice + system + irq + softirq + steal) / CLK_TCK;
}
