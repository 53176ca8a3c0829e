import { useState } from 'preact/hooks';
import type { useAction } from '../hooks.js';
import { addressProblem } from '../lib/tokens.js';
import { Field, FormProblem } from './ui.js';

/** A check's query: the wallet, and `refresh` / `attest` only when asked for. */
export function checkQuery(walletAddress: string, refresh: boolean, attest: boolean) {
  return {
    walletAddress,
    ...(refresh ? { refresh: 'true' as const } : {}),
    ...(attest ? { attest: 'true' as const } : {}),
  };
}

/** The testers' "attest=true" switch: the answer comes back signed. */
export function AttestBox({ checked, onChange }: { checked: boolean; onChange: (on: boolean) => void }) {
  return (
    <label>
      <input type="checkbox" name="attest" checked={checked} onChange={() => onChange(!checked)} />
      Signed attestation (<code>attest=true</code>): a JWS of the answer, good for 5 minutes
    </label>
  );
}

/** The testers' wallet form: the address checked as base58 as you type, "Check" and "Refresh from the chain". */
export function WalletCheckForm({
  check,
  onCheck,
}: {
  check: ReturnType<typeof useAction>;
  onCheck: (wallet: string, refresh: boolean, attest: boolean) => unknown;
}) {
  const [wallet, setWallet] = useState('');
  const [attest, setAttest] = useState(false);
  const walletError = addressProblem(wallet);
  const blocked = !wallet || Boolean(walletError);
  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void onCheck(wallet, false, attest);
        }}
      >
        <Field
          label="Wallet address"
          name="walletAddress"
          autocomplete="off"
          spellcheck={false}
          value={wallet}
          error={walletError}
          problem={check.problem}
          onInput={(e) => setWallet((e.target as HTMLInputElement).value.trim())}
        />
        <AttestBox checked={attest} onChange={setAttest} />
        <div class="actions">
          <button type="submit" disabled={blocked} aria-busy={check.busy || undefined}>
            Check
          </button>
          <button
            type="button"
            class="secondary"
            disabled={blocked}
            onClick={() => void onCheck(wallet, true, attest)}
          >
            Refresh from the chain
          </button>
        </div>
      </form>
      <FormProblem problem={check.problem} />
    </>
  );
}
