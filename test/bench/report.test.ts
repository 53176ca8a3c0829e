import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type BenchRow, formatTable, parseReport, ratio } from '../../bench/report.js';

/** The table `npm run bench` prints, on fake figures (no load is generated here). */
describe('bench report table', () => {
  const rows: BenchRow[] = [
    {
      path: 'client_credentials token',
      figure: 4958,
      unit: 'req/s',
      peer: 'oidc-provider',
      peerFigure: 3178,
      cpuUs: 365,
      peerCpuUs: 497,
    },
    { path: 'RS256 signing limit (2 cores)', figure: 5400, unit: 'signatures/s' },
    {
      path: 'audit log, no filter',
      figure: 8,
      unit: 'ms p99',
      peer: 'goal',
      peerFigure: 20,
      lowerIsBetter: true,
    },
    { path: 'webhooks drain', figure: 3865, unit: 'deliveries/s', note: 'PostgreSQL only' },
  ];

  it('prints one aligned Markdown line per path with its peer, ratio and CPU', () => {
    const text = formatTable(rows);
    const lines = text.split('\n');
    assert.match(lines[0], /^\| path +\| +figure \| peer or limit \(same run\) \|/);
    assert.match(lines[1], /^\|-+\|-+:\|/);
    const token = lines.find((l) => l.startsWith('| client_credentials token'));
    assert.ok(token);
    assert.match(token, /4,958 req\/s/);
    assert.match(token, /oidc-provider/);
    assert.match(token, /3,178 req\/s/);
    assert.match(token, /1\.56×/);
    assert.match(token, /\| +365 \| +497 \|$/);
    const audit = lines.find((l) => l.startsWith('| audit log'));
    assert.match(audit ?? '', /8\.00 ms p99 .* 2\.50×/);
    // Every table line has the same width.
    const table = lines.slice(0, 2 + rows.length);
    assert.equal(new Set(table.map((l) => l.length)).size, 1, text);
    assert.ok(lines.includes('- webhooks drain: PostgreSQL only'));
  });

  it('has no ratio without a peer figure, and reads back what scripts appended', () => {
    assert.equal(ratio(rows[1]), undefined);
    assert.equal(ratio({ ...rows[0], peerFigure: 0 }), undefined);
    const text = `${rows.map((r) => JSON.stringify(r)).join('\n')}\n{"path": "cut off`;
    assert.deepEqual(parseReport(text), rows);
  });
});
