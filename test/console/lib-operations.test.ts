import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import bs58 from 'bs58';
import {
  auditQueryString,
  displayName,
  isoToLocal,
  localToIso,
  pageLabel,
  readAuditQuery,
} from '../../console/src/lib/audit.js';
import {
  addressProblem,
  base58Length,
  rawAmountProblem,
  toRaw,
  toTokens,
} from '../../console/src/lib/tokens.js';
import { amountInUnit, kindLabel, reasonText } from '../../console/src/lib/gate-kinds.js';
import {
  describeRule,
  type GateRule,
  leaf,
  parseWallets,
  removePart,
  ruleGates,
  ruleProblems,
  toNode,
  toRule,
  update,
  withOp,
} from '../../console/src/lib/gate-rules.js';
import { choiceOf, eventsOf, receives, receiverSnippet } from '../../console/src/lib/webhooks.js';

// The browser logic of the token gate, webhook and audit log screens.

describe('console: token amounts and addresses', () => {
  it('accepts base58 of 32 bytes only', () => {
    const addr = bs58.encode(Buffer.alloc(32, 7));
    assert.equal(addressProblem(addr), null);
    assert.equal(addressProblem('11111111111111111111111111111111'), null, 'the system program, all zeros');
    assert.equal(base58Length(bs58.encode(Buffer.alloc(31, 7))), 31);
    assert.match(addressProblem(bs58.encode(Buffer.alloc(31, 7))) ?? '', /31 bytes/);
    assert.match(addressProblem('0OIl') ?? '', /base58/);
    assert.match(addressProblem('abc def') ?? '', /base58/);
    assert.equal(addressProblem(''), null, 'an empty field says nothing yet');
  });

  it('converts raw units and tokens exactly, at any size', () => {
    assert.equal(toTokens('1500000', 6), '1.5');
    assert.equal(toTokens('1', 6), '0.000001');
    assert.equal(toTokens('1000000', 6), '1');
    assert.equal(toTokens('42', 0), '42');
    assert.equal(toTokens('123456789012345678901234567890', 9), '123456789012345678901.23456789');
    assert.equal(toRaw('1.5', 6), '1500000');
    assert.equal(toRaw('.5', 2), '50');
    assert.equal(toRaw('0', 6), '0');
    assert.equal(toRaw('1.1234567', 6), null, 'more decimals than the mint has');
    assert.equal(toRaw('abc', 6), null);
    assert.equal(rawAmountProblem('12'), null);
    assert.match(rawAmountProblem('1.5') ?? '', /Digits only/);
  });
});

describe('console: webhook events', () => {
  const catalog = [
    { type: 'member.added', description: '', inWildcard: true },
    { type: 'webhook.test', description: '', inWildcard: true },
    { type: 'token.issued', description: '', inWildcard: false },
  ];

  it('`*` names only the opted-in events beside it; a list is sorted', () => {
    assert.deepEqual(eventsOf({ all: true, chosen: new Set(['member.added']) }, catalog), ['*']);
    assert.deepEqual(eventsOf({ all: true, chosen: new Set(['token.issued']) }, catalog), [
      '*',
      'token.issued',
    ]);
    assert.deepEqual(eventsOf({ all: false, chosen: new Set(['webhook.test', 'member.added']) }, catalog), [
      'member.added',
      'webhook.test',
    ]);
    assert.deepEqual(eventsOf({ all: false, chosen: new Set() }, catalog), []);
    const c = choiceOf(['*', 'token.issued']);
    assert.equal(c.all, true);
    assert.deepEqual([...c.chosen], ['token.issued']);
  });

  it('`*` does not receive the high-volume events', () => {
    assert.equal(receives(['*'], catalog[0]), true);
    assert.equal(receives(['*'], catalog[2]), false);
    assert.equal(receives(['*', 'token.issued'], catalog[2]), true);
  });

  it('the receiver snippet verifies with standardwebhooks over the raw body', () => {
    const s = receiverSnippet();
    assert.match(s, /from 'standardwebhooks'/);
    assert.match(s, /express\.raw/);
    assert.match(s, /wh\.verify\(req\.body, req\.headers\)/);
    assert.match(s, /whsec_/);
  });
});

