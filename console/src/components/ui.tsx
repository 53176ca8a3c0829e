import type { ComponentChildren, HTMLAttributes, InputHTMLAttributes } from 'preact';

/** Wrapper props are spread onto the element they wrap; preact's per-element role unions are too narrow for that. */
// biome-ignore lint/suspicious/noExplicitAny: see above
type Loose = any;
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { type ApiProblem, missingReason } from '../lib/problems.js';

/** A labelled input with its hint and the API's message for this field, wired for screen readers. */
export function Field(
  props: {
    label: string;
    name: string;
    hint?: ComponentChildren;
    error?: string | null;
    problem?: ApiProblem;
    multiline?: boolean;
  } & Omit<InputHTMLAttributes<HTMLInputElement>, 'label' | 'name'> & { rows?: number },
) {
  const { label, name, hint, error, problem, multiline, ...rest } = props;
  const id = useId();
  const message = error ?? problem?.fields[name];
  const describedBy = [hint ? `${id}-hint` : '', message ? `${id}-error` : ''].filter(Boolean).join(' ');
  const common = {
    id,
    name,
    'aria-invalid': message ? true : undefined,
    'aria-describedby': describedBy || undefined,
  };
  return (
    <label for={id}>
      {label}
      {multiline ? <textarea {...common} {...(rest as Loose)} /> : <input {...common} {...(rest as Loose)} />}
      {hint && <small id={`${id}-hint`}>{hint}</small>}
      {message && (
        <small id={`${id}-error`} class="field-error">
          {message}
        </small>
      )}
    </label>
  );
}

/** A labelled select with its hint and the API's (or the form's) message, like `Field`. */
export function SelectField(props: {
  label: string;
  name: string;
  value: string;
  onChange: (value: string) => void;
  children: ComponentChildren;
  hint?: ComponentChildren;
  error?: string | null;
  problem?: ApiProblem;
  disabled?: boolean;
}) {
  const id = useId();
  const message = props.error ?? props.problem?.fields[props.name];
  const describedBy = [props.hint ? `${id}-hint` : '', message ? `${id}-error` : '']
    .filter(Boolean)
    .join(' ');
  // The label stands beside the select, not around it: a wrapping label's name would take in the option.
  return (
    <div class="select-field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        name={props.name}
        value={props.value}
        disabled={props.disabled}
        aria-invalid={message ? true : undefined}
        aria-describedby={describedBy || undefined}
        onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}
      >
        {props.children}
      </select>
      {props.hint && <small id={`${id}-hint`}>{props.hint}</small>}
      {message && (
        <small id={`${id}-error`} class="field-error">
          {message}
        </small>
      )}
    </div>
  );
}

/** The API's message for the whole form (fields are shown at their inputs). */
export function FormProblem({ problem }: { problem?: ApiProblem }) {
  if (!problem) return null;
  const text =
    problem.status === 403 ? `${problem.message} ${missingReason(problem.missing)}` : problem.message;
  return (
    <p role="alert" class="form-error">
      {text}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p aria-busy="true" role="status">
      Loading {what}…
    </p>
  );
}

export function LoadError({ problem }: { problem: ApiProblem }) {
  return (
    <p role="alert" class="form-error">
      {problem.status === 403 ? missingReason(problem.missing) : problem.message}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** A button disabled with its reason shown and announced when the user lacks the permission. */
export function GuardedButton(
  props: { denied: string | null; children: ComponentChildren } & HTMLAttributes<HTMLButtonElement> & {
      type?: 'button' | 'submit';
      disabled?: boolean;
    },
) {
  const { denied, children, ...rest } = props;
  const id = useId();
  return (
    <>
      <button
        {...(rest as Loose)}
        disabled={Boolean(denied) || rest.disabled}
        aria-describedby={denied ? id : undefined}
      >
        {children}
      </button>
      {denied && (
        <small id={id} class="reason">
          {denied}
        </small>
      )}
    </>
  );
}

/**
 * Copies text to the clipboard and says so in a live region. `more` completes the button's name for
 * screen readers where many stand side by side ("Copy JWS" + " of wallet 2 for Holders").
 */
export function CopyButton({ text, label, more }: { text: string; label: string; more?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="secondary outline copy"
      onClick={async () => {
        await navigator.clipboard.writeText(text);
        setDone(true);
      }}
    >
      {done ? 'Copied' : label}
      {more && <span class="visually-hidden"> {more}</span>}
      <span class="visually-hidden" aria-live="polite">
        {done ? ' copied to the clipboard' : ''}
      </span>
    </button>
  );
}

/**
 * A confirmation in a modal dialog. With `typeToConfirm` the user must type that text (the org's
 * slug, say) before the confirm button is enabled.
 */
export function Confirm(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  typeToConfirm?: string;
  busy?: boolean;
  problem?: ApiProblem;
  onConfirm: () => void;
  onCancel: () => void;
  /** Buttons that replace the confirm button (one per wallet that can sign, say). */
  actions?: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [typed, setTyped] = useState('');
  const id = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) {
      setTyped('');
      d.showModal();
    } else if (!props.open && d.open) d.close();
  }, [props.open]);
  const ready = !props.typeToConfirm || typed === props.typeToConfirm;
  return (
    <dialog ref={ref} aria-labelledby={`${id}-title`} onClose={props.onCancel}>
      <article>
        <h2 id={`${id}-title`}>{props.title}</h2>
        {props.children}
        {props.typeToConfirm && (
          <Field
            label={`Type ${props.typeToConfirm} to confirm`}
            name="confirm"
            value={typed}
            autocomplete="off"
            onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
          />
        )}
        <FormProblem problem={props.problem} />
        <footer class="dialog-actions">
          <button type="button" class="secondary" onClick={props.onCancel}>
            Cancel
          </button>
          {props.actions ?? (
            <button
              type="button"
              class="danger"
              disabled={!ready || props.busy}
              aria-busy={props.busy ? 'true' : undefined}
              onClick={props.onConfirm}
            >
              {props.confirmLabel}
            </button>
          )}
        </footer>
      </article>
    </dialog>
  );
}
