// garuda-agent acp driven by the official ACP client library
// (@agentclientprotocol/sdk, pinned in package-lock.json) as an editor drives
// it, against the scripted model server of tests/providers on loopback.
//
//   node tests/acp/acp_test.mjs   (run by tests/acp:acp_test, acp_test.sh)
//
// Each test starts its own model server with its own script, and its own
// garuda-agent acp with a fresh HOME and project.
import * as acp from "@agentclientprotocol/sdk";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { afterEach, test } from "node:test";

const root = process.env.GARUDA_BIN_ROOT ?? process.cwd();
const agentProgram = path.join(root, "cmd/garuda-agent/garuda-agent");
const providerProgram = path.join(root, "tests/providers/scripted_provider");
const deadlineMs = 60_000;

// What each test started, ended after it: the agents as an editor ends
// them (standard input closed, then a wait for their exit, a kill after
// the deadline), the model servers with SIGTERM.
let cleanups = [];
afterEach(async () => {
  const pending = cleanups.reverse();
  cleanups = [];
  for (const cleanup of pending) await cleanup();
});

// A promise that fails after `ms` with `what`, so no test waits forever.
function within(promise, what, ms = deadlineMs) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms);
    }),
  ]);
}

function waitFor(predicate, what) {
  return within(
    new Promise((resolve) => {
      const check = () => (predicate() ? resolve() : setTimeout(check, 20));
      check();
    }),
    what,
  );
}

// A temporary HOME, project and managed-policy folder.
function makeWorld() {
  const base = fs.mkdtempSync(path.join(process.env.TEST_TMPDIR ?? os.tmpdir(), "acp-"));
  const world = {
    base,
    home: path.join(base, "home"),
    project: path.join(base, "project"),
    managed: path.join(base, "managed"),
  };
  for (const dir of [world.home, path.join(world.home, ".garuda"), world.project, world.managed]) {
    fs.mkdirSync(dir, { recursive: true });
  }
  fs.writeFileSync(path.join(world.project, "notes.txt"), "old line\n");
  return world;
}

function settings(world, json) {
  fs.mkdirSync(path.join(world.project, ".garuda"), { recursive: true });
  fs.writeFileSync(path.join(world.project, ".garuda/settings.json"), JSON.stringify(json));
}

function text(t, pieces = 1) {
  return { text: t, textPieces: pieces };
}
function call(id, name, args) {
  return { toolCalls: [{ id, name, argumentsJson: JSON.stringify(args), argumentPieces: 1 }] };
}

// The scripted OpenAI-compatible server; resolves to its base URL.
// What the server received is appended to world.requestsLog, one JSON line
// per request.
async function startProvider(world, replies) {
  const script = path.join(world.base, `script-${Math.random().toString(16).slice(2)}.json`);
  fs.writeFileSync(script, JSON.stringify({ replies }));
  world.requestsLog = path.join(world.base, "requests.jsonl");
  const server = spawn(providerProgram, ["--kind=openai", `--script=${script}`, `--requests-log=${world.requestsLog}`], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  cleanups.push(() => {
    server.kill("SIGTERM");
  });
  const port = await within(
    new Promise((resolve, reject) => {
      let out = "";
      server.stdout.on("data", (chunk) => {
        out += chunk;
        if (out.includes("\n")) resolve(out.trim());
      });
      server.on("exit", (code) => reject(new Error(`scripted_provider exited ${code}`)));
    }),
    "the scripted provider's port",
  );
  return `http://127.0.0.1:${port}/v1`;
}

// garuda-agent acp with the world's environment; its stderr is collected.
function startAgent(world, baseUrl, extraEnv = {}) {
  const env = {
    HOME: world.home,
    PATH: "/usr/bin:/bin",
    GARUDA_MANAGED_POLICY_DIR: world.managed,
    OPENAI_API_KEY: "test-key",
    ...extraEnv,
  };
  const child = spawn(
    agentProgram,
    ["acp", "--provider=openai", "--model=m", `--base_url=${baseUrl}`],
    { env, stdio: ["pipe", "pipe", "pipe"] },
  );
  const agent = { child, stderr: "" };
  child.stderr.on("data", (chunk) => {
    agent.stderr += chunk;
  });
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.on("exit", resolve));
    child.stdin.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
  });
  return agent;
}

