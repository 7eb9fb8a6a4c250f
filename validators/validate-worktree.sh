#!/bin/sh
# Passes when the worktree the prompt asks for exists on the right branch.
# stopgate runs it from the project root; its output is the feedback.
dir=.worktrees/stopgate-demo
branch=feature/stopgate-demo

if [ ! -d "$dir" ]; then
	echo "no worktree at $dir"
	exit 1
fi
actual=$(git -C "$dir" rev-parse --abbrev-ref HEAD 2>&1) || {
	echo "$dir is not a git worktree: $actual"
	exit 1
}
if [ "$actual" != "$branch" ]; then
	echo "worktree $dir is on branch $actual, want $branch"
	exit 1
fi
echo "worktree $dir is on $branch"
