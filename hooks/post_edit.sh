#!/bin/sh
# agitmem shim: after every edit. Pass the edited files as arguments; it
# saves memory when they are under .agent/memory/ and reminds when
# snapshot/state are older than stale_minutes.
AGENT_EDITED_PATHS="$(printf '%s\n' "$@")"
export AGENT_EDITED_PATHS
exec agitmem hook post-edit --agent shell
