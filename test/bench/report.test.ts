import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type BenchRow, formatTable, parseReport, ratio, withSigningLimit } from '../../bench/report.js';

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

  it('adds the signing limit beside the token against oidc-provider, the bare signer and the flow', () => {
    const token = { path: 'client_credentials token (PostgreSQL)', figure: 4000, unit: 'req/s', cpuUs: 400 };
    const reported: BenchRow[] = [
      { ...token, peer: 'oidc-provider', peerFigure: 2500, peerCpuUs: 600 },
      {
        ...token,
        path: `${token.path} vs bare signer`,
        peer: 'bare signer',
        peerFigure: 5000,
        peerCpuUs: 320,
      },
      {
        path: 'bare signer (one RS256 a request, nothing else)',
        figure: 5000,
        unit: 'req/s',
        peer: 'oidc-provider',
        peerFigure: 2500,
      },
      { path: 'wallet sign-in flow (PostgreSQL)', figure: 600, unit: 'flows/s' },
      {
        path: '/userinfo (PostgreSQL)',
        figure: 14000,
        unit: 'req/s',
        peer: 'bare Fastify',
        peerFigure: 70000,
      },
    ];
    const rows = withSigningLimit(reported, 6000);
    assert.deepEqual(
      rows.map((r) => [r.path, r.peer, r.peerFigure]),
      [
        ['client_credentials token (PostgreSQL)', 'oidc-provider', 2500],
        ['client_credentials token (PostgreSQL) vs RS256 limit', 'RS256 limit', 6000],
        ['client_credentials token (PostgreSQL) vs bare signer', 'bare signer', 5000],
        ['bare signer (one RS256 a request, nothing else)', 'oidc-provider', 2500],
        ['bare signer (one RS256 a request, nothing else) vs RS256 limit', 'RS256 limit', 6000],
        ['wallet sign-in flow (PostgreSQL)', undefined, undefined],
        ['wallet sign-in flow (PostgreSQL) vs RS256 limit / 2', 'RS256 limit / 2', 3000],
        ['/userinfo (PostgreSQL)', 'bare Fastify', 70000],
      ],
    );
    // A limit row keeps the figure and our CPU, never the peer's CPU (a limit has none).
    const limitRow = rows[1];
    assert.equal(limitRow.figure, 4000);
    assert.equal(limitRow.cpuUs, 400);
    assert.equal(limitRow.peerCpuUs, undefined);
    assert.equal(ratio(limitRow)?.toFixed(2), '0.67');
  });
});
