import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SolanaRpc, SolanaRpcError, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '../../src/solana/rpc.js';
import { randomAddress } from './fake-rpc.js';

/** A node that answers every call with `answer(request)`, to feed the client malformed results. */
describe('Solana RPC client', () => {
  let server: Server;
  let url: string;
  let answer: (req: { id: number; method: string; params: unknown[] }) => unknown = () => ({});
  const owner = randomAddress();
  const mint = randomAddress();

  const account = (over: { program?: string; mint?: string; owner?: string; amount?: unknown } = {}) => ({
    pubkey: randomAddress(),
    account: {
      owner: over.program ?? TOKEN_PROGRAM_ID,
      lamports: 1,
      executable: false,
      data: {
        program: 'spl-token',
        parsed: {
          type: 'account',
          info: {
            mint: over.mint ?? mint,
            owner: over.owner ?? owner,
            tokenAmount: { amount: over.amount ?? '1' },
          },
        },
      },
    },
  });
  const tokenAccounts = (value: unknown[]) => (req: { id: number }) => ({
    jsonrpc: '2.0',
    id: req.id,
    result: { context: { slot: 1 }, value },
  });

  before(async () => {
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer(body)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('sums accounts of both token programs exactly and sends the mint filter with jsonParsed', async () => {
    let seen: unknown[] = [];
    answer = (req) => {
      seen = req.params;
      return tokenAccounts([
        account({ amount: '18446744073709551615' }),
        account({ program: TOKEN_2022_PROGRAM_ID, amount: '2' }),
      ])(req);
    };
    const balance = await new SolanaRpc({ url }).getTokenBalance(owner, mint);
    assert.deepEqual(balance, { walletFound: true, amount: 18446744073709551617n, tokenAccounts: 2 });
    assert.deepEqual(seen, [owner, { mint }, { commitment: 'confirmed', encoding: 'jsonParsed' }]);
  });

  it('refuses token accounts it cannot vouch for rather than guessing', async () => {
    const rpc = new SolanaRpc({ url });
    const bad = [
      account({ mint: randomAddress() }),
      account({ owner: randomAddress() }),
      account({ program: randomAddress() }),
      account({ amount: 12 }),
      account({ amount: '1.5' }),
      { pubkey: randomAddress(), account: { owner: TOKEN_PROGRAM_ID, data: ['AAAA', 'base64'] } },
    ];
    for (const item of bad) {
      answer = tokenAccounts([item]);
      await assert.rejects(rpc.getTokenBalance(owner, mint), SolanaRpcError, JSON.stringify(item));
    }
  });

  it('refuses a response with another id, no result, or an error', async () => {
    const rpc = new SolanaRpc({ url });
    answer = (req) => ({ jsonrpc: '2.0', id: req.id + 1, result: null });
    await assert.rejects(rpc.call('getSlot', []), SolanaRpcError);
    answer = (req) => ({ jsonrpc: '2.0', id: req.id });
    await assert.rejects(rpc.call('getSlot', []), SolanaRpcError);
    answer = (req) => ({ jsonrpc: '2.0', id: req.id, error: { code: -32602, message: 'Invalid param' } });
    await assert.rejects(rpc.call('getSlot', []), (err: SolanaRpcError) => err.rpcCode === -32602);
  });

  it('tells an unknown wallet (no account, no token accounts) from a known one', async () => {
    const rpc = new SolanaRpc({ url });
    for (const [value, found] of [
      [null, false],
      [{ lamports: 5, owner: '11111111111111111111111111111111', executable: false }, true],
    ] as const) {
      answer = (req) =>
        req.method === 'getAccountInfo'
          ? { jsonrpc: '2.0', id: req.id, result: { context: { slot: 1 }, value } }
          : tokenAccounts([])(req);
      assert.deepEqual(await rpc.getTokenBalance(owner, mint), {
        walletFound: found,
        amount: 0n,
        tokenAccounts: 0,
      });
    }
  });
});
