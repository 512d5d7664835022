"use strict";
// The page host.py serves: it renders the view in a sandboxed frame, answers the view's
// ui/ requests, and carries every other message to host.py, which hands it to mcpc's
// relay and returns what to answer.

const PROTOCOL_VERSION = "2026-01-26";
const HOST_INFO = { name: "mcpc-example-host", version: "1.0.0" };
const MAX_HEIGHT = 2000;
// MCP Apps permission names, and the feature each is in the frame's allow attribute.
const FEATURES = { camera: "camera", microphone: "microphone", geolocation: "geolocation",
                   clipboardWrite: "clipboard-write" };

let session = null;
let frame = null;
let initialized = false;

function send(message) {
  // The frame's origin is opaque (its sandbox has no allow-same-origin), so "*" is the
  // only target that reaches it; the message still goes to that one window only.
  frame.contentWindow.postMessage(message, "*");
}

function isId(id) {
  return typeof id === "string" || typeof id === "number";
}

function reply(id, result) {
  send({ jsonrpc: "2.0", id, result });
}

function fail(id, code, message) {
  send({ jsonrpc: "2.0", id, error: { code, message } });
}

function note(method, route, detail) {
  const item = document.createElement("li");
  item.className = route;
  item.textContent = `${method} \u2192 ${route}${detail ? ": " + detail : ""}`;
  document.getElementById("log").append(item);
}

// What the page granted: the permissions whose feature mcpc put in the allow attribute.
function granted() {
  const allowed = session.allow.split(";").map((f) => f.trim());
  const permissions = {};
  for (const [name, feature] of Object.entries(FEATURES)) {
    if (allowed.includes(feature)) permissions[name] = {};
  }
  return permissions;
}

function initializeResult() {
  return {
    protocolVersion: PROTOCOL_VERSION,
    hostInfo: HOST_INFO,
    // The relay carries tools/call, resources/read and log messages to the server.
    hostCapabilities: {
      serverTools: {},
      serverResources: {},
      logging: {},
      sandbox: { permissions: granted(), csp: session.csp },
    },
    hostContext: {
      toolInfo: { tool: session.tool },
      theme: matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light",
      displayMode: "inline",
      availableDisplayModes: ["inline"],
      containerDimensions: { maxHeight: MAX_HEIGHT },
      locale: navigator.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      platform: "web",
    },
  };
}

// The ui/ methods, which are the host's: mcpc's relay leaves them to the page. Returns
// what the page did, for its log.
function answer(message) {
  const { id, method, params } = message;
  switch (method) {
    case "ui/initialize":
      if (isId(id)) reply(id, initializeResult());
      return "answered";
    case "ui/notifications/initialized":
      // Nothing goes to the view before this; then the call it was opened for.
      if (initialized) return "again, ignored";
      initialized = true;
      send({ jsonrpc: "2.0", method: "ui/notifications/tool-input",
             params: { arguments: session.arguments } });
      send({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: session.result });
      return "tool input and result sent";
    case "ui/notifications/size-changed": {
      const height = params && params.height;
      if (!Number.isFinite(height) || height <= 0) return "ignored";
      frame.style.height = `${Math.min(Math.ceil(height), MAX_HEIGHT)}px`;
      return `height ${frame.style.height}`;
    }
    case "ui/request-display-mode":
      if (isId(id)) reply(id, { mode: "inline" });
      return "inline only";
    default:
      // ui/message, ui/open-link, ui/update-model-context...: this host has no model
      // to talk to and opens nothing.
      if (!isId(id)) return "ignored";
      fail(id, -32601, "Method not found");
      return "refused";
  }
}

function summary(response) {
  return response.error ? `error ${response.error.code} ${response.error.message}` : "result";
}

async function onMessage(event) {
  // Only the view's own window speaks for the view.
  if (frame === null || event.source !== frame.contentWindow) return;
  const message = event.data;
  // A response (this host waits for none) or not JSON-RPC at all.
  if (typeof message !== "object" || message === null || typeof message.method !== "string") return;
  let outcome;
  try {
    const response = await fetch("/relay", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(message),
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    outcome = await response.json();
  } catch (e) {
    note(message.method, "error", `not relayed (${e})`);
    if (isId(message.id)) fail(message.id, -32603, "the host could not relay the message");
    return;
  }
  switch (outcome.route) {
    case "reply":
      send(outcome.reply);
      note(message.method, "reply", summary(outcome.reply));
      break;
    case "passed":
      note(message.method, "passed", "to the server");
      break;
    case "host":
      note(message.method, "host", answer(message));
      break;
    default:
      note(message.method, "dropped", outcome.why);
      if (isId(message.id)) fail(message.id, -32600, outcome.why);
  }
}

async function main() {
  const response = await fetch("/session");
  session = await response.json();
  document.getElementById("tool").textContent = session.tool.name;
  document.getElementById("uri").textContent = session.uri;
  window.addEventListener("message", onMessage);
  frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  if (session.allow) frame.setAttribute("allow", session.allow);
  if (session.prefersBorder) frame.className = "border";
  frame.title = `The view of ${session.tool.name}`;
  frame.src = "/view";
  document.getElementById("stage").append(frame);
}

main().catch((e) => note("host", "error", String(e)));