// Connects the SDK's client app to the agent. `answer(params)` answers
// session/request_permission; every session/update is kept in `updates`.
// The client offers its file system and terminals, as editors do; Garuda
// must never use them (only the applier writes the project, commands run
// in Garuda's sandbox): every such call is kept in `clientCalls`.
function connect(agent, answer = () => ({ outcome: { outcome: "cancelled" } })) {
  const updates = [];
  const questions = [];
  const clientCalls = [];
  const stream = acp.ndJsonStream(Writable.toWeb(agent.child.stdin), Readable.toWeb(agent.child.stdout));
  const refuse = (ctx) => {
    clientCalls.push(ctx.method);
    throw new Error("the test client refuses this");
  };
  const connection = acp
    .client({ name: "garuda-acp-test" })
    .onNotification(acp.methods.client.session.update, (ctx) => {
      updates.push(ctx.params);
    })
    .onRequest(acp.methods.client.session.requestPermission, async (ctx) => {
      questions.push(ctx.params);
      return answer(ctx.params);
    })
    .onRequest(acp.methods.client.fs.writeTextFile, refuse)
    .onRequest(acp.methods.client.fs.readTextFile, refuse)
    .onRequest(acp.methods.client.terminal.create, refuse)
    .connect(stream);
  return { connection, peer: connection.agent, updates, questions, clientCalls };
}

async function initialize(peer) {
  return within(
    peer.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
    }),
    "initialize",
  );
}

async function newSession(peer, world, mcpServers = []) {
  return within(peer.request(acp.methods.agent.session.new, { cwd: world.project, mcpServers }), "session/new");
}

function prompt(peer, sessionId, words) {
  return within(
    peer.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: words }] }),
    `session/prompt ${words}`,
  );
}

// garuda-agent acp started, connected, initialized, and one session opened.
async function openSession(world, baseUrl, { answer, env } = {}) {
  const agent = startAgent(world, baseUrl, env);
  const connected = connect(agent, answer);
  await initialize(connected.peer);
  const session = await newSession(connected.peer, world);
  return { agent, session, ...connected };
}

function kinds(updates) {
  return updates.map((u) => u.update.sessionUpdate);
}
function agentText(updates) {
  return updates
    .filter((u) => u.update.sessionUpdate === "agent_message_chunk")
    .map((u) => u.update.content.text)
    .join("");
}
function notes(world) {
  return fs.readFileSync(path.join(world.project, "notes.txt"), "utf8");
}
// Every audit line of the project (the auditor's logs under ~/.garuda/audit).
function auditText(world) {
  const dir = path.join(world.home, ".garuda/audit");
  let all = "";
  const walk = (d) => {
    if (!fs.existsSync(d)) return;
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.name.endsWith(".jsonl")) all += fs.readFileSync(p, "utf8");
    }
  };
  walk(dir);
  return all;
}
function selected(optionId) {
  return { outcome: { outcome: "selected", optionId } };
}

test("initialize, a new session and a prompt with streamed text; an MCP server that does not start is said once", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [{ ...text("Hello, editor. All good.", 4), inputTokens: 10, outputTokens: 5 }]);
  const agent = startAgent(world, baseUrl);
  const { peer, updates } = connect(agent);
  const init = await initialize(peer);
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentCapabilities.loadSession, true);
  assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true);
  assert.equal(init.agentCapabilities.promptCapabilities.image, false);
  // Stdio and Streamable HTTP servers; the older SSE transport is not spoken.
  assert.equal(init.agentCapabilities.mcpCapabilities.http, true);
  assert.equal(init.agentCapabilities.mcpCapabilities.sse, false);
  assert.equal(init.agentInfo.name, "garuda-agent");
  assert.match(init.agentInfo.version, /^\d+\.\d+\.\d+/);

  const session = await newSession(peer, world, [{ name: "files", command: "/bin/true", args: [], env: [] }]);
  assert.match(session.sessionId, /^[0-9T]+-\d+-[0-9a-f]+$/);
  const response = await prompt(peer, session.sessionId, "say hello");
  assert.equal(response.stopReason, "end_turn");
  const said = agentText(updates);
  assert.match(said, /garuda-agent: model openai m/); // the first lines
  assert.match(said, /Hello, editor\. All good\./);
  const chunks = updates.filter((u) => u.update.sessionUpdate === "agent_message_chunk" && /editor|good|Hello|All/.test(u.update.content.text));
  assert.ok(chunks.length >= 2, `the answer streamed in pieces: ${JSON.stringify(chunks)}`);
  assert.ok(kinds(updates).includes("usage_update"), kinds(updates).join(","));
  const usage = updates.find((u) => u.update.sessionUpdate === "usage_update").update;
  assert.ok(usage.used > 0, JSON.stringify(usage));
  // mcpServers: started by the stager as the settings' servers are; this
  // one exits at once, which is said once to the editor, and the session
  // goes on.
  assert.equal(said.split("MCP server files did not start").length - 1, 1, said);
  for (const u of updates) assert.equal(u.sessionId, session.sessionId);
});

