// stopgate for OpenCode, written by `gate init --client opencode`.
//
// OpenCode has no command hooks, so this plugin runs stopgate's programs on its plugin
// hooks: detect after each tool call (a read of a mapped prompt arms it) and before each
// one (the tamper guard: a denied call throws), and the gate when a session goes idle;
// a blocked stop is sent back to the agent as the session's next prompt. That needs a
// session OpenCode keeps alive: `opencode serve` or the TUI, not `opencode run`.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

// BIN holds detect and gate: absolute, or relative to the project.
const BIN = "__BIN__";

// MISSING is what a machine without them is told: a stop halts with it and
// a guarded tool call is refused with it, never a silent pass.
const MISSING = "__MISSING__";
const missing = (event) =>
  event.hook_event_name === "Stop"
    ? { continue: false, stopReason: MISSING }
    : event.hook_event_name === "PreToolUse"
      ? { hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: MISSING } }
      : {};

export const Stopgate = async ({ client, directory }) => {
  const bin = path.resolve(directory, BIN);

  // run feeds one Claude-shaped event to a stopgate program and returns its answer.
  const run = (program, event) =>
    new Promise((resolve) => {
      const child = spawn(path.join(bin, program), ["--client", "opencode"], {
        cwd: directory,
        env: { ...process.env, CLAUDE_PROJECT_DIR: directory },
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (err += d));
      // The program cannot be started (not installed, not executable, another
      // platform's): answer as gate init's launcher does for the other clients.
      child.on("error", () => resolve(missing(event)));
      child.on("close", () => {
        if (err.trim()) console.error(err.trim());
        try {
          resolve(out.trim() ? JSON.parse(out) : {});
        } catch (e) {
          resolve({ error: `stopgate ${program} printed ${out.trim()}` });
        }
      });
      child.stdin.end(JSON.stringify({ cwd: directory, ...event }));
    });

  // Continuations this plugin asked for in a row, per session: OpenCode has no
  // stop_hook_active. The gate's own max_blocks ends a failing loop.
  const continued = new Map();

  // OpenCode's record of a session is its messages, which only the SDK gives: at
  // each stop the plugin writes them, a message a line, to a file of its own (in a
  // folder only it knows) and hands the gate its path as transcript_path, so that a
  // read the queue lost is still judged. Only what the gate reads is kept: each
  // tool call's name and input, and text.
  let records;
  const record = async (id) => {
    try {
      records ??= fs.mkdtempSync(path.join(os.tmpdir(), "stopgate-opencode-"));
      const { data } = await client.session.messages({ path: { id } });
      const lines = (data ?? []).map(({ info, parts }) =>
        JSON.stringify({
          role: info.role,
          parts: (parts ?? []).map((p) =>
            p.type === "tool" ? { type: "tool", tool: p.tool, input: p.state?.input ?? {} }
              : p.type === "text" ? { type: "text", text: p.text ?? "", synthetic: !!p.synthetic }
              : { type: p.type }),
        }) + "\n");
      const file = path.join(records, `${id.replace(/[^A-Za-z0-9_-]/g, "_")}.jsonl`);
      fs.writeFileSync(file, lines.join(""), { mode: 0o600 });
      return file;
    } catch (e) {
      console.error(`stopgate: reading the session's messages: ${e}`);
      return undefined;
    }
  };

  return {
    "tool.execute.before": async (input, output) => {
      const answer = await run("detect", {
        hook_event_name: "PreToolUse", session_id: input.sessionID, tool_name: input.tool, tool_input: output.args,
      });
      const s = answer.hookSpecificOutput;
      if (s && s.permissionDecision === "deny") throw new Error(s.permissionDecisionReason);
    },
    "tool.execute.after": async (input, output) => {
      const answer = await run("detect", {
        hook_event_name: "PostToolUse", session_id: input.sessionID, tool_name: input.tool, tool_input: input.args ?? {},
      });
      // detect's announcement (what will be checked) goes to the model with the tool's result.
      const context = answer.hookSpecificOutput?.additionalContext;
      if (context && output && typeof output.output === "string") output.output += `\n\n${context}`;
    },
    event: async ({ event }) => {
      if (event.type !== "session.idle") return;
      const id = event.properties.sessionID;
      const n = continued.get(id) ?? 0;
      const answer = await run("gate", {
        hook_event_name: "Stop", session_id: id, stop_hook_active: n > 0, transcript_path: await record(id),
      });
      if (answer.decision === "block") {
        continued.set(id, n + 1);
        client.session
          .prompt({ path: { id }, body: { parts: [{ type: "text", text: answer.reason }] } })
          .catch((e) => console.error(`stopgate: sending the block back: ${e}`));
        return;
      }
      continued.delete(id);
      if (answer.continue === false) console.error(answer.stopReason);
    },
  };
};
