// node run.mjs WORKSPACE REQUESTS.json: runs a list of {op, request} through
// sandgrep.wasm (transpiled to gen/) and prints the results as one JSON list.
import { readFileSync } from 'node:fs';
import { open } from './sandgrep.mjs';

const [workspace, requests] = process.argv.slice(2);
const sg = await open(workspace);
const results = JSON.parse(readFileSync(requests, 'utf8')).map((r) => sg.call(r.op, r.request));
console.log(JSON.stringify(results));
