#!/usr/bin/env bash
# Build the base repository for one doctor scenario and run its `setup`.
# usage: run_setup.sh SCENARIO.yaml [WORKDIR]
#   WORKDIR (default: a new temp dir) receives repo/, home/, scratch/ and env.sh.
# The setup runs with `bash -e` in $REPO. Never runs `agitmem doctor`.
# env.sh records the environment (HOME, GIT_CONFIG_GLOBAL, PATH, SHELL, ...)
# in which the labels hold: source it before running doctor in $REPO.
set -euo pipefail
scen=$(readlink -f "$1")
work=${2:-$(mktemp -d /tmp/dl-XXXXXX)}
mkdir -p "$work"; work=$(cd "$work" && pwd -P)
export REPO="$work/repo" HOME="$work/home" SCRATCH="$work/scratch"
mkdir -p "$REPO" "$HOME" "$SCRATCH"
export GIT_CONFIG_GLOBAL="$HOME/.gitconfig" GIT_CONFIG_NOSYSTEM=1
printf '[user]\n\tname = Dev User\n\temail = dev@example.com\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"
export PATH="/work/venvs/integ4/bin:/usr/local/bin:/usr/bin:/bin"
export SHELL=/bin/bash LANG=C.UTF-8
unset VIRTUAL_ENV CODEX_HOME GEMINI_CLI_TRUST_WORKSPACE AGITMEM_HOME AGITMEM_REF AGITMEM_SKIP PRE_COMMIT_HOME 2>/dev/null || true
export PRE_COMMIT_HOME="$HOME/.cache/pre-commit"
cat >"$work/env.sh" <<ENV
export REPO='$REPO' HOME='$HOME' SCRATCH='$SCRATCH' GIT_CONFIG_GLOBAL='$GIT_CONFIG_GLOBAL' GIT_CONFIG_NOSYSTEM=1
export PATH='$PATH' SHELL=/bin/bash LANG=C.UTF-8 PRE_COMMIT_HOME='$PRE_COMMIT_HOME'
unset VIRTUAL_ENV CODEX_HOME GEMINI_CLI_TRUST_WORKSPACE AGITMEM_HOME AGITMEM_REF AGITMEM_SKIP
cd '$REPO'
ENV
cd "$REPO"
git init -q -b main
mkdir -p src
printf 'def main():\n    return 0\n' >src/app.py
printf '# demo app\n' >README
git add -A && git commit -qm "initial commit"
agitmem init >/dev/null
# extract the `setup: |` block from the YAML
python3 - "$scen" >"$work/setup.sh" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert set(d) >= {"id", "source", "setup", "expect", "why"}, sorted(d)
for k, v in d["expect"].items():
    assert v in ("ok", "warning", "error"), (k, v)
print(d["setup"])
PY
rc=0; bash -e "$work/setup.sh" >"$work/setup.log" 2>&1 || rc=$?
if [ "$rc" != 0 ]; then echo "FAIL $(basename "$scen") rc=$rc (log: $work/setup.log)"; tail -20 "$work/setup.log"; exit 1; fi
echo "ok   $(basename "$scen") -> $work"
