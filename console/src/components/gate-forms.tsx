import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { type Loaded, useAction } from '../hooks.js';
import type { ApiProblem } from '../lib/problems.js';
import { Confirm, Empty, Field, GuardedButton, LoadError, Loading } from './ui.js';

/** The name and description every gate and policy form starts with, with the API's messages. */
export function NameFields(props: {
  name: string;
  description: string;
  onName: (v: string) => void;
  onDescription: (v: string) => void;
  problem?: ApiProblem;
}) {
  return (
    <>
      <Field
        label="Name"
        name="name"
        required
        value={props.name}
        problem={props.problem}
        onInput={(e) => props.onName((e.target as HTMLInputElement).value)}
      />
      <Field
        label="Description"
        name="description"
        value={props.description}
        problem={props.problem}
        onInput={(e) => props.onDescription((e.target as HTMLInputElement).value)}
      />
    </>
  );
}

/**
 * "Delete …" and its confirmation. A 409 `conflict` (the thing is in use) is not shown as the API's
 * sentence but by `inUse`, which says what uses it and what to do.
 */
export function DeleteWithConfirm(props: {
  what: string;
  title: string;
  deny: string | null;
  remove: () => Promise<unknown>;
  onDeleted: () => void;
  inUse: (problem: ApiProblem) => ComponentChildren;
  children: ComponentChildren;
}) {
  const [confirming, setConfirming] = useState(false);
  const del = useAction();
  const label = `Delete ${props.what}`;
  return (
    <>
      <GuardedButton
        type="button"
        class="secondary outline"
        denied={props.deny}
        onClick={() => setConfirming(true)}
      >
        {label}
      </GuardedButton>
      <Confirm
        open={confirming}
        title={props.title}
        confirmLabel={label}
        busy={del.busy}
        problem={del.problem?.status === 409 ? undefined : del.problem}
        onCancel={() => {
          setConfirming(false);
          del.clear();
        }}
        onConfirm={async () => {
          const ok = await del.run(async () => {
            await props.remove();
            return true;
          });
          if (ok) props.onDeleted();
        }}
      >
        {props.children}
        {del.problem?.status === 409 && props.inUse(del.problem)}
      </Confirm>
    </>
  );
}

/**
 * A gate screen's list: loading, the load's error, the empty sentence, or a table of named rows
 * (the first column is the row's header, a link to the item).
 */
export function Listing<T extends { id: string; name: string }>(props: {
  loaded: Loaded<{ items: T[] }>;
  what: string;
  empty: string;
  href: (item: T) => string;
  columns: [string, (item: T) => ComponentChildren][];
}) {
  const { loaded } = props;
  if (loaded.loading && !loaded.data) return <Loading what={props.what} />;
  if (loaded.error) return <LoadError problem={loaded.error} />;
  if (!loaded.data) return null;
  if (loaded.data.items.length === 0) return <Empty>{props.empty}</Empty>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            {props.columns.map(([head]) => (
              <th scope="col" key={head}>
                {head}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {loaded.data.items.map((item) => (
            <tr key={item.id}>
              <th scope="row">
                <a href={props.href(item)}>{item.name}</a>
              </th>
              {props.columns.map(([head, cell]) => (
                <td key={head}>{cell(item)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