test("a prompt's embedded resource reaches the model; an image block is refused naming it", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [text("Read it.")]);
  const { session, peer } = await openSession(world, baseUrl);
  const response = await within(
    peer.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [
        { type: "text", text: "what does this declare?" },
        { type: "resource", resource: { uri: "file:///elsewhere/a.c", text: "int declared_here;", mimeType: "text/x-c" } },
      ],
    }),
    "the prompt with a resource",
  );
  assert.equal(response.stopReason, "end_turn");
  const sent = fs.readFileSync(world.requestsLog, "utf8");
  assert.match(sent, /int declared_here;/);
  assert.match(sent, /file:\/\/\/elsewhere\/a\.c/);
  await assert.rejects(
    peer.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "and this?" }, { type: "image", data: "AAAA", mimeType: "image/png" }],
    }),
    (error) => /prompt\[1\]/.test(error.message),
  );
  // The session goes on.
  assert.equal(fs.readFileSync(world.requestsLog, "utf8").split("\n").filter(Boolean).length, 1);
});

// The pinned server-everything (tests/mcp), copied into the project: the
// sandbox shows the project, not the test's runfiles.
function vendorEverything(world) {
  const modules = path.join(root, "tests/mcp/node_modules");
  fs.cpSync(modules, path.join(world.project, "node_modules"), { recursive: true, dereference: true });
  return path.join(world.project, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
}

test("an editor's MCP server runs in the sandbox; its tool is asked, and its answer comes back", async () => {
  const world = makeWorld();
  const script = vendorEverything(world);
  const baseUrl = await startProvider(world, [
    call("m1", "mcp__everything__echo", { message: "from the editor's server" }),
    text("Echoed."),
  ]);
  const agent = startAgent(world, baseUrl);
  const { peer, updates, questions, clientCalls } = connect(agent, () => selected("allow_once"));
  await initialize(peer);
  const session = await newSession(peer, world, [
    { name: "everything", command: "node", args: [script, "stdio"], env: [] },
    { name: "remote", type: "sse", url: "https://mcp.example.com/sse", headers: [] },
  ]);
  assert.equal((await prompt(peer, session.sessionId, "echo it")).stopReason, "end_turn");
  assert.deepEqual(clientCalls, []);
  const said = agentText(updates);
  assert.match(said, /MCP server everything: \d+ tools \(OS sandbox/, said);
  assert.match(said, /MCP server remote skipped: /, said);
  // No rule: the editor was asked, with the server's name.
  assert.equal(questions.length, 1);
  assert.match(JSON.stringify(questions[0].toolCall), /everything: echo/);
  const ended = updates.find((u) => u.update.sessionUpdate === "tool_call_update" && u.update.toolCallId === "m1");
  assert.equal(ended.update.status, "completed");
  const requests = fs.readFileSync(world.requestsLog, "utf8");
  assert.match(requests, /Echo: from the editor's server/);
  assert.match(auditText(world), /"kind":"mcp_call"/);
});

test("a bash call in direct mode runs in the sandbox without a question", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [call("c1", "bash", { command: "echo made > made.txt" }), text("Made it.")]);
  const { agent, session, peer, updates, questions, clientCalls } = await openSession(world, baseUrl);
  const response = await prompt(peer, session.sessionId, "make a file");
  assert.deepEqual(clientCalls, []);
  assert.equal(response.stopReason, "end_turn");
  const started = updates.find((u) => u.update.sessionUpdate === "tool_call");
  assert.ok(started, kinds(updates).join(","));
  assert.equal(started.update.toolCallId, "c1");
  assert.equal(started.update.kind, "execute");
  assert.match(started.update.title, /echo made > made\.txt/);
  const ended = updates.find((u) => u.update.sessionUpdate === "tool_call_update" && u.update.toolCallId === "c1");
  assert.equal(ended.update.status, "completed");
  assert.match(JSON.stringify(ended.update.content), /exit/i);
  assert.equal(questions.length, 0);
  assert.equal(fs.readFileSync(path.join(world.project, "made.txt"), "utf8"), "made\n");
  assert.match(agentText(updates), /Made it\./);
});

test("a command's live output reaches the editor while it runs", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [call("c1", "bash", { command: "echo first line; sleep 3; echo second line" }), text("Ran.")]);
  const { session, peer, updates } = await openSession(world, baseUrl);
  assert.equal((await prompt(peer, session.sessionId, "run it")).stopReason, "end_turn");
  const forCall = updates.filter((u) => u.update.sessionUpdate === "tool_call_update" && u.update.toolCallId === "c1");
  const live = forCall.filter((u) => u.update.status === "in_progress");
  assert.ok(live.length >= 1, JSON.stringify(forCall));
  assert.ok(live.some((u) => /running \d+ s: first line/.test(JSON.stringify(u.update.content))), JSON.stringify(live));
  assert.equal(forCall[forCall.length - 1].update.status, "completed");
});

