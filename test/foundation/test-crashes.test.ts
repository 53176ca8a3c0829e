import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crashedFiles } from '../../scripts/test-crashes.mjs';

/**
 * scripts/test.mjs re-runs a file once only when V8 itself aborted its process with no test of it
 * failing. The first case is the output CI printed on Node 24.21 (shortened, the stack cut).
 */
const banner = `
#
# Fatal error in , line 0
# Check failed: jit_page_->allocations_.erase(addr) == 1.
#
#
#
#FailureMessage Object: 0x7ffeb9dd3770
----- Native stack trace -----

 1: 0x9dde61  [/root/.npm/_npx/387698761821791d/node_modules/node/bin/node]
 2: 0x27b2103 V8_Fatal(char const*, ...) [/root/.npm/_npx/387698761821791d/node_modules/node/bin/node]
`;
const summary = (failures: string) => `ℹ tests 1245
ℹ pass 1240
ℹ fail 1
ℹ duration_ms 581872.203415

✖ failing tests:
${failures}`;
const fileFailure = (file: string) => `
test at ${file}:1:1
✖ ${file} (9804.053696ms)
  'test failed'
`;
const testFailure = `
test at test/users/api-keys.test.ts:212:3
✖ is refused at once after DELETE, which answers 200 with revokedAt set (42.682456ms)
  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
`;
const passed = `▶ using a key
  ✔ works as a Bearer token and records lastUsedAt (18.183028ms)
✔ using a key (138.578904ms)
`;

describe('crashedFiles: which files a run lost to V8 aborting, not to a test', () => {
  it('names the file V8 aborted after its tests passed (the CI output of Node 24.21)', () => {
    const output = passed + banner + summary(fileFailure('test/users/api-keys.test.ts'));
    assert.deepEqual(crashedFiles(output), ['test/users/api-keys.test.ts']);
  });

  it('names each of several aborted files when there is a banner for each', () => {
    const output =
      banner +
      banner +
      summary(fileFailure('test/users/api-keys.test.ts') + fileFailure('test/oidc/siws.test.ts'));
    assert.deepEqual(crashedFiles(output), ['test/users/api-keys.test.ts', 'test/oidc/siws.test.ts']);
  });

  it('re-runs nothing when a test failed, even beside an aborted file', () => {
    assert.deepEqual(crashedFiles(banner + summary(testFailure)), []);
    assert.deepEqual(
      crashedFiles(banner + summary(fileFailure('test/users/api-keys.test.ts') + testFailure)),
      [],
    );
  });

  it('re-runs nothing when a whole file failed without a V8 abort (a file that does not load, or exits)', () => {
    assert.deepEqual(crashedFiles(passed + summary(fileFailure('test/users/api-keys.test.ts'))), []);
    // Two failed files and one banner: the other failed for its own reason.
    const two =
      banner + summary(fileFailure('test/users/api-keys.test.ts') + fileFailure('test/oidc/siws.test.ts'));
    assert.deepEqual(crashedFiles(two), []);
  });

  it('re-runs nothing for a run without failures or without a summary', () => {
    assert.deepEqual(crashedFiles(passed), []);
    assert.deepEqual(crashedFiles(passed + banner), []);
    assert.deepEqual(crashedFiles(''), []);
  });
});
