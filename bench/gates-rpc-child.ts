// The bulk benchmark's Solana node, in a process of its own (as a real node is): the fake RPC of the
// tests answering every call after RPC_LATENCY_MS (default 20). Seeds WALLETS wallets (default 100)
// holding a classic SPL token, a Token-2022 token, wrapped SOL and NFTs of a verified collection,
// prints one JSON line { url, wallets, mints }, then answers `{ calls: true }` IPC messages with its
// call counts (and resets them).
import { WRAPPED_SOL_MINT } from '../src/solana/metadata.js';
import { FakeSolanaRpc } from '../test/token-gates/fake-rpc.js';

const rpc = await new FakeSolanaRpc().start();
rpc.latencyMs = Number(process.env.RPC_LATENCY_MS ?? 20);
rpc.addWrappedSolMint();
const mints = {
  token: rpc.addMint('spl-token'),
  token2022: rpc.addMint('spl-token-2022'),
  other: rpc.addMint('spl-token'),
  collection: rpc.addMint('spl-token', 0),
};
const wallets: string[] = [];
for (let i = 0; i < Number(process.env.WALLETS ?? 100); i++) {
  const w = rpc.addWallet(undefined, 1_000_000 + i);
  rpc.addTokenAccount(w, mints.token, String(100 * (i % 30)));
  if (i % 2 === 0) rpc.addTokenAccount(w, mints.token2022, '5');
  if (i % 3 === 0) rpc.addTokenAccount(w, WRAPPED_SOL_MINT, '2000000');
  if (i % 4 === 0) await rpc.addNft(w, mints.collection, true);
  if (i % 5 === 0) await rpc.addNft(w, mints.collection, false);
  wallets.push(w);
}
process.on('message', () => {
  process.send?.({ calls: Object.fromEntries(rpc.calls), total: rpc.totalCalls });
  rpc.resetCalls();
});
process.on('disconnect', () => {
  void rpc.stop().then(() => process.exit(0));
});
console.log(JSON.stringify({ url: rpc.url, wallets, mints }));