test("staged: a change answered Apply is written, one answered Discard is not, and the audit says the editor answered", async () => {
  const world = makeWorld();
  settings(world, { commands: { mode: "staged" } });
  const baseUrl = await startProvider(world, [
    call("c1", "bash", { command: "echo applied line > notes.txt" }),
    text("Applied."),
    call("c2", "bash", { command: "echo discarded line > notes.txt" }),
    text("Discarded."),
  ]);
  const answers = ["apply", "discard"];
  const { agent, session, peer, questions } = await openSession(world, baseUrl, { answer: () => selected(answers.shift()) });

  assert.equal((await prompt(peer, session.sessionId, "change the notes")).stopReason, "end_turn");
  assert.equal(notes(world), "applied line\n");
  assert.equal(questions.length, 1);
  const q = questions[0];
  assert.deepEqual(q.options.map((o) => [o.optionId, o.kind]), [["apply", "allow_once"], ["discard", "reject_once"]]);
  assert.equal(q.toolCall.toolCallId, "c1");
  const diff = q.toolCall.content.find((c) => c.type === "diff");
  assert.ok(diff, JSON.stringify(q.toolCall.content));
  assert.equal(diff.path, path.join(world.project, "notes.txt"));
  assert.equal(diff.oldText, "old line\n");
  assert.equal(diff.newText, "applied line\n");
  assert.match(JSON.stringify(q.toolCall.content), /notes\.txt/); // the change list

  assert.equal((await prompt(peer, session.sessionId, "change them again")).stopReason, "end_turn");
  assert.equal(questions.length, 2);
  assert.equal(notes(world), "applied line\n"); // discarded: unchanged
  await waitFor(() => /answer relayed by garuda-agent from acp: no/.test(auditText(world)), "the discard in the audit log");
  assert.match(auditText(world), /answer relayed by garuda-agent from acp: yes/);
});

