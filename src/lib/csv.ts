/**
 * One CSV cell (RFC 4180), safe to open in a spreadsheet: a value that a spreadsheet would read as a
 * formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) gets a leading `'`, so it
 * shows as text and never runs (OWASP "CSV injection"); a cell with a comma, quote or line break is
 * quoted, its quotes doubled.
 */
export function csvCell(value: string | null | undefined): string {
  let v = value ?? '';
  if (/^[=+\-@\t\r]/.test(v)) v = `'${v}`;
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** One CSV line, CRLF-terminated. */
export function csvRow(cells: Array<string | null | undefined>): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
