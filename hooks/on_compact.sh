#!/bin/sh
# agitmem shim: run before every prompt with AGENT_CONTEXT_LEN set to the
# context size in tokens. It re-injects the memory when the context dropped
# by over 40% since the last call (a compaction) or every reload_every
# prompts, and prints nothing otherwise.
exec agitmem hook prompt --agent shell