test("an edit answered reject changes nothing; the same edit allowed once does", async () => {
  const world = makeWorld();
  const edit = { path: "notes.txt", old_string: "old line", new_string: "edited line" };
  const baseUrl = await startProvider(world, [
    call("e1", "edit_file", edit),
    text("It was rejected."),
    call("e2", "edit_file", edit),
    text("It was edited."),
  ]);
  const answers = ["reject_once", "allow_once"];
  const { agent, session, peer, updates, questions, clientCalls } = await openSession(world, baseUrl, { answer: () => selected(answers.shift()) });

  assert.equal((await prompt(peer, session.sessionId, "edit the notes")).stopReason, "end_turn");
  assert.deepEqual(clientCalls, []);
  assert.equal(notes(world), "old line\n");
  assert.equal(questions.length, 1);
  const q = questions[0];
  assert.deepEqual(q.options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once"]);
  const diff = q.toolCall.content.find((c) => c.type === "diff");
  assert.equal(diff.oldText, "old line\n");
  assert.equal(diff.newText, "edited line\n");
  const rejected = updates.find((u) => u.update.sessionUpdate === "tool_call_update" && u.update.toolCallId === "e1");
  assert.equal(rejected.update.status, "failed");
  const started = updates.find((u) => u.update.sessionUpdate === "tool_call" && u.update.toolCallId === "e1");
  assert.equal(started.update.kind, "edit");
  assert.deepEqual(started.update.locations, [{ path: path.join(world.project, "notes.txt") }]);

  // Control: the same edit, allowed, is written by the applier.
  assert.equal((await prompt(peer, session.sessionId, "edit them now")).stopReason, "end_turn");
  assert.equal(notes(world), "edited line\n");
  const applied = updates.find((u) => u.update.sessionUpdate === "tool_call_update" && u.update.toolCallId === "e2");
  assert.equal(applied.update.status, "completed");
  assert.ok(applied.update.content.some((c) => c.type === "diff"), JSON.stringify(applied.update.content));
  assert.match(auditText(world), /answer relayed by garuda-agent from acp: yes/);
});

test("allow always: the next edit of the file in the session is not asked, and the helper is told it was a session answer", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [
    call("e1", "edit_file", { path: "notes.txt", old_string: "old line", new_string: "second line" }),
    call("e2", "edit_file", { path: "notes.txt", old_string: "second line", new_string: "third line" }),
    text("Edited twice."),
  ]);
  const { agent, session, peer, questions, clientCalls } = await openSession(world, baseUrl, { answer: () => selected("allow_always") });
  assert.equal((await prompt(peer, session.sessionId, "edit twice")).stopReason, "end_turn");
  assert.equal(questions.length, 1);
  assert.equal(notes(world), "third line\n");
  assert.deepEqual(clientCalls, []);
  await waitFor(() => /acp \(allowed for this session\): yes/.test(auditText(world)), "the session answer in the audit log");
});

test("a child agent's edit (the task tool) is asked of the editor and relayed as its parent's", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [
    { whenBodyContains: ["the parent question"], ...call("t1", "task", { description: "edit the notes", prompt: "the child job: edit notes.txt" }) },
    { whenBodyContains: ["the child job"], ...call("e1", "edit_file", { path: "notes.txt", old_string: "old line", new_string: "child line" }) },
    { whenBodyContains: ["the child job"], ...text("The child edited it.") },
    { whenBodyContains: ["the parent question"], ...text("The parent is done.") },
  ]);
  const { agent, session, peer, updates, questions } = await openSession(world, baseUrl, { answer: () => selected("allow_once") });
  assert.equal((await prompt(peer, session.sessionId, "the parent question")).stopReason, "end_turn");
  assert.equal(questions.length, 1);
  assert.match(questions[0].toolCall.title, /Edit notes\.txt/);
  assert.equal(notes(world), "child line\n");
  const task = updates.find((u) => u.update.sessionUpdate === "tool_call" && u.update.toolCallId === "t1");
  assert.equal(task.update.kind, "think");
  assert.match(agentText(updates), /The parent is done\./);
  await waitFor(() => /answer relayed by garuda-agent from acp: yes/.test(auditText(world)), "the child's relayed answer in the audit log");
});

test("without a sandbox a host command asks before it runs: rejected it does not run, allowed it does", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [
    call("h1", "bash", { command: "echo host > host.txt" }),
    text("Not run."),
    call("h2", "bash", { command: "echo host > host.txt" }),
    text("Ran."),
  ]);
  const answers = ["reject_once", "allow_once"];
  const { agent, session, peer, questions, updates } = await openSession(world, baseUrl, { answer: () => selected(answers.shift()), env: { GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX: "1" } });
  assert.equal((await prompt(peer, session.sessionId, "run it")).stopReason, "end_turn");
  assert.equal(questions.length, 1);
  assert.match(questions[0].toolCall.title, /Run on the host: echo host > host\.txt/);
  assert.equal(fs.existsSync(path.join(world.project, "host.txt")), false);
  const refused = updates.find((u) => u.update.sessionUpdate === "tool_call_update" && u.update.toolCallId === "h1");
  assert.equal(refused.update.status, "failed");
  // Control: allowed, the stager runs it (on the host).
  assert.equal((await prompt(peer, session.sessionId, "run it now")).stopReason, "end_turn");
  assert.equal(questions.length, 2);
  assert.equal(fs.readFileSync(path.join(world.project, "host.txt"), "utf8"), "host\n");
  await waitFor(() => /answer relayed by garuda-agent from acp: yes/.test(auditText(world)), "the relayed yes in the audit log");
});

