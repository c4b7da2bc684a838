// Loaded with `node --import` (NODE_OPTIONS) into a CLI process under test: records the URL of
// every module the process loads, by static import, dynamic import() or require, and writes
// them one a line to $MODULES_LOADED_FILE when the process exits.
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const file = process.env.MODULES_LOADED_FILE;
if (!file) throw new Error('module-load-recorder: MODULES_LOADED_FILE is not set');
const loaded: string[] = [];
registerHooks({
  load(url, context, nextLoad) {
    loaded.push(url);
    return nextLoad(url, context);
  },
});
process.on('exit', () => writeFileSync(file, loaded.join('\n')));
