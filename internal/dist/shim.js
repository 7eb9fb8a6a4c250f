"use strict";
// Runs stopgate's native program from the platform package npm installed.
const { spawnSync } = require("child_process");
const path = require("path");

module.exports = function run(name) {
  const cpu = process.arch === "x64" ? "x64" : process.arch;
  const pkg = "@stopgate/" + process.platform + "-" + cpu;
  let dir;
  try {
    dir = path.dirname(require.resolve(pkg + "/package.json"));
  } catch (e) {
    process.stderr.write("stopgate: " + pkg + " is not installed (stopgate has no native programs for this platform, or optional dependencies were left out): run npm install\n");
    process.exit(1);
  }
  const r = spawnSync(path.join(dir, "bin", name), process.argv.slice(2), { stdio: "inherit" });
  if (r.error) {
    process.stderr.write("stopgate: " + r.error.message + "\n");
    process.exit(1);
  }
  if (r.signal) {
    process.kill(process.pid, r.signal);
  }
  process.exit(r.status);
};