// /proc/PID/status fields, and the children of a process.
function status(pid) {
  const text = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name) => (text.match(new RegExp(`^${name}:\\s*(\\S+)`, "m")) ?? [])[1];
  return { seccomp: field("Seccomp"), noNewPrivs: field("NoNewPrivs"), ppid: Number(field("PPid")), state: field("State") };
}
function childrenOf(pid) {
  return fs
    .readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return status(name).ppid === pid;
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}
function cmdline(pid) {
  return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
}

test("the front and the session worker are locked down; the launcher, which starts workers, is not", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [text("hi")]);
  const { agent } = await openSession(world, baseUrl);
  const front = status(agent.child.pid);
  assert.equal(front.seccomp, "2"); // a seccomp filter
  assert.equal(front.noNewPrivs, "1");
  const launchers = childrenOf(agent.child.pid);
  assert.equal(launchers.length, 1, `the front's children: ${launchers}`);
  // Control: the same field reads 0 for the unconfined launcher.
  assert.equal(status(launchers[0]).seccomp, "0");
  const workers = childrenOf(launchers[0]).filter((pid) => cmdline(pid).includes("acp-session"));
  assert.equal(workers.length, 1);
  assert.equal(status(workers[0]).seccomp, "2");
});

test("a session worker that dies: its prompt gets an error, and the connection goes on", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [{ ...text("stalled", 1), fault: "HOLD" }, text("The new session works.")]);
  const { agent, session, peer, updates } = await openSession(world, baseUrl);
  const turn = prompt(peer, session.sessionId, "talk");
  await waitFor(() => /stalled/.test(agentText(updates)), "the first streamed text");
  const [launcher] = childrenOf(agent.child.pid);
  const [worker] = childrenOf(launcher).filter((pid) => cmdline(pid).includes("acp-session"));
  const helpers = childrenOf(worker);
  process.kill(worker, "SIGKILL");
  await assert.rejects(turn, (error) => /session ended/.test(error.message));
  // Its helpers see their channels close and end too.
  const gone = (pid) => !fs.existsSync(`/proc/${pid}`) || status(pid).state === "Z";
  await waitFor(() => helpers.every(gone), "the dead worker's helpers to end");
  await assert.rejects(prompt(peer, session.sessionId, "again"), (error) => /no session/.test(error.message));
  const next = await newSession(peer, world);
  assert.equal((await prompt(peer, next.sessionId, "hello")).stopReason, "end_turn");
  assert.match(agentText(updates), /The new session works\./);
});

test("an editor (the front) killed mid-session: the worker still ends its session, and nothing is left running", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [text("hello")]);
  const { agent, session, peer } = await openSession(world, baseUrl);
  await prompt(peer, session.sessionId, "hi");
  const [launcher] = childrenOf(agent.child.pid);
  const [worker] = childrenOf(launcher).filter((pid) => cmdline(pid).includes("acp-session"));
  const helpers = childrenOf(worker);
  assert.ok(helpers.length >= 4, `the worker's helpers: ${helpers}`);
  agent.child.kill("SIGKILL");
  const gone = (pid) => !fs.existsSync(`/proc/${pid}`) || status(pid).state === "Z";
  await waitFor(() => [launcher, worker, ...helpers].every(gone), "the launcher, the worker and its helpers to end");
  assert.match(auditText(world), /"session_end"/);
});

test("a token budget that refuses the request ends the prompt with max_tokens and says why", async () => {
  const world = makeWorld();
  fs.writeFileSync(path.join(world.home, ".garuda/settings.json"), JSON.stringify({ budget: { tokenBudget: 5 } }));
  const baseUrl = await startProvider(world, [text("never sent")]);
  const { agent, session, peer, updates } = await openSession(world, baseUrl);
  const response = await prompt(peer, session.sessionId, "a question the budget cannot pay for");
  assert.equal(response.stopReason, "max_tokens");
  assert.match(agentText(updates), /token budget/);
  assert.doesNotMatch(agentText(updates), /never sent/);
});

