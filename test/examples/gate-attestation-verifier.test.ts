import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAttestationVerifier } from '../../examples/gate-attestation-verifier/verify.mjs';
import { type RunningServer, startServer } from '../helpers/server.js';
import { FakeSolanaRpc } from '../token-gates/fake-rpc.js';
import { runExample } from './run.js';

/** examples/gate-attestation-verifier against a running Gatehouse and a fake Solana RPC. */
describe('example: gate attestation verifier', () => {
  let rpc: FakeSolanaRpc;
  let srv: RunningServer;
  let mint: string;
  let holder: string;

  before(async () => {
    rpc = await new FakeSolanaRpc().start();
    mint = rpc.addMint('spl-token');
    holder = rpc.addWallet();
    rpc.addTokenAccount(holder, mint, '1500');
    srv = await startServer({ SOLANA_RPC_URL: rpc.url });
  });
  after(async () => {
    await srv?.stop();
    await rpc?.stop();
  });

  it('verifies a signed check offline and refuses forged, misdirected and expired ones', async () => {
    const { code, stdout, stderr } = await runExample('examples/gate-attestation-verifier/run.mjs', {
      ...srv.env,
      GATEHOUSE_URL: srv.url,
      MINT: mint,
      MIN_HOLDINGS: '1000',
      WALLET: holder,
    });
    assert.equal(code, 0, `${stdout}\n${stderr}`);
    assert.match(stdout, /^check: hasAccess=true balance=1500 reason=null$/m);
    assert.match(stdout, /^verified: has_access=true balance=1500 reason=null expires \S+Z$/m);
    assert.match(stdout, /^a forged answer: refused ERR_JWS_SIGNATURE_VERIFICATION_FAILED$/m);
    assert.match(stdout, /^another wallet: refused ERR_JWT_CLAIM_VALIDATION_FAILED$/m);
    assert.match(stdout, /^the same one 5 minutes later: refused ERR_JWT_EXPIRED$/m);

    // The verifier library on its own: the printed attestation, for the right and the wrong gate.
    const attestation = /^attestation (\S+)$/m.exec(stdout)?.[1] as string;
    const org = /^gate \S+ in org (\S+)$/m.exec(stdout)?.[1] as string;
    const gate = /^gate (\S+) in org/m.exec(stdout)?.[1] as string;
    const verify = await createAttestationVerifier({ issuer: srv.url });
    const claims = await verify(attestation, { org, wallet: holder, gate });
    assert.equal(claims.has_access, true);
    await assert.rejects(verify(attestation, { org, wallet: holder, gate: 'gate_other' }), {
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
    });
    await assert.rejects(verify(attestation, { org, wallet: holder, policy: 'gpol_x' }), {
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
    });
    await assert.rejects(verify(attestation, { org: 'another-org', wallet: holder, gate }), {
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
    });
  });
});
