#!/usr/bin/env node
// Entry point of the `partner-enrich` command. The sources are TypeScript that Node 24
// runs directly (type stripping), so there is no build step.
import '../src/cli/main.ts';