test("a model that refuses ends the prompt with refusal", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [{ ...text("I cannot help with that."), stopReason: "content_filter" }]);
  const { agent, session, peer } = await openSession(world, baseUrl);
  assert.equal((await prompt(peer, session.sessionId, "something")).stopReason, "refusal");
});

test("an edit's question left unanswered until session/cancel is a no, and the prompt ends cancelled", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [
    call("e1", "edit_file", { path: "notes.txt", old_string: "old line", new_string: "never" }),
    text("should not be reached"),
  ]);
  const agent = startAgent(world, baseUrl);
  let asked;
  const { peer } = connect(agent, () => new Promise((resolve) => {
    asked = resolve; // answered only after the cancel
  }));
  await initialize(peer);
  const session = await newSession(peer, world);
  const turn = prompt(peer, session.sessionId, "edit");
  await waitFor(() => asked !== undefined, "the permission question");
  await peer.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
  const response = await turn;
  asked(selected("allow_once")); // too late: ignored
  assert.equal(response.stopReason, "cancelled");
  assert.equal(notes(world), "old line\n");
});

test("session/cancel during a command stops it and ends the prompt with cancelled", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [call("c1", "bash", { command: "sleep 30; echo late > late.txt" }), text("not reached")]);
  const { session, peer, updates } = await openSession(world, baseUrl);
  const turn = prompt(peer, session.sessionId, "run it");
  await waitFor(() => updates.some((u) => u.update.sessionUpdate === "tool_call" && u.update.toolCallId === "c1"), "the command's start");
  const cancelledAt = Date.now();
  await peer.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
  assert.equal((await turn).stopReason, "cancelled");
  assert.ok(Date.now() - cancelledAt < 10_000, "the command stopped soon after the cancel");
  assert.equal(fs.existsSync(path.join(world.project, "late.txt")), false);
});

test("session/cancel mid-stream ends the prompt with cancelled", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [{ ...text("partial answer that never ends", 3), fault: "HOLD" }]);
  const { agent, session, peer, updates } = await openSession(world, baseUrl);
  const turn = prompt(peer, session.sessionId, "talk");
  await waitFor(() => /partial/.test(agentText(updates)), "the first streamed text");
  // One turn at a time: a second prompt meanwhile is refused, the first goes on.
  await assert.rejects(prompt(peer, session.sessionId, "and this"), (error) => /still running/.test(error.message));
  const cancelledAt = Date.now();
  await peer.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
  const response = await turn;
  assert.equal(response.stopReason, "cancelled");
  assert.ok(Date.now() - cancelledAt < 10_000, "the request stopped soon after the cancel");
});

test("session/load replays the earlier conversation before it answers", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [
    call("c1", "bash", { command: "echo replayed output" }),
    text("The first answer."),
    text("The second answer."),
  ]);
  const first = startAgent(world, baseUrl);
  const one = connect(first);
  await initialize(one.peer);
  const session = await newSession(one.peer, world);
  await prompt(one.peer, session.sessionId, "the first question");
  first.child.stdin.end(); // the editor closes the connection
  await within(new Promise((resolve) => first.child.on("exit", resolve)), "the first agent's exit");
  // The front waited for its worker to end the session: the audit log has
  // its end already.
  assert.match(auditText(world), /"session_end"/);

  const second = startAgent(world, baseUrl);
  const two = connect(second);
  await initialize(two.peer);
  const loaded = await within(
    two.peer.request(acp.methods.agent.session.load, { sessionId: session.sessionId, cwd: world.project, mcpServers: [] }),
    "session/load",
  );
  assert.ok(loaded !== undefined);
  const replayed = two.updates.map((u) => u.update);
  const user = replayed.find((u) => u.sessionUpdate === "user_message_chunk");
  assert.ok(user, JSON.stringify(replayed));
  assert.match(user.content.text, /the first question/);
  assert.match(agentText(two.updates), /The first answer\./);
  const call1 = replayed.find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "c1");
  assert.equal(call1.kind, "execute");
  const result1 = replayed.find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "c1");
  assert.equal(result1.status, "completed");
  assert.match(JSON.stringify(result1.content), /replayed output/);
  // And the session goes on, with the conversation sent to the model.
  assert.equal((await prompt(two.peer, session.sessionId, "the second question")).stopReason, "end_turn");
  assert.match(agentText(two.updates), /The second answer\./);

  // A session that never was: a JSON-RPC error, and the connection stays up.
  await assert.rejects(
    two.peer.request(acp.methods.agent.session.load, { sessionId: "20200101T000000-1-abcdef", cwd: world.project, mcpServers: [] }),
    (error) => /20200101T000000-1-abcdef/.test(error.message),
  );
  assert.equal((await initialize(two.peer)).protocolVersion, 1);
});

