import { useState } from 'preact/hooks';
import { METHOD_LABELS, move } from '../lib/providers.js';

/**
 * The order of the sign-in methods: drag and drop with a pointer, or the move buttons with the
 * keyboard (each announces the new position).
 */
export function OrderEditor<T extends string>(props: {
  order: T[];
  disabled: boolean;
  onChange: (order: T[]) => void;
}) {
  const [dragging, setDragging] = useState<number | null>(null);
  const [said, setSaid] = useState('');
  const moveTo = (from: number, to: number) => {
    const next = move(props.order, from, to);
    if (next === props.order) return;
    props.onChange(next);
    setSaid(
      `${METHOD_LABELS[props.order[from]] ?? props.order[from]} moved to position ${to + 1} of ${next.length}.`,
    );
  };
  return (
    <fieldset>
      <legend>Sign-in methods, in order</legend>
      <ol class="order-list">
        {props.order.map((m, i) => (
          <li
            key={m}
            draggable={!props.disabled}
            data-method={m}
            onDragStart={(e) => {
              setDragging(i);
              e.dataTransfer?.setData('text/plain', m);
            }}
            onDragOver={(e) => e.preventDefault()}
            onDrop={(e) => {
              e.preventDefault();
              if (dragging !== null) moveTo(dragging, i);
              setDragging(null);
            }}
          >
            <span>
              {i + 1}. {METHOD_LABELS[m] ?? m}
            </span>
            <button
              type="button"
              class="secondary outline"
              disabled={props.disabled || i === 0}
              aria-label={`Move ${m} up`}
              onClick={() => moveTo(i, i - 1)}
            >
              ↑
            </button>
            <button
              type="button"
              class="secondary outline"
              disabled={props.disabled || i === props.order.length - 1}
              aria-label={`Move ${m} down`}
              onClick={() => moveTo(i, i + 1)}
            >
              ↓
            </button>
          </li>
        ))}
      </ol>
      <p class="visually-hidden" aria-live="polite">
        {said}
      </p>
    </fieldset>
  );
}
