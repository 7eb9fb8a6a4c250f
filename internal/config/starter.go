package config

// Starter is the mappings.toml `gate init` writes into a project that has
// none: every setting at its default, explained, and a commented example
// of a mapping and of both kinds of validator to copy from.
const Starter = `# stopgate: the prompts an agent must prove it followed before it may stop.
#
# When the agent reads a mapped prompt file or runs it as a /command, the
# validators of its [[mapping]] are armed. When the agent then tries to
# stop, they run; any failure sends it back with the failure and the fix.
# Check this file with: gate check. See what arms a key: gate explain KEY

[settings]
prompts_dir  = "src/prompts"     # where prompt files live, relative to the project root
state_dir    = "tmp/validation"  # the queue and the outcome log; keep it out of git
timeout      = "60s"             # per validator, unless it sets its own
max_blocks   = 3                 # blocked stops in a row before the session halts (client cap: 9)
output_lines = 40                # lines of a failing validator's output shown to the agent
announce     = true              # tell the agent up front what will be checked
on_failure   = "block"           # "block": send the agent back; "halt": end the session at once

# A mapping: the prompt's key and the validators that must pass before the
# agent may stop. The key is the prompt file's path without .md, under
# prompts_dir or .claude/commands; the client's names for it all arm it:
#
#   key "git/commit"       src/prompts/git/commit.md, .claude/commands/git/commit.md
#                          (run as /git:commit), .claude/commands/git-commit.md (/git-commit)
#   key "release-notes"    also the skill .claude/skills/release-notes/SKILL.md,
#                          run as /release-notes or by the Skill tool
#   key "myplugin:review"  a plugin's command or skill, named as the client names it
#
# [[mapping]]
# prompt     = "release-notes"
# validators = ["notes-file", "changelog"]
#
# [[mapping]]
# prompt     = "git/commit"
# validators = ["changelog"]

# A built-in validator: the file must exist, and may have to match.
#
# [validators.notes-file]
# file         = "docs/release-notes.md"
# contains     = "## Changes"
# not_contains = "TODO"
# regex        = "(?m)^## v[0-9]+"
# fix          = "Write the release notes to docs/release-notes.md, with a ## Changes section."

# A program, in any language, run with sh -c from the project root: exit 0
# passes, and its output is what the agent is shown when it fails.
#
# [validators.changelog]
# run     = "validators/check-changelog.sh"
# timeout = "10s"
# fix     = "Add an entry for this change to CHANGELOG.md."
`
