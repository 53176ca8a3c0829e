import { useOrg } from '../session.js';

const TABS = [
  ['gates', '', 'Gates'],
  ['policies', '/policies', 'Policies'],
  ['bulk', '/bulk-check', 'Bulk check'],
] as const;

/** The token gate screens' own tabs: gates, gate policies, the bulk check tester. */
export function GateTabs({ current }: { current: (typeof TABS)[number][0] }) {
  const { slug } = useOrg();
  return (
    <nav aria-label="Token gates" class="tabs">
      <ul>
        {TABS.map(([key, suffix, label]) => (
          <li key={key}>
            <a
              href={`/console/orgs/${slug}/token-gates${suffix}`}
              aria-current={key === current ? 'page' : undefined}
            >
              {label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
