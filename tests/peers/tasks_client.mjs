// The reference tasks requester, for mcpc's peer tests: @modelcontextprotocol/ext-tasks
// 0.2 on @modelcontextprotocol/client 2.4, driven step by step, to be compared with
// mcpc on the same servers (tests/peers/tasks_compare.py).
//
//   node tasks_client.mjs (--stdio "CMD ARGS" | --url URL [--modern]) STEP...
//   STEP: follow TOOL JSON | input TOOL JSON | cancel TOOL JSON MS | detach TOOL JSON | resume REFJSON
//
// Prints one JSON line per step: the statuses seen, the outcome and the result's
// first text. The client declares form elicitation and answers every form with the
// first choice of each field. --modern pins 2026-07-28 (the tasks extension);
// otherwise the tasks of 2025-11-25. install.sh copies this file beside the packages
// (DIR/ext-tasks), where its imports resolve; run that copy (MCPC_PEERS_TASKS_CLIENT).
// How the library is used (its 2026-07-28 tasks need a host-owned raw POST, as its
// own codecs reject resultType "task"), and where it goes wrong: tests/peers/README.md.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createTaskSessionFromClient, taskViewFromExecutionEvent } from '@modelcontextprotocol/ext-tasks/client';

const argv = process.argv.slice(2);
const out = (o) => console.log(JSON.stringify(o));
let stdio, url, modern = false;
while (argv[0]?.startsWith('--')) {
  const f = argv.shift();
  if (f === '--stdio') stdio = argv.shift();
  else if (f === '--url') url = argv.shift();
  else if (f === '--modern') modern = true;
  else throw new Error('unknown option ' + f);
}
const caps = { elicitation: { form: {} } };
const clientInfo = { name: 'ext-tasks-reference', version: '0.2.2' };
const client = new Client(clientInfo, {
  capabilities: caps,
  ...(modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
});
const transport = stdio
  ? new StdioClientTransport({ command: stdio.split(' ')[0], args: stdio.split(' ').slice(1), stderr: 'ignore' })
  : new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
const era = client.getProtocolEra();
out({ step: 'connect', era });

// 2026-07-28: the session sends its tasks traffic through this raw POST.
let rid = 1000;
async function rawDispatch(request, options = {}) {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': request.method,
    ...(options.context?.headers ?? {}),
  };
  if (request.method === 'tools/call') headers['mcp-name'] = request.params.name;
  const id = ++rid;
  const res = await fetch(url, {
    method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, ...request }), signal: options.signal,
  });
  const text = await res.text();
  const msgs = (res.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data:') && l.slice(5).trim()).map((l) => JSON.parse(l.slice(5)))
    : [JSON.parse(text)];
  const reply = msgs.find((m) => m.id === id) ?? msgs.at(-1);
  return reply.error ? { kind: 'error', error: reply.error } : { kind: 'result', result: reply.result };
}

const sessionOpts = {
  endpointId: 'mcpc-peer-tests',
  onInputRequest: async (req) => {
    out({ step: 'input-request', kind: req.kind, message: req.params?.message });
    if (req.kind !== 'elicitation') throw new Error('unsupported input ' + req.kind);
    const content = {};
    const plain = (s) => (s.type === 'boolean' ? true : s.type === 'number' || s.type === 'integer' ? 1 : 'yes');
    for (const [k, s] of Object.entries(req.params.requestedSchema?.properties ?? {}))
      content[k] = s.oneOf?.[0]?.const ?? s.enum?.[0] ?? plain(s);
    return { action: 'accept', content };
  },
  ...(era === 'modern'
    ? { rawDispatch, v2RequestFraming: { protocolVersion: '2026-07-28', clientInfo, clientCapabilities: caps } }
    : {}),
};
const session = createTaskSessionFromClient(client, sessionOpts);
const outcome = (o) => (o.status === 'completed'
  ? { status: o.status, text: o.result?.content?.[0]?.text }
  : { status: o.status, error: o.error?.message });

async function settle(ex, step) {
  const statuses = [];
  const t0 = Date.now();
  const { outcome: o } = await ex.settle({
    onEvent: (e) => {
      const t = taskViewFromExecutionEvent(e);
      if (t && statuses.at(-1) !== t.status) statuses.push(t.status);
    },
  });
  out({ step, kind: ex.kind, taskId: ex.handle?.taskId, statuses, ms: Date.now() - t0, outcome: outcome(o) });
}

try {
  while (argv.length) {
    const step = argv.shift();
    if (step === 'resume') {
      await settle(await session.resumeTask(JSON.parse(argv.shift())), 'resume');
      continue;
    }
    const tool = argv.shift(), args = JSON.parse(argv.shift());
    const ex = await session.callTool(tool, args, { task: { preference: 'prefer' } });
    if (step === 'follow' || step === 'input') {
      await settle(ex, step);
    } else if (step === 'cancel') {
      await new Promise((r) => setTimeout(r, Number(argv.shift())));
      await ex.cancel();
      out({ step, kind: ex.kind, taskId: ex.handle?.taskId, outcome: outcome(await ex.result()) });
    } else if (step === 'detach') {
      // Hand off and exit; close() would cancel an execution not yet settled, so let
      // the detached one settle first (ext-tasks 0.2.2).
      let ref;
      await ex.handoff((r) => { ref = r; });
      await ex.result().catch(() => {});
      out({ step, reference: ref });
    } else {
      throw new Error('unknown step ' + step);
    }
  }
} catch (e) {
  out({ step: 'error', message: String(e?.message ?? e), code: e?.code });
  process.exitCode = 1;
} finally {
  await session.close().catch(() => {});
  await client.close().catch(() => {});
}
