/**
 * The test files a run lost to a crash of the JavaScript engine itself, not to a failing test: the
 * run's failures are all whole files (reported at line 1, column 1, with no test of theirs failing)
 * and the output carries at least as many V8 fatal-check banners ("# Fatal error in …" followed by
 * "# Check failed: …") as there are such files. Node 24.21's V8 was seen to abort this way once,
 * freeing PGlite's WebAssembly code after every test of api-keys.test.ts had passed
 * (`Check failed: jit_page_->allocations_.erase(addr) == 1.`), and never again in that file's
 * re-runs. Anything else (a failing test, a file that fails to load, fewer banners than files)
 * returns none, so a real failure is never re-run.
 * @param {string} output the run's whole output (spec reporter, stdout and stderr)
 * @returns {string[]} the crashed files, or [] when the run's failures are not all such crashes
 */
export function crashedFiles(output) {
  const at = output.lastIndexOf('failing tests:');
  if (at < 0) return [];
  const failures = [...output.slice(at).matchAll(/^test at (.+):(\d+):(\d+)$/gm)];
  if (failures.length === 0) return [];
  if (!failures.every((m) => m[2] === '1' && m[3] === '1' && /\.test\.[cm]?[jt]s$/.test(m[1]))) return [];
  const files = [...new Set(failures.map((m) => m[1]))];
  const banners = output.match(/^# Fatal error in [^\n]*\n# Check failed: /gm)?.length ?? 0;
  return banners >= files.length ? files : [];
}
