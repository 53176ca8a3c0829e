#!/usr/bin/env node
// The `gatehouse` command: runs src/cli.ts through tsx so the CLI needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
