"""husky's hook layouts, as husky itself writes them, for tests of
`agitmem install git` next to a hook manager.  No node needed: the files
are written here from husky's published source.

Source: github.com/typicode/husky
- v9: `husky` (copied to `.husky/_/h`) and `index.js` (the `.husky/_/<hook>`
  stubs, `.husky/_/.gitignore`, `core.hooksPath=.husky/_`) at tag v9.1.7
  (commit 799e84b716d0e03db80db5d5b0dcdd15b9d555fc).
- v8: `husky.sh` (copied to `.husky/_/husky.sh`) and `src/index.ts`
  (`install`: `core.hooksPath=.husky`; `set`: the `.husky/<hook>` script)
  at tag v8.0.3 (commit 3c0e08d3ca4d01d04ebb92089e68c47e131ab6be)."""
from __future__ import annotations

import subprocess
from pathlib import Path

# husky v9.1.7 `husky`, verbatim: the stub's name picks the user's script
V9_H = '''#!/usr/bin/env sh
[ "$HUSKY" = "2" ] && set -x
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n

[ ! -f "$s" ] && exit 0

if [ -f "$HOME/.huskyrc" ]; then
\techo "husky - '~/.huskyrc' is DEPRECATED, please move your code to ~/.config/husky/init.sh"
fi
i="${XDG_CONFIG_HOME:-$HOME/.config}/husky/init.sh"
[ -f "$i" ] && . "$i"

[ "${HUSKY-}" = "0" ] && exit 0

export PATH="node_modules/.bin:$PATH"
sh -e "$s" "$@"
c=$?

[ $c != 0 ] && echo "husky - $n script failed (code $c)"
[ $c = 127 ] && echo "husky - command not found in PATH=$PATH"
exit $c
'''
# index.js: every hook is this stub (no final newline)
V9_STUB = '#!/usr/bin/env sh\n. "$(dirname "$0")/h"'
V9_HOOKS = (
    'pre-commit', 'pre-merge-commit', 'prepare-commit-msg', 'commit-msg',
    'post-commit', 'applypatch-msg', 'pre-applypatch', 'post-applypatch',
    'pre-rebase', 'post-rewrite', 'post-checkout', 'post-merge', 'pre-push',
    'pre-auto-gc',
)
V9_DEPRECATED = (
    'echo "husky - DEPRECATED\\n\\nPlease remove the following two lines from $0:'
    '\\n\\n#!/usr/bin/env sh\\n. \\"\\$(dirname -- \\"\\$0\\")/_/husky.sh\\"\\n\\n'
    'They WILL FAIL in v10.0.0\\n"'
)

# husky v8.0.3 `husky.sh`, verbatim: it runs "$0" again under `sh -e`
V8_HUSKY_SH = '''#!/usr/bin/env sh
if [ -z "$husky_skip_init" ]; then
  debug () {
    if [ "$HUSKY_DEBUG" = "1" ]; then
      echo "husky (debug) - $1"
    fi
  }

  readonly hook_name="$(basename -- "$0")"
  debug "starting $hook_name..."

  if [ "$HUSKY" = "0" ]; then
    debug "HUSKY env variable is set to 0, skipping hook"
    exit 0
  fi

  if [ -f ~/.huskyrc ]; then
    debug "sourcing ~/.huskyrc"
    . ~/.huskyrc
  fi

  readonly husky_skip_init=1
  export husky_skip_init
  sh -e "$0" "$@"
  exitCode="$?"

  if [ $exitCode != 0 ]; then
    echo "husky - $hook_name hook exited with code $exitCode (error)"
  fi

  if [ $exitCode = 127 ]; then
    echo "husky - command not found in PATH=$PATH"
  fi

  exit $exitCode
fi
'''


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def install_v9(repo: Path) -> None:
    """What `husky` (v9, run by npm's `prepare`) does: run again, it
    writes every stub again."""
    d = repo / '.husky' / '_'
    subprocess.run(['git', 'config', 'core.hooksPath', '.husky/_'], cwd=repo, check=True)
    (d / 'husky.sh').unlink(missing_ok=True)
    _write(d / '.gitignore', '*')
    _write(d / 'h', V9_H)  # sourced by the stubs: its mode does not matter
    for hook in V9_HOOKS:
        _write(d / hook, V9_STUB, 0o755)
    _write(d / 'husky.sh', V9_DEPRECATED)


def add_v9(repo: Path, hook: str, script: str) -> None:
    """A user's hook script, `.husky/<hook>` (tracked; run with `sh -e`)."""
    _write(repo / '.husky' / hook, script)


def install_v8(repo: Path) -> None:
    """`husky install` (v8)."""
    d = repo / '.husky' / '_'
    _write(d / '.gitignore', '*')
    _write(d / 'husky.sh', V8_HUSKY_SH)
    subprocess.run(['git', 'config', 'core.hooksPath', '.husky'], cwd=repo, check=True)


def add_v8(repo: Path, hook: str, cmd: str) -> None:
    """`husky add .husky/<hook> "<cmd>"` (v8): `set` writes this, 0755."""
    _write(
        repo / '.husky' / hook,
        f'#!/usr/bin/env sh\n. "$(dirname -- "$0")/_/husky.sh"\n\n{cmd}\n',
        0o755,
    )
