import { useEffect, useState } from 'preact/hooks';
import { type PreviewValues, previewUrl } from '../lib/preview.js';

/** How long the form must rest before the preview reloads (each reload renders the page again). */
const SETTLE_MS = 250;

/**
 * A live preview of the brand's hosted sign-in page: the page itself, rendered by the hosted page's
 * renderer with the form's unsaved values, in a same-origin frame of the console. It is inert: it
 * belongs to no sign-in, and the sandbox lets it neither submit forms nor navigate the console.
 */
export function SigninPreview(props: PreviewValues) {
  const src = previewUrl(props);
  const [shown, setShown] = useState(src);
  useEffect(() => {
    const timer = setTimeout(() => setShown(src), SETTLE_MS);
    return () => clearTimeout(timer);
  }, [src]);
  return (
    <figure>
      <iframe
        class="preview-frame"
        data-testid="signin-preview"
        title={`Preview of the sign-in page of ${props.name || 'this brand'}`}
        src={shown}
        sandbox="allow-scripts allow-same-origin"
        loading="lazy"
      />
      <figcaption>Live preview of the hosted sign-in page</figcaption>
    </figure>
  );
}
