// SPDX-License-Identifier: Apache-2.0
// JIT test workload (runtime/symbols.test): a named JavaScript function hot
// enough for V8 to compile it, run for the milliseconds given as the first
// argument. With --perf-basic-prof, node writes /tmp/perf-PID.map lines for
// the code it generates, which is how sonde names the function's frames.
// The process is renamed so that a test can pick it out by comm.
'use strict';

process.title = 'sonde_jit_hot';

function sondeHotFunction(n) {
	let total = 0;
	for (let i = 0; i < n; i++)
		total = (total + i * i) % 1000003;
	return total;
}

const until = Date.now() + Number(process.argv[2] || 2000);
let sink = 0;
while (Date.now() < until)
	sink += sondeHotFunction(100000);
process.exitCode = sink === -1 ? 1 : 0;
