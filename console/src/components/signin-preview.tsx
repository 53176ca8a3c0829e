import { METHOD_LABELS, previewColor } from '../lib/providers.js';

/**
 * A live preview of the brand's hosted sign-in page: the same layout, labels and colour rule as the
 * page Gatehouse serves (src/oidc/pages), drawn from the form's current values.
 */
export function SigninPreview(props: {
  name: string;
  logoUrl?: string | null;
  color?: string | null;
  privacyPolicyUrl?: string | null;
  termsUrl?: string | null;
  order: string[];
}) {
  const color = previewColor(props.color);
  return (
    <figure>
      <div
        class="preview"
        data-testid="signin-preview"
        data-color={color}
        role="img"
        aria-label={`Preview of the sign-in page of ${props.name || 'this brand'}`}
      >
        {props.logoUrl && <img src={props.logoUrl} alt="" />}
        <h3>{props.name || 'Brand name'}</h3>
        <p class="sub">
          to continue to <strong>Your app</strong>
        </p>
        {props.order.map((m) => (
          <span
            key={m}
            class={m === 'solana' ? 'pv-button primary' : 'pv-button'}
            style={m === 'solana' ? { background: color, borderColor: color } : { color, borderColor: color }}
          >
            {METHOD_LABELS[m] ?? m}
          </span>
        ))}
        {(props.privacyPolicyUrl || props.termsUrl) && (
          <footer>
            {props.privacyPolicyUrl && <span>Privacy policy</span>}
            {props.termsUrl && <span>Terms</span>}
          </footer>
        )}
      </div>
      <figcaption>Live preview of the hosted sign-in page</figcaption>
    </figure>
  );
}
