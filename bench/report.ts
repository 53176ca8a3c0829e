/**
 * The one table `npm run bench` prints (bench/run.ts): every benchmark script, when BENCH_REPORT
 * names a file, appends its figures there as JSON lines (`report`); the runner reads them back and
 * formats them (`formatTable`), each path with its peer or limit measured in the same run.
 */
import { appendFileSync } from 'node:fs';

export interface BenchRow {
  /** What was measured, e.g. `client_credentials token (PostgreSQL)`. */
  path: string;
  figure: number;
  /** `req/s`, `flows/s`, `ms p99`, `deliveries/s`, … */
  unit: string;
  /** The peer or limit in the same run: `oidc-provider`, `bare Fastify, same bytes`, `RS256 limit`, `goal`. */
  peer?: string;
  peerFigure?: number;
  /** For times (ms): lower is better, so the ratio printed is peer / figure (≥ 1 meets a goal). */
  lowerIsBetter?: boolean;
  /** Server process CPU per request, µs (ours, and the peer's when measured). */
  cpuUs?: number;
  peerCpuUs?: number;
  note?: string;
}

/** Appends rows to the file named by BENCH_REPORT (no-op when a script runs alone). */
export function report(...rows: BenchRow[]): void {
  const file = process.env.BENCH_REPORT;
  if (!file) return;
  appendFileSync(file, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
}

/** Reads back what `report` wrote (blank and malformed lines are skipped). */
export function parseReport(text: string): BenchRow[] {
  const rows: BenchRow[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as BenchRow;
      if (typeof r.path === 'string' && typeof r.figure === 'number') rows.push(r);
    } catch {
      // a partial line of a script that was killed
    }
  }
  return rows;
}

/** The figure over its peer's (peer over figure for times); undefined without a peer figure. */
export function ratio(r: BenchRow): number | undefined {
  if (r.peerFigure === undefined || !Number.isFinite(r.peerFigure) || r.peerFigure <= 0 || r.figure <= 0)
    return undefined;
  return r.lowerIsBetter ? r.peerFigure / r.figure : r.figure / r.peerFigure;
}

const num = (x: number | undefined, unit = '') => {
  if (x === undefined || !Number.isFinite(x)) return '';
  const digits = Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2;
  return `${x.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits })}${unit}`;
};

/** A Markdown table (pastes into bench/README.md as it is), one line per row, plus notes under it. */
export function formatTable(rows: BenchRow[]): string {
  const head = [
    'path',
    'figure',
    'peer or limit (same run)',
    'peer',
    'ratio',
    'CPU µs/req',
    'peer CPU µs/req',
  ];
  const body = rows.map((r) => [
    r.path,
    `${num(r.figure)} ${r.unit}`,
    r.peer ?? '',
    r.peerFigure !== undefined ? `${num(r.peerFigure)} ${r.unit}` : '',
    num(ratio(r), '×'),
    num(r.cpuUs),
    num(r.peerCpuUs),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const right = [false, true, false, true, true, true, true];
  const cell = (s: string, i: number) => (right[i] ? s.padStart(widths[i]) : s.padEnd(widths[i]));
  const line = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (right[i] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  const notes = rows.filter((r) => r.note).map((r) => `- ${r.path}: ${r.note}`);
  return [line(head), rule, ...body.map(line), ...(notes.length ? ['', ...notes] : [])].join('\n');
}

/**
 * The rows scripts reported, each followed by its row against the RS256 signing limit measured in
 * the same run where it has one: a token is one signature (Gatehouse's row against oidc-provider,
 * and the bare signer's, whose distance from the limit is what HTTP and the load generator cost
 * here); a sign-in flow is two (the ID token and the access token).
 */
export function withSigningLimit(reported: BenchRow[], rs256: number): BenchRow[] {
  const rows: BenchRow[] = [];
  const against = (r: BenchRow, peer: string, peerFigure: number) =>
    rows.push({ ...r, path: `${r.path} vs ${peer}`, peer, peerFigure, peerCpuUs: undefined });
  for (const r of reported) {
    rows.push(r);
    if (
      (r.path.startsWith('client_credentials token') && r.peer === 'oidc-provider') ||
      r.path.startsWith('bare signer')
    )
      against(r, 'RS256 limit', rs256);
    if (r.path.startsWith('wallet sign-in flow')) against(r, 'RS256 limit / 2', rs256 / 2);
  }
  return rows;
}
