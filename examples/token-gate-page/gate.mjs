// Checks a wallet against a Gatehouse token gate from the browser: the public check endpoint, a
// plain cross-origin GET (no credentials, no custom headers, so no preflight).
// The page is configured in its URL: ?gatehouse=<issuer>&org=<org slug>&gate=<gate id>.

/** The check's answer: `{ hasAccess, balance, reason }`, or throws with the API's error message. */
export async function checkGate({ gatehouse, org, gate, wallet, refresh = false }) {
  const url = new URL(
    `/identity/organizations/${encodeURIComponent(org)}/token-gates/${encodeURIComponent(gate)}/check`,
    gatehouse,
  );
  url.searchParams.set('walletAddress', wallet);
  if (refresh) url.searchParams.set('refresh', 'true');
  const res = await fetch(url);
  const body = await res.json();
  if (!res.ok) {
    const retry = res.headers.get('retry-after');
    const message = body.error?.details?.fields?.[0]?.message ?? body.error?.message ?? `HTTP ${res.status}`;
    throw new Error(retry ? `${message} (try again in ${retry} s)` : message);
  }
  return { ...body, cachedFor: res.headers.get('age') };
}

const REASONS = {
  insufficientBalance: 'This wallet does not hold enough of the token.',
  walletNotFound: 'This wallet has never been used on Solana.',
  gateDisabled: 'This gate is switched off.',
};

function describe({ hasAccess, balance, reason }) {
  if (hasAccess) return `Welcome in: this wallet holds ${balance} (raw units).`;
  return REASONS[reason] ?? 'No access.';
}

const params = new URLSearchParams(location.search);
const config = { gatehouse: params.get('gatehouse'), org: params.get('org'), gate: params.get('gate') };
const form = document.getElementById('check');
const result = document.getElementById('result');

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const wallet = form.elements.wallet.value.trim();
  result.textContent = 'Checking…';
  delete result.dataset.access;
  try {
    const answer = await checkGate({ ...config, wallet });
    result.dataset.access = answer.hasAccess ? 'granted' : 'denied';
    result.textContent = describe(answer);
  } catch (e) {
    result.dataset.access = 'error';
    result.textContent = `Could not check: ${e.message}`;
  }
});