test("the strict profile without a sandbox: session/new fails plainly with the reason and the fix", async () => {
  const world = makeWorld();
  fs.writeFileSync(path.join(world.managed, "policy.json"), JSON.stringify({ profile: "strict" }));
  const baseUrl = await startProvider(world, [text("unused")]);
  const agent = startAgent(world, baseUrl, { GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX: "1" });
  const { peer } = connect(agent);
  await initialize(peer);
  let failure;
  await assert.rejects(newSession(peer, world), (error) => {
    failure = error;
    return true;
  });
  assert.match(failure.message, /strict profile/);
  assert.match(failure.message, /Fix:/);
  assert.notEqual(failure.code, -32000); // not "authentication required"
  assert.equal((await initialize(peer)).protocolVersion, 1); // still up

  // Control: the same policy with a working sandbox starts.
  const other = startAgent(world, baseUrl);
  const two = connect(other);
  await initialize(two.peer);
  assert.ok((await newSession(two.peer, world)).sessionId);
});

// Raw lines, as a broken client would send them.
function rawAgent(world, baseUrl) {
  const agent = startAgent(world, baseUrl);
  const lines = [];
  let buffer = "";
  agent.child.stdout.on("data", (chunk) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      lines.push(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
    }
  });
  const send = (text) => agent.child.stdin.write(text);
  const reply = async (count) => {
    await waitFor(() => lines.length >= count, `${count} replies`);
    return JSON.parse(lines[count - 1]);
  };
  return { agent, lines, send, reply };
}

test("malformed input: JSON-RPC errors, the connection stays up, nothing written, only protocol on stdout", async () => {
  const world = makeWorld();
  const baseUrl = await startProvider(world, [text("unused")]);
  const before = fs.readdirSync(world.project).sort();
  const { lines, send, reply } = rawAgent(world, baseUrl);

  send("this is not json\n");
  let r = await reply(1);
  assert.equal(r.error.code, -32700);
  assert.equal(r.id, null);

  send('{"jsonrpc":"2.0","id":2,"method":"no/such_method","params":{}}\n');
  r = await reply(2);
  assert.equal(r.id, 2);
  assert.equal(r.error.code, -32601);

  send('{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"nobody","prompt":[{"type":"text","text":"hi"}]}}\n');
  r = await reply(3);
  assert.equal(r.id, 3);
  assert.equal(r.error.code, -32602);
  assert.match(r.error.message, /nobody/);

  send(`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"pad":"${"x".repeat(5 << 20)}"}}\n`);
  r = await reply(4);
  assert.equal(r.error.code, -32600);
  assert.match(r.error.message, /limit/);

  send('{"jsonrpc":"2.0","id":5,"method":"initialize",\n');
  r = await reply(5);
  assert.equal(r.error.code, -32700);

  send('{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"relative/path","mcpServers":[]}}\n');
  r = await reply(6);
  assert.equal(r.id, 6);
  assert.equal(r.error.code, -32602);

  send(`{"jsonrpc":"2.0","id":8,"method":"session/new","params":{"cwd":"${world.base}/no-such-folder","mcpServers":[]}}\n`);
  r = await reply(7);
  assert.equal(r.id, 8);
  assert.match(r.error.message, /no-such-folder/);

  // Still up: a well-formed request is answered.
  send('{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":1}}\n');
  r = await reply(8);
  assert.equal(r.id, 9);
  assert.equal(r.result.protocolVersion, 1);
  for (const line of lines) assert.equal(JSON.parse(line).jsonrpc, "2.0");
  assert.deepEqual(fs.readdirSync(world.project).sort(), before);
});
