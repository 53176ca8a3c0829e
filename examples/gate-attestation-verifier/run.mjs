// One command: a token gate in a fresh org of your local Gatehouse, a signed check of WALLET against
// it (`attest=true`), then that attestation verified offline the way a third party would (a Discord
// bot, a game server): with the issuer's JWKS only. A forged, an expired and a misdirected
// attestation are refused. MINT (default: USDC), MIN_HOLDINGS (raw units, default 1) and WALLET
// (default: a well-known address) set the check; Gatehouse reads balances from its SOLANA_RPC_URL.
import { api, consoleToken, createOrg, GATEHOUSE, say } from '../shared/gatehouse.mjs';
import { createAttestationVerifier } from './verify.mjs';

const wallet = process.env.WALLET ?? 'vines1vzrYbzLMRdu58ou5XTby4qAqVRLmqo36NKPTg';
const token = await consoleToken();
const org = await createOrg(token, 'attest');
const gate = await api(token, 'POST', `/identity/organizations/${org.slug}/token-gates`, {
  name: 'Holders',
  mintAddress: process.env.MINT ?? 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
  minHoldings: process.env.MIN_HOLDINGS ?? '1',
});
say(`gate ${gate.id} in org ${org.slug}`);

// 1. Someone (the wallet's owner, your web page) asks Gatehouse for a signed answer: a public call.
const query = new URLSearchParams({ walletAddress: wallet, attest: 'true' });
const res = await fetch(
  `${GATEHOUSE}/identity/organizations/${org.slug}/token-gates/${gate.id}/check?${query}`,
);
const answer = await res.json();
if (!res.ok) throw new Error(`check: HTTP ${res.status} ${JSON.stringify(answer)}`);
say(`check: hasAccess=${answer.hasAccess} balance=${answer.balance} reason=${answer.reason}`);
say(`attestation ${answer.attestation}`);

// 2. The third party gets only the attestation and trusts it without calling the check.
const verify = await createAttestationVerifier({ issuer: GATEHOUSE });
const expect = { org: org.slug, wallet, gate: gate.id };
const claims = await verify(answer.attestation, expect);
say(
  `verified: has_access=${claims.has_access} balance=${claims.balance} reason=${claims.reason} ` +
    `expires ${new Date(claims.exp * 1000).toISOString()}`,
);

const refused = async (label, attestation, exp = expect, v = verify) => {
  try {
    await v(attestation, exp);
    say(`${label}: ACCEPTED (wrong!)`);
    process.exitCode = 1;
  } catch (e) {
    say(`${label}: refused ${e.code}`);
  }
};
const [h, p, s] = answer.attestation.split('.');
const forged = Buffer.from(
  JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url')), has_access: !claims.has_access }),
).toString('base64url');
await refused('a forged answer', `${h}.${forged}.${s}`);
await refused('another wallet', answer.attestation, {
  ...expect,
  wallet: '11111111111111111111111111111111',
});
const later = await createAttestationVerifier({
  issuer: GATEHOUSE,
  now: () => new Date((claims.exp + 1) * 1000),
});
await refused('the same one 5 minutes later', answer.attestation, expect, later);