describe('console: audit log view in the URL', () => {
  it('reads filters and paging from the query, dropping junk', () => {
    const v = readAuditQuery({
      action: ' webhook.created ',
      resourceId: '',
      limit: '100',
      offset: '200',
      x: 'y',
    });
    assert.deepEqual(v, { filters: { action: 'webhook.created' }, limit: 100, offset: 200 });
    assert.deepEqual(readAuditQuery({ limit: '7', offset: '-1' }), { filters: {}, limit: 50, offset: 0 });
  });

  it('writes a query that reads back to the same view; defaults are left out', () => {
    const v = {
      filters: { actorUserId: 'usr_1', since: '2026-01-01T00:00:00.000Z' },
      limit: 25,
      offset: 25,
    };
    const qs = auditQueryString(v);
    assert.equal(qs, '?actorUserId=usr_1&since=2026-01-01T00%3A00%3A00.000Z&limit=25&offset=25');
    assert.deepEqual(readAuditQuery(Object.fromEntries(new URLSearchParams(qs.slice(1)))), v);
    assert.equal(auditQueryString({ filters: {}, limit: 50, offset: 0 }), '');
  });

  it('turns datetime-local values into UTC instants and back', () => {
    const iso = localToIso('2026-03-04T05:06');
    assert.ok(iso);
    assert.equal(isoToLocal(iso), '2026-03-04T05:06');
    assert.equal(localToIso(''), undefined);
    assert.equal(localToIso('nonsense'), undefined);
    assert.equal(pageLabel(50, 25, 75), '51–75 of 75');
    assert.equal(pageLabel(0, 0, 0), '0 of 0');
  });

  it('names actors by name, username, wallet, or id', () => {
    assert.equal(displayName({ firstName: 'Ada', lastName: 'L', username: 'ada' }, 'usr_1'), 'Ada L');
    assert.equal(displayName({ username: 'ada' }, 'usr_1'), 'ada');
    assert.equal(
      displayName(
        {
          userPublicKeys: [
            { address: 'AAAAbbbbCCCC', isPrimary: false },
            { address: 'WxyZ1234QrsT', isPrimary: true },
          ],
        },
        'usr_1',
      ),
      'wallet WxyZ…QrsT',
    );
    assert.equal(displayName(undefined, 'usr_1'), 'usr_1');
  });
});

describe('console: gate kinds and the policy rule builder', () => {
  const rule: GateRule = {
    all: [{ gate: 'g1' }, { atLeast: 1, of: [{ gate: 'g2' }, { not: { gate: 'g1' } }] }],
  };

  it('round-trips rules through the builder and describes them with gate names', () => {
    assert.deepEqual(toRule(toNode(rule)), rule);
    assert.deepEqual(ruleGates(rule), ['g1', 'g2']);
    const names: Record<string, string> = { g1: 'Holders', g2: 'Apes' };
    assert.equal(
      describeRule(rule, (id) => names[id] ?? id),
      'all of (Holders, at least 1 of (Apes, not (Holders)))',
    );
  });

  it('switches operators keeping the parts, removes parts, and says what is missing', () => {
    const any = withOp(leaf('g1'), 'any');
    assert.deepEqual(toRule(any), { any: [{ gate: 'g1' }, { gate: '' }] });
    assert.deepEqual(ruleProblems(any), [['Part 2', 'Pick a gate.']]);
    const atLeast = withOp(any, 'atLeast');
    assert.equal(atLeast.atLeast, 1);
    assert.deepEqual(toRule(withOp(atLeast, 'not')), { not: { gate: 'g1' } });
    assert.deepEqual(toRule(withOp(atLeast, 'gate')), { gate: 'g1' });
    const three = update(atLeast, [], (n) => ({ ...n, atLeast: 2, parts: [...n.parts, leaf('g3')] }));
    const two = removePart(three, [], 1);
    assert.deepEqual(toRule(two), { atLeast: 2, of: [{ gate: 'g1' }, { gate: 'g3' }] });
    assert.deepEqual(toRule(removePart(two, [], 0)), { atLeast: 1, of: [{ gate: 'g3' }] }, 'N shrinks');
    assert.deepEqual(ruleProblems({ ...two, atLeast: 3 }), [['Rule', 'N is a whole number from 1 to 2.']]);
  });

  it('shows amounts in the kind’s unit and splits pasted wallets, duplicates kept', () => {
    assert.equal(kindLabel(undefined), 'Token');
    assert.equal(amountInUnit('sol', '1500000000'), '1500000000 lamports (1.5 SOL)');
    assert.equal(amountInUnit('collection', '1'), '1 NFT');
    assert.equal(amountInUnit('token', '1500000', 6), '1500000 raw units (1.5 tokens)');
    assert.equal(reasonText(null), 'none');
    assert.deepEqual(parseWallets(' a\nb, a;c  \n'), ['a', 'b', 'a', 'c']);
  });
});
